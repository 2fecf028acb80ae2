"""``vizgrad.distributed``: importable, as programs import it; vizgrad trains in one process,
so ``is_available()`` is False (as PyTorch built without distributed support answers) and
starting or using a process group raises :class:`~vizgrad.errors.UnsupportedError`.

Example (the check programs make)::

    if vizgrad.distributed.is_available() and vizgrad.distributed.is_initialized(): ...
"""

from .errors import UnsupportedError


def is_available():
    """False: vizgrad has no distributed backend."""
    return False


def is_initialized():
    """False: no process group can exist."""
    return False


def _unsupported(name):
    def refuse(*args, **kwargs):
        raise UnsupportedError(f"distributed.{name}: vizgrad has no distributed training (distributed.is_available() "
                               "is False); run the program in one process")
    refuse.__name__ = name
    refuse.__doc__ = f"Refused: vizgrad has no distributed training (``{name}``)."
    return refuse


init_process_group = _unsupported("init_process_group")
destroy_process_group = _unsupported("destroy_process_group")
get_rank = _unsupported("get_rank")
get_world_size = _unsupported("get_world_size")
barrier = _unsupported("barrier")
all_reduce = _unsupported("all_reduce")
all_gather = _unsupported("all_gather")
broadcast = _unsupported("broadcast")
reduce = _unsupported("reduce")
