"""``LBFGS``: limited-memory BFGS with PyTorch's closure API, history and stopping rules, and
an optional strong-Wolfe line search (cubic interpolation, Nocedal & Wright, Alg. 3.5-3.6).

All parameters are seen as one flat vector x with gradient g. Each iteration picks the
direction d = -H g, H the inverse-Hessian estimate from the last ``history_size`` pairs
(s = x' - x, y = g' - g) by the two-loop recursion, and moves x ← x + t d.
"""

from ..autograd.grad_mode import enable_grad, no_grad
from ..backends import backend_of
from ..errors import ArgumentError, ArgumentTypeError, check_range, check_size
from ..tensor import Tensor
from .optimizer import Optimizer, _copied


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1, f1'=g1) and (x2, f2, g2), clipped to ``bounds``
    (default: between x1 and x2); the bounds' midpoint when the cubic has no minimum."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 * d1 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = d2_square ** 0.5
    if x1 <= x2:
        position = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        position = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(position, low), high)


def _strong_wolfe(evaluate, t, d, f, g, gtd, xp, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions
    f(x + t d) ≤ f + c1 t gᵀd and |∇f(x + t d)ᵀd| ≤ c2 |gᵀd|: bracketing, then zooming by cubic
    interpolation. ``evaluate(t)`` returns (loss, flat gradient) at x + t d. Returns the loss,
    gradient and step found, and the number of evaluations."""
    d_norm = float(xp.max(xp.abs(d)))
    f_new, g_new = evaluate(t)
    evaluations = 1
    gtd_new = float(xp.vecdot(g_new, d))
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    iteration = 0
    while iteration < max_ls:                       # bracket a step that satisfies the conditions
        sufficient_decrease = f_new <= f + c1 * t * gtd and (iteration <= 1 or f_new < f_prev)
        if sufficient_decrease and abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g, bracket_gtd = [t], [f_new], [g_new], [gtd_new]
            done = True
            break
        if not sufficient_decrease or gtd_new >= 0:        # the minimum lies between t_prev and t
            bracket, bracket_f, bracket_g, bracket_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], \
                [gtd_prev, gtd_new]
            break
        lowest, highest = t + 0.01 * (t - t_prev), t * 10
        t_prev, t = t, _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(lowest, highest))
        f_prev, g_prev, gtd_prev = f_new, g_new, gtd_new
        f_new, g_new = evaluate(t)
        evaluations += 1
        gtd_new = float(xp.vecdot(g_new, d))
        iteration += 1
    if iteration == max_ls:
        bracket, bracket_f, bracket_g, bracket_gtd = [0.0, t], [f, f_new], [g, g_new], [gtd, gtd_new]

    insufficient_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and iteration < max_ls:           # zoom into the bracket
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # keep t away from the bracket's ends (else progress can stall)
        margin = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < margin:
            if insufficient_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - margin if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + margin
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(t)
        evaluations += 1
        gtd_new = float(xp.vecdot(g_new, d))
        iteration += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high], bracket_g[high], bracket_gtd[high] = t, f_new, g_new, gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low], bracket_g[low], bracket_gtd[low] = t, f_new, g_new, gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evaluations


class LBFGS(Optimizer):
    """Limited-memory BFGS (PyTorch's ``optim.LBFGS``): each ``step(closure)`` runs up to
    ``max_iter`` iterations, re-evaluating the model through ``closure`` (which clears the
    gradients, computes the loss, calls ``backward`` and returns the loss).

    Direction d = -H g by the two-loop recursion over the last ``history_size`` pairs
    (s, y), H₀ = sᵀy / yᵀy; step t = lr (the first ever: min(1, 1/‖g‖₁)·lr), or found by
    ``line_search_fn="strong_wolfe"``. Stops when max|g| ≤ ``tolerance_grad``, when the step
    or the loss change is below ``tolerance_change``, or after ``max_eval`` evaluations.
    One parameter group only.

    Example::

        opt = vizgrad.optim.LBFGS([x], lr=1, line_search_fn="strong_wolfe")
        def closure():
            opt.zero_grad()
            loss = rosenbrock(x)
            loss.backward()
            return loss
        opt.step(closure)
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        lr = check_range("LBFGS", "lr", lr, 0.0)
        max_iter = check_size("LBFGS", "max_iter", max_iter, 1)
        history_size = check_size("LBFGS", "history_size", history_size, 1)
        if max_eval is not None:
            max_eval = check_size("LBFGS", "max_eval", max_eval, 1)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise ArgumentError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got {line_search_fn!r}")
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ArgumentError("LBFGS: doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    _HISTORIES = ("old_dirs", "old_stps")        # lists of flat arrays in the state

    def state_dict(self):
        """As :meth:`Optimizer.state_dict`, with the (s, y) histories as lists of tensors."""
        result = super().state_dict()
        for entries in result["state"].values():
            for key in self._HISTORIES:
                if entries.get(key) is not None:
                    entries[key] = [Tensor._make(_copied(array)) for array in entries[key]]
        return result

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        like = self._params[0]
        for state in self.state.values():
            for key in self._HISTORIES:
                if state.get(key) is not None:
                    state[key] = [_copied(t.to(device=like.device, dtype=like.dtype)._array) if isinstance(t, Tensor)
                                  else t for t in state[key]]

    # --- the parameters as one flat vector ------------------------------------------------
    def _xp(self):
        return backend_of(self._params[0]._array).xp

    def _flat_grad(self):
        xp = self._xp()
        return xp.concat([xp.reshape(p.grad._array, (-1,)) if p.grad is not None
                          else xp.zeros(p.numel(), dtype=p._array.dtype) for p in self._params])

    def _move(self, step, direction):
        """x ← x + step · direction, parameter by parameter."""
        xp = self._xp()
        offset = 0
        for p in self._params:
            size = p.numel()
            p._array += step * xp.reshape(direction[offset:offset + size], p._array.shape)
            p._bump_version()
            offset += size

    def _set(self, arrays):
        for p, array in zip(self._params, arrays):
            p._array[...] = array
            p._bump_version()

    def _evaluate(self, closure):
        with enable_grad():
            loss = float(closure())
        return loss, self._flat_grad()

    def step(self, closure=None):
        """Run up to ``max_iter`` L-BFGS iterations; returns the loss ``closure`` gave first."""
        if closure is None:
            raise ArgumentTypeError("LBFGS.step: needs a closure that re-evaluates the model and returns the loss "
                                    "(it clears the gradients, computes the loss and calls loss.backward())")
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        xp = self._xp()
        state = self.state.setdefault(self._params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            first_loss = closure()
        loss = float(first_loss)
        evaluations = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if float(xp.max(xp.abs(flat_grad))) <= tolerance_grad:
            return first_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_steps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_flat_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")

        with no_grad():
            iteration = 0
            while iteration < max_iter:
                iteration += 1
                state["n_iter"] += 1
                if state["n_iter"] == 1:
                    d = -flat_grad
                    old_dirs, old_steps, ro, h_diag = [], [], [], 1.0
                else:
                    y = flat_grad - prev_flat_grad
                    s = d * t
                    ys = float(xp.vecdot(y, s))
                    if ys > 1e-10:                     # keep the pair only if the curvature is positive
                        if len(old_dirs) == history_size:
                            old_dirs.pop(0), old_steps.pop(0), ro.pop(0)
                        old_dirs.append(y)
                        old_steps.append(s)
                        ro.append(1.0 / ys)
                        h_diag = ys / float(xp.vecdot(y, y))
                    alphas = [0.0] * len(old_dirs)       # the two-loop recursion: d = -H g
                    q = -flat_grad
                    for i in range(len(old_dirs) - 1, -1, -1):
                        alphas[i] = float(xp.vecdot(old_steps[i], q)) * ro[i]
                        q = q - alphas[i] * old_dirs[i]
                    d = q * h_diag
                    for i in range(len(old_dirs)):
                        beta = float(xp.vecdot(old_dirs[i], d)) * ro[i]
                        d = d + (alphas[i] - beta) * old_steps[i]
                prev_flat_grad = xp.asarray(flat_grad, copy=True)
                prev_loss = loss
                t = min(1.0, 1.0 / float(xp.sum(xp.abs(flat_grad)))) * lr if state["n_iter"] == 1 else lr
                gtd = float(xp.vecdot(flat_grad, d))
                if gtd > -tolerance_change:              # not a descent direction any more
                    break

                if group["line_search_fn"] == "strong_wolfe":
                    start = [xp.asarray(p._array, copy=True) for p in self._params]

                    def evaluate(step):
                        self._move(step, d)
                        result = self._evaluate(closure)
                        self._set(start)
                        return result

                    loss, flat_grad, t, used = _strong_wolfe(evaluate, t, d, loss, flat_grad, gtd, xp,
                                                             max_ls=max_eval - evaluations)
                    self._move(t, d)
                    converged = float(xp.max(xp.abs(flat_grad))) <= tolerance_grad
                else:
                    self._move(t, d)
                    used, converged = 0, False
                    if iteration != max_iter:
                        loss, flat_grad = self._evaluate(closure)
                        converged = float(xp.max(xp.abs(flat_grad))) <= tolerance_grad
                        used = 1
                evaluations += used
                state["func_evals"] += used

                if iteration == max_iter or evaluations >= max_eval or converged:
                    break
                if float(xp.max(xp.abs(d * t))) <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                    break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_steps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return first_loss
