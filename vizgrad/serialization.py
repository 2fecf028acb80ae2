"""``vizgrad.save`` and ``vizgrad.load``: checkpoints that run no code on load unless asked.

A checkpoint is a zip archive holding ``vizgrad.json`` (the structure: dicts and
``OrderedDict``/``defaultdict``, lists, tuples, named tuples, ``vizgrad.Size``, sets, numbers,
NumPy scalars, strings, booleans, None and references to arrays) and one ``.npy`` file per
tensor storage, read back with ``allow_pickle=False`` (a dtype the ``.npy`` format cannot name,
bfloat16, is stored as its bits and named in the manifest). As with ``torch.save``, a tensor saved
twice comes back as one tensor, and views of one tensor (tied weights, ``w`` and ``w[0]``) as
views of one storage (on the CPU; ``map_location`` to another device copies each). A named
tuple comes back as its class when that class's module is already imported (no module is
imported on load), else as a named tuple of the same name and fields.

Anything else (a whole ``nn.Module``, an optimizer, an instance of the user's class) is
pickled, as ``torch.save`` pickles it: the archive then holds the object's pickle, with its
tensors still stored as ``.npy`` storages. Loading a pickle can run arbitrary code, so, as in
PyTorch 2.6+, :func:`load` refuses it unless called with ``weights_only=False`` (the user's
opt-in for files they trust), naming the classes the pickle would import, or unless all it
names is allowed (a few builtins, and what :func:`add_safe_globals` allows). What unpickling
restores is what pickling kept, as in PyTorch: parameters (as Parameters), buffers, submodules
in order, the training flag and picklable module hooks; tensors' hooks and ``.grad`` are not
saved.

Writing goes to a temporary file in the target's folder (the folder a symlink points into:
the link stays a link) that replaces the target only once complete and flushed, so a crash
mid-save leaves the previous checkpoint intact and no failure leaves a temporary behind; a
read-only target is refused, as ``open(path, "wb")`` refuses it. A temporary is named after its
target and the saving process (``.vizgrad-save-<name>.<pid>.<random>``), so the next save of
that target removes the ones that killed saves left behind.

Transforms (a save/load "param mapper") change tensors on the way in or out: a
callable ``transform(path, tensor) -> tensor``, where ``path`` is the dotted location
(``"model.0.weight"``). :func:`cast_floating` is the common one.

Example::

    vizgrad.save({"model": model.state_dict(), "optim": opt.state_dict()}, "ckpt.vzg",
                 transform=vizgrad.serialization.cast_floating(vizgrad.float16))
    state = vizgrad.load("ckpt.vzg", transform=vizgrad.serialization.cast_floating(vizgrad.float32))
"""

import collections
import io
import json
import os
import pickle
import stat
import sys
import tempfile
import types
import zipfile
import zlib

import numpy as np

from . import dtypes
from .errors import ArgumentTypeError, DeviceError, VizgradError
from .nn.module import Module, Parameter, UninitializedParameter
from .tensor import Size, Tensor

FORMAT = "vizgrad-checkpoint"
# 2: container kinds, NumPy scalars, shared storages and views; 3: pickled objects, storages of
# dtypes stored as bits. A checkpoint is written with the lowest version that reads it.
VERSION = 3
_MANIFEST = "vizgrad.json"
_PICKLE = "objects/root.pkl"
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


class WeightsOnlyError(CheckpointError, pickle.UnpicklingError):
    """A checkpoint holding pickled objects, loaded with ``weights_only=True`` (the default):
    PyTorch raises ``pickle.UnpicklingError`` there too."""


class _NotPlain(Exception):
    """An object the manifest's plain structure cannot hold: it is pickled instead."""


class CheckpointNotFoundError(CheckpointPathError, FileNotFoundError):
    """A checkpoint to load that does not exist, or a folder to save into that does not."""


class CheckpointPermissionError(CheckpointPathError, PermissionError):
    """A checkpoint that may not be written (a read-only file) or read."""


