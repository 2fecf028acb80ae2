"""The named tuples that ops returning several tensors give, as ``torch.return_types``:
``x.max(dim=1)`` is a ``vizgrad.return_types.max`` with fields ``values`` and ``indices``,
printed as PyTorch prints its own (``vizgrad.`` in place of ``torch.``).
"""

import collections


def _return_type(name, fields):
    """A named tuple class ``name`` with ``fields``, printed the way PyTorch prints its
    return types: one field per line."""
    base = collections.namedtuple(name, fields)

    def __repr__(self):
        return f"vizgrad.return_types.{name}(\n" + ",\n".join(
            f"{field}={value!r}" for field, value in zip(self._fields, self)) + ")"

    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": __name__})


_VALUES_INDICES = ("values", "indices")    # the fields most of them share
_HIST_EDGES = ("hist", "bin_edges")

max = _return_type("max", _VALUES_INDICES)          # noqa: A001  (PyTorch's names)
min = _return_type("min", _VALUES_INDICES)          # noqa: A001
sort = _return_type("sort", _VALUES_INDICES)
topk = _return_type("topk", _VALUES_INDICES)
aminmax = _return_type("aminmax", ("min", "max"))
frexp = _return_type("frexp", ("mantissa", "exponent"))
histogram = _return_type("histogram", _HIST_EDGES)
slogdet = _return_type("slogdet", ("sign", "logabsdet"))
cummax = _return_type("cummax", _VALUES_INDICES)
cummin = _return_type("cummin", _VALUES_INDICES)
linalg_cholesky_ex = _return_type("linalg_cholesky_ex", ("L", "info"))
linalg_qr = _return_type("linalg_qr", ("Q", "R"))
linalg_eigh = _return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_svd = _return_type("linalg_svd", ("U", "S", "Vh"))
linalg_lstsq = _return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
linalg_inv_ex = _return_type("linalg_inv_ex", ("inverse", "info"))
linalg_solve_ex = _return_type("linalg_solve_ex", ("result", "info"))
median = _return_type("median", _VALUES_INDICES)
nanmedian = _return_type("nanmedian", _VALUES_INDICES)
kthvalue = _return_type("kthvalue", _VALUES_INDICES)
mode = _return_type("mode", _VALUES_INDICES)
histogramdd = _return_type("histogramdd", _HIST_EDGES)
