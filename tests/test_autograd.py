"""The autograd engine as a user meets it: backward and grad, graphs and their
lifetime, grad modes, in-place rules, custom Functions, hooks, anomaly mode, the
observer seam, gradient checks and the functional API (jacobian, hessian, ...).

Every test asserts values: closed-form derivatives, exact error wording where the
wording is the feature, and event orders that the visual layers replay.
"""

import gc
import re
import threading
import time
import weakref

import numpy as np
import pytest

import vizgrad as vg
from vizgrad.autograd import (BackwardError, Function, GradcheckError, functional, grad, gradcheck,
                              gradgradcheck, observers)
from vizgrad.errors import ShapeError


def values(tensor):
    """The tensor's values as a float64 NumPy array (for comparisons)."""
    return np.asarray(tensor.detach().numpy(), dtype=np.float64)


def close(tensor, expected, rtol=1e-6, atol=1e-6):
    np.testing.assert_allclose(values(tensor), np.asarray(expected, dtype=np.float64), rtol=rtol, atol=atol)


def leaf(data, dtype="float64"):
    return vg.tensor(data, dtype=dtype, requires_grad=True)


# --- backward -------------------------------------------------------------------
def test_leaf_grads_accumulate_across_backward_calls():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    close(x.grad, [2.0, 4.0, 6.0])
    (x * x).sum().backward()
    close(x.grad, [4.0, 8.0, 12.0])
    (x * 3).sum().backward()
    close(x.grad, [7.0, 11.0, 15.0])


def test_gradient_reaching_a_leaf_twice_is_summed():
    x = leaf([2.0])
    (x * x * x + x).sum().backward()      # 3x² + 1
    close(x.grad, [13.0])


def test_second_backward_through_freed_graph_says_retain_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(BackwardError, match=r"retain_graph=True") as info:
        y.backward()
    assert "MulBackward" in str(info.value)


def test_retain_graph_allows_a_second_backward():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    close(x.grad, [4.0, 8.0])


def test_non_leaf_grad_is_none_unless_retained():
    x = leaf([1.0, 2.0])
    y = x * 3
    z = x * 5
    z.retain_grad()
    (y * y + z * z).sum().backward()
    assert y.grad is None
    assert not y.retains_grad
    assert z.retains_grad
    close(z.grad, [10.0, 20.0])            # d(z²)/dz = 2z
    close(x.grad, [18.0 + 50.0, 36.0 + 100.0])


def test_non_scalar_root_without_gradient_names_the_shape():
    x = leaf([[1.0, 2.0, 3.0]])
    with pytest.raises(ShapeError, match=re.escape("(1, 3)")):
        (x * 2).backward()


def test_gradient_of_wrong_shape_names_both_shapes():
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(ShapeError) as info:
        (x * 2).backward(vg.ones(2, dtype="float64"))
    assert "(2,)" in str(info.value) and "(3,)" in str(info.value)


def test_explicit_gradient_is_a_vector_jacobian_product():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).backward(vg.tensor([1.0, 10.0, 100.0], dtype="float64"))
    close(x.grad, [2.0, 40.0, 600.0])


def test_backward_of_a_tensor_without_graph_raises():
    with pytest.raises(BackwardError, match="does not require grad"):
        vg.tensor([1.0]).sum().backward()


def test_backward_inputs_restricts_accumulation():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None
    close(w.grad, [1.0, 2.0])


# --- autograd.grad ----------------------------------------------------------------
def test_grad_returns_gradients_without_touching_dot_grad():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    gx, gw = grad((x * w).sum(), [x, w])
    close(gx, [3.0, 4.0])
    close(gw, [1.0, 2.0])
    assert x.grad is None and w.grad is None
    assert not gx.requires_grad


def test_grad_of_an_unused_input_needs_allow_unused():
    x, unused = leaf([1.0, 2.0]), leaf([5.0])
    with pytest.raises(BackwardError, match="allow_unused=True"):
        grad((x * x).sum(), [x, unused])
    gx, gu = grad((x * x).sum(), [x, unused], allow_unused=True)
    close(gx, [2.0, 4.0])
    assert gu is None
    gx, gu = grad((x * x).sum(), [x, unused], materialize_grads=True)
    close(gu, [0.0])


def test_grad_with_respect_to_a_non_leaf():
    x = leaf([1.0, 2.0])
    y = x * 3
    (gy,) = grad((y * y).sum(), y)
    close(gy, [6.0, 12.0])


def test_create_graph_gives_every_order_of_x_to_the_fourth():
    x = leaf(2.0)
    (d1,) = grad(x ** 4, x, create_graph=True)
    (d2,) = grad(d1, x, create_graph=True)
    (d3,) = grad(d2, x, create_graph=True)
    (d4,) = grad(d3, x, create_graph=True)
    assert d1.item() == pytest.approx(4 * 2.0 ** 3)
    assert d2.item() == pytest.approx(12 * 2.0 ** 2)
    assert d3.item() == pytest.approx(24 * 2.0)
    assert d4.item() == pytest.approx(24.0)