# What a pickle may name under weights_only=True: these, and what add_safe_globals allows
_ALLOWED = {f"{kind.__module__}.{kind.__qualname__}": kind for kind in
            (collections.OrderedDict, complex, slice, range, bytearray, Parameter, UninitializedParameter, Size)}
_ALLOWED["vizgrad.dtypes.as_dtype"] = dtypes.as_dtype       # (a dtype pickles as as_dtype(name))
_SAFE_GLOBALS = {}


def add_safe_globals(safe_globals):
    """Allow ``load(..., weights_only=True)`` to rebuild these classes and functions from a
    pickle, as ``torch.serialization.add_safe_globals``: each an object, or ``(object, "its.name")``.

    Example::

        vizgrad.serialization.add_safe_globals([argparse.Namespace])
        vizgrad.load("run.vzg")            # a checkpoint holding the run's Namespace
    """
    for item in safe_globals:
        found, name = item if isinstance(item, tuple) else (item, f"{item.__module__}.{item.__qualname__}")
        _SAFE_GLOBALS[name] = found


def get_safe_globals():
    """What :func:`add_safe_globals` allowed."""
    return list(_SAFE_GLOBALS.values())


def clear_safe_globals():
    _SAFE_GLOBALS.clear()


class safe_globals:  # noqa: N801  (PyTorch's name)
    """:func:`add_safe_globals` for the duration of a ``with`` block."""

    def __init__(self, safe_globals):
        self.allowed = safe_globals

    def __enter__(self):
        self.before = dict(_SAFE_GLOBALS)
        add_safe_globals(self.allowed)

    def __exit__(self, *exc):
        _SAFE_GLOBALS.clear()
        _SAFE_GLOBALS.update(self.before)
        return False


def _allowed(name):
    return _SAFE_GLOBALS.get(name) or _ALLOWED.get(name)


def _weights_only_refusal(name, refused):
    listed = ", ".join(refused[:8]) + (", ..." if len(refused) > 8 else "")
    return WeightsOnlyError(
        f"load: {name!r} holds pickled Python objects, as save(model) writes, and weights_only=True (the default) "
        f"loads only tensors, numbers, strings, containers and allowed globals; not allowed: {listed}. Unpickling "
        "can run arbitrary code: only for a file from a source you trust, call load(..., weights_only=False), or "
        f"allow what it names with vizgrad.serialization.add_safe_globals([{refused[0]}])")


def cast_floating(dtype):
    """A transform that casts floating-point tensors to ``dtype`` and leaves others alone."""
    dtype = dtypes.as_dtype(dtype)

    def transform(path, tensor):
        return tensor.to(dtype) if tensor.is_floating_point() else tensor
    transform.__name__ = f"cast_floating_{dtype.name}"
    return transform


