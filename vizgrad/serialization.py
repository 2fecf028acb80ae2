"""``vizgrad.save`` and ``vizgrad.load``: checkpoints that never run code on load.

A checkpoint is a zip archive holding ``vizgrad.json`` (the structure: dicts, lists,
tuples, numbers, strings, booleans, None and references to arrays) and one ``.npy``
file per tensor, read back with ``allow_pickle=False``. Writing goes to a temporary
file in the same folder that replaces the target only once complete, so a crash
mid-save leaves the previous checkpoint intact. A temporary is named after its target
and the saving process (``.vizgrad-save-<name>.<pid>.<random>``), so the next save of
that target removes the ones that killed saves left behind.

Transforms (a save/load "param mapper") change tensors on the way in or out: a
callable ``transform(path, tensor) -> tensor``, where ``path`` is the dotted location
(``"model.0.weight"``). :func:`cast_floating` is the common one.

Example::

    vizgrad.save({"model": model.state_dict(), "optim": opt.state_dict()}, "ckpt.vzg",
                 transform=vizgrad.serialization.cast_floating(vizgrad.float16))
    state = vizgrad.load("ckpt.vzg", transform=vizgrad.serialization.cast_floating(vizgrad.float32))
"""

import io
import json
import os
import tempfile
import zipfile
import zlib

import numpy as np

from . import dtypes
from .errors import ArgumentTypeError, DeviceError, VizgradError

FORMAT = "vizgrad-checkpoint"
VERSION = 1
_MANIFEST = "vizgrad.json"
# What zipfile and NumPy raise on damaged bytes, besides BadZipFile: EOFError and OSError for
# cut-off data or bad offsets, NotImplementedError for an unknown compression method or zip
# version, RuntimeError for entries flagged as encrypted, ValueError for bad headers, and the
# decompressors' errors for an entry whose (damaged) header claims it is compressed.
_DAMAGE = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError, RuntimeError,
           ValueError, zlib.error)
try:
    import lzma
    _DAMAGE += (lzma.LZMAError,)
except ImportError:  # pragma: no cover - Python built without lzma
    pass


class CheckpointError(VizgradError, ValueError):
    """A file that is not a readable vizgrad checkpoint, or an object that cannot be saved."""


class CheckpointPathError(VizgradError, OSError):
    """A checkpoint path that cannot be written or read: a directory, no permission, a full
    disk. The message names the path the user gave."""


class CheckpointNotFoundError(CheckpointPathError, FileNotFoundError):
    """A checkpoint to load that does not exist, or a folder to save into that does not."""


def cast_floating(dtype):
    """A transform that casts floating-point tensors to ``dtype`` and leaves others alone."""
    dtype = dtypes.as_dtype(dtype)

    def transform(path, tensor):
        return tensor.to(dtype) if tensor.is_floating_point() else tensor
    transform.__name__ = f"cast_floating_{dtype.name}"
    return transform


