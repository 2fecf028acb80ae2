"""Sparse COO tensors as graph programs use them: a two-layer graph convolutional network in
the style of Kipf and Welling's pygcn (a row-normalised sparse adjacency, ``torch.spmm`` of it
with each layer's features, log-softmax and NLL on the labelled nodes, Adam with weight decay),
then learned edge weights through ``sparse_coo_tensor`` and ``torch.sparse.mm``, whose sparse
gradient keeps the adjacency's pattern."""

import numpy as np

from ..suite import program


def _graph(rng, nodes=12, edges=20):
    """A random undirected graph with self-loops: its row-normalised adjacency, dense, in NumPy."""
    adjacency = np.eye(nodes, dtype=np.float32)
    for a, b in rng.integers(0, nodes, size=(edges, 2)):
        adjacency[a, b] = adjacency[b, a] = 1.0
    return adjacency / adjacency.sum(axis=1, keepdims=True)


@program("pygcn (Kipf & Welling): GraphConvolution layers with torch.spmm over a sparse adjacency; "
         "learned edge weights through torch.sparse.mm")
def graph_convolution(torch, rng):
    nn, F = torch.nn, torch.nn.functional
    dense = _graph(rng)
    rows, cols = np.nonzero(dense)
    indices = torch.tensor(np.stack([rows, cols]).astype(np.int64))
    adj = torch.sparse_coo_tensor(indices, torch.tensor(dense[rows, cols]), dense.shape, check_invariants=True)
    features = torch.tensor(rng.standard_normal((12, 5)).astype(np.float32))
    labels = torch.tensor(rng.integers(0, 3, size=12))
    train = torch.arange(8)

    class GraphConvolution(nn.Module):
        def __init__(self, in_features, out_features):
            super().__init__()
            self.weight = nn.Parameter(torch.tensor(rng.uniform(-0.4, 0.4, (in_features, out_features))
                                                    .astype(np.float32)))
            self.bias = nn.Parameter(torch.zeros(out_features))

        def forward(self, x, adj):
            support = torch.mm(x, self.weight)
            return torch.spmm(adj, support) + self.bias

    class GCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.gc1, self.gc2 = GraphConvolution(5, 8), GraphConvolution(8, 3)

        def forward(self, x, adj):
            return F.log_softmax(self.gc2(F.relu(self.gc1(x, adj)), adj), dim=1)

    model = GCN()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
    losses = []
    for _ in range(10):
        optimizer.zero_grad()
        loss = F.nll_loss(model(features, adj)[train], labels[train])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    accuracy = (model(features, adj).argmax(dim=1) == labels).float().mean()

    # edge weights as parameters: sparse_coo_tensor's values get the gradient at their indices
    weights = torch.tensor(dense[rows, cols], requires_grad=True)
    weighted = torch.sparse_coo_tensor(indices, weights, dense.shape, check_invariants=True)
    smoothed = torch.sparse.mm(weighted, features)
    (smoothed ** 2).sum().backward()
    # a sparse leaf: torch.sparse.mm gives it a sparse gradient with its own pattern
    leaf = torch.tensor(dense).to_sparse().requires_grad_()
    torch.sparse.sum(torch.sparse.mm(leaf, features).exp().sum(dim=1, keepdim=True).to_sparse()).backward()
    print(adj.coalesce().t().coalesce()._indices()[:, :6])
    print(torch.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3), check_invariants=True) * 2)
    return {"losses": losses, "accuracy": accuracy, "nnz": adj._nnz(), "weights_grad": weights.grad,
            "leaf_grad_values": leaf.grad.coalesce().values(), "leaf_grad_indices": leaf.grad.coalesce().indices(),
            "leaf_layout": str(leaf.grad.layout).replace("vizgrad.", "torch."),
            "dense_again": (adj + adj).to_dense() - 2 * torch.tensor(dense)}