def save(obj, path, transform=None):
    """Write ``obj`` to ``path`` atomically, or, as ``torch.save`` does, into a binary file-like
    object (``io.BytesIO``, a file opened with ``"wb"``), from its current position. A symlink is
    written through (its target replaced, the link kept). Nested dicts, lists, tuples, named
    tuples and sets of tensors, numbers, NumPy scalars, strings, booleans and None (state dicts)
    are stored as plain data; anything else (``save(model)``) is pickled, and loads only with
    ``load(path, weights_only=False)``.

    Example::

        buffer = io.BytesIO()
        vizgrad.save(model.state_dict(), buffer)
        buffer.seek(0)
        model.load_state_dict(vizgrad.load(buffer))
    """
    stream = path if hasattr(path, "write") else None
    if stream is not None:
        if isinstance(stream, io.TextIOBase):
            raise ArgumentTypeError(f"save: the file {_stream_name(stream)} is open in text mode; open it in "
                                    "binary mode ('wb')")
        target = destination = _stream_name(stream)
    else:
        target = os.fspath(path)
        destination = os.path.realpath(target)       # through symlinks: the link stays a link
        folder = os.path.dirname(destination)
        if not os.path.isdir(folder):
            raise CheckpointNotFoundError(f"save: cannot write {target!r}: the folder {folder!r} does not exist")
        if os.path.isdir(destination):
            raise CheckpointPathError(f"save: cannot write {target!r}: it is a directory; give a file path "
                                      f"such as {os.path.join(target, 'checkpoint.vzg')!r}")
        if _read_only(destination):
            raise CheckpointPermissionError(f"save: cannot write {target!r}: permission denied (the file is "
                                            "read-only; make it writable, or save under another name)")
    encoder = _Encoder(target, transform)
    try:
        manifest = {"format": FORMAT, "version": 2, "root": encoder.encode(obj, "")}
        pickled = None
    except _NotPlain as refusal:
        encoder = _Encoder(target, transform)      # (nothing of the plain attempt is kept)
        pickled, names = encoder.pickle(obj, refusal)
        manifest = {"format": FORMAT, "version": 3, "root": {"t": "pickle", "classes": names},
                    "tensors": encoder.entries}
    stored_as_bits = {key: tensor.dtype.name for key, tensor in encoder.arrays.items()
                      if not _npy_names(tensor.dtype.numpy)}
    if stored_as_bits:
        manifest.update(version=3, dtypes=stored_as_bits)
    if stream is not None:
        try:
            _write_archive(stream, manifest, encoder.arrays, pickled)
        except OSError as error:
            raise CheckpointPathError(f"save: cannot write {target!r}: {error.strerror or error}") from None
        return
    _replace_atomically(target, destination, manifest, encoder.arrays, pickled)


def _npy_names(np_dtype):
    """Whether the .npy format's header names ``np_dtype`` (it writes bfloat16 as raw bytes)."""
    return np.dtype(np.lib.format.dtype_to_descr(np_dtype)) == np_dtype


def _read_only(path):
    """Whether an existing ``path`` may not be written: no permission, or no write bit at all
    (which even a superuser's ``torch.save`` would otherwise overwrite)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not os.access(path, os.W_OK) or not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)


def _replace_atomically(target, destination, manifest, arrays, pickled):
    """Write the archive to a temporary beside ``destination``, flush it to disk, and only then
    put it in ``destination``'s place; on any failure the temporary is removed."""
    folder = os.path.dirname(destination)
    prefix = f"{_TEMPORARY}{os.path.basename(destination)}."
    _remove_stale_temporaries(folder, prefix)
    try:
        handle, temporary = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}.", dir=folder)
    except OSError as error:
        raise _path_error(target, error) from None
    try:
        with os.fdopen(handle, "wb") as raw:
            _write_archive(raw, manifest, arrays, pickled)
            raw.flush()
            os.fsync(raw.fileno())
        os.chmod(temporary, _file_mode(destination))
        os.replace(temporary, destination)
    except BaseException as error:
        if os.path.exists(temporary):
            os.unlink(temporary)
        if isinstance(error, OSError) and not isinstance(error, VizgradError):
            raise _path_error(target, error) from None
        raise
    _sync_folder(folder)


def _path_error(target, error):
    kind = CheckpointPermissionError if isinstance(error, PermissionError) else CheckpointPathError
    return kind(f"save: cannot write {target!r}: {error.strerror or error}")


