"""Watching is cheap and exact: the statistics a recorder, a GraphView following a trace
and the dashboard show for training step N are those of step N's tensors, although they
are computed only when asked for (or sampled, saying so); a loop that repeats its graph
reuses the recorded structure; memory stays bounded over many steps; nothing is stale."""

import gc
import math
import weakref

import numpy as np
import pytest

import vizgrad as vg
from vizgrad import events, nn
from vizgrad.autograd import observers
from vizgrad.trace import Recorder, stats_dict, summary_dict
from vizgrad.trace.statistics import SUMMARY_KEYS

pytestmark = pytest.mark.usefixtures("no_listener_leaks")


class Probe(nn.Module):
    """A two-layer net whose intermediate tensors the test keeps, to compare with what the
    recorder shows for them."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 1)
        self.kept = {}

    def forward(self, x):
        hidden = self.fc1(x)
        active = hidden.tanh()
        out = self.fc2(active)
        self.kept = {"hidden": hidden, "active": active, "out": out}
        return out


def training(seed=0, batches=None):
    vg.manual_seed(seed)
    model = Probe()
    optimizer = vg.optim.SGD(model.parameters(), lr=0.5)
    rng = np.random.default_rng(seed)
    data = batches or [(vg.tensor(rng.standard_normal((5, 3)).astype(np.float32)),
                        vg.tensor(rng.standard_normal((5, 1)).astype(np.float32))) for _ in range(4)]

    def step(number):
        x, y = data[number % len(data)]
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        return loss
    return model, optimizer, step


def same_stats(shown, expected):
    """Two statistics dicts agree (floats to rounding, everything else exactly)."""
    assert shown.keys() == expected.keys()
    for key, value in expected.items():
        if isinstance(value, float):
            assert shown[key] == pytest.approx(value, rel=1e-6, abs=1e-12), key
        else:
            assert shown[key] == value, key


def same_graph(recorded, expected):
    """Two graphs with the same nodes (statistics included), edges and backward order."""
    assert recorded.to_dict()["nodes"] == expected.to_dict()["nodes"]
    assert recorded.to_dict()["edges"] == expected.to_dict()["edges"]
    assert recorded.backward_order == expected.backward_order


def fresh_recording(program):
    """The graph a new trace records of one run of ``program`` (a loss and its backward)."""
    with vg.trace() as fresh:
        program().backward()
    return fresh.graph


def named_pair():
    """Two leaves requiring grad, named a and b."""
    a = vg.tensor([1.0, 2.0], requires_grad=True)
    b = vg.tensor([3.0, -1.0], requires_grad=True)
    a.name, b.name = "a", "b"
    return a, b


def by_label(graph):
    """Nodes by label, op results also by "module/op" (labels of ops repeat)."""
    nodes = {node.label: node for node in graph.nodes}
    nodes.update({f"{node.module}/{node.op}": node for node in graph.nodes if node.op})
    return nodes


def expected_of_step(model, loss):
    """The statistics of this step's tensors, computed directly (before the update)."""
    kept = model.kept
    return {"value": {"fc1/Linear": stats_dict(kept["hidden"]), "/Tanh": stats_dict(kept["active"]),
                      "fc2/Linear": stats_dict(kept["out"]), "fc1.weight": stats_dict(model.fc1.weight),
                      "fc2.bias": stats_dict(model.fc2.bias), "/Mean": stats_dict(loss)},
            "grad": {"fc1.weight": stats_dict(model.fc1.weight.grad), "fc2.weight": stats_dict(model.fc2.weight.grad)}}


def name_parameters(model):
    for name, param in model.named_parameters():
        param.name = name


# --- the recorder ---------------------------------------------------------------------------
def test_statistics_of_every_step_are_those_of_its_tensors_even_after_the_update():
    model, optimizer, step = training()
    name_parameters(model)
    with vg.trace() as tracing:
        for number in range(6):
            loss = step(number)
            expected = expected_of_step(model, loss)
            optimizer.step()                 # changes the parameters in place: not what step N saw
            graph = tracing.graph
            nodes = by_label(graph)
            for label, stats in expected["value"].items():
                same_stats(nodes[label].value, stats)
            for label, stats in expected["grad"].items():
                same_stats(nodes[label].grad, stats)
            # the parameters' values shown are those the forward used, not the updated ones
            assert nodes["fc1.weight"].value["mean"] != pytest.approx(float(model.fc1.weight.detach().numpy().mean()))


