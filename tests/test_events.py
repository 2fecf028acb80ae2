"""The event bus: exact event sequences, module and optimizer events, subscriptions,
failing listeners, and that nothing is kept alive or attached once listeners leave."""

import gc
import math
import warnings
import weakref

import numpy as np
import pytest

import vizgrad as vg
from vizgrad import events
from vizgrad.autograd import observers


@pytest.fixture(autouse=True)
def no_listener_leaks():
    assert observers.active == [], "a previous test left an observer attached"
    yield
    assert observers.active == [], "this test left an observer attached"


def summary(event):
    """The comparable content of an event (durations vary run to run)."""
    k = event.kind
    if k == "op":
        return (k, event.op, event.node_id, event.input_ids, event.output_ids, event.shape, event.dtype, event.module)
    if k == "node_backward":
        return (k, event.op, event.node_id, event.index, event.grad_shapes)
    if k == "grad_accumulated":
        return (k, event.tensor_id, event.name, event.first)
    if k == "backward_end":
        return (k, event.root_ids, event.node_count)
    if k == "backward_start":
        return (k, event.root_ids)
    return (k,)


def test_exact_event_sequence_of_a_small_graph():
    a = vg.tensor([1.0, 2.0], requires_grad=True)
    b = vg.tensor([3.0, 4.0], requires_grad=True)
    a.name, b.name = "a", "b"
    log = []
    with events.subscribe(log.append):
        c = a * b
        d = c + a
        e = d.sum()
        e.backward()
    mul, add, total = c.grad_fn, d.grad_fn, e.grad_fn
    expected = [
        ("op", "Mul", mul.id, (a.uid, b.uid), (c.uid,), (2,), "float32", ""),
        ("op", "Add", add.id, (c.uid, a.uid), (d.uid,), (2,), "float32", ""),
        ("op", "Sum", total.id, (d.uid,), (e.uid,), (), "float32", ""),
        ("backward_start", (e.uid,)),
        ("node_backward", "Sum", total.id, 0, ((2,),)),
        ("node_backward", "Add", add.id, 1, ((2,), (2,))),
        ("node_backward", "Mul", mul.id, 2, ((2,), (2,))),
        # a's gradient waits for both Add and Mul; the accumulators run as soon as they are
        # ready, in the order of Mul's inputs, and each leaf's first gradient is announced
        # with first=True
        ("grad_accumulated", a.uid, "a", True),
        ("grad_accumulated", b.uid, "b", True),
        ("backward_end", (e.uid,), 5),          # Sum, Add, Mul and two accumulators
    ]
    assert [summary(x) for x in log] == expected
    assert all(x.duration >= 0 for x in log if hasattr(x, "duration"))
    np.testing.assert_array_equal(a.grad.numpy(), [4.0, 5.0])


def test_second_backward_accumulates_with_first_false():
    a = vg.tensor([1.0, 2.0], requires_grad=True)
    (a * 2).sum().backward()
    log = []
    with events.subscribe(log.append, kinds="grad_accumulated"):
        (a * 3).sum().backward()
    assert [(x.tensor_id, x.first) for x in log] == [(a.uid, False)]
    np.testing.assert_array_equal(a.grad.numpy(), [5.0, 5.0])


def test_ops_without_a_graph_have_no_node_id():
    a = vg.tensor([1.0, 2.0], requires_grad=True)
    log = []
    with events.subscribe(log.append, kinds={"op"}):
        with vg.no_grad():
            b = a * 2
        c = vg.tensor([1.0]) + 1
    assert [(x.op, x.node_id, x.output_ids) for x in log] == [("Mul", None, (b.uid,)), ("Add", None, (c.uid,))]


def test_events_delivered_with_tensors_then_released():
    a = vg.tensor([1.0, 2.0], requires_grad=True)
    during, kept = [], []

    def listener(event):
        kept.append(event)
        if event.kind == "op":
            during.append((len(event.inputs), event.outputs[0].shape))
        if event.kind == "node_backward":
            during.append((event.grad_outputs[0].shape, len(event.grads)))
        if event.kind == "grad_accumulated":
            during.append(event.tensor is a)

    with events.subscribe(listener):
        (a * a).sum().backward()
    assert during == [(2, (2,)), (1, ()), ((), 1), ((2,), 2), True]
    for event in kept:                         # kept events hold no tensors
        for name in ("inputs", "outputs", "grads", "grad_outputs", "tensor"):
            assert getattr(event, name, None) is None, (event.kind, name)


