"""Function transforms and forward-mode AD as programs use them: per-sample gradients of an
MLP (``vmap(grad(...))`` over ``functional_call``, in the style of the torch.func tutorial),
Jacobians and Hessians three ways, ``vjp``/``jvp``, model ensembling with
``stack_module_state``, then dual tensors (``torch.autograd.forward_ad``) and a custom
``autograd.Function`` with ``setup_context`` and ``jvp`` (PyTorch 2 style)."""

import copy

import numpy as np

from ..suite import program


def _mlp(torch, rng):
    """A 5-8-3 tanh MLP whose weights are drawn from NumPy (float32)."""
    nn = torch.nn
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(torch.tensor(rng.standard_normal(tuple(parameter.shape)).astype(np.float32) * 0.5))
    return model


def _expect_per_sample(r):
    assert r["matches_loop"] and r["mean_is_batch_gradient"] and r["randomness_error"] and r["same_masks_equal"]
    assert not r["different_masks_equal"]


@program("torch.func tutorial: per-sample gradients with vmap(grad(...)) and functional_call; in_dims, "
         "out_dims and randomness", expect=_expect_per_sample)
def per_sample_gradients(torch, rng):
    functional_call, grad, grad_and_value, vmap = (torch.func.functional_call, torch.func.grad,
                                                   torch.func.grad_and_value, torch.func.vmap)
    F = torch.nn.functional
    model = _mlp(torch, rng)
    x = torch.tensor(rng.standard_normal((6, 5)).astype(np.float32))
    y = torch.tensor(rng.integers(0, 3, 6))
    params = {name: p.detach() for name, p in model.named_parameters()}

    def loss_of(params, sample, target):
        out = functional_call(model, params, (sample.unsqueeze(0),))
        return F.cross_entropy(out, target.unsqueeze(0))

    per_sample = vmap(grad(loss_of), in_dims=(None, 0, 0))(params, x, y)
    grads, losses = vmap(grad_and_value(loss_of), in_dims=(None, 0, 0))(params, x, y)
    chunked = torch.vmap(grad(loss_of), in_dims=(None, 0, 0), chunk_size=4)(params, x, y)    # (torch.vmap too)
    # the same by a loop of ordinary backward passes
    loop = []
    for i in range(6):
        model.zero_grad()
        F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
        loop.append({name: p.grad.clone() for name, p in model.named_parameters()})
    matches_loop = all(torch.allclose(per_sample[name][i], loop[i][name], atol=1e-6)
                       for i in range(6) for name in params)
    model.zero_grad()
    F.cross_entropy(model(x), y).backward()
    mean_is_batch_gradient = all(torch.allclose(per_sample[name].mean(0), p.grad, atol=1e-6)
                                 for name, p in model.named_parameters())
    # in_dims on another axis, out_dims, nested vmap, keyword arguments (never batched)
    columns = vmap(lambda column, scale=1.0: (column * scale).sum(), in_dims=1)(x, scale=2.0)
    moved = vmap(lambda row: torch.outer(row, row[:2]), in_dims=0, out_dims=2)(x)
    pairwise = vmap(vmap(lambda a, b: (a - b).pow(2).sum(), in_dims=(None, 0)), in_dims=(0, None))(x, x)
    tupled = vmap(lambda row: (row.max(), row.argmax()), out_dims=(0, 0))(x)
    # randomness: an error by default, one mask for all samples ("same"), or one each ("different")
    try:
        vmap(lambda row: F.dropout(row, 0.5))(x)
        randomness_error = False
    except RuntimeError:
        randomness_error = True
    ones = torch.ones(4, 50)
    same = vmap(lambda row: F.dropout(row, 0.5), randomness="same")(ones)
    different = vmap(lambda row: F.dropout(row, 0.5), randomness="different")(ones)
    return {**{f"grad {name}": value for name, value in per_sample.items()},
            **{f"grad_and_value {name}": value for name, value in grads.items()},
            **{f"chunked {name}": value for name, value in chunked.items()}, "losses": losses,
            "matches_loop": matches_loop, "mean_is_batch_gradient": mean_is_batch_gradient, "columns": columns,
            "moved": moved, "pairwise": pairwise, "row_max": tupled[0], "row_argmax": tupled[1],
            "randomness_error": randomness_error, "same_masks_equal": bool((same == same[0]).all()),
            "different_masks_equal": bool((different == different[0]).all()),
            "dropout_values": torch.unique(same).tolist() == [0.0, 2.0]}