def _sync_folder(folder):
    """Flush the folder's entry for the replaced file, where the platform allows it."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


# defaultdict factories a checkpoint may name (no other code is ever looked up on load)
_FACTORIES = {factory.__name__: factory for factory in (list, dict, set, frozenset, tuple, int, float, str, bool)}


class _Encoder:
    """The manifest's structure for one object, and the arrays it references (``arrays``:
    storage key -> Tensor). A tensor saved twice is encoded once; tensors sharing one base's
    memory reference that base's storage, with their offset, shape and strides."""

    def __init__(self, target, transform):
        self.target, self.transform = target, transform
        self.arrays = {}
        self.tensors = {}         # id(tensor) -> its entry
        self.storages = {}        # id(memory owner) -> storage key
        self.kept = []            # the encoded tensors, alive until the save ends (their ids stay unique)
        self.containers = set()   # ids of the containers being encoded: a cycle is an error
        self.locations = []       # each tensor entry's location (by entry id), for pickled objects

    def refuse(self, message):
        raise _NotPlain(message)

    def pickle(self, obj, refusal):
        """``(the pickle of obj, the classes and functions it names)``; its tensors are stored as
        storages (persistent ids), each named by its location where a module or container says."""
        buffer = io.BytesIO()
        pickler = _Pickler(buffer, self, _tensor_paths(obj))
        try:
            pickler.dump(obj)
        except (pickle.PicklingError, TypeError, AttributeError, RecursionError) as error:
            raise CheckpointError(f"save: cannot write {self.target!r}: {refusal}, and it cannot be pickled "
                                  f"either ({error})") from None
        return buffer.getvalue(), sorted(pickler.names)

    def encode(self, value, where):
        if value is None or type(value) in (bool, int, float, str):
            return value
        if isinstance(value, Tensor):
            return self.tensor(value, where)
        if isinstance(value, np.generic):
            return self.numpy_scalar(value, where)
        if isinstance(value, (dict, list, tuple, set, frozenset)):
            if id(value) in self.containers:
                self.refuse(f"the object contains itself at {where or 'the top level'} (a self-referential "
                            f"{type(value).__name__})")
            self.containers.add(id(value))
            try:
                if isinstance(value, Size):
                    return {"t": "size", "items": [int(n) for n in value]}
                return self.container(value, where)
            finally:
                self.containers.discard(id(value))
        if isinstance(value, (bool, int, float, str)):
            return value
        if isinstance(value, dtypes.dtype):
            return {"t": "dtype", "name": value.name}
        self.refuse(f"cannot store a {type(value).__name__} at {where or 'the top level'}; checkpoints hold tensors, "
                    "numbers, strings, booleans, None, lists, tuples, sets and dicts")

    def items(self, values, where):
        return [self.encode(v, f"{where}.{i}" if where else str(i)) for i, v in enumerate(values)]

    def container(self, value, where):
        if isinstance(value, dict):
            items = []
            for k, v in value.items():
                if not isinstance(k, (str, int)) or isinstance(k, bool):
                    self.refuse(f"dict keys must be strings or integers; {where or 'the object'} has a key of type "
                                f"{type(k).__name__}")
                items.append([k, self.encode(v, f"{where}.{k}" if where else str(k))])
            if isinstance(value, collections.defaultdict):
                factory = value.default_factory
                if factory is not None and _FACTORIES.get(getattr(factory, "__name__", None)) is not factory:
                    self.refuse(f"the defaultdict at {where or 'the top level'} has default_factory {factory!r}; "
                                f"it must be None or one of {', '.join(_FACTORIES)}")
                return {"t": "defaultdict", "factory": None if factory is None else factory.__name__, "items": items}
            return {"t": "ordered_dict" if isinstance(value, collections.OrderedDict) else "dict", "items": items}
        if isinstance(value, (set, frozenset)):
            return {"t": "set" if isinstance(value, set) else "frozenset", "items": self.items(value, where)}
        if isinstance(value, tuple) and isinstance(getattr(type(value), "_fields", None), tuple):
            kind = type(value)
            return {"t": "namedtuple", "module": kind.__module__, "name": kind.__qualname__,
                    "fields": list(kind._fields), "items": self.items(value, where)}
        return {"t": "list" if isinstance(value, list) else "tuple", "items": self.items(value, where)}

    def numpy_scalar(self, value, where):
        kind = value.dtype.kind
        if kind not in "biufc":
            self.refuse(f"cannot store a NumPy {value.dtype} scalar at {where or 'the top level'}")
        item = value.item()
        return {"t": "numpy", "dtype": value.dtype.str,
                "value": [item.real, item.imag] if kind == "c" else item}

    @property
    def entries(self):
        """The tensors' entries, in order of their ids, each as ``[location, entry]``."""
        return [[self.locations[entry["id"]], entry] for entry in self.tensors.values()]

    def tensor(self, value, where):
        entry = self.tensors.get(id(value))
        if entry is not None:        # the same tensor again: one tensor on load
            return entry
        self.locations.append(where)
        tensor = self.transform(where, value) if self.transform is not None else value
        self.kept += (value, tensor)
        entry = {"t": "tensor", "id": len(self.tensors), "requires_grad": bool(value.requires_grad),
                 "device": str(tensor.device)}
        view = None if tensor is not value else _storage_view(value)
        if view is None:
            entry["key"] = self.store(tensor.detach(), id(tensor))
        else:
            owner, geometry = view
            entry["key"] = self.store(owner.detach(), id(owner))
            if geometry is not None:
                entry["view"] = geometry
        self.tensors[id(value)] = entry
        return entry

    def store(self, tensor, owner_id):
        key = self.storages.get(owner_id)
        if key is None:
            key = self.storages[owner_id] = str(len(self.arrays))
            self.arrays[key] = tensor
        return key