def test_keeping_events_does_not_keep_tensors_alive():
    a = vg.tensor(np.ones(1000, np.float32), requires_grad=True)
    kept = []
    with events.subscribe(kept.append):
        intermediate = a * 2
        probe = weakref.ref(intermediate)
        loss = intermediate.sum()
        loss.backward()
        del intermediate, loss
        gc.collect()
        assert probe() is None
    assert len(kept) > 4


# --- modules ---------------------------------------------------------------------------
class Leaf(vg.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = vg.nn.Parameter(vg.ones(2))

    def forward(self, x):
        return x * self.w


class Pair(vg.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Leaf()
        self.b = Leaf()

    def forward(self, x):
        return self.b(self.a(x)) + 1


class Root(vg.nn.Module):
    def __init__(self):
        super().__init__()
        self.pair = Pair()
        self.head = Leaf()

    def forward(self, x):
        return self.head(self.pair(x)).sum()


def test_module_forward_enter_and_exit_with_qualified_paths():
    model = Root()
    log = []
    with events.subscribe(log.append, kinds={"module_forward", "op"}):
        model(vg.ones(2))
    trail = [(x.phase, x.path, x.module_type) if x.kind == "module_forward" else ("op", x.op, x.module)
             for x in log]
    assert trail[:-2] == [
        ("enter", "", "Root"),
        ("enter", "pair", "Pair"),
        ("enter", "pair.a", "Leaf"), ("op", "Mul", "pair.a"), ("exit", "pair.a", "Leaf"),
        ("enter", "pair.b", "Leaf"), ("op", "Mul", "pair.b"), ("exit", "pair.b", "Leaf"),
        ("op", "Add", "pair"),
        ("exit", "pair", "Pair"),
        ("enter", "head", "Leaf"), ("op", "Mul", "head"), ("exit", "head", "Leaf"),
    ]
    assert trail[-2][:2] == ("op", "Sum") and trail[-1] == ("exit", "", "Root")
    enters = [x for x in log if x.kind == "module_forward" and x.phase == "enter"]
    exits = [x for x in log if x.kind == "module_forward" and x.phase == "exit"]
    assert all(x.input_shapes == ((2,),) and x.output_shapes == () for x in enters)
    assert exits[-1].output_shapes == ((),) and exits[0].output_shapes == ((2,),)
    # outside any module forward, ops belong to no module
    with events.subscribe(log.append, kinds="op"):
        vg.ones(1) + 1
    assert log[-1].module == ""


# --- optimizers -------------------------------------------------------------------------
def norm(array):
    return float(np.sqrt(np.sum(np.asarray(array, np.float64) ** 2)))


def test_optimizer_step_reports_per_parameter_numbers():
    model = Pair()
    start = {name: p.detach().numpy().copy() for name, p in model.named_parameters()}
    opt = vg.optim.Adam(model.parameters(), lr=0.1)
    model(vg.tensor([1.0, -2.0])).sum().backward()
    grads = {name: p.grad.numpy().copy() for name, p in model.named_parameters()}
    log = []
    with events.subscribe(log.append, kinds={"optimizer_step", "zero_grad"}):
        opt.step()
        opt.zero_grad()
    step, zero = log
    assert zero.kind == "zero_grad" and zero.optimizer == "Adam"
    assert step.optimizer == "Adam" and step.step == 1
    assert [p.name for p in step.params] == ["a.w", "b.w"]
    for record, (name, param) in zip(step.params, model.named_parameters()):
        after = param.detach().numpy()
        assert record.lr == 0.1
        assert record.grad_norm == pytest.approx(norm(grads[name]))
        assert record.update_norm == pytest.approx(norm(after - start[name]), rel=1e-6)
        assert record.param_norm == pytest.approx(norm(after))
        assert record.update_ratio == pytest.approx(record.update_norm / record.param_norm)
        state = opt.state[param]
        assert set(record.state) == {"step", "exp_avg", "exp_avg_sq"}
        assert record.state["step"] == 1
        assert record.state["exp_avg"] == pytest.approx(norm(state["exp_avg"]))
        assert record.state["exp_avg"] == pytest.approx(0.1 * norm(grads[name]), rel=1e-6)
        assert record.state["exp_avg_sq"] == pytest.approx(0.001 * norm(grads[name] ** 2), rel=1e-6)
        # Adam's first step moves every coordinate by about lr
        assert record.update_norm == pytest.approx(0.1 * math.sqrt(2), rel=1e-4)


@pytest.mark.parametrize("make", [
    lambda params: vg.optim.AdamW(params, lr=0.1, weight_decay=0.5),
    lambda params: vg.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1),
    lambda params: vg.optim.RMSprop(params, lr=0.01, momentum=0.5, centered=True),
    lambda params: vg.optim.Adagrad(params, lr=0.1),
    lambda params: vg.optim.Adadelta(params, lr=1.0),
], ids=["AdamW", "SGD", "RMSprop", "Adagrad", "Adadelta"])
def test_optimizer_step_update_norms_are_what_the_parameters_moved(make):
    p = vg.tensor([3.0, -4.0, 0.5], dtype=vg.float64, requires_grad=True)   # float64: differences exact enough
    opt = make([p])
    log = []
    with events.subscribe(log.append, kinds="optimizer_step"):
        for _ in range(2):
            before = p.detach().numpy().copy()
            opt.zero_grad()
            (p ** 2).sum().backward()
            opt.step()
            moved = norm(p.detach().numpy() - before)
            assert moved > 0 and log[-1].params[0].update_norm == pytest.approx(moved, rel=1e-5)


def test_optimizer_step_names_unnamed_parameters_by_position_and_skips_gradless_ones():
    a = vg.tensor([3.0, 4.0], requires_grad=True)
    b = vg.tensor([1.0], requires_grad=True)
    c = vg.tensor([0.0, 0.0], requires_grad=True)
    opt = vg.optim.SGD([a, b, c], lr=0.5, momentum=0.9)
    a.grad = vg.tensor([1.0, 0.0])
    c.grad = vg.tensor([0.0, 0.0])
    log = []
    with events.subscribe(log.append, kinds="optimizer_step"):
        opt.step()
    (event,) = log
    assert [p.name for p in event.params] == ["param0", "param1"]
    first, zero = event.params
    assert (first.grad_norm, first.update_norm, first.param_norm) == pytest.approx((1.0, 0.5, math.hypot(2.5, 4)))
    assert first.state == {"step": 1, "momentum_buffer": 1.0}
    assert zero.param_norm == 0.0 and zero.update_ratio == 0.0


def test_no_optimizer_summaries_are_computed_without_listeners(monkeypatch):
    from vizgrad.optim import optimizer
    monkeypatch.setattr(optimizer, "_summary", lambda *a: pytest.fail("summaries computed with nobody listening"))
    p = vg.tensor([1.0], requires_grad=True)
    p.grad = vg.tensor([1.0])
    vg.optim.SGD([p], lr=1.0).step()
    assert p.item() == 0.0
    # nor for listeners of other kinds only
    marks = []
    with events.subscribe(marks.append, kinds={"mark", "zero_grad"}):
        vg.optim.SGD([p], lr=1.0).step()
        events.mark("stepped")
    assert p.item() == -1.0 and [event.kind for event in marks] == ["mark"]


# --- marks and hooks -----------------------------------------------------------------------
def test_mark_carries_plain_values():
    log = []
    with events.subscribe(log.append):
        events.mark("epoch", epoch=3, loss=vg.tensor(0.25), acc=np.float64(0.5), note="ok")
    (event,) = log
    assert event.kind == "mark" and event.name == "epoch"
    assert event.values == {"epoch": 3, "loss": 0.25, "acc": 0.5, "note": "ok"}
    assert type(event.values["loss"]) is float
    events.mark("nobody listens")               # a no-op, not an error


def test_kinds_filter_and_validation():
    only_marks, everything = [], []
    with events.subscribe(only_marks.append, kinds={"mark"}), events.subscribe(everything.append):
        a = vg.tensor([1.0], requires_grad=True)
        (a * 2).sum().backward()
        events.mark("m")
    assert [x.kind for x in only_marks] == ["mark"]
    assert {x.kind for x in everything} == {"op", "backward_start", "node_backward", "grad_accumulated",
                                            "backward_end", "mark"}
    with pytest.raises(ValueError, match="unknown event kinds \\['nope'\\]"):
        events.subscribe(print, kinds={"op", "nope"})
    with pytest.raises(TypeError, match="callable"):
        events.subscribe("print")


def test_listening_reflects_the_wanted_kinds():
    assert not events.listening("op")
    with events.subscribe(lambda e: None, kinds="mark"):
        assert events.listening("mark") and not events.listening("op")
    assert not events.listening("mark")


def test_close_and_context_manager_detach_from_the_engine():
    log = []
    subscription = events.subscribe(log.append)
    assert len(observers.active) == 1
    with events.subscribe(log.append) as inner:
        assert len(observers.active) == 1          # one bus, however many listeners
        vg.ones(1) + 1
    assert inner.closed and len(log) == 2
    subscription.close()
    subscription.close()                            # idempotent
    assert observers.active == []
    vg.ones(1) + 1
    assert len(log) == 2
    assert "kinds=all" in repr(subscription)


def test_a_raising_listener_is_detached_with_one_warning_and_work_goes_on():
    calls, good = [], []

    def broken_listener(event):
        calls.append(event.kind)
        raise ZeroDivisionError("oops")

    with events.subscribe(good.append, kinds="op"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            subscription = events.subscribe(broken_listener)
            a = vg.tensor([1.0, 2.0], requires_grad=True)
            loss = (a * a).sum()
            loss.backward()
        assert subscription.closed
    assert calls == ["op"]
    assert len(caught) == 1 and caught[0].category is RuntimeWarning
    message = str(caught[0].message)
    assert "broken_listener" in message and "ZeroDivisionError" in message and "unsubscribed" in message
    assert loss.item() == 5.0
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 4.0])
    assert len(good) == 2                          # the other listener saw both ops


