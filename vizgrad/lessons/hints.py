"""Hint levels and the codes of the lessons' mistakes.

A checker's :class:`~vizgrad.lessons.framework.Mistake` carries one hint or several, from a
nudge to nearly the answer. The first attempt at an exercise shows the first; each later
attempt (counted per exercise in the kernel) shows one more. A mistake with one hint whose
kind is one of the tutor's (:data:`vizgrad.tutor.KINDS`) gets a second level from
:data:`FURTHER`: how to find that kind of mistake in one's own code.

:data:`LESSON_CODES` is the one table between the tutor's kinds and the codes the lessons'
results have always carried in ``Result.mistake`` (tests and teachers match on them).
"""

#: The tutor's kinds of mistake under the lessons' codes.
LESSON_CODES = {"wrong_sign": "sign", "missing_broadcast_sum": "missing-broadcast-sum", "transposed": "transposed",
                "wrong_shape": "shape", "scaled": "scale", "not_accumulated": "overwrite",
                "used_output_for_input": "used-output", "nan": "not-finite", "other": "values"}

#: A second hint per tutor kind: how to find the mistake, once the first hint was not enough.
FURTHER = {
    "wrong_sign": "Go through your backward pass one local derivative at a time and write its sign beside it; "
                  "a subtraction `a - b` sends `-grad` to `b`, and so do the derivatives of cos, 1/x and exp(-x).",
    "missing_broadcast_sum": "Print `x.shape` beside your gradient's shape: each dimension where `x` has a 1, or "
                             "that `x` lacks at the front, is one to sum over.",
    "transposed": "Write the shapes under each factor of your product, e.g. (m, k) @ (k, n): the result must "
                  "have the shape of the tensor whose gradient it is. Swapping the factors and transposing "
                  "them are not the same.",
    "wrong_shape": "Print the shape of each factor of your gradient: the last operation must leave exactly the "
                   "tensor's shape (`keepdim=True` keeps a summed dimension as 1).",
    "scaled": "Look for every constant in the forward pass (a mean, a square, a scale such as 1/sqrt(d)): each "
              "one appears, once, in the backward pass.",
    "not_accumulated": "A tensor used several times receives one gradient per use: start from zeros and `+=` each "
                       "contribution instead of `=`, which keeps only the last.",
    "used_output_for_input": "Write the local derivative in terms of the op's input, then check which variable "
                             "of your code holds that input and which holds the output.",
    "nan": "Print the intermediate values of your backward pass and find the first that is NaN or inf: the op "
           "just before it divides by zero, takes the log of 0 or overflows.",
    "other": "Compare yours with the expected values element by element: a pattern (one row, one column, the "
             "diagonal, the negative inputs) points to the term that is off.",
}


def tutor_kind(code):
    """The tutor's kind (one of :data:`vizgrad.tutor.KINDS`) for a lesson's mistake code;
    ``"other"`` for the codes only one exercise knows (``"missing-tanh-derivative"``)."""
    return next((kind for kind, lesson in LESSON_CODES.items() if lesson == code), "other")


def levels(hint, code):
    """The hint levels of a mistake: ``hint`` (a string, a list of strings or None) with the
    tutor kind's further hint after a single one."""
    shown = [] if hint is None else [hint] if isinstance(hint, str) else [h for h in hint if h]
    if len(shown) == 1 and code in LESSON_CODES.values():
        shown.append(FURTHER[tutor_kind(code)])
    return shown