def test_a_repeated_graph_is_replayed_and_equals_a_fresh_recording_of_the_same_step():
    model, optimizer, step = training()
    name_parameters(model)
    recorder = Recorder().start()
    try:
        step(0)
        optimizer.step()
        structure = recorder.graph
        for number in range(1, 4):
            step(number)
            optimizer.step()
            assert recorder.graph is structure           # no node or edge built again
        replayed = recorder.result()
    finally:
        recorder.close()
    # the same step recorded by a fresh recorder
    again, optimizer_again, step_again = training()
    name_parameters(again)
    for number in range(3):
        step_again(number)
        optimizer_again.step()
    with vg.trace() as fresh:
        step_again(3)
        optimizer_again.step()
    same_graph(replayed, fresh.graph)


def test_a_graph_that_changes_shape_is_recorded_afresh_from_where_it_differs():
    a, b = named_pair()
    programs = [lambda: (a * b).sum(), lambda: (a * b).exp().sum(), lambda: (b * a).sum(), lambda: (a * b).sum(),
                lambda: (a + b).sum()]
    with vg.trace() as tracing:
        for program in programs:
            loss = program()
            loss.backward()
            recorded = tracing.graph
            a.grad = b.grad = None
            same_graph(recorded, fresh_recording(program))
            a.grad = b.grad = None


def test_a_graph_asked_for_mid_forward_shows_the_ops_so_far_with_their_values():
    w = vg.tensor([0.5, -2.0], requires_grad=True)
    with vg.trace() as tracing:
        for _ in range(2):
            loss = (w * 3).tanh().sum()
            loss.backward()
        product = w * 3
        graph = tracing.graph                            # the third iteration, one op in
        assert [node.op for node in graph.nodes] == [None, None, "Mul"]     # w, the constant 3, w * 3
        same_stats(graph.nodes[2].value, stats_dict(product))
        assert graph.backward_order == [] and all(node.grad is None for node in graph.nodes)
        product.tanh().sum().backward()
        graph = tracing.graph
        assert [node.op for node in graph.nodes] == [None, None, "Mul", "Tanh", "Sum"]


def test_statistics_are_computed_once_per_array_and_a_new_step_is_never_stale():
    w = vg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    calls = []
    recorder = Recorder().start()
    try:
        original = events.tensor_stats

        def counting(tensor, bins=16):
            calls.append(1)
            return original(tensor, bins)
        events.tensor_stats = counting
        try:
            (w * 2).sum().backward()
            first = recorder.result()
            count = len(calls)
            assert count > 0 and recorder.result() is first and len(calls) == count   # nothing new: reused
            with vg.no_grad():
                w.mul_(10)
            w.grad = None
            (w * 2).sum().backward()
            second = recorder.result()
        finally:
            events.tensor_stats = original
        assert second is not first
        assert by_label(second)["Mul"].value["mean"] == pytest.approx(40.0)
        assert by_label(first)["Mul"].value["mean"] == pytest.approx(4.0)    # what step 1 was, kept
        assert recorder.last_graph.to_dict() == first.to_dict()
    finally:
        recorder.close()


def test_the_same_ops_fed_other_tensors_are_recorded_afresh_when_the_graph_is_read():
    # every iteration applies the same ops from the same lines, so the replay only finds out
    # that the tensors differ when it binds them, after the forward and backward are over
    a, b = named_pair()

    def program(flip, first, second):
        left, right = first * 2, second * 3
        x, y = (right, left) if flip else (left, right)
        return (x - y).tanh().sum()
    runs = [(False, a, b), (False, a, b), (True, a, b), (False, b, a), (False, a, b)]
    with vg.trace() as tracing:
        for flip, first, second in runs:
            program(flip, first, second).backward()
            recorded = tracing.graph
            a.grad = b.grad = None
            same_graph(recorded, fresh_recording(lambda: program(flip, first, second)))
            a.grad = b.grad = None