def _expect_jacobians(r):
    np.testing.assert_allclose(r["jacrev"], r["jacfwd"], rtol=1e-10)
    np.testing.assert_allclose(r["hessian"], r["hessian_by_jacrev_of_jacrev"], rtol=1e-10)
    np.testing.assert_allclose(r["jvp"], r["jacrev"] @ r["tangent"], rtol=1e-10)


@program("torch.func: Jacobians and Hessians with jacrev, jacfwd and hessian; vjp, jvp, argnums, has_aux",
         expect=_expect_jacobians)
def jacobians_and_hessians(torch, rng):
    func = torch.func
    grad, grad_and_value, hessian, jacfwd, jacrev = (func.grad, func.grad_and_value, func.hessian, func.jacfwd,
                                                     func.jacrev)
    jvp, vjp, vmap = func.jvp, func.vjp, func.vmap

    def f(x):
        return torch.stack([x[0] * x[1].sin(), (x ** 2).sum(), x.exp()[2] / (1 + x[1] ** 2), x.prod()])

    def energy(x, w):
        return (w * x.tanh()).sum() + 0.5 * (x @ x) ** 2

    x = torch.tensor(rng.standard_normal(3))
    w = torch.tensor(rng.standard_normal(3))
    tangent = torch.tensor(rng.standard_normal(3))
    cotangent = torch.tensor(rng.standard_normal(4))
    value, vjp_fn = vjp(f, x)
    (pulled,) = vjp_fn(cotangent)
    out, pushed = jvp(f, (x,), (tangent,))
    both = jacrev(energy, argnums=(0, 1))(x, w)
    with_aux = jacrev(lambda x: (f(x), x.norm()), has_aux=True)(x)
    value_and_grad = grad_and_value(lambda x: (energy(x, w), x.sum()), has_aux=True)(x)
    batch = torch.tensor(rng.standard_normal((5, 3)))
    return {"value": value, "vjp": pulled, "jvp_out": out, "jvp": pushed, "tangent": tangent,
            "jacrev": jacrev(f)(x), "jacfwd": jacfwd(f)(x), "hessian": hessian(energy)(x, w),
            "hessian_by_jacrev_of_jacrev": jacrev(jacrev(energy))(x, w),
            "hessian_by_jacfwd_of_jacrev": jacfwd(jacrev(energy))(x, w),
            "jacrev_x": both[0], "jacrev_w": both[1], "with_aux": with_aux[0], "aux": with_aux[1],
            "grad": value_and_grad[0][0], "value_of_grad": value_and_grad[1],
            "grad_aux": value_and_grad[0][1], "grad_of_grad": grad(lambda x: grad(energy)(x, w).sum())(x),
            "batched_jacobians": vmap(jacrev(f))(batch),
            "batched_hessians": vmap(hessian(energy), (0, None))(batch, w),
            "shape": str(jacfwd(f)(x).shape)}


def _expect_ensemble(r):
    assert r["matches_each"] and r["stacked_shape"].endswith("Size([3, 8, 5])")


@program("torch.func tutorial: model ensembling with stack_module_state and vmap over functional_call",
         expect=_expect_ensemble)