class _Pickler(pickle.Pickler):
    """A pickler that stores tensors as the encoder's entries (``("tensor", entry id, subclass,
    name)``) and notes the classes and functions the pickle names (for load's refusal)."""

    def __init__(self, file, encoder, paths):
        super().__init__(file, protocol=pickle.DEFAULT_PROTOCOL)
        self.encoder, self.paths, self.names = encoder, paths, set()

    def persistent_id(self, obj):
        if not isinstance(obj, Tensor):
            return None
        if isinstance(obj, UninitializedParameter):      # a lazy module's, before its first forward
            return "uninitialized", obj._requires_grad, type(obj), obj.name
        entry = self.encoder.tensor(obj, self.paths.get(id(obj), ""))
        subclass = None if type(obj) is Tensor else type(obj)
        return "tensor", entry["id"], subclass, obj.name

    def reducer_override(self, obj):
        named = obj if isinstance(obj, (type, types.FunctionType)) else type(obj)
        module = getattr(named, "__module__", None)
        if module not in (None, "builtins", "copyreg", "collections"):
            self.names.add(f"{module}.{named.__qualname__}")
        return NotImplemented


def _tensor_paths(value):
    """``id(tensor) -> its dotted location`` in ``value``'s modules (state dict names) and
    containers, first location first: what a transform is told about each tensor of a pickled
    object. Iterative, each container once (a pickled object may contain itself)."""
    found, seen, pending = {}, set(), [("", value)]
    while pending:
        where, item = pending.pop(0)
        if isinstance(item, Tensor):
            found.setdefault(id(item), where)
        elif id(item) in seen:
            continue
        elif isinstance(item, Module):
            seen.add(id(item))
            for name, tensor in item.state_dict(keep_vars=True).items():
                found.setdefault(id(tensor), f"{where}.{name}" if where else name)
        elif isinstance(item, (dict, list, tuple)):
            seen.add(id(item))
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            pending += [(f"{where}.{key}" if where else str(key), child) for key, child in pairs
                        if isinstance(child, (Tensor, Module, dict, list, tuple))]
    return found