def test_create_graph_through_sin_cycles_derivatives():
    x = leaf([0.3, 1.2])
    d = x.sin()
    expected = [np.cos, lambda v: -np.sin(v), lambda v: -np.cos(v), np.sin]
    for derivative in expected:
        (d,) = grad(d.sum(), x, create_graph=True)
        close(d, derivative(np.array([0.3, 1.2])))


def test_backward_with_create_graph_makes_grad_differentiable():
    x = leaf([1.0, 2.0])
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    (second,) = grad(x.grad.sum(), x)
    close(second, [6.0, 12.0])            # d(3x²)/dx


def test_zero_dimensional_tensors_get_array_gradients_of_every_order():
    # NumPy returns scalars, not 0-d arrays, from 0-d arithmetic; gradients must still be tensors
    x = leaf(0.5)
    (x * x).backward()
    (x * x).backward()
    assert x.grad.shape == () and x.grad.item() == pytest.approx(2.0)
    (d1,) = grad(x.exp(), x, create_graph=True)   # exp saves its output, which NumPy made a scalar
    (d2,) = grad(d1, x)
    assert d2.item() == pytest.approx(np.exp(0.5))
    (d1,) = grad(x.relu() * x, x, create_graph=True)
    (d2,) = grad(d1, x)
    assert d2.item() == pytest.approx(2.0)


def test_mixed_partial_derivative():
    x, y = leaf(1.5), leaf(-0.5)
    f = x * x * y + y.exp()
    (fx,) = grad(f, x, create_graph=True)
    (fxy,) = grad(fx, y)
    assert fxy.item() == pytest.approx(2 * 1.5)


# --- the functional API ------------------------------------------------------------
def test_jacobian_of_elementwise_square_is_diagonal():
    x = vg.tensor([1.0, 2.0, 3.0], dtype="float64")
    jac = functional.jacobian(lambda x: x ** 2, x)
    assert jac.shape == (3, 3)
    close(jac, np.diag([2.0, 4.0, 6.0]))
    assert not jac.requires_grad


def test_jacobian_shapes_are_output_shape_plus_input_shape():
    x = vg.tensor([[1.0], [2.0], [3.0]], dtype="float64")     # (3, 1)
    w = vg.tensor([1.0, -2.0, 0.5, 4.0], dtype="float64")      # (4,)
    jx, jw = functional.jacobian(lambda x, w: x * w, (x, w))   # output (3, 4)
    assert jx.shape == (3, 4, 3, 1) and jw.shape == (3, 4, 4)
    expected_x = np.zeros((3, 4, 3, 1))
    expected_w = np.zeros((3, 4, 4))
    for i in range(3):
        for j in range(4):
            expected_x[i, j, i, 0] = values(w)[j]
            expected_w[i, j, j] = values(x)[i, 0]
    close(jx, expected_x)
    close(jw, expected_w)


def test_jacobian_with_tuple_outputs_and_inputs():
    x = vg.tensor([0.5, -1.0], dtype="float64")
    y = vg.tensor([2.0, 3.0], dtype="float64")
    single_in = functional.jacobian(lambda x: (x.exp(), x * 3), x)
    assert isinstance(single_in, tuple) and len(single_in) == 2
    close(single_in[0], np.diag(np.exp([0.5, -1.0])))
    close(single_in[1], 3 * np.eye(2))
    both = functional.jacobian(lambda x, y: (x * y, x + y), (x, y))
    assert len(both) == 2 and all(len(row) == 2 for row in both)
    close(both[0][0], np.diag([2.0, 3.0]))
    close(both[0][1], np.diag([0.5, -1.0]))
    close(both[1][0], np.eye(2))
    close(both[1][1], np.eye(2))


def test_jacobian_of_a_scalar_output_and_of_a_scalar_input():
    x = vg.tensor([1.0, 2.0], dtype="float64")
    jac = functional.jacobian(lambda x: (x ** 3).sum(), x)
    assert jac.shape == (2,)
    close(jac, [3.0, 12.0])
    s = vg.tensor(0.5, dtype="float64")
    jac = functional.jacobian(lambda s: vg.tensor([1.0, 2.0], dtype="float64") * s, s)
    assert jac.shape == (2,)
    close(jac, [1.0, 2.0])


def test_jacobian_of_an_unused_input_is_zero_or_strict_error():
    x = vg.tensor([1.0, 2.0], dtype="float64")
    y = vg.tensor([5.0], dtype="float64")
    jx, jy = functional.jacobian(lambda x, y: x * 2, (x, y))
    close(jx, 2 * np.eye(2))
    assert jy.shape == (2, 1)
    close(jy, np.zeros((2, 1)))
    with pytest.raises(BackwardError, match="input 1"):
        functional.jacobian(lambda x, y: x * 2, (x, y), strict=True)


def test_jacobian_create_graph_is_differentiable_with_respect_to_the_callers_tensor():
    x = leaf([1.0, 2.0, 3.0])
    jac = functional.jacobian(lambda x: x ** 3, x, create_graph=True)
    assert jac.requires_grad
    close(jac, np.diag([3.0, 12.0, 27.0]))
    (second,) = grad(jac.sum(), x)
    close(second, [6.0, 12.0, 18.0])


def test_hessian_of_sum_of_cubes():
    x = vg.tensor([1.0, 2.0], dtype="float64")
    hess = functional.hessian(lambda x: (x ** 3).sum(), x)
    assert hess.shape == (2, 2)
    close(hess, np.diag([6.0, 12.0]))


