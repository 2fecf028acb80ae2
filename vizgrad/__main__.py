"""``python -m vizgrad demo``: the same as the ``vizgrad`` script."""

import sys

from .cli import main

sys.exit(main())
