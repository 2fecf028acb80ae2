"""vizgrad's version: one place, read by the package, its outputs (which say what wrote
them) and the build (``[tool.hatch.version]`` in pyproject.toml)."""

__version__ = "0.1.0"