def test_hessian_with_tuple_inputs_has_all_blocks():
    x = vg.tensor([1.0, 2.0], dtype="float64")
    y = vg.tensor([3.0, -1.0], dtype="float64")
    (hxx, hxy), (hyx, hyy) = functional.hessian(lambda x, y: (x * x * y).sum(), (x, y))
    close(hxx, np.diag([6.0, -2.0]))           # 2y
    close(hxy, np.diag([2.0, 4.0]))            # 2x
    close(hyx, np.diag([2.0, 4.0]))
    close(hyy, np.zeros((2, 2)))


def test_hessian_needs_a_single_element_output():
    x = vg.tensor([1.0, 2.0], dtype="float64")
    with pytest.raises(ShapeError, match=re.escape("(2,)")):
        functional.hessian(lambda x: x ** 2, x)


def test_vjp_matches_closed_form_and_detaches():
    x = vg.tensor([1.0, 2.0, 3.0], dtype="float64")
    v = vg.tensor([1.0, 10.0, 100.0], dtype="float64")
    out, product = functional.vjp(lambda x: x ** 2, x, v)
    close(out, [1.0, 4.0, 9.0])
    close(product, [2.0, 40.0, 600.0])
    assert not out.requires_grad and not product.requires_grad


def test_vjp_of_a_scalar_function_needs_no_v():
    x = vg.tensor([1.0, 2.0], dtype="float64")
    out, product = functional.vjp(lambda x: (x * x).sum(), x)
    assert out.item() == pytest.approx(5.0)
    close(product, [2.0, 4.0])


def test_vjp_checks_v():
    x = vg.tensor([1.0, 2.0], dtype="float64")
    with pytest.raises(ValueError, match="v may be omitted only"):
        functional.vjp(lambda x: x * 2, x)
    with pytest.raises(ShapeError, match=re.escape("(3,)")):
        functional.vjp(lambda x: x * 2, x, vg.ones(3, dtype="float64"))


def test_vjp_with_tuple_inputs_and_outputs():
    x = vg.tensor([1.0, 2.0], dtype="float64")
    y = vg.tensor([3.0, 4.0], dtype="float64")
    v = (vg.tensor([1.0, 1.0], dtype="float64"), vg.tensor([2.0, 0.0], dtype="float64"))
    outs, (gx, gy) = functional.vjp(lambda x, y: (x * y, x + y), (x, y), v)
    assert isinstance(outs, tuple) and len(outs) == 2
    close(gx, [3.0 + 2.0, 4.0])                 # y·v0 + v1
    close(gy, [1.0 + 2.0, 2.0])                 # x·v0 + v1


def test_jvp_is_a_directional_derivative():
    x = vg.tensor([0.0, 1.0], dtype="float64")
    v = vg.tensor([1.0, -2.0], dtype="float64")
    out, product = functional.jvp(lambda x: x.exp() * 2, x, v)
    close(out, 2 * np.exp([0.0, 1.0]))
    close(product, 2 * np.exp([0.0, 1.0]) * [1.0, -2.0])
    assert not product.requires_grad


def test_jvp_with_two_inputs_sums_both_directions():
    x = vg.tensor([1.0, 2.0], dtype="float64")
    y = vg.tensor([3.0, 4.0], dtype="float64")
    vx = vg.tensor([1.0, 0.0], dtype="float64")
    vy = vg.tensor([0.0, 1.0], dtype="float64")
    out, product = functional.jvp(lambda x, y: x * y, (x, y), (vx, vy))
    close(product, [3.0 * 1.0, 2.0 * 1.0])      # y·vx + x·vy


def test_jvp_of_an_output_that_ignores_the_inputs_is_zero():
    x = vg.tensor([1.0, 2.0], dtype="float64")
    constant = vg.tensor([7.0], dtype="float64")
    (a, b), (da, db) = functional.jvp(lambda x: (x * 3, constant), x, vg.ones(2, dtype="float64"))
    close(da, [3.0, 3.0])
    close(db, [0.0])
    with pytest.raises(BackwardError, match="strict=True"):
        functional.jvp(lambda x: (x * 3, constant), x, vg.ones(2, dtype="float64"), strict=True)


def test_hvp_and_vhp_of_sum_of_cubes():
    x = vg.tensor([1.0, 2.0], dtype="float64")
    v = vg.tensor([1.0, -1.0], dtype="float64")
    out, product = functional.hvp(lambda x: (x ** 3).sum(), x, v)
    assert out.item() == pytest.approx(9.0)
    close(product, [6.0, -12.0])
    out, product = functional.vhp(lambda x: (x ** 3).sum(), x, v)
    close(product, [6.0, -12.0])


