"""``vizgrad.func``: function transforms, as ``torch.func``.

* :func:`grad`, :func:`grad_and_value`: gradients of scalar functions, as functions.
* :func:`vjp`, :func:`jvp`: vector-Jacobian and Jacobian-vector products.
* :func:`jacrev`, :func:`jacfwd`, :func:`hessian`: whole Jacobians and Hessians.
* :func:`vmap`: a function of one sample run on a batch at once (batching rules:
  :mod:`vizgrad.func.rules`); with ``grad`` it gives per-sample gradients.
* :func:`functional_call`, :func:`stack_module_state`: modules as functions of their parameters;
  :func:`replace_all_batch_norm_modules_`: batch norms without running statistics, for vmap.

Example (per-sample gradients of a model)::

    from vizgrad.func import functional_call, grad, vmap

    params = {name: p.detach() for name, p in model.named_parameters()}

    def loss(params, x, y):
        out = functional_call(model, params, (x.unsqueeze(0),))
        return F.cross_entropy(out, y.unsqueeze(0))

    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(params, inputs, targets)

How the transforms work: :mod:`vizgrad.func.batched` (vmap) and
:mod:`vizgrad.func.transforms` (the gradient transforms; forward mode as two reverse passes).
"""

from .batched import BatchedTensor, PerSampleWarning
from .jacobians import hessian, jacfwd, jacrev
from .module import functional_call, replace_all_batch_norm_modules_, stack_module_state
from .transforms import grad, grad_and_value, jvp, vjp
from .vmap import vmap

__all__ = ["BatchedTensor", "PerSampleWarning", "functional_call", "grad", "grad_and_value", "hessian", "jacfwd",
           "jacrev", "jvp", "replace_all_batch_norm_modules_", "stack_module_state", "vjp", "vmap"]
