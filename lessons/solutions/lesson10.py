"""Reference solutions for lesson 10 (characters to a language model)."""

import vizgrad as vg

F = vg.nn.functional


class CrossEntropy(vg.autograd.Function):
    """Exercise 10.1: L = -(1/n) Σᵢ log softmax(zᵢ)[yᵢ]; dL/dz = (softmax(z) - one_hot(y)) / n."""

    @staticmethod
    def forward(ctx, logits, targets):
        shifted = logits - logits.amax(dim=1, keepdim=True)          # no overflow in exp
        log_probs = shifted - shifted.exp().sum(dim=1, keepdim=True).log()
        ctx.save_for_backward(log_probs, targets)
        return -log_probs[vg.arange(logits.shape[0]), targets].mean()

    @staticmethod
    def backward(ctx, grad_output):
        log_probs, targets = ctx.saved_tensors
        n, classes = log_probs.shape
        grad_logits = (log_probs.exp() - F.one_hot(targets, classes)) / n
        return grad_output * grad_logits, None


class Embedding(vg.autograd.Function):
    """Exercise 10.2: out = weight[index]; dweight = the rows of dout added up at their indices."""

    @staticmethod
    def forward(ctx, weight, index):
        ctx.save_for_backward(index)
        ctx.rows = weight.shape[0]
        return weight[index]

    @staticmethod
    def backward(ctx, grad_output):
        index, = ctx.saved_tensors
        dim = grad_output.shape[-1]
        grad_weight = vg.zeros(ctx.rows, dim, dtype=grad_output.dtype)
        grad_weight.index_add_(0, index.reshape(-1), grad_output.reshape(-1, dim))   # repeats add up
        return grad_weight, None