def model_ensembling(torch, rng):
    func = torch.func
    functional_call, stack_module_state, vmap = func.functional_call, func.stack_module_state, func.vmap
    models = [_mlp(torch, rng) for _ in range(3)]
    params, buffers = stack_module_state(models)
    base = copy.deepcopy(models[0])      # (the tutorial moves it to "meta": vizgrad has no meta device)

    def run(params, buffers, x):
        return functional_call(base, (params, buffers), (x,))

    minibatch = torch.tensor(rng.standard_normal((4, 5)).astype(np.float32))
    minibatches = torch.tensor(rng.standard_normal((3, 4, 5)).astype(np.float32))
    same_data = vmap(run, in_dims=(0, 0, None))(params, buffers, minibatch)
    own_data = vmap(run)(params, buffers, minibatches)
    matches_each = all(torch.allclose(same_data[i], models[i](minibatch), atol=1e-6)
                       and torch.allclose(own_data[i], models[i](minibatches[i]), atol=1e-6) for i in range(3))
    # gradients of the whole ensemble's loss reach the stacked parameters
    total = vmap(run, in_dims=(0, 0, None))(params, buffers, minibatch).pow(2).mean()
    total.backward()
    return {"same_data": same_data, "own_data": own_data, "matches_each": matches_each,
            "stacked_shape": str(params["0.weight"].shape),
            "names": " ".join(params), "requires_grad": [p.requires_grad for p in params.values()],
            "is_leaf": [p.is_leaf for p in params.values()], "stacked_grad": params["0.weight"].grad}


def _expect_forward_ad(r):
    np.testing.assert_allclose(r["dual_tangent"], r["func_jvp"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r["parameter_tangent"], r["functional_tangent"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r["custom_tangent"], r["custom_expected"], rtol=1e-6)
    assert r["no_tangent_outside_level"] and r["no_tangent_on_plain_tensor"]


@program("Forward-mode AD tutorial: dual_level, make_dual and unpack_dual through an MLP and its parameters; "
         "a custom Function with setup_context and jvp", expect=_expect_forward_ad)
def forward_mode_ad(torch, rng):
    fwAD = torch.autograd.forward_ad
    func = torch.func
    model = _mlp(torch, rng)
    x = torch.tensor(rng.standard_normal((4, 5)).astype(np.float32))
    v = torch.tensor(rng.standard_normal((4, 5)).astype(np.float32))
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, v)
        out = model(dual)
        primal, tangent = fwAD.unpack_dual(out)
        plain_tangent = fwAD.unpack_dual(torch.ones(2)).tangent
    func_out, func_jvp = func.jvp(model, (x,), (v,))
    # directional derivatives along the parameters: duals swapped in, then through functional_call
    params = {name: p.detach() for name, p in model.named_parameters()}
    directions = {name: torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32))
                  for name, p in params.items()}
    with fwAD.dual_level():
        duals = {name: fwAD.make_dual(p, directions[name]) for name, p in params.items()}
        functional_tangent = fwAD.unpack_dual(func.functional_call(model, duals, (x,))).tangent
    _, parameter_tangent = func.jvp(lambda p: func.functional_call(model, p, (x,)), (params,), (directions,))

    class Exp(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(z):
            return z.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

        @staticmethod
        def jvp(ctx, tangent):
            (result,) = ctx.saved_tensors
            return tangent * result

    z = torch.tensor(rng.standard_normal(6), requires_grad=True)
    t = torch.tensor(rng.standard_normal(6))
    with fwAD.dual_level():
        custom = Exp.apply(fwAD.make_dual(z, t)) * 3
        custom_tangent = fwAD.unpack_dual(custom).tangent
        custom_primal = fwAD.unpack_dual(custom).primal
    custom_primal.sum().backward()                 # the primal keeps its reverse-mode history
    _, custom_jvp = func.jvp(Exp.apply, (z.detach(),), (t,))
    per_sample = func.vmap(Exp.apply)(z.detach().reshape(2, 3))
    return {"primal": primal, "dual_tangent": tangent, "func_out": func_out, "func_jvp": func_jvp,
            "no_tangent_outside_level": fwAD.unpack_dual(out).tangent is None,
            "no_tangent_on_plain_tensor": plain_tangent is None, "functional_tangent": functional_tangent,
            "parameter_tangent": parameter_tangent, "custom_tangent": custom_tangent,
            "custom_expected": 3 * t * z.detach().exp(), "custom_grad": z.grad, "custom_jvp": custom_jvp,
            "custom_vmap": per_sample, "tangent_dtype": str(tangent.dtype), "tangent_shape": list(tangent.shape)}
