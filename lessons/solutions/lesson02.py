"""Reference solutions for lesson 02 (tensors and broadcasting)."""


def broadcast_shape(a, b):
    """Exercise 2.1: line the shapes up from the right; sizes must match or be 1."""
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    result = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise ValueError(f"shapes {a} and {b} cannot be broadcast: {x} vs {y}")
        result.append(max(x, y))
    return tuple(result)


def unbroadcast(grad, shape):
    """Exercise 2.2: sum grad down to shape (the gradient of a broadcast input)."""
    lead = grad.ndim - len(shape)
    for _ in range(lead):
        grad = grad.sum(dim=0)
    for dim, size in enumerate(shape):
        if size == 1 and grad.shape[dim] != 1:
            grad = grad.sum(dim=dim, keepdim=True)
    return grad


def center_rows(x):
    """Exercise 2.3: subtract each row's mean (keepdim keeps the mean a column)."""
    return x - x.mean(dim=1, keepdim=True)