def save(obj, path, transform=None):
    """Write ``obj`` (nested dicts, lists and tuples of tensors, numbers, strings, booleans and
    None) to ``path`` atomically, or, as ``torch.save`` does, into a binary file-like object
    (``io.BytesIO``, a file opened with ``"wb"``), from its current position.

    Example::

        buffer = io.BytesIO()
        vizgrad.save(model.state_dict(), buffer)
        buffer.seek(0)
        model.load_state_dict(vizgrad.load(buffer))
    """
    from .tensor import Tensor
    arrays = {}
    stream = path if hasattr(path, "write") else None
    if stream is not None:
        if isinstance(stream, io.TextIOBase):
            raise ArgumentTypeError(f"save: the file {_stream_name(stream)} is open in text mode; open it in "
                                    "binary mode ('wb')")
        target = _stream_name(stream)
    else:
        target = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(target))
        if not os.path.isdir(folder):
            raise CheckpointNotFoundError(f"save: cannot write {target!r}: the folder {folder!r} does not exist")
        if os.path.isdir(target):
            raise CheckpointPathError(f"save: cannot write {target!r}: it is a directory; give a file path "
                                      f"such as {os.path.join(target, 'checkpoint.vzg')!r}")
    containers = set()   # ids of the dicts, lists and tuples being encoded: a cycle is an error

    def encode(value, where):
        if isinstance(value, Tensor):
            tensor = transform(where, value) if transform is not None else value
            key = str(len(arrays))
            arrays[key] = tensor.detach()
            return {"t": "tensor", "key": key, "requires_grad": bool(value.requires_grad), "device": str(tensor.device)}
        if isinstance(value, (dict, list, tuple)):
            if id(value) in containers:
                raise CheckpointError(f"save: cannot write {target!r}: the object contains itself at "
                                      f"{where or 'the top level'} (a self-referential {type(value).__name__})")
            containers.add(id(value))
            try:
                return encode_container(value, where)
            finally:
                containers.discard(id(value))
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, np.generic):
            return value.item()
        if isinstance(value, dtypes.dtype):
            return {"t": "dtype", "name": value.name}
        raise CheckpointError(f"save: cannot write {target!r}: cannot store a {type(value).__name__} at "
                              f"{where or 'the top level'}; checkpoints hold tensors, numbers, strings, booleans, "
                              "None, lists, tuples and dicts")

    def encode_container(value, where):
        if isinstance(value, dict):
            items = []
            for k, v in value.items():
                if not isinstance(k, (str, int)) or isinstance(k, bool):
                    raise CheckpointError(f"save: cannot write {target!r}: dict keys must be strings or integers; "
                                          f"{where or 'the object'} has a key of type {type(k).__name__}")
                items.append([k, encode(v, f"{where}.{k}" if where else str(k))])
            return {"t": "dict", "items": items}
        return {"t": type(value).__name__,
                "items": [encode(v, f"{where}.{i}" if where else str(i)) for i, v in enumerate(value)]}

    manifest = {"format": FORMAT, "version": VERSION, "root": encode(obj, "")}
    if stream is not None:
        try:
            _write_archive(stream, manifest, arrays)
        except OSError as error:
            raise CheckpointPathError(f"save: cannot write {target!r}: {error.strerror or error}") from None
        return
    prefix = f"{_TEMPORARY}{os.path.basename(target)}."
    _remove_stale_temporaries(folder, prefix)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}.", dir=folder)
    except OSError as error:
        raise CheckpointPathError(f"save: cannot write {target!r}: {error.strerror or error}") from None
    try:
        with os.fdopen(handle, "wb") as raw:
            _write_archive(raw, manifest, arrays)
            raw.flush()
            os.fsync(raw.fileno())
        os.chmod(temporary, _file_mode(target))
        os.replace(temporary, target)
    except BaseException as error:
        if os.path.exists(temporary):
            os.unlink(temporary)
        if isinstance(error, OSError) and not isinstance(error, VizgradError):
            raise CheckpointPathError(f"save: cannot write {target!r}: {error.strerror or error}") from None
        raise


def _write_archive(stream, manifest, arrays):
    """The checkpoint's zip archive (the manifest and one .npy per tensor) into ``stream``."""
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(_MANIFEST, json.dumps(manifest))
        for key, tensor in arrays.items():
            buffer = io.BytesIO()
            host = tensor._backend().to_numpy(tensor._array)
            # asarray, not ascontiguousarray: that one turns a 0-d array into shape (1,)
            np.lib.format.write_array(buffer, np.asarray(host, order="C"), allow_pickle=False)
            archive.writestr(f"arrays/{key}.npy", buffer.getvalue())


def _stream_name(stream):
    """How messages name a file-like object: its file name, else its type."""
    name = getattr(stream, "name", None)
    return name if isinstance(name, str) else f"<{type(stream).__name__}>"


_TEMPORARY = ".vizgrad-save-"


def _remove_stale_temporaries(folder, prefix):
    """Delete the temporaries of this target (``prefix``) whose saving process no longer
    runs: what a save killed mid-way left. Live saves' temporaries are left alone."""
    try:
        names = [name for name in os.listdir(folder) if name.startswith(prefix)]
    except OSError:
        return
    for name in names:
        pid, dot, random_part = name[len(prefix):].partition(".")
        if not (pid.isdigit() and dot and random_part and "." not in random_part) or _process_runs(int(pid)):
            continue   # another target's temporary (a name with more dots), or a save still running
        try:
            os.unlink(os.path.join(folder, name))
        except OSError:
            pass    # removed meanwhile, or not ours to remove


