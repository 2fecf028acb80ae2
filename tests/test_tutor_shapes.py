"""Shape errors explained (vizgrad.tutor.explain_error) and shown under the traceback in
IPython (vizgrad.tutor.explain_shape_errors)."""

import pytest

import vizgrad as vg
from vizgrad import nn, tutor


def _explain(run):
    with pytest.raises(vg.ShapeError) as caught:
        run()
    explanation = tutor.explain_error(caught.value)
    assert explanation is not None
    return explanation


def test_matmul_aligns_the_inner_dims_and_suggests_the_transpose():
    x = vg.randn(4, 3, requires_grad=True)
    W1 = vg.randn(3, 3, requires_grad=True)
    h = (x @ W1).tanh()
    W = vg.randn(2, 3)
    explanation = _explain(lambda: h @ W)
    assert explanation.op == "matmul"
    assert explanation.aligned == ["  h :  4  [3]", "  W :     [2]  3"]
    assert "the last dim of `h` must equal the first dim of `W`: 3 ≠ 2" in explanation.rule
    assert explanation.fix.startswith("`h @ W.T` (shape (4, 2))")
    labels = {node.id: node.label for node in explanation.graph.nodes}
    assert labels[explanation.highlight] == "matmul ✗"
    assert {"x", "W1", "h", "W"} <= set(labels.values())
    assert sorted(labels[e.source] for e in explanation.graph.edges if e.target == explanation.highlight) == ["W", "h"]


def test_matmul_without_an_easy_transpose_says_what_shape_fits():
    h, W = vg.randn(4, 3), vg.randn(5, 2)
    assert _explain(lambda: h @ W).fix == "`W` needs 3 rows to multiply `h` (4, 3): e.g. shape (3, 2)."


def test_broadcasting_marks_the_clashing_dim_and_lines_the_vector_up():
    x, b = vg.randn(4, 3), vg.randn(4)
    explanation = _explain(lambda: x + b)
    assert explanation.aligned == ["  x :  4  [3]", "  b :     [4]"]
    assert "Dim -1 is 3 vs 4" in explanation.rule
    assert explanation.fix.startswith("`b.view(4, 1)` (or `b[:, None]`)")


def test_cat_and_stack_suggest_the_dim_that_joins():
    a, b = vg.randn(4, 3), vg.randn(4, 2)
    assert _explain(lambda: vg.cat([a, b], dim=0)).fix == "`cat(..., dim=1)` joins these shapes."
    stacked = _explain(lambda: vg.stack([a, b]))
    assert stacked.aligned == ["  a :  4  [3]", "  b :  4  [2]"]
    assert stacked.fix == "To join them along an existing dim, `cat(..., dim=1)`."


def test_view_and_reshape_name_sizes_that_divide_and_the_copy_for_a_transpose():
    x = vg.randn(4, 3)
    explanation = _explain(lambda: x.view(5, -1))
    assert explanation.aligned[0] == "  x     : (4, 3) = 12 elements"
    assert "Sizes that divide 12: 2, 3, 4, 6; e.g. `x.view(2, -1)`" in explanation.fix
    assert "must multiply to 12" in _explain(lambda: x.reshape(2, 5)).rule
    xt = x.t()
    assert _explain(lambda: xt.view(-1)).fix.startswith("`xt.reshape(-1)`")


def test_conv_input_channels_last_or_another_channel_count():
    conv = nn.Conv2d(3, 8, 3)
    image = vg.randn(2, 5, 5, 3)
    explanation = _explain(lambda: conv(image))
    assert explanation.op == "conv2d"
    assert explanation.fix == "`image` is channels-last: `image.permute(0, 3, 1, 2)` puts the channels in dim 1."
    grey = vg.randn(2, 1, 5, 5)
    assert _explain(lambda: conv(grey)).fix == "A layer for 1 input channel is `nn.Conv2d(1, ...)`; or fix the input."


