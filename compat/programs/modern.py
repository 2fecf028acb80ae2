"""Programs in the style of newer tutorials and classic probabilistic ones: a LLaMA-style
block (RMSNorm, SwiGLU, warmup then cosine), Gaussian-process regression (Cholesky), PCA by
SVD, an image-to-image network with reflection padding, metric learning with triplet and
cosine-embedding losses, and maximum-likelihood fits of Gamma, Beta, Student-t and a
multivariate normal."""

import numpy as np

from ..suite import program
from .models import _expect_training, _load


@program("LLaMA-style transformer block: RMSNorm, SwiGLU, rotary-free attention, warmup + cosine",
         expect=_expect_training)
def llama_block(torch, rng):
    nn, F = torch.nn, torch.nn.functional
    vocab, context, width, heads = 20, 12, 32, 4

    class SwiGLU(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1, self.w3 = nn.Linear(width, 64, bias=False), nn.Linear(width, 64, bias=False)
            self.w2 = nn.Linear(64, width, bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention_norm, self.ffn_norm = nn.RMSNorm(width, eps=1e-5), nn.RMSNorm(width, eps=1e-5)
            self.wqkv, self.wo = nn.Linear(width, 3 * width, bias=False), nn.Linear(width, width, bias=False)
            self.feed_forward = SwiGLU()

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.wqkv(self.attention_norm(x)).split(C, dim=-1)
            q, k, v = (t.view(B, T, heads, C // heads).transpose(1, 2) for t in (q, k, v))
            attention = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.wo(attention.transpose(1, 2).reshape(B, T, C))
            return x + self.feed_forward(self.ffn_norm(x))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_embeddings = nn.Embedding(vocab, width)
            self.layers = nn.ModuleList([Block(), Block()])
            self.norm = nn.RMSNorm(width, eps=1e-5)
            self.output = nn.Linear(width, vocab, bias=False)

        def forward(self, tokens):
            h = self.tok_embeddings(tokens)
            for layer in self.layers:
                h = layer(h)
            return self.output(self.norm(h))

    model = Model()
    _load(model, rng, torch, scale=0.2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-2, weight_decay=0.1)
    warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=3)
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=6)
    schedule = torch.optim.lr_scheduler.SequentialLR(optimizer, [warmup, cosine], milestones=[3])
    tokens = torch.tensor(rng.integers(0, vocab, (8, context + 1)))
    losses, rates = [], []
    for step in range(9):
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, vocab), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        rates.append(schedule.get_last_lr()[0])
    return {"losses": losses, "rates": rates, "norm_weight": model.norm.weight,
            "wqkv_grad": model.layers[0].wqkv.weight.grad, "repr": repr(model.layers[0].attention_norm)}


def _expect_gp(r):
    assert np.isfinite(r["nll"]).all() and r["nll"][-1] < r["nll"][0]
    assert r["fit_error"] < 0.3


@program("Gaussian-process regression (GPyTorch-style): Cholesky, triangular solves, "
         "marginal likelihood by Adam", expect=_expect_gp)
def gaussian_process(torch, rng):
    x = torch.tensor(np.sort(rng.uniform(-3, 3, 24)))
    y = torch.sin(x) + 0.1 * torch.tensor(rng.standard_normal(24))
    log_lengthscale = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    log_signal = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    log_noise = torch.tensor(-1.0, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.Adam([log_lengthscale, log_signal, log_noise], lr=0.05)

    def kernel(a, b):
        distance = (a[:, None] - b[None, :]) ** 2
        return log_signal.exp() ** 2 * torch.exp(-0.5 * distance / log_lengthscale.exp() ** 2)

    nll = []
    for step in range(25):
        K = kernel(x, x) + (log_noise.exp() ** 2 + 1e-6) * torch.eye(24, dtype=torch.float64)
        L = torch.linalg.cholesky(K)
        alpha = torch.linalg.solve_triangular(L.mT, torch.linalg.solve_triangular(L, y[:, None], upper=False),
                                              upper=True)
        loss = 0.5 * (y[:, None] * alpha).sum() + torch.log(torch.diagonal(L)).sum() + 12 * np.log(2 * np.pi)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        nll.append(loss.item())
    with torch.no_grad():
        grid = torch.linspace(-2.5, 2.5, 9, dtype=torch.float64)
        K = kernel(x, x) + log_noise.exp() ** 2 * torch.eye(24, dtype=torch.float64)
        L = torch.linalg.cholesky(K)
        w = torch.linalg.solve_triangular(L, y[:, None], upper=False)
        v = torch.linalg.solve_triangular(L, kernel(x, grid), upper=False)
        mean = (v * w).sum(0)
        variance = kernel(grid, grid).diagonal() - (v * v).sum(0)
    return {"nll": nll, "mean": mean, "variance": variance, "lengthscale": log_lengthscale.exp(),
            "fit_error": (mean - torch.sin(grid)).abs().max().item(),
            "eigenvalues": torch.linalg.eigvalsh(K)[:4], "condition": torch.linalg.cond(K)}


def _expect_pca(r):
    assert r["explained"][0] > r["explained"][1] > r["explained"][2]
    assert r["reconstruction_error"] < 0.2


@program("PCA by SVD (scikit-learn's recipe in torch), with a low-rank reconstruction and its gradient",
         expect=_expect_pca)
def pca_by_svd(torch, rng):
    basis = rng.standard_normal((3, 10))
    codes = rng.standard_normal((60, 3)) * np.array([3.0, 1.5, 0.5])
    X = torch.tensor(codes @ basis + 0.05 * rng.standard_normal((60, 10)), requires_grad=True)
    centred = X - X.mean(dim=0, keepdim=True)
    U, S, Vh = torch.linalg.svd(centred, full_matrices=False)
    explained = S ** 2 / (S ** 2).sum()
    top = Vh[:3]
    reconstruction = centred @ top.T @ top                 # the sign of each component cancels here
    error = (reconstruction - centred).pow(2).mean()
    error.backward()
    Q, R = torch.linalg.qr(centred)
    return {"singular_values": S, "explained": explained[:4], "reconstruction_error": error.item(),
            "X_grad": X.grad, "projector": top.T @ top, "rank": torch.linalg.matrix_rank(centred),
            "R_diagonal_abs": R.diagonal().abs(), "pinv_check": (torch.linalg.pinv(centred) @ centred).diagonal().sum()}


@program("Fast neural style's image-to-image network: reflection padding, instance norm, NAdam",
         expect=_expect_training)
def reflection_padded_network(torch, rng):
    nn, F = torch.nn, torch.nn.functional

    class ConvLayer(nn.Module):
        def __init__(self, channels_in, channels_out, kernel_size, stride):
            super().__init__()
            self.pad = nn.ReflectionPad2d(kernel_size // 2)
            self.conv = nn.Conv2d(channels_in, channels_out, kernel_size, stride)

        def forward(self, x):
            return self.conv(self.pad(x))

    class Residual(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.conv1, self.conv2 = ConvLayer(channels, channels, 3, 1), ConvLayer(channels, channels, 3, 1)
            self.in1 = nn.InstanceNorm2d(channels, affine=True)
            self.in2 = nn.InstanceNorm2d(channels, affine=True)

        def forward(self, x):
            return x + self.in2(self.conv2(F.relu(self.in1(self.conv1(x)))))

    model = nn.Sequential(ConvLayer(3, 8, 5, 1), nn.InstanceNorm2d(8, affine=True), nn.ReLU(),
                          ConvLayer(8, 12, 3, 2), nn.ReLU(), Residual(12),
                          nn.Upsample(scale_factor=2, mode="nearest"), ConvLayer(12, 3, 3, 1),
                          nn.Conv2d(3, 3, 3, padding=1, padding_mode="replicate"))
    _load(model, rng, torch, scale=0.2)
    optimizer = torch.optim.NAdam(model.parameters(), lr=1e-2)
    images = torch.tensor(rng.random((2, 3, 16, 16)), dtype=torch.float32)
    target = F.pad(images[:, :, 1:-1, 1:-1], (1, 1, 1, 1), mode="circular")
    losses = []
    for step in range(6):
        loss = F.mse_loss(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return {"losses": losses, "first_weight_grad": model[0].conv.weight.grad, "repr": repr(model[0].pad)}


@program("Metric learning: triplet margin and cosine embedding losses, Adamax, step decay",
         expect=_expect_training)
def metric_learning(torch, rng):
    nn = torch.nn
    embed = nn.Sequential(nn.Linear(6, 16), nn.PReLU(), nn.Linear(16, 4))
    _load(embed, rng, torch)
    triplet = nn.TripletMarginLoss(margin=1.0, p=2, swap=True)
    cosine = nn.CosineEmbeddingLoss(margin=0.2)
    ranking = nn.MarginRankingLoss(margin=0.1)
    optimizer = torch.optim.Adamax(embed.parameters(), lr=0.05)
    schedule = torch.optim.lr_scheduler.MultiplicativeLR(optimizer, lambda epoch: 0.9)
    centres = rng.standard_normal((3, 6)) * 2
    labels = rng.integers(0, 3, 30)
    points = torch.tensor(centres[labels] + 0.3 * rng.standard_normal((30, 6)), dtype=torch.float32)
    same = torch.tensor(labels[:15] == labels[15:], dtype=torch.float32) * 2 - 1
    losses = []
    for step in range(8):
        anchor, positive = embed(points[:10]), embed(points[:10] + 0.05)
        negative = embed(points[20:30])
        loss = triplet(anchor, positive, negative) + cosine(embed(points[:15]), embed(points[15:]), same)
        loss = loss + ranking(anchor.norm(dim=1), negative.norm(dim=1), torch.ones(10))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
    return {"losses": losses, "prelu": embed[1].weight, "rate": schedule.get_last_lr(),
            "pairwise": torch.cdist(embed(points[:4]), embed(points[4:8]))}


def _expect_fits(r):
    assert all(r[name][-1] < r[name][0] for name in ("gamma_nll", "beta_nll", "student_nll", "mvn_nll"))


@program("Maximum-likelihood fits with torch.distributions: Gamma, Beta, Student-t and a "
         "multivariate normal through its Cholesky factor", expect=_expect_fits)
def distribution_fits(torch, rng):
    D = torch.distributions
    gamma_data = torch.tensor(rng.gamma(3.0, 0.5, 200))
    beta_data = torch.tensor(rng.beta(2.0, 5.0, 200))
    student_data = torch.tensor(rng.standard_t(4.0, 200) * 0.7 + 1.0)
    mvn_data = torch.tensor(rng.multivariate_normal([1.0, -1.0], [[1.0, 0.6], [0.6, 0.8]], 200))
    params = {name: torch.zeros(size, dtype=torch.float64, requires_grad=True)
              for name, size in (("gamma", 2), ("beta", 2), ("student", 3), ("mvn_loc", 2), ("mvn_tril", 3))}
    optimizer = torch.optim.RAdam(params.values(), lr=0.1)
    history = {"gamma_nll": [], "beta_nll": [], "student_nll": [], "mvn_nll": []}
    for step in range(30):
        gamma = D.Gamma(params["gamma"][0].exp(), params["gamma"][1].exp())
        beta = D.Beta(params["beta"][0].exp(), params["beta"][1].exp())
        student = D.StudentT(params["student"][0].exp() + 1, params["student"][1], params["student"][2].exp())
        a, b, c = params["mvn_tril"]
        tril = torch.stack([torch.stack([a.exp(), torch.zeros_like(a)]), torch.stack([b, c.exp()])])
        mvn = D.MultivariateNormal(params["mvn_loc"], scale_tril=tril)
        terms = {"gamma_nll": -gamma.log_prob(gamma_data).mean(), "beta_nll": -beta.log_prob(beta_data).mean(),
                 "student_nll": -student.log_prob(student_data).mean(), "mvn_nll": -mvn.log_prob(mvn_data).mean()}
        optimizer.zero_grad()
        sum(terms.values()).backward()
        optimizer.step()
        for name, value in terms.items():
            history[name].append(value.item())
    return {**history, "gamma_entropy": gamma.entropy(), "beta_mean": beta.mean, "student_variance": student.variance,
            "mvn_covariance": mvn.covariance_matrix, "kl_gamma": D.kl_divergence(gamma, D.Gamma(3.0, 2.0)),
            "kl_beta": D.kl_divergence(beta, D.Beta(2.0, 5.0)), "gamma_cdf": D.Gamma(3.0, 2.0).cdf(gamma_data[:5]),
            "repr": repr(D.Beta(torch.tensor(2.0), torch.tensor(5.0)))}
