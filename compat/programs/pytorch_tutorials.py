"""Programs in the style of PyTorch's official "Learning PyTorch with Examples" (polynomial
fits with nn, optim and a custom autograd Function), the hooks tutorial, the data-loading
quickstart and the LBFGS closure pattern."""

import math

import numpy as np

from ..suite import program


def _load(model, rng, torch, scale=0.5):
    """Give every parameter of ``model`` NumPy-drawn values (in named_parameters order)."""
    with torch.no_grad():
        for _, parameter in model.named_parameters():
            parameter.copy_(torch.tensor(rng.standard_normal(tuple(parameter.shape)) * scale,
                                         dtype=parameter.dtype))


def _expect_decreasing(key):
    def expect(r):
        losses = np.asarray(r[key])
        assert np.isfinite(losses).all() and losses[-1] < losses[0], losses
    return expect


@program("Learning PyTorch with Examples: polynomial fit with nn", expect=_expect_decreasing("losses"))
def polynomial_nn(torch, rng):
    x = torch.linspace(-math.pi, math.pi, 200)
    y = torch.sin(x)
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
    _load(model, rng, torch, 0.1)
    loss_fn = torch.nn.MSELoss(reduction="sum")
    learning_rate = 1e-5
    losses = []
    for t in range(30):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        losses.append(loss.item())
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for param in model.parameters():
                param -= learning_rate * param.grad
    linear_layer = model[0]
    return {"losses": losses, "weight": linear_layer.weight, "bias": linear_layer.bias}


@program("Learning PyTorch with Examples: polynomial fit with optim", expect=_expect_decreasing("losses"))
def polynomial_optim(torch, rng):
    x = torch.linspace(-math.pi, math.pi, 200)
    y = torch.sin(x)
    xx = torch.stack([x, x ** 2, x ** 3], dim=-1)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
    _load(model, rng, torch, 0.1)
    loss_fn = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    losses = []
    for t in range(40):
        loss = loss_fn(model(xx), y)
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {"losses": losses, "weight": model[0].weight, "bias": model[0].bias}


@program("Learning PyTorch with Examples: defining new autograd Functions", expect=_expect_decreasing("losses"))
def custom_function(torch, rng):
    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    x = torch.linspace(-1.0, 1.0, 100)
    y = torch.sin(x)
    a, b, c, d = (torch.full((), float(v), requires_grad=True) for v in rng.standard_normal(4) * 0.1)
    losses = []
    for t in range(50):
        y_pred = a + b * LegendrePolynomial3.apply(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            for parameter in (a, b, c, d):
                parameter -= 1e-3 * parameter.grad
                parameter.grad = None
    return {"losses": losses, "coefficients": [a.item(), b.item(), c.item(), d.item()]}


def _expect_hooks(r):
    np.testing.assert_allclose(r["x_grad"], 2 * r["raw_grad"], rtol=1e-6)   # the tensor hook doubled it
    assert r["forward_hook_shapes"] == [[4, 3], [4, 2]]


@program("PyTorch tutorial: hooks on tensors and modules", expect=_expect_hooks)
def hooks(torch, rng):
    model = torch.nn.Sequential(torch.nn.Linear(5, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
    _load(model, rng, torch)
    x = torch.tensor(rng.standard_normal((4, 5)), dtype=torch.float32, requires_grad=True)
    shapes, grad_norms = [], []
    handles = [model[0].register_forward_hook(lambda m, inp, out: shapes.append(list(out.shape))),
               model[2].register_forward_hook(lambda m, inp, out: shapes.append(list(out.shape))),
               model[0].register_full_backward_hook(lambda m, gin, gout: grad_norms.append(gout[0].norm().item()))]
    out = model(x)
    raw = torch.autograd.grad(out.sum(), x, retain_graph=True)[0]
    x.register_hook(lambda grad: grad * 2)
    out.sum().backward()
    for handle in handles:
        handle.remove()
    model(x)                                   # removed hooks do not run again
    activations = {}

    def save_activation(name):
        def hook(module, inputs, output):
            activations[name] = output.detach()
        return hook

    model[1].register_forward_hook(save_activation("tanh"))
    model(x)
    return {"x_grad": x.grad, "raw_grad": raw, "forward_hook_shapes": shapes, "backward_hook_norms": grad_norms,
            "tanh_activation": activations["tanh"]}


@program("PyTorch quickstart: Dataset, DataLoader and a training loop", expect=_expect_decreasing("epoch_losses"))
def dataloader_training(torch, rng):
    data = torch.utils.data
    features = torch.tensor(rng.standard_normal((64, 4)), dtype=torch.float32)
    labels = torch.tensor(rng.integers(0, 3, 64))
    loader = data.DataLoader(data.TensorDataset(features, labels), batch_size=16, shuffle=False, num_workers=0,
                             drop_last=True)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    _load(model, rng, torch)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    epoch_losses = []
    for epoch in range(3):
        total = 0.0
        for batch, (X, y) in enumerate(loader):
            loss = loss_fn(model(X), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        epoch_losses.append(total / len(loader))
    model.eval()
    with torch.no_grad():
        correct = (model(features).argmax(1) == labels).type(torch.float).sum().item()
    return {"epoch_losses": epoch_losses, "correct": correct}


def _expect_lbfgs(r):
    assert r["distance_to_lstsq"] < 1e-5 and r["final_loss"] < r["first_loss"]


@program("optim.LBFGS with a closure (the PyTorch optim docs' pattern)", expect=_expect_lbfgs)
def lbfgs_least_squares(torch, rng):
    A_np, b_np = rng.standard_normal((20, 3)), rng.standard_normal(20)
    A, b = torch.tensor(A_np), torch.tensor(b_np)
    x = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.LBFGS([x], lr=1, max_iter=20, history_size=5, line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        loss = ((A @ x - b) ** 2).sum()
        loss.backward()
        return loss

    first = optimizer.step(closure).item()
    for _ in range(2):
        optimizer.step(closure)
    final = closure()
    distance = np.abs(x.detach().numpy() - np.linalg.lstsq(A_np, b_np, rcond=None)[0]).max()
    return {"first_loss": first, "final_loss": final.item(), "solution": x, "gradient_norm": x.grad.norm().item(),
            "distance_to_lstsq": distance}


def _expect_legacy(r):
    np.testing.assert_allclose(r["restored_output"], r["output"], rtol=1e-6)


@program("older tutorials: Variable, FloatTensor/LongTensor, save and load(weights_only=True)", expect=_expect_legacy)
def legacy_api_and_checkpoints(torch, rng):
    import io
    Variable = torch.autograd.Variable
    x = Variable(torch.FloatTensor(rng.standard_normal((3, 4)).tolist()), requires_grad=True)
    labels = Variable(torch.LongTensor([0, 2, 1]))
    model = torch.nn.Linear(4, 3)
    _load(model, rng, torch)
    output = model(x)
    torch.nn.functional.cross_entropy(output, labels).backward()
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    restored = torch.nn.Linear(4, 3)
    restored.load_state_dict(torch.load(buffer, weights_only=True))
    return {"output": output, "x_grad": x.grad, "restored_output": restored(x), "is_float": x.dtype == torch.float32}
