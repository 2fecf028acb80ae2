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


max = _return_type("max", ("values", "indices"))          # noqa: A001  (PyTorch's names)
min = _return_type("min", ("values", "indices"))          # noqa: A001
sort = _return_type("sort", ("values", "indices"))
topk = _return_type("topk", ("values", "indices"))
aminmax = _return_type("aminmax", ("min", "max"))
frexp = _return_type("frexp", ("mantissa", "exponent"))
histogram = _return_type("histogram", ("hist", "bin_edges"))
slogdet = _return_type("slogdet", ("sign", "logabsdet"))
cummax = _return_type("cummax", ("values", "indices"))
cummin = _return_type("cummin", ("values", "indices"))
linalg_cholesky_ex = _return_type("linalg_cholesky_ex", ("L", "info"))
linalg_qr = _return_type("linalg_qr", ("Q", "R"))
linalg_eigh = _return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))
linalg_svd = _return_type("linalg_svd", ("U", "S", "Vh"))
linalg_lstsq = _return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
linalg_inv_ex = _return_type("linalg_inv_ex", ("inverse", "info"))
linalg_solve_ex = _return_type("linalg_solve_ex", ("result", "info"))
median = _return_type("median", ("values", "indices"))
nanmedian = _return_type("nanmedian", ("values", "indices"))
kthvalue = _return_type("kthvalue", ("values", "indices"))
mode = _return_type("mode", ("values", "indices"))
histogramdd = _return_type("histogramdd", ("hist", "bin_edges"))
