"""The models the graph views are judged on (issue 13): a CNN with BatchNorm, an unrolled
RNN whose steps share one cell, a 4-block transformer-like model; each traced through
one forward and backward pass ("cnn-eval": the CNN in evaluation mode, where BatchNorm
reads its running statistics). The recorder writes the Graph JSON "groups" (module type,
label, signature, runs of identical blocks), each node's "group" and "uses".
"""

import vizgrad as vg
import vizgrad.nn.functional as F
from vizgrad import nn


class Cell(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.ih = nn.Linear(n_in, n_hidden)
        self.hh = nn.Linear(n_hidden, n_hidden)

    def forward(self, x, h):
        return (self.ih(x) + self.hh(h)).tanh()


class RNN(nn.Module):
    def __init__(self, steps=12):
        super().__init__()
        self.cell = Cell(4, 16)
        self.out = nn.Linear(16, 1)
        self.steps = steps

    def forward(self, xs):
        h = vg.zeros(xs.shape[0], 16)
        for t in range(self.steps):
            h = self.cell(xs[:, t], h)
        return self.out(h)


class Attention(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x):
        scores = self.q(x) @ self.k(x).transpose(-2, -1) / (x.shape[-1] ** 0.5)
        return self.o(scores.softmax(-1) @ self.v(x))


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm1, self.attn, self.norm2 = nn.LayerNorm(d), Attention(d), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Transformer(nn.Module):
    def __init__(self, vocab=20, d=16, blocks=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.Sequential(*[Block(d) for _ in range(blocks)])
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens):
        return self.head(self.blocks(self.embed(tokens)))


def cnn():
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 7 * 7, 10))


def traced(name):
    """(model, Graph) of one traced forward and backward pass of model ``name``."""
    vg.manual_seed(0)
    with vg.trace() as recording:
        if name in ("cnn", "cnn-eval"):
            model = cnn()
            model.train(name == "cnn")
            loss = F.cross_entropy(model(vg.randn(4, 1, 28, 28)), vg.tensor([1, 2, 3, 4]))
        elif name == "rnn":
            model = RNN()
            loss = model(vg.randn(3, 12, 4)).pow(2).mean()
        else:
            model = Transformer()
            tokens = vg.randint(0, 20, (2, 8))
            loss = F.cross_entropy(model(tokens).reshape(-1, 20), tokens.reshape(-1))
        loss.backward()
    return model, recording.graph