def _process_runs(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True     # another user's process, or a platform that cannot tell: keep the file
    return True


def _file_mode(path):
    """The permissions the checkpoint gets: those of the file it replaces, else the usual
    default for new files (0666 less the umask; temporary files start private)."""
    try:
        return os.stat(path).st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _placed(make_tensor, array, saved, device):
    """``array`` as a tensor on ``device``, in load's words when that device is not usable here."""
    try:
        return make_tensor(array, device=device)
    except DeviceError as error:
        hint = ("pass map_location='cpu' to load them onto the CPU" if device == saved else
                "pass a map_location that names a device this machine has")
        raise DeviceError(f"load: the checkpoint holds tensors saved on '{saved}', to be loaded onto '{device}', "
                          f"which is not usable here ({error}); {hint}") from None


def load(path, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, transform=None,
         **pickle_load_args):
    """Read a checkpoint written by :func:`save`, with ``torch.load``'s signature.

    ``map_location`` says where tensors go: a device or device string, a dict from the saved
    device (``"cuda:0"``) to a device, or a function ``(tensor on the CPU, saved device) ->
    tensor`` (None: the saved device); default: the device each tensor was saved from. A
    vizgrad checkpoint holds only tensors, numbers, strings and containers and is never
    unpickled, so it is always read as PyTorch reads with ``weights_only=True`` (the argument
    is accepted either way; ``mmap`` too). Damaged or foreign files raise
    :class:`CheckpointError`. ``path`` may be a binary file-like object (``io.BytesIO``, a file
    opened with ``"rb"``), as in ``torch.load``."""
    from .creation import tensor as make_tensor
    if hasattr(path, "read"):
        name = _stream_name(path)
        if isinstance(path, io.TextIOBase):
            raise ArgumentTypeError(f"load: the file {name} is open in text mode; open it in binary mode ('rb')")
    else:
        name = os.fspath(path)
    if pickle_module is not None or pickle_load_args:
        raise ArgumentTypeError("load: vizgrad checkpoints are never pickled, so pickle_module and pickle load "
                                f"arguments ({', '.join(sorted(pickle_load_args)) or 'pickle_module'}) have no meaning here")
    relocate = map_location if callable(map_location) else None

    def destination(saved):
        if map_location is None:
            return saved
        if isinstance(map_location, dict):
            return map_location.get(saved, saved)
        return map_location
    try:
        archive = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise CheckpointNotFoundError(f"load: {name!r} does not exist") from None
    except OSError as error:
        if isinstance(error, IsADirectoryError) or os.path.isdir(name):
            raise CheckpointPathError(f"load: {name!r} is a directory, not a checkpoint file") from None
        if isinstance(error, PermissionError):
            raise CheckpointPathError(f"load: cannot read {name!r}: permission denied") from None
        raise CheckpointError(f"load: {name!r} is not a vizgrad checkpoint (not a zip archive: damaged, "
                              "truncated, or written by another program)") from None
    except _DAMAGE:
        raise CheckpointError(f"load: {name!r} is not a vizgrad checkpoint (not a zip archive: damaged, "
                              "truncated, or written by another program)") from None
    with archive:
        try:
            manifest = json.loads(archive.read(_MANIFEST))
        except KeyError:
            raise CheckpointError(f"load: {name!r} is a zip archive but not a vizgrad checkpoint "
                                  f"(it has no {_MANIFEST})") from None
        except _DAMAGE as error:
            raise CheckpointError(f"load: the structure of {name!r} is damaged ({error})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise CheckpointError(f"load: {name!r} is not a vizgrad checkpoint")
        if not isinstance(manifest.get("version"), int):
            raise CheckpointError(f"load: the structure of {name!r} is damaged (no format version)")
        if manifest["version"] > VERSION:
            raise CheckpointError(f"load: {name!r} was written by a newer vizgrad (format version "
                                  f"{manifest.get('version')}); this one reads up to {VERSION}")

        def read_array(key):
            try:
                data = archive.read(f"arrays/{key}.npy")
                return np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)
            except (KeyError, *_DAMAGE) as error:
                raise CheckpointError(f"load: array {key} of {name!r} is missing or damaged ({error})") from None

        def decode(value, where):
            if not isinstance(value, dict):
                return value
            kind = value.get("t")
            if kind == "tensor":
                array = read_array(value["key"])
                if array.dtype == object:
                    raise CheckpointError(f"load: array {value['key']} of {name!r} is not numeric")
                saved = value.get("device", "cpu")    # older checkpoints held CPU tensors only
                tensor = _placed(make_tensor, array, saved, "cpu" if relocate is not None else destination(saved))
                if relocate is not None:
                    moved = relocate(tensor, saved)
                    tensor = _placed(make_tensor, array, saved, saved) if moved is None else moved
                if transform is not None:
                    tensor = transform(where, tensor)
                if value.get("requires_grad") and tensor.is_floating_point():
                    tensor.requires_grad_(True)
                return tensor
            if kind == "dict":
                return {k: decode(v, f"{where}.{k}" if where else str(k)) for k, v in value["items"]}
            if kind in ("list", "tuple"):
                items = [decode(v, f"{where}.{i}" if where else str(i)) for i, v in enumerate(value["items"])]
                return items if kind == "list" else tuple(items)
            if kind == "dtype":
                return dtypes.as_dtype(value["name"])
            raise CheckpointError(f"load: {name!r} holds an entry of unknown kind {kind!r} at {where or 'the top'}")

        try:
            return decode(manifest["root"], "")
        except CheckpointError:
            raise
        except (KeyError, TypeError, ValueError) as error:
            raise CheckpointError(f"load: the structure of {name!r} is damaged ({error!r})") from None