def test_hvp_with_two_inputs_matches_the_hessian_blocks():
    x = vg.tensor([1.0, 2.0], dtype="float64")
    y = vg.tensor([3.0, -1.0], dtype="float64")
    vx = vg.tensor([1.0, 1.0], dtype="float64")
    vy = vg.tensor([2.0, 0.5], dtype="float64")
    f = lambda x, y: (x * x * y).sum()       # noqa: E731
    _, (hx, hy) = functional.hvp(f, (x, y), (vx, vy))
    # H v: x-part = 2y·vx + 2x·vy, y-part = 2x·vx
    close(hx, 2 * np.array([3.0, -1.0]) * 1.0 + 2 * np.array([1.0, 2.0]) * [2.0, 0.5])
    close(hy, 2 * np.array([1.0, 2.0]) * 1.0)
    _, (vhx, vhy) = functional.vhp(f, (x, y), (vx, vy))
    close(vhx, values(hx))
    close(vhy, values(hy))


def test_second_order_functional_results_are_differentiable_with_create_graph():
    x = leaf([1.0, 2.0])
    f = lambda x: (x ** 4).sum()             # noqa: E731
    ones = vg.ones(2, dtype="float64")
    hess = functional.hessian(f, x, create_graph=True)
    close(hess, np.diag([12.0, 48.0]))      # 12x²
    (third,) = grad(hess.sum(), x)
    close(third, [24.0, 48.0])              # 24x
    for product in (functional.hvp, functional.vhp):
        _, p = product(f, x, ones, create_graph=True)
        close(p, [12.0, 48.0])
        (third,) = grad(p.sum(), x)
        close(third, [24.0, 48.0])
    _, p = functional.jvp(lambda x: x ** 4, x, ones, create_graph=True)
    (second,) = grad(p.sum(), x)
    close(second, [12.0, 48.0])


def test_second_order_of_a_linear_function_is_zero_or_strict_error():
    x = vg.tensor([1.0, 2.0], dtype="float64")
    f = lambda x: (x * 2).sum()              # noqa: E731
    close(functional.hessian(f, x), np.zeros((2, 2)))
    close(functional.hvp(f, x, vg.ones(2, dtype="float64"))[1], [0.0, 0.0])
    for second_order in (functional.hessian, functional.hvp, functional.vhp):
        arguments = (f, x) if second_order is functional.hessian else (f, x, vg.ones(2, dtype="float64"))
        with pytest.raises(BackwardError, match="does not depend on input 0"):
            second_order(*arguments, strict=True)


def test_functional_api_works_inside_no_grad_and_rejects_non_tensor_outputs():
    x = vg.tensor([1.0, 2.0], dtype="float64")
    with vg.no_grad():
        close(functional.jacobian(lambda x: x * x, x), np.diag([2.0, 4.0]))
    with pytest.raises(TypeError, match="must be a Tensor or a tuple of Tensors"):
        functional.jacobian(lambda x: [x], x)


# --- grad modes -----------------------------------------------------------------------
def test_no_grad_enable_grad_and_set_grad_enabled_as_context_managers():
    x = leaf([1.0])
    with vg.no_grad():
        assert not vg.is_grad_enabled()
        assert not (x * 2).requires_grad
        with vg.enable_grad():
            assert (x * 2).requires_grad
        with vg.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
    with vg.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert vg.is_grad_enabled()
    assert (x * 2).requires_grad


def test_grad_modes_as_decorators():
    x = leaf([1.0])

    @vg.no_grad()
    def frozen():
        return x * 2

    @vg.enable_grad()
    def recorded():
        return x * 2

    @vg.set_grad_enabled(False)
    def switched_off():
        return x * 2

    assert vg.is_grad_enabled()      # decorating switched nothing
    assert not frozen().requires_grad
    with vg.no_grad():
        assert recorded().requires_grad
    assert not switched_off().requires_grad
    assert vg.is_grad_enabled()


def test_set_grad_enabled_as_a_function_call():
    try:
        vg.set_grad_enabled(False)
        assert not vg.is_grad_enabled()
    finally:
        vg.set_grad_enabled(True)
    assert vg.is_grad_enabled()


def test_grad_mode_is_thread_local():
    x = leaf([1.0])
    entered, release = threading.Event(), threading.Event()
    seen = {}

    def worker():
        with vg.no_grad():
            seen["worker"] = vg.is_grad_enabled()
            entered.set()
            release.wait(5)

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        assert entered.wait(5)
        assert vg.is_grad_enabled()
        assert (x * 2).requires_grad
    finally:
        release.set()
        thread.join(5)
    assert seen["worker"] is False


# --- versions and in-place ops -----------------------------------------------------------
def test_modifying_a_saved_input_in_place_is_detected_at_backward():
    x = leaf([1.0, 2.0, 3.0])
    a = x * 2
    b = a * a                 # MulBackward saves a
    a.add_(1)
    with pytest.raises(BackwardError) as info:
        b.sum().backward()
    message = str(info.value)
    assert "MulBackward" in message
    assert "version 1" in message and "expected version 0" in message


def test_modifying_a_saved_output_in_place_is_detected_at_backward():
    x = leaf([0.5, 1.0])
    y = x.exp()               # ExpBackward saves its output
    y.add_(1)
    with pytest.raises(BackwardError, match="ExpBackward") as info:
        y.sum().backward()
    assert "version 1" in str(info.value) and "expected version 0" in str(info.value)


def test_in_place_on_a_leaf_that_requires_grad_raises_outside_no_grad():
    x = leaf([1.0, 2.0])
    with pytest.raises(BackwardError, match="add_.*no_grad"):
        x.add_(1)
    with vg.no_grad():
        x.add_(1)
        x.mul_(2)
    close(x, [4.0, 6.0])
    assert x.is_leaf and x.requires_grad
    assert x._version == 2


