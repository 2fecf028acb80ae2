"""``vizgrad.onnx``: importable, as programs import it; vizgrad cannot write ONNX files."""

from .errors import UnsupportedError


def export(model, args=(), f=None, *rest, **kwargs):
    """Refused: vizgrad cannot export ONNX (:class:`~vizgrad.errors.UnsupportedError`)."""
    raise UnsupportedError("onnx.export: vizgrad cannot export models to ONNX; save the weights with "
                           "vizgrad.save(model.state_dict(), path), or export the same model from PyTorch")


def is_in_onnx_export():
    """False: vizgrad never runs an ONNX export."""
    return False