def test_strict_listener_errors_propagate():
    def broken(event):
        raise KeyError("strict")

    a = vg.tensor([1.0], requires_grad=True)
    with events.subscribe(broken, kinds="op", strict=True):
        with pytest.raises(KeyError, match="strict"):
            a * 2
    with events.subscribe(broken, kinds="mark", strict=True):
        with pytest.raises(KeyError):
            events.mark("x")


class Listener:
    def __init__(self):
        self.count = 0

    def __call__(self, event):
        self.count += 1


def test_a_closed_listener_leaves_no_references():
    listener = Listener()
    probe = weakref.ref(listener)
    subscription = events.subscribe(listener)
    vg.ones(1) * 2
    assert listener.count == 1
    subscription.close()
    del listener, subscription
    gc.collect()
    assert probe() is None
    assert observers.active == [] and events._bus.subscriptions == []


def test_a_listener_detached_for_raising_leaves_no_references():
    class Bad(Listener):
        def __call__(self, event):
            raise RuntimeError("bad")

    listener = Bad()
    probe = weakref.ref(listener)
    with pytest.warns(RuntimeWarning, match="Bad"):
        subscription = events.subscribe(listener)
        vg.ones(1) * 2
    del listener, subscription
    gc.collect()
    assert probe() is None and observers.active == []