def test_an_iteration_nobody_read_is_bound_when_last_graph_asks_for_it():
    a, b = named_pair()

    def program(flip):
        left, right = a * 2, b * 3
        x, y = (right, left) if flip else (left, right)
        return (x - y).tanh().sum()
    with vg.trace() as tracing:
        for flip in (False, False, False):
            program(flip).backward()
            a.grad = b.grad = None
        program(True).backward()                       # replayed, different tensors: never read
        with vg.no_grad():
            a.mul_(10)                                 # changed after that iteration's backward
        a.grad = b.grad = None
        program(False)                                 # the next iteration begins
        last = tracing.recorder.last_graph
    with vg.no_grad():
        a.div_(10)
    a.grad = b.grad = None
    expected = fresh_recording(lambda: program(True))
    same_graph(last, expected)
    for shown, fresh in zip(last.nodes, expected.nodes):
        same_stats(shown.value, fresh.value)           # the values that iteration saw, not the changed a
        assert (shown.grad is None) == (fresh.grad is None)
        if fresh.grad is not None:
            same_stats(shown.grad, fresh.grad)


def test_in_place_ops_keep_each_node_its_own_value_step_after_step():
    a = vg.tensor([1.0, 2.0], requires_grad=True)
    with vg.trace() as tracing:
        for scale in (2.0, 3.0, 4.0):            # the second and third replay the first's structure
            b = a * scale
            b.add_(1)
            b.relu_()
            b.sum().backward()
            graph = tracing.graph
            values = [node.value["mean"] for node in graph.nodes]
            product = 1.5 * scale
            # a, the constant scale (this step's), a * scale, the constant 1, add_, relu_, sum
            assert values == pytest.approx([1.5, scale, product, 1, product + 1, product + 1, 2 * (product + 1)])
            assert graph.nodes[1].label == f"{scale:g}"
            a.grad = None


def test_edge_gradients_are_those_that_flowed():
    x = vg.tensor([[1.0, -2.0]], requires_grad=True)
    with vg.trace() as tracing:
        y = x * x                     # x reaches Mul twice: each edge carries x's gradient share
        y.sum().backward()
    graph = tracing.graph
    edges = [edge for edge in graph.edges if edge.target == graph.nodes[1].id]
    expected = summary_dict(vg.tensor([[1.0, -2.0]]))       # x's share along each edge: dL/dy * x
    assert len(edges) == 2
    for edge in edges:
        same_stats({key: edge.grad[key] for key in SUMMARY_KEYS}, expected)
    same_stats(graph.nodes[0].grad, stats_dict(x.grad))


def test_memory_stays_bounded_over_many_steps():
    model, optimizer, step = training()
    probes = []
    with vg.trace(max_steps=10) as tracing:
        for number in range(40):
            step(number)
            optimizer.step()
            probes.append(weakref.ref(model.kept["hidden"]._array))
            if number % 10 == 0:
                tracing.graph                         # a view drawing now and then
        gc.collect()
        alive = [number for number, probe in enumerate(probes) if probe() is not None]
        # the arrays of the iteration in progress and of the last finished one, at most
        assert alive and alive[0] >= 38
        assert len(tracing.steps) == 10


def test_optimizer_steps_are_summarised_at_the_summary_rate_and_say_when_not():
    w = vg.tensor([1.0, -1.0], requires_grad=True)
    optimizer = vg.optim.SGD([w], lr=0.1)
    with vg.trace(summary_rate=1e-6) as sparse, vg.trace(summary_rate=None) as every:
        for _ in range(3):
            optimizer.zero_grad()
            (w * w).sum().backward()
            optimizer.step()
    assert [len(s["params"]) for s in every.steps] == [1, 1, 1]
    assert all("summarised" not in s for s in every.steps)
    assert [len(s["params"]) for s in sparse.steps] == [1, 1, 1]      # the other listener asked: shared
    with vg.trace(summary_rate=1e-6) as sparse:
        for _ in range(3):
            optimizer.zero_grad()
            (w * w).sum().backward()
            optimizer.step()
    assert [len(s["params"]) for s in sparse.steps] == [1, 0, 0]
    assert [s.get("summarised", True) for s in sparse.steps] == [True, False, False]
    assert [s["step"] for s in sparse.steps] == [4, 5, 6]


def test_no_parameter_summaries_are_computed_when_no_listener_is_due(monkeypatch):
    from vizgrad.optim import optimizer as optimizer_module
    calls = []
    original = optimizer_module._summary
    monkeypatch.setattr(optimizer_module, "_summary", lambda *args: calls.append(1) or original(*args))
    w = vg.tensor([1.0, -1.0], requires_grad=True)
    optimizer = vg.optim.SGD([w], lr=0.1)
    received = []
    with events.subscribe(received.append, kinds="optimizer_step", summary_rate=1e-6):
        for _ in range(4):
            (w * w).sum().backward()
            optimizer.step()
    assert len(calls) == 1
    assert [event.summarised for event in received] == [True, False, False, False]
    assert [len(event.params) for event in received] == [1, 0, 0, 0]


