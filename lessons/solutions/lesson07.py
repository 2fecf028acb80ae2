"""Reference solutions for lesson 07 (convolutional networks)."""

from vizgrad import nn
import vizgrad.nn.functional as F


def conv_output_size(n, kernel, stride=1, padding=0):
    """Exercise 7.1: windows start at 0, s, 2s, ... up to n + 2p - k."""
    return (n + 2 * padding - kernel) // stride + 1


def conv2d_input_grad(grad_out, weight):
    """Exercise 7.2: a 'full' convolution of grad_out with the flipped kernel, channels swapped
    (the same as F.conv_transpose2d(grad_out, weight))."""
    kh, kw = weight.shape[2:]
    return F.conv2d(grad_out, weight.flip((2, 3)).transpose(0, 1), padding=(kh - 1, kw - 1))


def conv2d_weight_grad(x, grad_out):
    """Exercise 7.3: correlate x with grad_out, summing over the batch (batch as channels)."""
    return F.conv2d(x.transpose(0, 1), grad_out.transpose(0, 1)).transpose(0, 1)


def make_cnn():
    """Exercise 7.4: two conv blocks, then a linear layer over the 16·2·2 features."""
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 2 * 2, 10))
