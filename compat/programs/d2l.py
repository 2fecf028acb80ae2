"""Programs in the style of Dive into Deep Learning's "from scratch" chapters: linear
regression, softmax regression and a multilayer perceptron with hand-written parameters,
data iterators and SGD."""

import numpy as np

from ..suite import program


def _batches(rng, n, batch_size):
    """Shuffled mini-batch indices, drawn with NumPy (the same on both libraries)."""
    order = rng.permutation(n)
    return [order[i:i + batch_size].tolist() for i in range(0, n, batch_size)]


def _expect_linear(r):
    np.testing.assert_allclose(r["w"], [2.0, -3.4], atol=0.05)
    assert abs(r["b"] - 4.2) < 0.05 and r["epoch_losses"][-1] < r["epoch_losses"][0]


@program("d2l: linear regression from scratch", expect=_expect_linear)
def d2l_linear_regression(torch, rng):
    def synthetic_data(w, b, num_examples):
        X = torch.tensor(rng.normal(0, 1, (num_examples, len(w))), dtype=torch.float32)
        y = torch.matmul(X, w) + b
        y += torch.tensor(rng.normal(0, 0.01, y.shape), dtype=torch.float32)
        return X, y.reshape((-1, 1))

    true_w = torch.tensor([2, -3.4])
    true_b = 4.2
    features, labels = synthetic_data(true_w, true_b, 1000)

    def linreg(X, w, b):
        return torch.matmul(X, w) + b

    def squared_loss(y_hat, y):
        return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2

    def sgd(params, lr, batch_size):
        with torch.no_grad():
            for param in params:
                param -= lr * param.grad / batch_size
                param.grad.zero_()

    w = torch.tensor(rng.normal(0, 0.01, size=(2, 1)), dtype=torch.float32, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    lr, batch_size = 0.03, 10
    epoch_losses = []
    for epoch in range(3):
        for indices in _batches(rng, 1000, batch_size):
            X, y = features[indices], labels[indices]
            l = squared_loss(linreg(X, w, b), y)
            l.sum().backward()
            sgd([w, b], lr, batch_size)
        with torch.no_grad():
            epoch_losses.append(float(squared_loss(linreg(features, w, b), labels).mean()))
    return {"w": w.reshape(-1), "b": b.item(), "epoch_losses": epoch_losses}


def _images(rng, n, classes=10, size=16):
    """Class-dependent random 'images' (a bright block per class) and their labels."""
    labels = rng.integers(0, classes, n)
    images = rng.random((n, 1, 4, size // 4)) * 0.3
    images[np.arange(n), 0, labels % 4, labels // 4 % (size // 4)] += 1.0
    return images.astype(np.float32), labels


def _expect_accuracy(r):
    assert r["train_acc"][-1] > r["train_acc"][0] or r["train_acc"][-1] > 0.9
    assert r["losses"][-1] < r["losses"][0]


@program("d2l: softmax regression from scratch", expect=_expect_accuracy)
def d2l_softmax_regression(torch, rng):
    images, labels = _images(rng, 200)
    X_all, y_all = torch.tensor(images), torch.tensor(labels)
    num_inputs, num_outputs = 16, 10
    W = torch.tensor(rng.normal(0, 0.01, size=(num_inputs, num_outputs)), dtype=torch.float32, requires_grad=True)
    b = torch.zeros(num_outputs, requires_grad=True)

    def softmax(X):
        X_exp = torch.exp(X)
        partition = X_exp.sum(1, keepdim=True)
        return X_exp / partition

    def net(X):
        return softmax(torch.matmul(X.reshape((-1, W.shape[0])), W) + b)

    def cross_entropy(y_hat, y):
        return -torch.log(y_hat[range(len(y_hat)), y])

    def accuracy(y_hat, y):
        if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
            y_hat = y_hat.argmax(axis=1)
        cmp = y_hat.type(y.dtype) == y
        return float(cmp.type(y.dtype).sum())

    losses, train_acc = [], []
    for epoch in range(4):
        for indices in _batches(rng, 200, 25):
            X, y = X_all[indices], y_all[indices]
            l = cross_entropy(net(X), y)
            l.mean().backward()
            with torch.no_grad():
                for param in (W, b):
                    param -= 0.5 * param.grad
                    param.grad.zero_()
        with torch.no_grad():
            losses.append(float(cross_entropy(net(X_all), y_all).mean()))
            train_acc.append(accuracy(net(X_all), y_all) / len(y_all))
    return {"losses": losses, "train_acc": train_acc, "W_column_sums": W.sum(0)}


@program("d2l: multilayer perceptron from scratch", expect=_expect_accuracy)
def d2l_mlp(torch, rng):
    images, labels = _images(rng, 200)
    X_all, y_all = torch.tensor(images), torch.tensor(labels)
    num_inputs, num_outputs, num_hiddens = 16, 10, 32
    W1 = torch.nn.Parameter(torch.tensor(rng.standard_normal((num_inputs, num_hiddens)) * 0.1, dtype=torch.float32))
    b1 = torch.nn.Parameter(torch.zeros(num_hiddens))
    W2 = torch.nn.Parameter(torch.tensor(rng.standard_normal((num_hiddens, num_outputs)) * 0.1, dtype=torch.float32))
    b2 = torch.nn.Parameter(torch.zeros(num_outputs))
    params = [W1, b1, W2, b2]

    def relu(X):
        a = torch.zeros_like(X)
        return torch.max(X, a)

    def net(X):
        X = X.reshape((-1, num_inputs))
        H = relu(X @ W1 + b1)
        return H @ W2 + b2

    loss = torch.nn.CrossEntropyLoss(reduction="none")
    updater = torch.optim.SGD(params, lr=0.3)
    losses, train_acc = [], []
    for epoch in range(4):
        for indices in _batches(rng, 200, 25):
            X, y = X_all[indices], y_all[indices]
            updater.zero_grad()
            l = loss(net(X), y)
            l.mean().backward()
            updater.step()
        with torch.no_grad():
            losses.append(float(loss(net(X_all), y_all).mean()))
            train_acc.append(float((net(X_all).argmax(dim=1) == y_all).float().mean()))
    return {"losses": losses, "train_acc": train_acc, "W2": W2}