def test_summary_rate_must_be_positive():
    with pytest.raises(ValueError, match="summary_rate must be a positive number"):
        events.subscribe(lambda event: None, summary_rate=0)


def test_watchers_hear_of_ops_and_backward_ends_only():
    w = vg.tensor([1.0, 2.0], requires_grad=True)
    heard = []
    recorder = Recorder().start()
    watch = recorder.watch(lambda: heard.append(len(recorder.result().nodes)))    # reads at once
    try:
        (w * 2).sum().backward()
        watch.close()
        (w * 3).sum().backward()
    finally:
        recorder.close()
    assert heard == [3, 4, 4] and watch.closed        # Mul (and its constant), Sum, then the end of backward


def test_a_watcher_is_told_again_only_after_a_graph_was_read():
    w = vg.tensor([1.0, 2.0], requires_grad=True)
    told = []
    with vg.trace() as tracing:
        recorder = tracing.recorder
        recorder.watch(lambda: told.append(len(recorder.graph.nodes)))       # does not read
        h = w * 2
        h = h.exp()
        assert told == [3]                             # told of the Mul; the Exp waits for a read
        assert [node.op for node in recorder.result().nodes][-1] == "Exp"    # a read sees every change
        h.sum().backward()
        assert told == [3, 5]                          # the Sum after the read


def test_a_closed_recorder_leaves_nothing_attached_and_keeps_what_it_recorded():
    w = vg.tensor([1.0, 2.0], requires_grad=True)
    recorder = Recorder().start()
    (w * 2).sum().backward()
    recorder.close()
    assert observers.active == []
    (w * 5).sum().backward()                            # not recorded
    graph = recorder.result()
    assert [node.op for node in graph.nodes] == [None, None, "Mul", "Sum"]
    assert graph.nodes[2].value["mean"] == pytest.approx(3.0)


# --- views ----------------------------------------------------------------------------------
def test_a_graph_view_following_a_trace_shows_the_newest_step_exactly():
    pytest.importorskip("anywidget", reason="the widgets need anywidget")
    from vizgrad.widgets import GraphView
    model, optimizer, step = training()
    name_parameters(model)
    with vg.trace() as tracing:
        view = GraphView(tracing)
        try:
            for number in range(5):
                loss = step(number)
                expected = expected_of_step(model, loss)
                optimizer.step()
            view._updates.flush()
            shown = {node["label"]: node for node in view.graph["nodes"]}
            shown.update({f"{node['module']}/{node['op']}": node for node in view.graph["nodes"] if node["op"]})
            for label, stats in expected["value"].items():
                same_stats(shown[label]["value"], stats)
            for label, stats in expected["grad"].items():
                same_stats(shown[label]["grad"], stats)
            assert view.timeline == list(tracing.graph.backward_order)
        finally:
            view.close()


def test_the_dashboard_samples_steps_says_so_and_draws_the_newest_exactly():
    pytest.importorskip("anywidget", reason="the widgets need anywidget")
    from vizgrad.widgets import dashboard
    from vizgrad.widgets.base import from_float32_bytes
    model, optimizer, step = training()
    board = dashboard(model, optimizer, display=False, summary_rate=1e-6)
    try:
        for number in range(5):
            step(number)
            optimizer.step()
        board.flush()
        flow = board.snapshot["flow"]
        assert board.step == 5 and flow["sampled"] and board.snapshot["ratios"]["sampled"]
        steps = from_float32_bytes(flow["series"]["steps"])
        assert steps.tolist() == [1.0, 5.0]                # the one summarised, then the newest
        grads = [param.grad.numpy() for param in model.parameters()]
        rms = [float(np.sqrt(np.mean(grad.astype(np.float64) ** 2))) for grad in grads]
        assert flow["step"] == 5
        np.testing.assert_allclose(flow["current"]["rms"], rms, rtol=1e-5)
    finally:
        board.close()