def _storage_view(tensor):
    """``(owner, geometry)``: the tensor whose row-major memory ``tensor`` lies in, and
    ``[offset, shape, strides]`` in that memory's elements (None where ``tensor`` is all of it,
    in order). None where that memory cannot be shared in a checkpoint (not row-major)."""
    owner = tensor._base if tensor._base is not None else tensor
    backend = owner._backend()
    try:
        here, there = backend.memory_layout(tensor._array), backend.memory_layout(owner._array)
    except (AttributeError, KeyError, TypeError):
        return None
    if not backend.is_contiguous(owner._array):
        return None
    itemsize = here[2]
    if tensor is owner or (tensor.shape == owner.shape and here == there):
        return owner, None
    return owner, [(here[0] - there[0]) // itemsize, list(tensor.shape), [s // itemsize for s in here[1]]]


def _write_archive(stream, manifest, arrays, pickled=None):
    """The checkpoint's zip archive (the manifest, one .npy per tensor, the pickle if any) into
    ``stream``. A storage of a dtype the .npy format cannot name (``manifest["dtypes"]``) is
    written as unsigned integers of its width: its bits."""
    bits = manifest.get("dtypes", {})
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(_MANIFEST, json.dumps(manifest))
        for key, tensor in arrays.items():
            buffer = io.BytesIO()
            # asarray, not ascontiguousarray: that one turns a 0-d array into shape (1,)
            host = np.asarray(tensor._backend().to_numpy(tensor._array), order="C")
            if key in bits:
                host = host.view(f"u{host.itemsize}")
            np.lib.format.write_array(buffer, host, allow_pickle=False)
            archive.writestr(f"arrays/{key}.npy", buffer.getvalue())
        if pickled is not None:
            archive.writestr(_PICKLE, pickled)


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


def _placed(make_tensor, array, saved, device, share=False):
    """``array`` as a tensor on ``device``, in load's words when that device is not usable here
    (with ``share``, on the CPU, the tensor keeps ``array``'s memory)."""
    if share:
        return Tensor._make(array)
    try:
        return make_tensor(array, device=device)
    except DeviceError as error:
        hint = ("pass map_location='cpu' to load them onto the CPU" if device == saved else
                "pass a map_location that names a device this machine has")
        raise DeviceError(f"load: the checkpoint holds tensors saved on '{saved}', to be loaded onto '{device}', "
                          f"which is not usable here ({error}); {hint}") from None


_DICTS = {"dict": dict, "ordered_dict": collections.OrderedDict, "defaultdict": None}
_SEQUENCES = {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset, "size": Size}


def _on_cpu(device):
    return device is None or str(device) == "cpu"


def _strided(storage, geometry, key, name):
    """The view ``[offset, shape, strides]`` of the row-major ``storage``, after checking that it
    stays inside it (a damaged checkpoint must not read outside its arrays)."""
    offset, shape, strides = geometry
    if not (isinstance(offset, int) and len(shape) == len(strides)
            and all(isinstance(n, int) and n >= 0 for n in shape) and all(isinstance(s, int) for s in strides)):
        raise CheckpointError(f"load: the view of array {key} in {name!r} is damaged")
    if 0 not in shape:
        low = offset + sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
        high = offset + sum(max(0, (n - 1) * s) for n, s in zip(shape, strides))
        if low < 0 or high >= storage.size:
            raise CheckpointError(f"load: a view of array {key} in {name!r} lies outside it (damaged)")
    flat = storage.reshape(-1)
    itemsize = storage.itemsize
    return np.lib.stride_tricks.as_strided(flat[offset:] if 0 not in shape else flat, shape,
                                           [s * itemsize for s in strides])


def _named_tuple(module, qualname, fields):
    """The named tuple class saved as ``module.qualname`` with ``fields``: that class when its
    module is already imported and its fields match (no module is imported: loading runs no
    code), else a named tuple of the same name and fields."""
    found = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if isinstance(found, type) and issubclass(found, tuple) and list(getattr(found, "_fields", ())) == list(fields):
        return found
    return collections.namedtuple(qualname.rpartition(".")[2], fields)


def load(path, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, transform=None,
         **pickle_load_args):
    """Read a checkpoint written by :func:`save`, with ``torch.load``'s signature.

    ``map_location`` says where tensors go: a device or device string, a dict from the saved
    device (``"cuda:0"``) to a device, or a function ``(tensor on the CPU, saved device) ->
    tensor`` (None: the saved device); default: the device each tensor was saved from.
    ``weights_only`` is True unless given, as in PyTorch 2.6+: tensors, numbers, strings,
    containers and the globals :func:`add_safe_globals` allows load, and a checkpoint whose
    pickle names anything else (``save(model)``) is refused with :class:`WeightsOnlyError`;
    ``weights_only=False`` unpickles it, for files you trust (unpickling can run any code).
    ``encoding``, ``errors`` and ``fix_imports`` reach the unpickler; ``mmap`` is accepted and
    changes nothing. Damaged or foreign files raise :class:`CheckpointError`. ``path`` may be a
    binary file-like object (``io.BytesIO``, a file opened with ``"rb"``), as in ``torch.load``.

    Example::

        vizgrad.save(model, "model.vzg")
        model = vizgrad.load("model.vzg", weights_only=False)     # a file you trust
    """
    from .creation import tensor as make_tensor
    if hasattr(path, "read"):
        name = _stream_name(path)
        if isinstance(path, io.TextIOBase):
            raise ArgumentTypeError(f"load: the file {name} is open in text mode; open it in binary mode ('rb')")
    else:
        name = os.fspath(path)
    if weights_only is not False and pickle_module is not None:
        raise ArgumentTypeError("load: can not safely load weights when an explicit pickle_module is given: "
                                "pass weights_only=False (for a file you trust) to unpickle with it")
    unknown = sorted(set(pickle_load_args) - {"encoding", "errors", "fix_imports"})
    if unknown:
        raise ArgumentTypeError(f"load: unknown pickle load arguments {', '.join(unknown)} (pickle.Unpickler "
                                "takes encoding, errors and fix_imports)")
    if pickle_module not in (None, pickle):
        raise ArgumentTypeError(f"load: pickle_module must be Python's pickle (or None), got {pickle_module!r}")
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
            raise CheckpointPermissionError(f"load: cannot read {name!r}: permission denied") from None
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

        stored_as_bits = manifest.get("dtypes", {})
        root = manifest.get("root")
        pickled = manifest["version"] >= 3 and isinstance(root, dict) and root.get("t") == "pickle"
        restricted = pickled and weights_only is not False
        if restricted:        # what the manifest says the pickle names, refused before unpickling
            refused = [str(item) for item in root.get("classes") or () if not _allowed(str(item))]
            if refused:
                raise _weights_only_refusal(name, refused)

        def read_array(key):
            try:
                data = archive.read(f"arrays/{key}.npy")
                array = np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)
            except (KeyError, *_DAMAGE) as error:
                raise CheckpointError(f"load: array {key} of {name!r} is missing or damaged ({error})") from None
            if array.dtype == object:
                raise CheckpointError(f"load: array {key} of {name!r} is not numeric")
            if key in stored_as_bits:
                try:
                    stored = dtypes.as_dtype(stored_as_bits[key]).numpy
                except (dtypes.DTypeError, TypeError) as error:
                    raise CheckpointError(f"load: array {key} of {name!r} has an unknown dtype ({error})") from None
                if array.dtype != np.dtype(f"u{stored.itemsize}"):
                    raise CheckpointError(f"load: array {key} of {name!r} is damaged (its bits do not fit "
                                          f"{stored_as_bits[key]})")
                array = array.view(stored)
            return array

        storages = {}    # storage key -> (its host array, the tensor owning its memory here, or None)
        tensors = {}     # entry id -> the tensor: a tensor saved twice is loaded once

        def load_tensor(value, where):
            known = tensors.get(value.get("id"))
            if known is not None:
                return known
            key = value["key"]
            if key not in storages:
                storages[key] = [read_array(key), None]
            storage = storages[key]
            array = storage[0] if "view" not in value else _strided(storage[0], value["view"], key, name)
            saved = value.get("device", "cpu")    # older checkpoints held CPU tensors only
            target = "cpu" if relocate is not None else destination(saved)
            if _on_cpu(target) and "id" in value:    # shares the storage's memory
                tensor = _placed(make_tensor, array, saved, target, share=True)
                if storage[1] is None:
                    storage[1] = tensor if "view" not in value else _placed(make_tensor, storage[0], saved, target,
                                                                            share=True)
                if storage[1] is not tensor:
                    tensor._as_view_of(storage[1])
            else:
                tensor = _placed(make_tensor, array, saved, target)
            if relocate is not None:
                moved = relocate(tensor, saved)
                tensor = _placed(make_tensor, array, saved, saved) if moved is None else moved
            if transform is not None:
                tensor = transform(where, tensor)
            if value.get("requires_grad") and tensor.is_floating_point():
                tensor.requires_grad_(True)
            if "id" in value:
                tensors[value["id"]] = tensor
            return tensor

        def decode(value, where):
            if not isinstance(value, dict):
                return value
            kind = value.get("t")
            if kind == "tensor":
                return load_tensor(value, where)
            if kind in _DICTS:
                items = [(k, decode(v, f"{where}.{k}" if where else str(k))) for k, v in value["items"]]
                if kind == "defaultdict":
                    factory = value.get("factory")
                    if factory is not None and factory not in _FACTORIES:
                        raise CheckpointError(f"load: {name!r} names an unknown defaultdict factory {factory!r}")
                    return collections.defaultdict(_FACTORIES.get(factory), items)
                return _DICTS[kind](items)
            if kind in _SEQUENCES or kind == "namedtuple":
                items = [decode(v, f"{where}.{i}" if where else str(i)) for i, v in enumerate(value["items"])]
                if kind == "namedtuple":
                    return _named_tuple(value["module"], value["name"], value["fields"])(*items)
                return _SEQUENCES[kind](items)
            if kind == "numpy":
                number = value["value"]
                return np.dtype(value["dtype"]).type(complex(*number) if isinstance(number, list) else number)
            if kind == "dtype":
                return dtypes.as_dtype(value["name"])
            raise CheckpointError(f"load: {name!r} holds an entry of unknown kind {kind!r} at {where or 'the top'}")

        try:
            if pickled:
                return _unpickle(archive, name, manifest["tensors"], load_tensor, pickle_load_args, restricted)
            return decode(manifest["root"], "")
        except CheckpointError:
            raise
        except (KeyError, TypeError, ValueError) as error:
            raise CheckpointError(f"load: the structure of {name!r} is damaged ({error!r})") from None