# --- tensor statistics -------------------------------------------------------------------------
def test_tensor_stats_with_nan_and_inf():
    t = vg.tensor([1.0, 2.0, math.nan, math.inf, -math.inf, 3.0, 6.0])
    stats = events.tensor_stats(t, bins=5)
    finite = np.array([1.0, 2.0, 3.0, 6.0])
    assert stats.shape == (7,)
    assert stats.mean == pytest.approx(3.0)
    assert stats.std == pytest.approx(float(np.std(finite)))
    assert (stats.min, stats.max) == (1.0, 6.0)
    assert stats.norm == pytest.approx(math.sqrt(1 + 4 + 9 + 36))
    assert (stats.nan_count, stats.inf_count) == (1, 2)
    assert stats.histogram == (1, 1, 1, 0, 1)      # bins [1,2) [2,3) [3,4) [4,5) [5,6]
    assert stats.bin_edges == pytest.approx((1.0, 2.0, 3.0, 4.0, 5.0, 6.0))
    data = stats.to_dict()
    assert data["shape"] == [7] and data["histogram"] == [1, 1, 1, 0, 1] and data["nan_count"] == 1


def test_tensor_stats_of_no_finite_values_and_of_arrays():
    stats = events.tensor_stats(vg.tensor([math.nan, math.inf]), bins=4)
    assert math.isnan(stats.mean) and math.isnan(stats.norm)
    assert stats.histogram == (0, 0, 0, 0) and (stats.nan_count, stats.inf_count) == (1, 1)
    raw = events.tensor_stats(np.arange(4).reshape(2, 2), bins=2)
    assert raw.shape == (2, 2) and raw.mean == 1.5 and raw.histogram == (2, 2)
    # NumPy hands 0-d results around as scalars; gradients in the engine can be one
    scalar = events.tensor_stats(np.float32(-2.0))
    assert scalar.shape == () and scalar.norm == 2.0 and scalar.min == -2.0


