"""Issue 34, checkpoints: vizgrad.save/load round-trip what torch.save/torch.load round-trip
(container types, named tuples, Size, NumPy scalars, shared storage), write through symlinks,
refuse read-only targets, and never lose or corrupt what was there."""

import collections
import io
import json
import os
import stat
import zipfile

import numpy as np
import pytest

import vizgrad as vg
from vizgrad import serialization
from vizgrad.serialization import CheckpointError, CheckpointPathError, CheckpointPermissionError

Point = collections.namedtuple("Point", "x y")


def _round_trip(lib, obj, tmp_path):
    path = tmp_path / f"{lib.__name__}.ckpt"
    lib.save(obj, path)
    return lib.load(path, weights_only=False) if lib.__name__ == "torch" else lib.load(path)


def _objects(lib):
    return {
        "ordered": collections.OrderedDict([("b", 1), ("a", [2.5, None])]),
        "default": collections.defaultdict(list, {"k": [1, 2]}),
        "default_none": collections.defaultdict(None, {"k": 0}),
        "point": Point(1, lib.tensor([1.0, 2.0])),
        "size": lib.Size([2, 3]),
        "float32": np.float32(1.25), "float64": np.float64(-0.1), "int64": np.int64(-7), "int8": np.int8(3),
        "bool": np.bool_(True), "complex64": np.complex64(1 - 2j), "nan": np.float32(np.nan),
        "set": {1, "two"}, "frozenset": frozenset([3.5]),
        "nested": [(), {"empty": collections.OrderedDict()}],
    }


def _same_kind(ours, theirs, where=""):
    """The same structure and types (vizgrad.Size for torch.Size, tensors compared by value)."""
    if type(theirs).__name__ == "Tensor":
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=where)
        return
    if type(theirs).__name__ == "Size":
        assert type(ours) is vg.Size and tuple(ours) == tuple(theirs), where
        return
    assert type(ours) is type(theirs), f"{where}: {type(ours).__name__} vs {type(theirs).__name__}"
    if isinstance(theirs, np.generic):
        assert ours.dtype == theirs.dtype and (ours == theirs or (np.isnan(ours) and np.isnan(theirs))), where
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs), where
        if isinstance(theirs, collections.defaultdict):
            assert ours.default_factory is theirs.default_factory, where
        for key in theirs:
            _same_kind(ours[key], theirs[key], f"{where}.{key}")
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _same_kind(a, b, f"{where}.{i}")
    else:
        assert ours == theirs, where


def test_containers_named_tuples_sizes_and_numpy_scalars_round_trip_as_in_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    ours = _round_trip(vg, _objects(vg), tmp_path)
    theirs = _round_trip(torch, _objects(torch), tmp_path)
    _same_kind(ours, theirs)
    assert ours["default"]["missing"] == [] and type(ours["point"]) is Point and ours["point"].y.tolist() == [1.0, 2.0]


def test_a_named_tuple_whose_class_is_not_imported_keeps_its_name_and_fields(tmp_path):
    path = tmp_path / "n.vzg"
    vg.save({"p": Point(1, 2)}, path)
    with zipfile.ZipFile(path) as archive:
        manifest = json.loads(archive.read("vizgrad.json"))
    manifest["root"]["items"][0][1]["module"] = "a_module_nobody_imported"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("vizgrad.json", json.dumps(manifest))
    back = vg.load(path)["p"]
    assert type(back).__name__ == "Point" and back._fields == ("x", "y") and back == (1, 2)
    assert "a_module_nobody_imported" not in __import__("sys").modules


def test_a_defaultdict_with_a_factory_that_is_code_is_refused(tmp_path):
    with pytest.raises(CheckpointError, match="default_factory"):
        vg.save(collections.defaultdict(lambda: 0), tmp_path / "d.vzg")
    assert os.listdir(tmp_path) == []


def test_the_same_tensor_and_views_of_one_tensor_stay_shared(tmp_path):
    torch = pytest.importorskip("torch")
    for lib in (vg, torch):
        w = lib.arange(12.0).reshape(3, 4)
        back = _round_trip(lib, {"w": w, "again": w, "row": w[1], "column": w[:, 2], "t": w.T,
                                 "alone": lib.ones(2)}, tmp_path)
        assert back["w"] is back["again"]
        back["w"][1, 2] = 100.0                      # one storage: every view sees the write
        assert back["row"][2].item() == 100.0 and back["column"][1].item() == 100.0 and back["t"][2, 1].item() == 100.0
        np.testing.assert_array_equal(back["row"].numpy(), [4.0, 5.0, 100.0, 7.0])
        assert back["alone"].tolist() == [1.0, 1.0]