def test_linear_names_the_layer_and_the_fix():
    layer = nn.Linear(4, 2)
    x = vg.randn(5, 3)
    explanation = _explain(lambda: layer(x))
    assert "`Linear(4, 2)` takes inputs whose last dim is in_features = 4; `x`'s is 3" in explanation.rule
    assert explanation.fix == "`nn.Linear(3, 2)` fits this input."
    images = vg.randn(2, 1, 2, 2)
    assert _explain(lambda: layer(images)).fix.startswith("Flatten the features first: `images.flatten(1)`")


def test_only_shape_errors_are_explained():
    assert tutor.explain_error(ValueError("no")) is None
    with pytest.raises(vg.errors.IndexingError) as caught:
        vg.ones(2, 3).sum(dim=4)
    assert tutor.explain_error(caught.value) is None


def test_text_and_html():
    h, W = vg.randn(4, 3), vg.randn(5, 2)
    explanation = _explain(lambda: h @ W)
    text = str(explanation)
    assert text.splitlines()[0] == "matmul: h (4, 3), W (5, 2)" and "`" not in text and "Fix: W needs 3 rows" in text
    page = explanation._repr_html_()
    assert "matmul: the shapes do not fit" in page and "<b>Fix:</b>" in page


def test_ipython_shows_the_traceback_then_the_explanation():
    shell_module = pytest.importorskip("IPython.core.interactiveshell")
    from IPython.utils.capture import capture_output
    shell = shell_module.InteractiveShell.instance()
    try:
        assert tutor.explain_shape_errors(shell=shell)
        shell.run_cell("import vizgrad as vg\nh = vg.randn(4, 3)\nW = vg.randn(5, 2)")
        with capture_output() as captured:
            result = shell.run_cell("y = h @ W")
        assert isinstance(result.error_in_exec, vg.ShapeError)
        assert "ShapeError" in captured.stdout and "matmul: the inner dimensions do not match" in captured.stdout
        assert len(captured.outputs) == 1
        assert captured.outputs[0].data["text/plain"].startswith("matmul: h (4, 3), W (5, 2)")
        tutor.unload_ipython_extension(shell)
        with capture_output() as captured:
            shell.run_cell("y = h @ W")
        assert "ShapeError" in captured.stdout and not captured.outputs
    finally:
        shell.set_custom_exc((), None)
        shell_module.InteractiveShell.clear_instance()


class _Kernel:
    """Stands for ipykernel's kernel object: what tells a Jupyter kernel from a terminal IPython."""


def test_a_jupyter_kernel_explains_shape_errors_from_import_unless_told_not_to(monkeypatch):
    shell_module = pytest.importorskip("IPython.core.interactiveshell")
    from vizgrad.tutor.notebook import OPT_OUT, explain_in_kernel
    shell = shell_module.InteractiveShell.instance()
    try:
        assert not explain_in_kernel(shell)                 # a terminal IPython: only when asked
        assert shell.custom_exceptions == ()
        shell.kernel = _Kernel()
        monkeypatch.setenv(OPT_OUT, "0")
        assert not explain_in_kernel(shell)
        monkeypatch.delenv(OPT_OUT)
        assert explain_in_kernel(shell)
        assert shell.custom_exceptions == (vg.ShapeError,)
        # another library's handler keeps its slot
        shell.set_custom_exc((KeyError,), lambda *args, **kwargs: None)
        assert not explain_in_kernel(shell)
        assert shell.custom_exceptions == (KeyError,)
    finally:
        shell.set_custom_exc((), None)
        shell_module.InteractiveShell.clear_instance()


def test_a_real_kernel_explains_a_shape_error_with_nothing_turned_on():
    nbclient = pytest.importorskip("nbclient")
    import nbformat
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import vizgrad as vg\nh = vg.randn(4, 3)\nW = vg.randn(5, 2)\ny = h @ W")])
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True)
    client.execute()
    outputs = notebook.cells[0].outputs
    assert [output.output_type for output in outputs] == ["error", "display_data"]
    assert outputs[0].ename == "ShapeError"
    assert outputs[1].data["text/plain"].startswith("matmul: h (4, 3), W (5, 2)")