def test_tensor_stats_of_float32_values_a_few_ulps_apart_and_of_constants():
    # saturated tanh units: float32 values whose range is too small for np.histogram's bins
    close = np.float32(0.7) + np.arange(100, dtype=np.float32) * np.float32(1e-8)
    stats = events.tensor_stats(close)
    assert sum(stats.histogram) == 100 and stats.histogram[0] > 0 and stats.histogram[-1] > 0
    assert (stats.min, stats.max) == (float(close.min()), float(close.max()))
    constant = events.tensor_stats(np.full(5, 3.0, np.float32), bins=4)
    assert constant.histogram == (0, 0, 5, 0) and constant.bin_edges == (2.5, 2.75, 3.0, 3.25, 3.5)
    assert constant.std == 0.0 and constant.mean == 3.0


def test_tensor_stats_of_large_float32_tensors_keep_float64_precision():
    rng = np.random.default_rng(0)
    values = (1000.0 + rng.standard_normal(1_000_003)).astype(np.float32)   # mean dwarfs the spread
    stats = events.tensor_stats(values)
    exact = values.astype(np.float64)
    assert stats.mean == pytest.approx(exact.mean(), rel=1e-9)
    assert stats.std == pytest.approx(exact.std(), rel=1e-6)
    assert stats.norm == pytest.approx(np.linalg.norm(exact), rel=1e-9)
    # squares beyond float32's range: no overflow to inf
    huge = events.tensor_stats(np.full(10, 1e30, np.float32))
    assert huge.norm == pytest.approx(math.sqrt(10) * 1e30, rel=1e-6) and huge.inf_count == 0
    # a sample of at most HISTOGRAM_SAMPLE values makes the histogram
    assert sum(stats.histogram) <= events.HISTOGRAM_SAMPLE


def test_node_backward_gradients_of_scalar_chains_can_be_summarised():
    w = vg.tensor([0.5, -0.5], requires_grad=True)
    norms = []

    def listener(event):
        norms.append((event.op, events.tensor_stats(event.grad_outputs[0]).norm))

    with events.subscribe(listener, kinds="node_backward", strict=True):
        (((w * 2).sum() - 1) ** 2).backward()
    # loss = (s - 1)^2 with s = 0: dL/dloss = 1, dL/d(s-1) = 2(s-1) = -2, dL/ds = -2
    assert norms == [("Pow", 1.0), ("Sub", 2.0), ("Sum", 2.0), ("Mul", pytest.approx(2 * math.sqrt(2)))]


def test_hook_events_name_the_tensor_and_the_module():
    seen = []
    x = vg.tensor([1.0, 2.0], requires_grad=True, name="x")
    x.register_hook(lambda grad: None)
    layer = vg.nn.Linear(2, 1)
    layer.register_forward_hook(lambda module, args, output: None)
    with vg.events.subscribe(seen.append, kinds={"hook"}, strict=True):
        layer(x).sum().backward()
    assert [(e.target, e.name) for e in seen] == [("module", "Linear: forward hook"), ("tensor", "x")]