def test_tied_parameters_stay_tied(tmp_path):
    shared = vg.nn.Parameter(vg.randn(3, 2))
    back = _round_trip(vg, {"encoder": shared, "decoder": shared}, tmp_path)
    assert back["encoder"] is back["decoder"] and back["encoder"].requires_grad


def test_views_of_an_unsaved_tensor_share_memory_and_keep_their_values(tmp_path):
    base = vg.arange(24.0).reshape(2, 3, 4)
    views = {"a": base[:, 1], "b": base[1, :, ::2], "c": base.transpose(0, 2), "d": base.flatten()[5:9]}
    back = _round_trip(vg, views, tmp_path)
    for key, view in views.items():
        np.testing.assert_array_equal(back[key].numpy(), view.numpy(), err_msg=key)
    back["a"][1, 0] = -1.0                           # base[1, 1, 0]
    assert back["c"][0, 1, 1].item() == -1.0


def test_a_damaged_view_geometry_is_refused(tmp_path):
    path = tmp_path / "v.vzg"
    base = vg.arange(6.0)
    vg.save({"v": base[1:3]}, path)
    with zipfile.ZipFile(path) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    manifest = json.loads(files["vizgrad.json"])
    manifest["root"]["items"][0][1]["view"] = [4, [5], [1]]          # past the end of six elements
    files["vizgrad.json"] = json.dumps(manifest)
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    with pytest.raises(CheckpointError, match="outside"):
        vg.load(path)


def test_saving_through_a_symlink_writes_its_target_and_keeps_the_link(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "model.vzg"
    vg.save({"v": 1}, target)
    link = tmp_path / "latest.vzg"
    link.symlink_to(target)
    vg.save({"v": 2}, link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert vg.load(target) == {"v": 2} and vg.load(link) == {"v": 2}
    dangling = tmp_path / "next.vzg"
    dangling.symlink_to(tmp_path / "real" / "new.vzg")             # a link to a file not yet written
    vg.save({"v": 3}, dangling)
    assert dangling.is_symlink() and vg.load(tmp_path / "real" / "new.vzg") == {"v": 3}
    assert sorted(os.listdir(tmp_path / "real")) == ["model.vzg", "new.vzg"]


def test_saving_over_a_read_only_checkpoint_is_refused_and_leaves_it_intact(tmp_path):
    path = tmp_path / "frozen.vzg"
    vg.save({"v": 1}, path)
    os.chmod(path, stat.S_IRUSR | stat.S_IRGRP)
    try:
        with pytest.raises(CheckpointPermissionError, match="read-only") as info:
            vg.save({"v": 2}, path)
        assert isinstance(info.value, PermissionError) and isinstance(info.value, CheckpointPathError)
        assert "save: cannot write" in str(info.value) and str(path) in str(info.value)
        assert vg.load(path) == {"v": 1} and os.listdir(tmp_path) == ["frozen.vzg"]
    finally:
        os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)


@pytest.mark.parametrize("failure", [KeyboardInterrupt, OSError(28, "No space left on device"), MemoryError])
def test_a_save_that_fails_while_writing_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch, failure):
    path = tmp_path / "ckpt.vzg"
    vg.save({"w": vg.ones(3)}, path)
    before = path.read_bytes()

    def broken(stream, manifest, arrays, pickled=None):
        stream.write(b"half a checkpoint")
        raise failure
    monkeypatch.setattr(serialization, "_write_archive", broken)
    expected = CheckpointPathError if isinstance(failure, OSError) else failure
    with pytest.raises(expected):
        vg.save({"w": vg.zeros(3)}, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ckpt.vzg"]


def test_a_stream_round_trip_keeps_the_new_kinds():
    buffer = io.BytesIO()
    w = vg.randn(4)
    vg.save({"size": vg.Size([1]), "w": w, "w2": w[1:]}, buffer)
    buffer.seek(0)
    back = vg.load(buffer)
    assert type(back["size"]) is vg.Size and back["w2"].tolist() == back["w"][1:].tolist()
