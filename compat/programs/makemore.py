"""Character-level language models in the style of the makemore lectures: bigram counts, the
same bigram as a one-layer network trained by gradient descent, and an MLP over embeddings
of the previous characters (with cross-entropy, tanh and a manual SGD loop)."""

import numpy as np

from ..suite import program

WORDS = ("ava mia leo noah emma liam olivia lucas ella mason isla ethan zoe owen nora eli ruby jack ivy max "
         "lily sam rose finn clara jude hazel theo june milo").split()
CHARACTERS = sorted(set("".join(WORDS)))
STOI = {s: i + 1 for i, s in enumerate(CHARACTERS)}
STOI["."] = 0
VOCABULARY = len(STOI)


def _bigram_pairs():
    xs, ys = [], []
    for word in WORDS:
        chars = ["."] + list(word) + ["."]
        for a, b in zip(chars, chars[1:]):
            xs.append(STOI[a])
            ys.append(STOI[b])
    return xs, ys


def _expect_bigram(r):
    assert r["counts_total"] == sum(len(w) + 1 for w in WORDS)
    np.testing.assert_allclose(r["row_sums"], 1.0, rtol=1e-5)
    assert 1.0 < r["nll"] < np.log(VOCABULARY)


@program("makemore part 1: bigram counts", expect=_expect_bigram)
def bigram_counts(torch, rng):
    N = torch.zeros((VOCABULARY, VOCABULARY), dtype=torch.int32)
    for word in WORDS:
        chs = ["."] + list(word) + ["."]
        for ch1, ch2 in zip(chs, chs[1:]):
            N[STOI[ch1], STOI[ch2]] += 1
    P = (N + 1).float()
    P /= P.sum(1, keepdims=True)
    log_likelihood = 0.0
    n = 0
    for word in WORDS:
        chs = ["."] + list(word) + ["."]
        for ch1, ch2 in zip(chs, chs[1:]):
            log_likelihood += torch.log(P[STOI[ch1], STOI[ch2]])
            n += 1
    return {"counts_total": N.sum().item(), "row_sums": P.sum(1), "nll": (-log_likelihood / n).item(),
            "first_row": N[0]}


def _expect_neural_bigram(r):
    assert r["losses"][-1] < r["losses"][0]


@program("makemore part 1: the bigram as a neural network", expect=_expect_neural_bigram)
def bigram_network(torch, rng):
    xs, ys = _bigram_pairs()
    xs, ys = torch.tensor(xs), torch.tensor(ys)
    num = xs.nelement()
    W = torch.tensor(rng.standard_normal((VOCABULARY, VOCABULARY)), dtype=torch.float32, requires_grad=True)
    F = torch.nn.functional
    losses = []
    for k in range(20):
        xenc = F.one_hot(xs, num_classes=VOCABULARY).float()
        logits = xenc @ W
        counts = logits.exp()
        probs = counts / counts.sum(1, keepdim=True)
        loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W ** 2).mean()
        losses.append(loss.item())
        W.grad = None
        loss.backward()
        W.data += -10 * W.grad
    return {"losses": losses, "W_row0": W[0]}


def _expect_mlp(r):
    assert r["losses"][-1] < r["losses"][0]
    assert r["emb_shape"] == [r["batch"], 3, 4]


@program("makemore part 2: MLP over character embeddings", expect=_expect_mlp)
def char_mlp(torch, rng):
    block_size = 3
    X, Y = [], []
    for word in WORDS:
        context = [0] * block_size
        for ch in word + ".":
            ix = STOI[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    X, Y = torch.tensor(X), torch.tensor(Y)
    C = torch.tensor(rng.standard_normal((VOCABULARY, 4)), dtype=torch.float32)
    W1 = torch.tensor(rng.standard_normal((block_size * 4, 32)) * 0.2, dtype=torch.float32)
    b1 = torch.tensor(rng.standard_normal(32) * 0.01, dtype=torch.float32)
    W2 = torch.tensor(rng.standard_normal((32, VOCABULARY)) * 0.01, dtype=torch.float32)
    b2 = torch.zeros(VOCABULARY)
    parameters = [C, W1, b1, W2, b2]
    for p in parameters:
        p.requires_grad = True
    losses = []
    batches = [rng.integers(0, X.shape[0], 32) for _ in range(30)]
    for ix in batches:
        ix = torch.tensor(ix)
        emb = C[X[ix]]
        h = torch.tanh(emb.view(-1, block_size * 4) @ W1 + b1)
        logits = h @ W2 + b2
        loss = torch.nn.functional.cross_entropy(logits, Y[ix])
        losses.append(loss.item())
        for p in parameters:
            p.grad = None
        loss.backward()
        for p in parameters:
            p.data += -0.1 * p.grad
    with torch.no_grad():
        emb = C[X]
        full_loss = torch.nn.functional.cross_entropy(torch.tanh(emb.view(-1, 12) @ W1 + b1) @ W2 + b2, Y)
    return {"losses": losses, "full_loss": full_loss.item(), "emb_shape": list(C[X[:32]].shape), "batch": 32,
            "C": C}


def _expect_sampling(r):
    assert r["same_with_same_seed"] and r["samples_in_top_k"] and r["frequencies_close"]


@program("nanoGPT-style generation: top-k filtering and sampling with a seeded Generator", expect=_expect_sampling)
def top_k_sampling(torch, rng):
    F = torch.nn.functional
    logits = torch.tensor(rng.standard_normal((2, VOCABULARY)), dtype=torch.float32)
    v, _ = torch.topk(logits, 5)
    filtered = logits.clone()
    filtered[filtered < v[:, [-1]]] = -float("Inf")
    probs = F.softmax(filtered, dim=-1)
    g = torch.Generator().manual_seed(2147483647)
    first = torch.multinomial(probs, num_samples=1, generator=g)
    g = torch.Generator().manual_seed(2147483647)
    again = torch.multinomial(probs, num_samples=1, generator=g)
    many = torch.multinomial(probs[0], num_samples=4000, replacement=True, generator=g)
    frequencies = F.one_hot(many, VOCABULARY).float().mean(0)
    allowed = probs > 0
    return {"filtered_probs": probs, "top_values": v,
            "same_with_same_seed": bool((first == again).all()),
            "samples_in_top_k": bool(allowed.gather(1, first).all()),
            "frequencies_close": bool(((frequencies - probs[0]).abs() < 0.03).all())}