def test_the_summary_budget_gives_a_short_burst_every_step_and_a_long_run_the_rate():
    budget = events.SummaryBudget(4)
    assert all(budget.take(5.0) for _ in range(4))          # one second's worth at once
    assert not budget.take(5.0)
    assert [budget.take(5.0 + t) for t in (0.125, 0.25, 0.5, 0.5)] == [False, True, True, False]   # 4/s refill
    assert sum(budget.take(10.0 + t / 8) for t in range(80)) == 4 + 39          # full again, then 4 a second
    rare = events.SummaryBudget(1e-6)
    assert [rare.take(0.0), rare.take(1.0), rare.take(2e6)] == [True, False, True]
    assert all(events.SummaryBudget(None).take(0.0) for _ in range(3))


@pytest.mark.parametrize("with_optimizer", [True, False])
def test_the_dashboard_shows_every_step_of_a_quick_short_run_at_the_default_rate(monkeypatch, with_optimizer):
    # a frozen clock: the 20 steps come faster than 1/summary_rate apart (the browser test's
    # notebook cell); with a minimum interval only the first step's ratios were taken, and
    # the ratio chart had one point and no lines
    pytest.importorskip("anywidget", reason="the widgets need anywidget")
    from vizgrad.widgets import dashboard
    from vizgrad.widgets.base import from_float32_bytes
    monkeypatch.setattr(events.time, "monotonic", lambda: 100.0)
    model, optimizer, step = training()
    board = dashboard(model, optimizer if with_optimizer else None, display=False)
    try:
        for number in range(20):
            step(number)
            optimizer.step()
        board.flush()
        flow, ratios = board.snapshot["flow"], board.snapshot["ratios"]
        assert board.step == 20 and not flow["sampled"]
        assert from_float32_bytes(flow["series"]["steps"]).tolist() == list(range(1, 21))
        if with_optimizer:
            assert not ratios["sampled"]
            values = from_float32_bytes(ratios["series"]["values"], len(board.names))
            assert values.shape == (20, len(board.names)) and np.isfinite(values).all()
    finally:
        board.close()


def test_the_dashboard_keeps_its_rows_when_the_next_step_has_begun_before_a_sampled_step_is_drawn():
    # a late delivery (the timer's thread) after zero_grad of the next step reached some layers only
    pytest.importorskip("anywidget", reason="the widgets need anywidget")
    from vizgrad.widgets import dashboard
    model, optimizer, step = training()
    board = dashboard(model, optimizer, display=False, summary_rate=1e-6)
    try:
        for number in range(2):
            step(number)
            optimizer.step()
        board.flush()
        shown = board.snapshot["flow"]
        assert shown["step"] == 2 and shown["current"]["status"] == ["ok"] * 4
        step(2)
        optimizer.step()                        # step 3: not summarised
        model.fc1.weight.grad = None            # step 4 has begun: zero_grad reached fc1.weight
        board.flush()
        flow = board.snapshot["flow"]
        assert board.snapshot["step"] == 3
        assert flow["step"] == 2 and flow["current"] == shown["current"]
        step(3)
        optimizer.step()                        # step 4, whole again: drawn
        board.flush()
        assert board.snapshot["flow"]["step"] == 4
        assert board.snapshot["flow"]["current"]["status"] == ["ok"] * 4
    finally:
        board.close()


def test_the_dashboard_takes_every_step_without_a_summary_rate():
    pytest.importorskip("anywidget", reason="the widgets need anywidget")
    from vizgrad.widgets import dashboard
    from vizgrad.widgets.base import from_float32_bytes
    model, optimizer, step = training()
    board = dashboard(model, optimizer, display=False, summary_rate=None)
    try:
        for number in range(4):
            step(number)
            optimizer.step()
        board.flush()
        flow = board.snapshot["flow"]
        assert not flow["sampled"]
        assert from_float32_bytes(flow["series"]["steps"]).tolist() == [1.0, 2.0, 3.0, 4.0]
        assert all(math.isfinite(value) for value in flow["current"]["rms"])
    finally:
        board.close()


# --- replay and the graph model (groups, constants, labels) ----------------------------------
def structure_of(graph):
    """What a graph's structure says, statistics left out (groups by what they are, not by id)."""
    groups = {g.id: g for g in graph.groups}

    def chain(group_id):
        names = []
        while group_id is not None:
            names.append(f"{groups[group_id].type}:{groups[group_id].label}")
            group_id = groups[group_id].parent
        return "/".join(reversed(names))
    return ([(n.id, n.kind, n.label, n.op, n.module, chain(n.group), n.uses, n.shape, n.dtype) for n in graph.nodes],
            [(e.source, e.target, e.index, e.shape) for e in graph.edges],
            sorted((g.kind, chain(g.id), g.signature) for g in graph.groups))


