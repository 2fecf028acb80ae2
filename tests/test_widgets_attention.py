"""AttentionView: the weights its traits hold (decoded from the float32 buffer) for every
accepted shape, the labels, where a selected query looks, following a module's forward
passes (a hand-written attention and nn.MultiheadAttention), throttled updates whose last
one arrives, cleanup, and the static SVG fallback.

Needs anywidget (``pip install 'vizgrad[widgets]'``) and the built bundle (``make build``).
"""

import math
import re
import time

import numpy as np
import pytest

pytest.importorskip("anywidget", reason="the widgets need anywidget: pip install 'vizgrad[widgets]'")

import vizgrad as vg  # noqa: E402
from vizgrad import nn  # noqa: E402
from vizgrad.widgets import AttentionView  # noqa: E402
from vizgrad.widgets.attention_view import as_weights, attention_svg, token_label, weight_colour  # noqa: E402
from vizgrad.widgets.base import from_float32_bytes  # noqa: E402

pytestmark = pytest.mark.usefixtures("no_listener_leaks")


def causal_weights(heads, length, seed=0):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(heads, length, length))
    scores[:, np.triu_indices(length, 1)[0], np.triu_indices(length, 1)[1]] = -np.inf
    return np.exp(scores - scores.max(-1, keepdims=True)) / np.exp(scores - scores.max(-1, keepdims=True)).sum(
        -1, keepdims=True)


def shown(view):
    heads, queries, keys = view.shape
    return from_float32_bytes(view.weights).reshape(heads, queries, keys)


def wait_until(condition, timeout=3.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not condition():
        time.sleep(0.01)
    return condition()


@pytest.mark.parametrize("shape, expected", [((5, 5), (1, 5, 5)), ((3, 5, 5), (3, 5, 5)), ((2, 3, 5, 4), (3, 5, 4))])
def test_weights_of_every_accepted_shape_reach_the_traits(closing, shape, expected):
    weights = np.random.default_rng(1).random(shape)
    view = AttentionView(vg.tensor(weights), tokens=list("hello"), sample=1 if len(shape) == 4 else 0)
    closing.append(view)
    assert view.shape == list(expected)
    want = weights[1] if len(shape) == 4 else weights.reshape(expected)
    np.testing.assert_allclose(shown(view), want, rtol=1e-6)
    np.testing.assert_allclose(view.array, want)
    assert view.tokens == list("hello") and view.step == 1


def test_wrong_shapes_and_samples_are_refused_naming_them(closing):
    with pytest.raises(ValueError, match=r"got shape \(5,\)"):
        as_weights(np.ones(5))
    with pytest.raises(IndexError, match=r"sample=4 is out of range for weights of shape \(2, 1, 3, 3\)"):
        as_weights(np.ones((2, 1, 3, 3)), sample=4)


def test_attended_lists_where_the_selected_query_looks(closing):
    weights = causal_weights(2, 4)
    view = AttentionView(weights, tokens=list("abcd"))
    closing.append(view)
    view.selected = {"head": 1, "query": 3, "key": 0}
    looks = view.attended()
    assert [p for p, _, _ in looks] == list(np.argsort(-weights[1, 3], kind="stable"))
    assert looks[0][1] == "abcd"[looks[0][0]] and math.isclose(sum(w for _, _, w in looks), 1.0, rel_tol=1e-9)
    assert view.attended(head=0, query=0)[0] == (0, "a", 1.0)     # the first query sees only itself


def test_watch_follows_a_hand_written_attention_and_close_removes_the_hook(closing):
    class Attention(nn.Module):
        def forward(self, q, k):
            self.weights = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).softmax(dim=-1)
            return self.weights

    module = Attention()
    view = AttentionView(max_rate=1000)
    closing.append(view)
    view.watch(module)
    q, k = vg.randn(2, 4, 6, 8), vg.randn(2, 4, 6, 8)
    expected = module(q, k).detach().numpy()[0]
    assert wait_until(lambda: view.shape == [4, 6, 6])
    np.testing.assert_allclose(shown(view), expected, rtol=1e-6)
    view.close()
    assert not module._forward_hooks


