"""B10: one training step of lesson 12's tiny transformer (token and position embeddings,
two pre-norm blocks of causal self-attention and a GELU MLP, AdamW), against PyTorch CPU.
The model is written once with ``torch``'s names and built in either library; B7 runs it on
a GPU."""

import numpy as np

from benchmarks.harness import TORCH, benchmark, training_step, vizgrad_and_torch
from benchmarks.training import copier

B10_VOCAB, B10_WIDTH, B10_HEADS, B10_LAYERS, B10_CONTEXT, B10_BATCH, B10_LR = 74, 64, 4, 2, 32, 32, 3e-3


def tiny_transformer(torch):
    """Lesson 12's model (pre-norm blocks: causal self-attention and a GELU MLP, each in a
    residual branch) built from ``torch``'s names: vizgrad or PyTorch."""
    nn = torch.nn

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(B10_WIDTH, 3 * B10_WIDTH)
            self.proj = nn.Linear(B10_WIDTH, B10_WIDTH)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, dim=-1)
            q, k, v = (t.view(B, T, B10_HEADS, C // B10_HEADS).transpose(1, 2) for t in (q, k, v))
            scores = q @ k.transpose(-2, -1) / (C // B10_HEADS) ** 0.5
            causal = torch.tril(torch.ones(T, T, device=x.device)) == 0
            weights = scores.masked_fill(causal, float("-inf")).softmax(dim=-1)
            return self.proj((weights @ v).transpose(1, 2).reshape(B, T, C))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.attention, self.ln2 = nn.LayerNorm(B10_WIDTH), CausalSelfAttention(), nn.LayerNorm(B10_WIDTH)
            self.mlp = nn.Sequential(nn.Linear(B10_WIDTH, 4 * B10_WIDTH), nn.GELU(approximate="tanh"),
                                     nn.Linear(4 * B10_WIDTH, B10_WIDTH))

        def forward(self, x):
            x = x + self.attention(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class TinyTransformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.token = nn.Embedding(B10_VOCAB, B10_WIDTH)
            self.position = nn.Embedding(B10_CONTEXT, B10_WIDTH)
            self.blocks = nn.Sequential(*[Block() for _ in range(B10_LAYERS)])
            self.ln = nn.LayerNorm(B10_WIDTH)
            self.head = nn.Linear(B10_WIDTH, B10_VOCAB)

        def forward(self, idx):
            x = self.token(idx) + self.position(torch.arange(idx.shape[1], device=idx.device))
            return self.head(self.ln(self.blocks(x)))

    return TinyTransformer()


def transformer_weights():
    """Lesson 12's model's initial weights (vizgrad's, seed 0), by name, as NumPy arrays."""
    import vizgrad as vg
    vg.manual_seed(0)
    return {name: value.numpy().copy() for name, value in tiny_transformer(vg).state_dict().items()}


def transformer_tokens():
    """B10's batch: inputs and next-token targets, (B10_BATCH, B10_CONTEXT) each."""
    tokens = np.random.default_rng(0).integers(0, B10_VOCAB, (B10_BATCH, B10_CONTEXT + 1))
    return tokens[:, :-1], tokens[:, 1:]


def load_weights(library, model, weights):
    """Copy ``weights`` (by parameter name) into ``model``, a :func:`tiny_transformer` of ``library``."""
    copy = copier(library)
    for name, param in model.named_parameters():
        copy(param, weights[name])


@benchmark("B10", "transformer_step", "ms", 1e3, references=(TORCH,))
def transformer_step():
    """Lesson 12's tiny transformer (2 layers, 4 heads, width 64, context 32), batch 32: CE, backward, AdamW."""
    x_np, y_np = transformer_tokens()
    weights = transformer_weights()

    def library_step(library, tensor):
        model = tiny_transformer(library)
        load_weights(library, model, weights)
        optimizer = library.optim.AdamW(model.parameters(), lr=B10_LR)
        x, y = tensor(x_np), tensor(y_np.reshape(-1))
        cross_entropy = library.nn.functional.cross_entropy
        return training_step(optimizer, lambda: cross_entropy(model(x).view(-1, B10_VOCAB), y))

    return vizgrad_and_torch(library_step)
