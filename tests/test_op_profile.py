"""benchmarks/op_profile.py: the frames and allocations of one small op, counted (no timing)."""

import pytest

from benchmarks import op_profile


@pytest.mark.parametrize("op, forward", [("mul", "Mul.forward"), ("add", "Add.forward"), ("tanh", "Tanh.forward")])
def test_the_profile_lists_the_frames_of_the_op_forward_and_backward(op, forward):
    text = op_profile.report(op)
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert [s.split(":")[0] for s in sections] == [
        "## forward", "## backward (of the sum, the op, and h = x * 1.0)", "## forward allocations kept"]
    forward_part = text.split("## backward")[0]
    assert "Op.apply" in forward_part and forward in forward_part
    assert f"{op.capitalize()}.backward" in text.split("## backward")[1]


def _python_frames(call):
    seen, _ = op_profile.frames(call)
    return [name.split(" ")[0] for _, kind, name in seen if kind == "python"]


def test_the_forward_of_a_small_op_stays_within_its_frames():
    """The small-op path, counted: the public function, Op.apply, promotion, the node, forward and
    its save, the output tensor and the saved values' sources; a frame more (``out=`` handled
    in a frame of its own, a helper not inlined) shows here first."""
    h = op_profile.vg.ones(3, requires_grad=True) * 1.0
    tanh = _python_frames(lambda: op_profile.STEPS["tanh"](h))
    assert "accepts_out.<locals>.with_out" in tanh and "_into" not in tanh      # no out=: it returns at once
    assert tanh[-5:] == ["Node.__init__", "Tanh.forward", "Node.save_for_backward", "Tensor._make",
                         "_resolve_saved"]         # (the saved output found without a frame of its own)
    mul = _python_frames(lambda: op_profile.STEPS["mul"](h))
    assert mul == ["<lambda>", "mul", "Op.apply", "_promote", "Node.__init__", "Mul.forward", "Node.save_for_backward",
                   "Tensor._make", "_resolve_saved"]


def test_the_backward_of_a_chain_of_small_ops_pays_its_frames_once_per_node():
    """Per node of a chain, the engine's loop runs the node (``_run_node``), its backward and
    ``saved_tensors``, and pushes the next node: no frame to ask whether a node is ready, none to
    add a first gradient into an empty buffer, none to read a version counter."""
    def backward_frames(length):
        h = op_profile.vg.ones(3, requires_grad=True) * 1.0
        for _ in range(length):
            h = h * 1.0001
        total = h.sum()
        return _python_frames(total.backward)
    short, long = backward_frames(2), backward_frames(12)
    per_node = (len(long) - len(short)) / 10
    assert per_node == 6, per_node
    assert sorted(set(long) - set(short)) == []
    for frame in ("Tensor._version", "_add_to_buffer", "ReadyNodes.pop"):
        assert long.count(frame) - short.count(frame) == (10 if frame == "ReadyNodes.pop" else 0), frame