def test_watch_reads_the_per_head_weights_of_multihead_attention(closing):
    vg.manual_seed(0)
    attention = nn.MultiheadAttention(16, 4, batch_first=True)
    view = AttentionView(max_rate=1000)
    closing.append(view)
    view.watch(attention)
    x = vg.randn(2, 5, 16)
    _, weights = attention(x, x, x, need_weights=True, average_attn_weights=False)
    assert wait_until(lambda: view.shape == [4, 5, 5])
    np.testing.assert_allclose(shown(view), weights.detach().numpy()[0], rtol=1e-6)


def test_a_module_without_weights_is_named(closing):
    view = AttentionView()
    closing.append(view)
    layer = nn.Linear(2, 2)
    view.watch(layer)
    with pytest.raises(AttributeError, match="Linear returned no attention weights and has no attribute 'weights'"):
        layer(vg.randn(1, 2))


def test_a_burst_of_updates_sends_few_messages_and_the_last_arrives(closing):
    view = AttentionView(max_rate=20)
    closing.append(view)
    sent = []
    original = view._send
    view._send = lambda msg, buffers=None: (sent.append(msg), original(msg, buffers=buffers))[1]
    started = time.monotonic()
    for step in range(500):
        view.update(np.full((1, 3, 3), step / 500), step=step)
    assert wait_until(lambda: view.step == 499)
    assert len(sent) <= 20 * (time.monotonic() - started) + 3, len(sent)
    np.testing.assert_allclose(shown(view), np.full((1, 3, 3), 499 / 500), rtol=1e-6)


def test_the_static_fallback_draws_one_labelled_heatmap_per_head(closing):
    weights = causal_weights(3, 4)
    view = AttentionView(weights, tokens=["a", " ", "\n", "<"], title="maps & heads")
    closing.append(view)
    data, _ = view._repr_mimebundle_()
    svg = data["image/svg+xml"]
    assert svg == attention_svg(view.array, view.tokens, view.tokens, "maps & heads", view.step)
    assert len(re.findall(r"<rect [^>]*><title>", svg)) == 3 * 4 * 4
    assert all(f">head {h}</text>" in svg for h in range(3))
    assert ">␣</text>" in svg and ">↵</text>" in svg and ">&lt;</text>" in svg and "maps &amp; heads" in svg
    assert f'fill="{weight_colour(1.0)}"><title>head 0, query 0, key 0: 1.000' in svg
    assert data["text/plain"] == "<AttentionView: 3 heads × 4 queries × 4 keys, step 1>"


def test_an_empty_view_says_so(closing):
    view = AttentionView()
    closing.append(view)
    data, _ = view._repr_mimebundle_()
    assert "no attention weights yet" in data["text/plain"] and "no attention weights yet" in data["image/svg+xml"]


def test_labels_and_colours():
    assert [token_label(t) for t in (" ", "\n", "x")] == ["␣", "↵", "x"]
    assert weight_colour(0.0) == "rgb(255,255,255)" and weight_colour(1.0) == "rgb(8,48,107)"
    assert weight_colour(float("nan")) == "rgb(160,160,160)" and weight_colour(3.0) == weight_colour(1.0)


def test_the_shown_head_is_a_trait_that_follows_a_selection_from_python(closing):
    view = AttentionView(causal_weights(4, 6), tokens=list("abcdef"))
    closing.append(view)
    assert view.head == 0                                     # head 0 large, the others on tabs
    view.selected = {"head": 3, "query": 2, "key": 1}
    assert view.head == 3
    view.head = 1                                             # a tab clicked: the selection stays
    assert view.selected == {"head": 3, "query": 2, "key": 1} and view.head == 1