class _Unpickler(pickle.Unpickler):
    """The unpickler: persistent ids are the checkpoint's tensors; ``restricted``
    (``weights_only=True``), it finds only the allowed globals, so it calls no other code."""

    def __init__(self, file, load_tensor, options, name, restricted):
        super().__init__(file, **options)
        self.load_tensor, self.name, self.restricted = load_tensor, name, restricted

    def find_class(self, module, name):
        if not self.restricted:
            return super().find_class(module, name)
        found = _allowed(f"{module}.{name}")
        if found is None:
            raise _weights_only_refusal(self.name, [f"{module}.{name}"])
        return found

    def persistent_load(self, pid):
        kind, index, subclass, tensor_name = pid
        if kind == "uninitialized":
            tensor = subclass(requires_grad=index)
            tensor.name = tensor_name
            return tensor
        if kind != "tensor":
            raise pickle.UnpicklingError(f"unknown persistent id kind {kind!r}")
        tensor = self.load_tensor(index)
        if subclass is not None and type(tensor) is not subclass:
            tensor.__class__ = subclass       # a Parameter comes back a Parameter, memory shared
        if tensor_name is not None:
            tensor.name = tensor_name
        return tensor


def _unpickle(archive, name, entries, load_tensor, options, restricted):
    """The pickled object of a checkpoint (with ``restricted``, only allowed globals)."""
    def tensor_by_id(index):
        where, entry = entries[index]
        return load_tensor(entry, where)
    try:
        data = archive.read(_PICKLE)
    except (KeyError, *_DAMAGE) as error:
        raise CheckpointError(f"load: the pickled object of {name!r} is missing or damaged ({error})") from None
    try:
        return _Unpickler(io.BytesIO(data), tensor_by_id, options, name, restricted).load()
    except CheckpointError:
        raise
    except (pickle.UnpicklingError, ImportError, AttributeError, EOFError) as error:
        raise CheckpointError(f"load: cannot unpickle the object in {name!r} ({error}); the classes it holds must "
                              "be importable, or defined, where it is loaded") from error