def test_in_place_ops_on_non_leaves_give_correct_gradients():
    x = leaf([1.0, 2.0, 3.0])
    y = x * 2
    y.mul_(3)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    close(x.grad, [6.0, 6.0, 6.0])

    x = leaf([0.3, 0.7])
    y = x.sin()               # SinBackward saves its input, not its output
    y.add_(1)
    y.sum().backward()
    close(x.grad, np.cos([0.3, 0.7]))

    x = leaf([0.1, 0.2])
    y = x * 2
    y.exp_()                  # d exp(2x)/dx = 2 exp(2x)
    y.pow_(2)                 # d exp(4x)/dx = 4 exp(4x)
    y.sum().backward()
    close(x.grad, 4 * np.exp(4 * np.array([0.1, 0.2])))


def test_setitem_is_differentiable_for_target_and_value():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    v = leaf(5.0)
    y = x * 2
    y[1] = v * 3
    close(y, [2.0, 15.0, 6.0, 8.0])
    (y * y).sum().backward()
    close(x.grad, [2 * 2 * 2.0, 0.0, 2 * 6.0 * 2, 2 * 8.0 * 2])
    assert v.grad.item() == pytest.approx(2 * 15.0 * 3)


# --- custom Functions ---------------------------------------------------------------------
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x ** 2


def test_custom_function_forward_backward_and_second_order():
    x = leaf([1.0, 2.0])
    y = Cube.apply(x)
    assert y.grad_fn.name() == "CubeBackward"
    close(y, [1.0, 8.0])
    (d1,) = grad(y.sum(), x, create_graph=True)
    close(d1, [3.0, 12.0])
    (d2,) = grad(d1.sum(), x)
    close(d2, [6.0, 12.0])


def test_custom_function_needs_input_grad():
    seen = []

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, factor):
            ctx.save_for_backward(x, factor)
            return x * factor

        @staticmethod
        def backward(ctx, grad_output):
            seen.append(ctx.needs_input_grad)
            x, factor = ctx.saved_tensors
            return grad_output * factor, (grad_output * x if ctx.needs_input_grad[1] else None)

    x = leaf([1.0, 2.0])
    Scale.apply(x, vg.tensor([3.0, 3.0], dtype="float64")).sum().backward()
    close(x.grad, [3.0, 3.0])
    assert tuple(seen[-1]) == (True, False)
    f = leaf([3.0, 4.0])
    Scale.apply(x, f).sum().backward()
    assert tuple(seen[-1]) == (True, True)
    close(f.grad, [1.0, 2.0])


def test_custom_function_mark_non_differentiable():
    class SortedWithOrder(Function):
        @staticmethod
        def forward(ctx, x):
            order = vg.tensor(np.argsort(x.numpy()).astype(np.float64))
            ctx.mark_non_differentiable(order)
            return x * 1, order

        @staticmethod
        def backward(ctx, grad_value, grad_order):
            return grad_value

    x = leaf([3.0, 1.0, 2.0])
    value, order = SortedWithOrder.apply(x)
    assert value.requires_grad and value.grad_fn.name() == "SortedWithOrderBackward"
    assert not order.requires_grad and order.grad_fn is None
    close(order, [1.0, 2.0, 0.0])
    value.sum().backward()
    close(x.grad, [1.0, 1.0, 1.0])


