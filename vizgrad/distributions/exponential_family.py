"""``ExponentialFamily``: the base of distributions p(x) = h(x) exp(⟨θ, t(x)⟩ - A(θ)), whose
entropy follows from the log normaliser A alone."""

from ..autograd.api import grad
from ..autograd.grad_mode import enable_grad
from .distribution import Distribution


class ExponentialFamily(Distribution):
    """A distribution of natural parameters θ (``_natural_params``), log normaliser A(θ)
    (``_log_normalizer``) and expected carrier measure E[log h(x)] (``_mean_carrier_measure``).

    ``entropy`` is the Bregman divergence form H = A(θ) - ⟨θ, ∇A(θ)⟩ - E[log h(x)], with ∇A
    from vizgrad's autograd (``create_graph``): θ that record a graph keep it, so the entropy is
    differentiable in the parameters (PyTorch detaches them, so its carries no gradient).
    """

    @property
    def _natural_params(self):
        raise NotImplementedError(f"{type(self).__name__} does not define its natural parameters")

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError(f"{type(self).__name__} does not define its log normalizer")

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError(f"{type(self).__name__} does not define its mean carrier measure")

    def entropy(self):
        """A(θ) - ⟨θ, ∇A(θ)⟩ - E[log h(x)], summed over each natural parameter's event entries."""
        with enable_grad():
            params = [p if p.requires_grad else p.detach().requires_grad_() for p in self._natural_params]
            log_normalizer = self._log_normalizer(*params)
            gradients = grad(log_normalizer.sum(), params, create_graph=True)
        result = log_normalizer - self._mean_carrier_measure
        for param, gradient in zip(params, gradients):
            result = result - (param * gradient).reshape(*self._batch_shape, -1).sum(-1)
        return result