class Halve(nn.Module):
    """Applies the same op as nn.ReLU (and ReLU's own op), under another module type."""

    def forward(self, x):
        return nn.functional.relu(x)


def classifier(activation):
    vg.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 4), activation, nn.Linear(4, 3))


def classify(model, scale):
    x = vg.tensor([[0.5, -1.0], [2.0, 0.25], [-0.5, 1.5]])
    y = vg.tensor([0, 2, 1])
    return (nn.functional.cross_entropy(model(x), y) * scale)


def test_a_replayed_iteration_keeps_groups_constants_and_labels_of_a_fresh_recording():
    model = classifier(nn.ReLU())
    optimizer = vg.optim.SGD(model.parameters(), lr=0.1)
    with vg.trace() as fresh:
        classify(model, 0.5).backward()
        expected = structure_of(fresh.graph)
    with vg.trace() as tracing:
        for _ in range(3):
            optimizer.zero_grad()
            loss = classify(model, 0.5)
            loss.backward()
            optimizer.step()
            assert structure_of(tracing.graph) == expected
        assert tracing.recorder._replay is not None          # the later iterations were replayed
        assert structure_of(tracing.recorder.last_graph) == expected
    nodes, _, groups = expected
    assert sorted(g[1] for g in groups) == ["Linear:Linear(2→4)", "Linear:Linear(4→3)", "ReLU:ReLU",
                                            "cross_entropy:cross_entropy"]
    assert [n[1:] for n in nodes if n[1] == "constant" and n[7] == []] == [("constant", "0.5", None, "", "", 1, [], "float")]
    # after the block, its variables name the nodes of the newest iteration
    assert by_label(tracing.graph)["loss"].op == "Mul"


def test_a_constant_shows_each_steps_value_when_the_structure_is_replayed():
    w = vg.tensor([1.0, -2.0], requires_grad=True)
    with vg.trace() as tracing:
        for lr in (0.1, 0.25, 0.5):
            rate = vg.tensor(lr * 2)                          # a 0-d constant tensor, a new value each step
            ((w * lr) * rate).sum().backward()
            graph = tracing.graph
            number, scalar = graph.nodes[1], graph.nodes[3]
            assert (number.kind, number.label, number.dtype) == ("constant", f"{lr:g}", "float")
            assert number.value["mean"] == pytest.approx(lr)
            assert (scalar.kind, scalar.label) == ("constant", f"{lr * 2:g}")
            assert scalar.value["mean"] == pytest.approx(lr * 2)
            assert by_label(graph)["Sum"].value["mean"] == pytest.approx(-lr * lr * 2)
            w.grad = None
        assert tracing.recorder._replay is not None
        assert tracing.recorder.last_graph.nodes[1].label == "0.25"         # the previous step's, kept


def test_a_module_of_another_type_under_the_same_name_rebuilds_its_group():
    first, second = classifier(nn.ReLU()), classifier(Halve())
    with vg.trace() as fresh:
        classify(second, 1.0).backward()
        expected = structure_of(fresh.graph)
    with vg.trace() as tracing:
        classify(first, 1.0).backward()
        classify(second, 1.0).backward()              # the same ops, parameters and names: only the type differs
        assert structure_of(tracing.graph) == expected
        graph, last = tracing.graph, tracing.recorder.last_graph
    activation = {g.id: g.type for g in graph.groups}[graph.node("n4").group]
    assert activation == "Halve" and {g.type for g in last.groups} == {"Linear", "ReLU", "cross_entropy"}


def test_a_composite_applied_in_pieces_is_not_replayed_as_the_composite():
    model = classifier(nn.ReLU())
    x, y = vg.tensor([[0.5, -1.0], [2.0, 0.25]]), vg.tensor([0, 2])
    with vg.trace() as tracing:
        nn.functional.cross_entropy(model(x), y).backward()
        assert "cross_entropy" in {g.label for g in tracing.graph.groups}
        nn.functional.nll_loss(nn.functional.log_softmax(model(x), 1), y).backward()     # the same ops
        assert "cross_entropy" not in {g.label for g in tracing.graph.groups}