def test_custom_function_returning_the_wrong_number_of_gradients_names_it():
    class TwoGradients(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, grad_output

    expected = r"TwoGradients\.backward returned 2 gradients but forward took 1"
    with pytest.raises(BackwardError, match=expected):
        TwoGradients.apply(leaf([1.0])).sum().backward()


def test_custom_function_returning_a_gradient_of_the_wrong_shape_names_it_and_the_input():
    class BadShape(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, vg.ones(2, dtype="float64")

    with pytest.raises(BackwardError) as info:
        BadShape.apply(leaf([1.0, 2.0, 3.0]), leaf([1.0, 2.0, 3.0])).sum().backward()
    message = str(info.value)
    assert "BadShape" in message and "input 1" in message
    assert "(2,)" in message and "(3,)" in message


def test_custom_function_returning_a_non_tensor_gradient_raises():
    class NotATensor(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return 2.0

    with pytest.raises(BackwardError, match="NotATensor.backward returned a float"):
        NotATensor.apply(leaf([1.0])).sum().backward()


def test_custom_function_forward_must_return_tensors():
    class ReturnsList(Function):
        @staticmethod
        def forward(ctx, x):
            return [x]

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output

    with pytest.raises(TypeError, match="ReturnsList.forward must return Tensors"):
        ReturnsList.apply(leaf([1.0]))


# --- hooks -----------------------------------------------------------------------------
def test_tensor_hook_on_a_leaf_can_replace_the_gradient():
    x = leaf([1.0, 2.0])
    seen = []
    x.register_hook(lambda g: seen.append(values(g)))
    x.register_hook(lambda g: g * 10)
    (x * 3).sum().backward()
    np.testing.assert_allclose(seen[0], [3.0, 3.0])
    close(x.grad, [30.0, 30.0])


def test_tensor_hook_on_a_non_leaf_changes_what_flows_below():
    x = leaf([1.0, 2.0])
    y = x * 3
    y.register_hook(lambda g: g * 2)
    (y * y).sum().backward()                 # dL/dy = 2y, doubled, times 3
    close(x.grad, [2 * 2 * 3.0 * 3, 2 * 2 * 6.0 * 3])


def test_hook_handle_remove_and_context_manager():
    x = leaf([1.0])
    calls = []
    handle = x.register_hook(lambda g: calls.append("a"))
    with x.register_hook(lambda g: calls.append("b")):
        (x * 2).sum().backward()
    (x * 2).sum().backward()
    handle.remove()
    (x * 2).sum().backward()
    assert calls == ["a", "b", "a"]
    handle.remove()                           # removing twice is harmless


def test_post_accumulate_grad_hook_sees_the_updated_grad():
    x = leaf([1.0, 2.0])
    seen = []
    handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(values(t.grad)))
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    handle.remove()
    (x * 2).sum().backward()
    assert len(seen) == 2
    np.testing.assert_allclose(seen[0], [2.0, 2.0])
    np.testing.assert_allclose(seen[1], [4.0, 4.0])
    with pytest.raises(BackwardError, match="leaf"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)


def test_hook_order_on_a_leaf():
    x = leaf([1.0])
    events = []

    def first(g):
        events.append(("first", g.item()))
        return g + 1

    def second(g):
        events.append(("second", g.item(), x.grad))
        return g * 10

    x.register_hook(first)
    x.register_hook(second)
    x.register_post_accumulate_grad_hook(lambda t: events.append(("post", t.grad.item())))
    (x * 2).sum().backward()
    assert events == [("first", 2.0), ("second", 3.0, None), ("post", 30.0)]


def test_hook_order_on_a_non_leaf_tensor_hooks_retain_grad_then_node_hooks():
    x = leaf([1.0])
    y = x * 2
    events = []
    y.retain_grad()
    y.register_hook(lambda g: events.append(("tensor hook 1", g.item())) or g * 3)
    y.register_hook(lambda g: events.append(("tensor hook 2", g.item())))
    y.grad_fn.register_prehook(lambda grads: events.append(("node prehook", y.grad.item(), grads[0].item())))
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: events.append(
        ("node hook", grad_inputs[0].item(), grad_outputs[0].item())))
    (y * 5).sum().backward()
    assert events == [("tensor hook 1", 5.0), ("tensor hook 2", 15.0), ("node prehook", 15.0, 15.0),
                      ("node hook", 30.0, 15.0)]
    close(y.grad, [15.0])                   # retain_grad stores what the hooks made
    close(x.grad, [30.0])


def test_node_hooks_can_replace_gradients():
    x = leaf([1.0, 2.0])
    y = x * 3
    handle = y.grad_fn.register_prehook(lambda grads: (grads[0] * 2,))
    y.sum().backward()
    close(x.grad, [6.0, 6.0])
    handle.remove()
    x.grad = None
    y = x * 3
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] + 1, grad_inputs[1]))
    y.sum().backward()
    close(x.grad, [4.0, 4.0])


def test_node_hooks_that_return_the_wrong_number_of_gradients_say_so():
    x = leaf([1.0, 2.0])
    y = x * 3
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0],))
    with pytest.raises(BackwardError, match=r"a hook of MulBackward0 returned 1 gradients; it must return 2 "
                                            r"\(one per input, None allowed\) or None"):
        y.sum().backward()
    y = x * 3
    y.grad_fn.register_prehook(lambda grads: (grads[0], grads[0]))
    with pytest.raises(BackwardError, match=r"a pre-hook of MulBackward0 returned 2 gradients; it must return 1"):
        y.sum().backward()


def test_hook_must_return_a_tensor_or_none():
    x = leaf([1.0])
    x.register_hook(lambda g: 3.0)
    with pytest.raises(TypeError, match="must return a Tensor or None"):
        (x * 2).sum().backward()


# --- anomaly mode ------------------------------------------------------------------------
def test_anomaly_mode_names_the_op_and_the_users_line():
    x = leaf([0.0, 1.0])
    with vg.autograd.detect_anomaly():
        assert vg.autograd.is_anomaly_enabled()
        y = (x.sqrt() * 0.0).sum()  # the line anomaly mode must point at
        with pytest.raises(BackwardError) as info:
            y.backward()
    assert not vg.autograd.is_anomaly_enabled()
    message = str(info.value)
    assert "SqrtBackward" in message and "nan" in message
    assert "y = (x.sqrt() * 0.0).sum()  # the line anomaly mode must point at" in message
    assert "test_autograd.py" in message


def test_without_anomaly_mode_nan_gradients_pass_silently():
    x = leaf([0.0, 1.0])
    (x.sqrt() * 0.0).sum().backward()
    assert np.isnan(values(x.grad)[0])


def test_detect_anomaly_as_a_decorator():
    @vg.autograd.detect_anomaly()
    def run():
        x = leaf([0.0])
        (vg.tensor([1.0], dtype="float64") / x * 0.0).sum().backward()

    with pytest.raises(BackwardError, match="DivBackward"):
        run()


