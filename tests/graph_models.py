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


# --- the learner's own models, as issue 27 tries them (tests/test_browser_models.py): each
# built as a user would write it and run as one forward and backward pass, with no trace.

class ResidualBlock(nn.Module):
    """conv-BN-ReLU-conv-BN plus the block's input (a skip connection), then ReLU."""

    def __init__(self, channels):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels)
        self.conv2, self.bn2 = nn.Conv2d(channels, channels, 3, padding=1), nn.BatchNorm2d(channels)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + x)


class ResNet(nn.Module):
    def __init__(self, channels=8, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU())
        self.layer1 = nn.Sequential(ResidualBlock(channels), ResidualBlock(channels))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(channels, classes)

    def forward(self, x):
        return self.fc(self.pool(self.layer1(self.stem(x))).flatten(1))


class LSTMRegressor(nn.Module):
    """A 2-layer nn.LSTM over the sequence and a Linear head on the last step."""

    def __init__(self, n_in=4, hidden=16):
        super().__init__()
        self.lstm = nn.LSTM(n_in, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, xs):
        out, _ = self.lstm(xs)
        return self.head(out[:, -1])


class Seq2Seq(nn.Module):
    """A GRU encoder-decoder: the encoder's last state starts the decoder, a Linear reads each step."""

    def __init__(self, vocab=12, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.encoder = nn.GRU(hidden, hidden, batch_first=True)
        self.decoder = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, source, target):
        _, state = self.encoder(self.embed(source))
        decoded, _ = self.decoder(self.embed(target), state)
        return self.out(decoded)


class MHABlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class MHATransformer(nn.Module):
    """4 blocks of nn.MultiheadAttention and an MLP, over token embeddings."""

    def __init__(self, vocab=20, d=16, heads=2, blocks=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.Sequential(*[MHABlock(d, heads) for _ in range(blocks)])
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens):
        return self.head(self.blocks(self.embed(tokens)))


class CausalSelfAttention(nn.Module):
    """Lesson 12's attention (lessons/12-tiny-transformer.ipynb), as the lesson writes it."""

    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=-1)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / (C // self.heads) ** 0.5
        weights = scores.masked_fill(vg.tril(vg.ones(T, T)) == 0, float("-inf")).softmax(dim=-1)
        return self.proj((weights @ v).transpose(1, 2).reshape(B, T, C))


class LessonBlock(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.ln1, self.attention = nn.LayerNorm(width), CausalSelfAttention(width, heads)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(approximate="tanh"), nn.Linear(4 * width, width))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyTransformer(nn.Module):
    """Lesson 12's model: token and position embeddings, 2 pre-norm blocks, a final LayerNorm, a head."""

    def __init__(self, vocab=65, width=64, heads=4, layers=2, context=32):
        super().__init__()
        self.token = nn.Embedding(vocab, width)
        self.position = nn.Embedding(context, width)
        self.blocks = nn.Sequential(*[LessonBlock(width, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab)

    def forward(self, idx):
        x = self.token(idx) + self.position(vg.arange(idx.shape[1]))
        return self.head(self.ln(self.blocks(x)))


#: The models of issue 27's browser tests, by name.
USER_MODELS = ("resnet", "lstm", "gru-seq2seq", "mha-transformer", "lesson-12")


def user_loss(name):
    """(model, loss) of one forward and backward pass of model ``name`` (USER_MODELS), no trace."""
    vg.manual_seed(0)
    if name == "resnet":
        model = ResNet()
        loss = F.cross_entropy(model(vg.randn(4, 1, 12, 12)), vg.tensor([1, 2, 3, 4]))
    elif name == "lstm":
        model = LSTMRegressor()
        loss = model(vg.randn(3, 12, 4)).pow(2).mean()
    elif name == "gru-seq2seq":
        model = Seq2Seq()
        source, target = vg.randint(0, 12, (2, 6)), vg.randint(0, 12, (2, 5))
        loss = F.cross_entropy(model(source, target).reshape(-1, 12), target.reshape(-1))
    elif name == "mha-transformer":
        model = MHATransformer()
        tokens = vg.randint(0, 20, (2, 8))
        loss = F.cross_entropy(model(tokens).reshape(-1, 20), tokens.reshape(-1))
    elif name == "lesson-12":
        model = TinyTransformer()
        idx, targets = vg.randint(0, 65, (4, 32)), vg.randint(0, 65, (4, 32))
        loss = F.cross_entropy(model(idx).view(-1, 65), targets.view(-1))
    else:
        raise KeyError(f"no model {name!r}: one of {', '.join(USER_MODELS)}")
    loss.backward()
    return model, loss
