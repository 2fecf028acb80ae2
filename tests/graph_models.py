"""The models the graph views are judged on (issue 13): a CNN with BatchNorm, an unrolled
RNN whose steps share one cell, a 4-block transformer-like model; each traced through
one forward and backward pass. ``with_groups`` adds the Graph JSON "groups" (module
type, label, signature, runs of identical blocks), "group" and "uses" that vizgrad.trace
writes from its module tree, for front-end tests that need them before every recorder does.
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
        if name == "cnn":
            model = cnn()
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


def _label(module):
    kind = type(module).__name__
    if isinstance(module, nn.Linear):
        return f"Linear({module.in_features}→{module.out_features})"
    if isinstance(module, nn.Embedding):
        return f"Embedding({module.num_embeddings}, {module.embedding_dim})"
    if kind.startswith("Conv"):
        return f"{kind}({module.in_channels}→{module.out_channels})"
    if kind.startswith("BatchNorm"):
        return f"{kind}({module.num_features})"
    if isinstance(module, nn.LayerNorm):
        return f"LayerNorm({module.normalized_shape[0]})"
    return kind


def with_groups(model, graph):
    """``graph``'s JSON with the groups of ``model``'s module tree (see the module docstring)."""
    data = graph.to_dict()
    modules = dict(model.named_modules())
    owners = {}
    for node in data["nodes"]:
        module = node["module"]
        if not module and node["kind"] in ("parameter", "leaf") and node["name"] and "." in node["name"]:
            module = node["name"].rpartition(".")[0]
        owners[node["id"]] = module if module in modules else ""
    used = sorted({prefix for module in owners.values() if module
                   for prefix in (".".join(module.split(".")[:i + 1]) for i in range(module.count(".") + 1))},
                  key=lambda name: (name.count("."), name))

    def signature(name):
        module = modules[name]
        return f"{type(module).__name__}[{','.join(str(tuple(p.shape)) for p in module.parameters())}]"

    groups, ids = [], {}
    for name in used:
        ids[name] = f"g{len(groups)}"
        parent = name.rpartition(".")[0] if "." in name else None
        groups.append({"id": ids[name], "kind": "module", "name": name, "type": type(modules[name]).__name__,
                       "label": _label(modules[name]), "parent": ids.get(parent), "signature": signature(name),
                       "repeat": None})
    for group in groups:          # runs of consecutive identical siblings
        siblings = [g for g in groups if g["parent"] == group["parent"]]
        index = siblings.index(group)
        run = [group]
        start = index
        while start > 0 and siblings[start - 1]["signature"] == group["signature"]:
            start -= 1
        end = index
        while end + 1 < len(siblings) and siblings[end + 1]["signature"] == group["signature"]:
            end += 1
        run = siblings[start:end + 1]
        if len(run) > 1:
            group["repeat"] = {"count": len(run), "index": index - start}
    uses = {}
    for edge in data["edges"]:
        uses[edge["source"]] = uses.get(edge["source"], 0) + 1
    for node in data["nodes"]:
        node["group"] = ids.get(owners[node["id"]])
        node["uses"] = uses.get(node["id"], 0)
    data["groups"] = groups
    data["backward"] = {"source": "recorded", "note": None} if data["backward_order"] else None
    return data