# --- scale, determinism, memory -----------------------------------------------------------
def _chain(length):
    x = leaf([1.0])
    y = x
    for _ in range(length):
        y = y * 1.0001
    return x, y


def _timed_backward(length):
    x, y = _chain(length)
    gc.disable()                  # a collection pause inside one run is noise, not the engine's cost
    try:
        started = time.perf_counter()
        y.backward()
        return x, time.perf_counter() - started
    finally:
        gc.enable()


@pytest.fixture(scope="module")
def deep_chain():
    """A chain of 100,000 multiplications, backpropagated once: (leaf, seconds)."""
    return _timed_backward(100_000)


def test_a_chain_of_100k_ops_backpropagates_without_recursion(deep_chain):
    x, _ = deep_chain
    assert x.grad.item() == pytest.approx(1.0001 ** 100_000, rel=1e-6)


def test_backward_time_grows_roughly_linearly(deep_chain):
    large = min(deep_chain[1], _timed_backward(100_000)[1])
    _timed_backward(1000)                     # warm up
    small = min(_timed_backward(20_000)[1] for _ in range(3))
    assert large / small < 12     # linear is 5x; loose for noisy machines (quadratic would be 25x)


class Recorder(observers.Observer):
    """An observer writing every event it sees into a list."""

    def __init__(self):
        self.events = []

    def op_applied(self, node, op, inputs, outputs, seconds):
        if node is not None:                  # None: an op that recorded nothing (no_grad)
            self.events.append(("op_applied", node.name(), node.id))

    def backward_started(self, roots):
        self.events.append(("backward_started", len(roots)))

    def node_backward(self, node, grad_outputs, grad_inputs, seconds):
        self.events.append(("node_backward", node.name(), node.id))

    def grad_accumulated(self, tensor, first):
        self.events.append(("grad_accumulated", tensor.name, first))

    def backward_finished(self, roots, node_count, seconds):
        self.events.append(("backward_finished", node_count))


def _diamond_program():
    x = vg.tensor([0.5, 1.5], dtype="float64", requires_grad=True, name="x")
    w = vg.tensor([2.0, -1.0], dtype="float64", requires_grad=True, name="w")
    a = x * w
    b = x.exp()
    c = a * b + a
    d = c.tanh() - b
    d.sum().backward()


def _relative(events):
    ids = [event[2] for event in events if event[0] in ("op_applied", "node_backward")]
    base = min(ids)
    return [event[:2] + (event[2] - base,) if event[0] in ("op_applied", "node_backward") else event
            for event in events]


def test_node_order_is_the_same_across_two_runs():
    runs = []
    for _ in range(2):
        recorder = Recorder()
        detach = observers.attach(recorder)
        try:
            _diamond_program()
        finally:
            detach()
        runs.append(_relative(recorder.events))
    assert runs[0] == runs[1]
    backward_order = [event[1] for event in runs[0] if event[0] == "node_backward"]
    assert backward_order == ["SumBackward0", "SubBackward0", "TanhBackward0", "AddBackward0",
                              "MulBackward0", "ExpBackward0", "MulBackward0"]


def test_the_backward_order_does_not_depend_on_what_earlier_graphs_keep_alive():
    # a leaf's AccumulateGrad is shared while some graph holds it: an earlier graph kept
    # alive (a loss not yet dropped) must not change the order of the next backward
    a = vg.tensor([1.0, 2.0], requires_grad=True, name="a")
    b = vg.tensor([3.0, -1.0], requires_grad=True, name="b")

    def order(keep_earlier):
        earlier = (a * b).sum() if keep_earlier else None
        seen = []
        with vg.events.subscribe(lambda e: seen.append(getattr(e, "op", None) or e.name),
                                 kinds={"node_backward", "grad_accumulated"}):
            (b * 3 + a * 2).tanh().sum().backward()
        del earlier
        a.grad = b.grad = None
        return seen
    assert order(False) == order(True) == ["Sum", "Tanh", "Add", "Mul", "a", "Mul", "b"]


def test_observer_sees_events_in_order_for_a_small_graph():
    recorder = Recorder()
    detach = observers.attach(recorder)
    try:
        x = vg.tensor([1.0, 2.0], dtype="float64", requires_grad=True, name="x")
        y = x * 2
        z = y.exp()
        z.backward(vg.ones(2, dtype="float64"))
    finally:
        detach()
    events = [event[:2] if event[0] in ("op_applied", "node_backward") else event
              for event in recorder.events]
    assert events == [
        ("op_applied", "MulBackward0"),
        ("op_applied", "ExpBackward0"),
        ("backward_started", 1),
        ("node_backward", "ExpBackward0"),
        ("node_backward", "MulBackward0"),
        ("grad_accumulated", "x", True),
        ("backward_finished", 3),
    ]
    assert recorder not in observers.active
    x2 = leaf([1.0])
    (x2 * 2).sum().backward()
    assert len(recorder.events) == 7          # detached: nothing more arrives


def test_graph_is_freed_after_backward_and_del():
    x = leaf([1.0, 2.0])
    y = x * 2
    z = y.exp()
    loss = z.sum()
    refs = [weakref.ref(y), weakref.ref(z), weakref.ref(y.grad_fn), weakref.ref(z.grad_fn),
            weakref.ref(loss.grad_fn)]
    loss.backward()
    del y, z, loss
    assert [ref() for ref in refs] == [None] * len(refs)     # freed by reference counting alone
    assert x.grad is not None


