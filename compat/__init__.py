"""The compatibility suite: small programs in the style of public PyTorch tutorials, each run
with vizgrad as ``torch`` and, when PyTorch is installed, with PyTorch, compared number by
number (``make compat``; ``tests/test_compat.py`` runs them in ``make test``).

A program is a function ``program(torch, rng)`` of the module it is given (vizgrad or torch)
and of a NumPy generator with a fixed seed: inputs and initial weights are drawn from NumPy
and passed in, since the two libraries' random generators differ. It returns a dict of named
numbers, arrays, strings or tensors; what it prints is captured and compared too. Each is
written for this suite in the style of its ``source`` (none is a copy).

``needs`` names the feature a program waits for while vizgrad lacks it (the test marks it
xfail, strict, so it shows up as XPASS once the feature lands); ``expect`` checks the
program's own invariants on vizgrad's results, with or without PyTorch.
"""

from .suite import PROGRAMS, Program, compare, program, run  # noqa: F401
from .programs import (basics, d2l, ecosystem, makemore, models, modern, precision,  # noqa: F401  (registers
                       pytorch_tutorials, sparse, transforms)                            # the programs)