def test_statistics_in_blocks_are_what_tensor_stats_gives_each_tensor():
    """Many small float arrays at once (the parameters of a big graph, by small_blocks and
    stats_rows): the same histograms, edges, minima and maxima exactly, means and deviations
    to float64 rounding, rescaled squares included; the rows it declines are those with a
    non-finite value, and the large and integer arrays are left out of the blocks."""
    rng = np.random.default_rng(0)
    arrays = []
    for i in range(600):
        shape = [(8, 8), (8,), (3, 5), (1,), (64,), (2, 2, 2)][i % 6]
        values = rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4)
        values = values.astype(np.float32 if i % 2 else np.float64)
        if i % 7 == 0:
            values = values + values.dtype.type(1000)      # the mean dwarfs the spread
        if i % 11 == 0:
            values[...] = 2.5                              # constant: the histogram's range widened
        if i % 13 == 0:
            values.reshape(-1)[0] = np.nan
        if i % 17 == 0:
            values = values * values.dtype.type(1e-14)     # squares that need rescaling
        arrays.append(values)
    arrays += [np.arange(5000, dtype=np.float32), np.arange(6), vg.tensor([1.0, -2.0, 4.0])]
    hosts = [events.host_values(values) for values in arrays]
    results, declined = {}, set()
    for positions, block in events.small_blocks(hosts):
        usable, mean, std, low, high, norm, counts, edges = events.stats_rows(block, 16)
        for row, position in enumerate(positions):
            if usable[row]:
                results[position] = events.TensorStats(tuple(hosts[position].shape), mean[row], std[row], low[row],
                                                       high[row], norm[row], 0, 0, tuple(counts[row]),
                                                       tuple(edges[row].tolist()))
            else:
                declined.add(position)
    assert declined == {p for p, h in enumerate(hosts[:600]) if not np.isfinite(h).all()}
    assert set(results) | declined == set(range(600)) | {602}     # not in a block: the large and the integer one
    for position, got in results.items():
        want = events.tensor_stats(arrays[position])
        for name in ("shape", "nan_count", "inf_count", "histogram", "bin_edges", "min", "max"):
            assert getattr(got, name) == getattr(want, name) or all(
                math.isnan(x) for x in (getattr(got, name), getattr(want, name))), name
        for name in ("mean", "std", "norm"):
            assert getattr(got, name) == pytest.approx(getattr(want, name), rel=1e-12, abs=1e-300, nan_ok=True), name


def test_graph_statistics_in_batches_are_each_tensors_own():
    """The Graph JSON's statistics of many tensors at once (``stats_dicts``, by shape and
    dtype) are what ``stats_dict`` gives each alone: samples, heatmaps, histograms and edges
    exactly, means and deviations to float64 rounding; non-finite values, vanishing
    gradients, big, integer and 0-d tensors included."""
    from vizgrad.trace.statistics import stats_dict, stats_dicts
    rng = np.random.default_rng(1)
    arrays = []
    for i in range(400):
        shape = [(8, 8), (8,), (20, 3), (1,), (3, 40), (2, 2, 2), ()][i % 7]
        values = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4)).astype(np.float32 if i % 2 else np.float64)
        if i % 9 == 0:
            values = values * values.dtype.type(1e-20)     # a vanishing gradient: squares rescaled
        if i % 13 == 0 and values.ndim:
            values.reshape(-1)[-1] = [np.nan, np.inf, -np.inf][i % 3]
        if i % 11 == 0:
            values = values + values.dtype.type(1000)
        arrays.append(values)
    arrays += [np.zeros((0, 3), np.float32), np.arange(12).reshape(3, 4), np.full((70, 70), 0.5, np.float32),
               vg.tensor([[1.0, 2.0]]), np.float64(1e308) * np.ones((4, 4))]
    for got, values in zip(stats_dicts(arrays), arrays):
        want = stats_dict(values)
        assert got.keys() == want.keys()
        for key in got:
            if key in ("mean", "std", "norm") and want[key] is not None:
                assert got[key] == pytest.approx(want[key], rel=1e-12, abs=1e-300), key
            else:
                assert got[key] == want[key], key