def test_graph_without_backward_is_freed_by_del():
    x = leaf([1.0, 2.0])
    y = (x * 2).exp()
    refs = [weakref.ref(y), weakref.ref(y.grad_fn)]
    del y
    gc.collect()
    assert [ref() for ref in refs] == [None, None]


def test_leaf_is_freed_after_an_observer_was_attached_and_detached():
    detach = observers.attach(Recorder())
    try:
        x = leaf([1.0, 2.0])
        (x * x).sum().backward()
    finally:
        detach()
    ref = weakref.ref(x)
    node_ref = weakref.ref(vg.autograd.function.accumulator_of(x))
    del x
    gc.collect()
    assert ref() is None and node_ref() is None


# --- gradient checks --------------------------------------------------------------------
class WrongSquare(Function):
    """x² with a wrong derivative (3x instead of 2x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x


class CubeWithFlatDerivative(Function):
    """x³ whose first derivative is right but is itself treated as constant in x."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * 3 * x.detach() ** 2


def _reported_values(message):
    """The analytical and numerical values a GradcheckError message states."""
    found = re.search(r"is (\S+) analytically but (\S+) numerically", message)
    return float(found.group(1)), float(found.group(2))


def test_gradcheck_passes_for_correct_ops():
    x = vg.tensor([0.3, -1.2, 2.0], dtype="float64", requires_grad=True)
    assert gradcheck(lambda t: t.tanh() * t, (x,))
    assert gradgradcheck(lambda t: t.tanh() * t, (x,))
    assert gradcheck(Cube.apply, (x,))
    assert gradgradcheck(Cube.apply, (x,))


def test_gradcheck_names_input_element_and_both_values():
    x = vg.tensor([0.5, 2.0], dtype="float64", requires_grad=True)
    with pytest.raises(GradcheckError) as info:
        gradcheck(WrongSquare.apply, (x,))
    message = str(info.value)
    assert "input 0" in message and "element (0,)" in message
    analytical, numerical = _reported_values(message)
    assert analytical == pytest.approx(3 * 0.5)
    assert numerical == pytest.approx(2 * 0.5, rel=1e-6)
    assert gradcheck(WrongSquare.apply, (x,), raise_exception=False) is False


def test_gradgradcheck_catches_a_wrong_second_derivative():
    x = vg.tensor([0.5, 2.0], dtype="float64", requires_grad=True)
    assert gradcheck(CubeWithFlatDerivative.apply, (x,))
    with pytest.raises(GradcheckError) as info:
        gradgradcheck(CubeWithFlatDerivative.apply, (x,))
    message = str(info.value)
    assert "input 0" in message and "element (0,)" in message
    analytical, numerical = _reported_values(message)
    assert analytical == 0.0
    assert numerical != pytest.approx(0.0, abs=1e-3)



def test_detach_does_not_keep_the_graph_alive():
    x = vg.randn(3, requires_grad=True)
    y = (x * 2).exp()
    node = weakref.ref(y.grad_fn)
    kept = y.detach()
    del y
    gc.collect()
    assert node() is None
    assert kept.grad_fn is None and kept.shape == (3,)


def test_detach_shares_the_version_counter():
    x = vg.randn(3, requires_grad=True)
    y = x.exp()
    detached = y.detach()
    detached.add_(1)
    with pytest.raises(vg.BackwardError, match="modified by an in-place operation"):
        y.sum().backward()


def test_gradients_summed_in_place_leave_every_edges_own_gradient_as_it_flowed():
    """A tensor used several times gets the sum of its gradients (the engine adds the third
    and later ones into the sum it owns, in place), while each edge's gradient, as recorded,
    stays the one that flowed along it; an array passed to two inputs (Add's) is never written."""
    x = vg.tensor([1.0, 2.0], requires_grad=True)
    with vg.trace() as recording:
        h = x * 1.0
        s = h + h                     # Add passes one array to both of h's uses
        y = (s * 2.0 + h * 3.0 + h * 4.0 + h).sum()
        y.backward()
    # ∂y/∂h = 2·2 (via s, twice) + 3 + 4 + 1 = 12; ∂y/∂x = 12
    assert x.grad.tolist() == [12.0, 12.0]
    graph = recording.graph
    node_of_h = next(node for node in graph.nodes if node.op == "Mul" and node.grad is not None
                     and node.grad["mean"] == 12.0)
    flowed = sorted(edge.grad["mean"] for edge in graph.edges if edge.source == node_of_h.id)
    assert flowed == [1.0, 2.0, 2.0, 3.0, 4.0]


def test_a_gradient_summed_many_times_under_create_graph_is_still_differentiable():
    x = vg.tensor(3.0, requires_grad=True)
    y = x * x + x * x + x * x + x          # 3x² + x
    (gx,) = vg.autograd.grad(y, x, create_graph=True)
    assert gx.item() == 19.0               # 6x + 1
    (gxx,) = vg.autograd.grad(gx, x)
    assert gxx.item() == 6.0
