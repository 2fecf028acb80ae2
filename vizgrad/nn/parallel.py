"""``vizgrad.nn.parallel``: ``DataParallel`` and ``DistributedDataParallel``, as PyTorch runs
them on a machine without several GPUs: ``DataParallel`` runs its module as it is (its
parameters appear under ``module.``, as PyTorch's), and ``DistributedDataParallel`` needs a
process group, which vizgrad has not (:mod:`vizgrad.distributed`)."""

from ..errors import UnsupportedError
from .module import Module


class DataParallel(Module):
    """``module`` wrapped, run as it is: PyTorch's behaviour with fewer than two GPUs. The
    arguments PyTorch takes (``device_ids``, ``output_device``, ``dim``) are kept."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = [] if device_ids is None else list(device_ids)
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    """Refused: it needs a distributed process group, and vizgrad trains in one process."""

    def __init__(self, module, *args, **kwargs):
        raise UnsupportedError("DistributedDataParallel: vizgrad has no distributed training "
                               "(vizgrad.distributed.is_available() is False); use the module itself, or DataParallel")


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The functional form of :class:`DataParallel`: ``module(*inputs)``."""
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    return module(*inputs, **(module_kwargs or {}))
