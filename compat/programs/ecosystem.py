"""The modules real programs import, as they behave on a CPU-only machine (the device checks of
PyTorch's examples, cuDNN flags, ``DataParallel``, TorchScript entry points, the
``torch.utils.data.dataloader`` path, ``GradScaler`` with CPU autocast), packed sequences
through LSTM and GRU (``nn.utils.rnn``), LU factorizations and a tour of
``torch.distributions``."""

import importlib
import warnings

import numpy as np

from ..suite import program


def _expect_cpu_only(r):
    assert r["device"] == "cpu" and not r["accelerator"] and not r["cuda_scaler_enabled"]
    assert r["cpu_scaler_enabled"] and r["scaled_steps_match"] and r["parallel_matches"]
    assert r["scripted_matches"] and r["traced_matches"] and r["ddp_refused"] and r["same_loader_class"]


@program("PyTorch examples' device and launch boilerplate on a CPU-only machine: accelerator checks, "
         "backends flags, DataParallel, jit.script/trace, utils.data.dataloader, GradScaler with autocast",
         expect=_expect_cpu_only)
def cpu_only_boilerplate(torch, rng):
    nn, F = torch.nn, torch.nn.functional
    dataloader = importlib.import_module(f"{torch.__name__}.utils.data.dataloader")    # the examples' import path
    # the examples' device choice and seeding
    device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
    torch.manual_seed(0)
    torch.cuda.manual_seed_all(0)
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.deterministic = True
    torch.backends.cuda.matmul.allow_tf32 = True
    flags = {"cudnn_available": torch.backends.cudnn.is_available(),
             "cudnn_version": str(torch.backends.cudnn.version()), "cudnn_benchmark": torch.backends.cudnn.benchmark,
             "cudnn_enabled": torch.backends.cudnn.enabled,
             "mps_available": torch.backends.mps.is_available(), "mps_built": torch.backends.mps.is_built(),
             "allow_tf32": torch.backends.cuda.matmul.allow_tf32, "cuda_available": torch.cuda.is_available(),
             "cuda_devices": torch.cuda.device_count(), "accelerator_devices": torch.accelerator.device_count(),
             "current_accelerator": str(torch.accelerator.current_accelerator()),
             "distributed_initialized": torch.distributed.is_available() and torch.distributed.is_initialized(),
             "in_onnx_export": torch.onnx.is_in_onnx_export(),
             "same_loader_class": dataloader.DataLoader is torch.utils.data.DataLoader}
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = False
    torch.backends.cuda.matmul.allow_tf32 = False

    class Dataset(torch.utils.data.Dataset):
        def __init__(self):
            self.x = rng.standard_normal((10, 4)).astype(np.float32)
            self.y = rng.standard_normal((10, 2)).astype(np.float32)

        def __len__(self):
            return len(self.x)

        def __getitem__(self, index):
            return {"x": torch.tensor(self.x[index]), "y": torch.tensor(self.y[index])}

    loader = dataloader.DataLoader(Dataset(), batch_size=4, shuffle=False, drop_last=True)
    batches = list(loader)
    tensors = torch.utils.data.TensorDataset(torch.arange(7.0).reshape(7, 1), torch.arange(7))
    tensor_batches = [[list(x.shape), y.tolist()] for x, y in torch.utils.data.DataLoader(tensors, batch_size=3)]

    def build():
        # no biases: under bfloat16 autocast PyTorch adds a bias inside its matrix product (one rounding),
        # vizgrad after it (two), which differ by a bfloat16 step (compat/programs/precision.py)
        model = nn.Sequential(nn.Linear(4, 8, bias=False), nn.ReLU(), nn.Linear(8, 2, bias=False))
        with torch.no_grad():
            for parameter in model.parameters():
                parameter.copy_(torch.tensor(rng.standard_normal(tuple(parameter.shape)).astype(np.float32) * 0.5))
        return model.to(device)

    model = build()
    parallel = nn.DataParallel(model)
    try:        # PyTorch: no default process group (ValueError); vizgrad: no distributed training
        nn.parallel.DistributedDataParallel(model)
        ddp_refused = False
    except Exception:
        ddp_refused = True
    parallel_matches = bool((parallel(batches[0]["x"]) == model(batches[0]["x"])).all())
    # the mixed-precision recipe: GradScaler("cpu") scales by a power of two and unscales exactly,
    # so its steps are the unscaled ones; torch.cuda.amp.GradScaler() disables itself without CUDA
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cuda_scaler = torch.cuda.amp.GradScaler()
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=2)
    twin = build()
    twin.load_state_dict(model.state_dict())
    optimizer = torch.optim.SGD(parallel.parameters(), lr=0.1, momentum=0.9)
    twin_optimizer = torch.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)
    losses, scales, autocast_dtypes = [], [], []
    for batch in batches * 2:
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            out = parallel(batch["x"])
            loss = F.mse_loss(out, batch["y"])
            autocast_dtypes.append(f"{out.dtype} {loss.dtype} {torch.is_autocast_enabled('cpu')}")
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        scales.append(scaler.get_scale())
        losses.append(loss.item())
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            twin_loss = F.mse_loss(twin(batch["x"]), batch["y"])
        twin_optimizer.zero_grad()
        cuda_scaler.scale(twin_loss).backward()
        cuda_scaler.step(twin_optimizer)
        cuda_scaler.update()
    scaled_steps_match = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(model.parameters(), twin.parameters()))

    # TorchScript's entry points give a callable with the module's numbers
    def gelu_residual(x: torch.Tensor, scale: float) -> torch.Tensor:
        return x + scale * F.gelu(x)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)      # PyTorch 2.13 points to torch.compile
        scripted = torch.jit.script(gelu_residual)
        traced = torch.jit.trace(model, batches[0]["x"])
    x = batches[1]["x"]
    return {**flags, "device": device, "accelerator": torch.accelerator.is_available(),
            "batch_shapes": [list(batch["x"].shape) + list(batch["y"].shape) for batch in batches],
            "first_batch": batches[0]["x"], "tensor_batches": str(tensor_batches), "ddp_refused": ddp_refused,
            "parallel_keys": " ".join(parallel.state_dict()),
            "parallel_matches": parallel_matches, "losses": losses, "scales": scales,
            "autocast_dtypes": " | ".join(autocast_dtypes), "weights": model[0].weight, "twin_weights": twin[0].weight,
            "scaled_steps_match": scaled_steps_match, "cpu_scaler_enabled": scaler.is_enabled(),
            "cuda_scaler_enabled": cuda_scaler.is_enabled(), "cuda_scale": cuda_scaler.get_scale(),
            "scaler_state": str(sorted(scaler.state_dict().items())), "scripted": scripted(x, 0.5),
            "scripted_matches": bool((scripted(x, 0.5) == gelu_residual(x, 0.5)).all()), "traced": traced(x),
            "traced_matches": bool((traced(x) == model(x)).all()),
            "jit_flags": [torch.jit.is_scripting(), torch.jit.is_tracing()]}


def _expect_packed(r):
    assert r["lengths"] == [5, 2, 4] and np.all(r["lstm_padding"] == 0) and np.all(r["gru_padding"] == 0)
    np.testing.assert_allclose(r["lstm_last"], r["lstm_h_n"], rtol=1e-6)


@program("Variable-length batches (the classic char-RNN and seq2seq recipes): pad_sequence, "
         "pack_padded_sequence (enforce_sorted=False) through LSTM and GRU, pad_packed_sequence, gradients",
         expect=_expect_packed)
def packed_sequences(torch, rng):
    nn = torch.nn
    rnn_utils = torch.nn.utils.rnn
    lengths = [5, 2, 4]
    sequences = [torch.tensor(rng.standard_normal((n, 3)).astype(np.float32), requires_grad=True) for n in lengths]
    padded = rnn_utils.pad_sequence(sequences, batch_first=True)
    packed = rnn_utils.pack_padded_sequence(padded, torch.tensor(lengths), batch_first=True, enforce_sorted=False)
    lstm = nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True)
    gru = nn.GRU(8, 5, batch_first=True)
    for module in (lstm, gru):
        with torch.no_grad():
            for parameter in module.parameters():
                parameter.copy_(torch.tensor(rng.standard_normal(tuple(parameter.shape)).astype(np.float32) * 0.4))
    packed_out, (h_n, c_n) = lstm(packed)
    lstm_out, out_lengths = rnn_utils.pad_packed_sequence(packed_out, batch_first=True)
    gru_packed, gru_h = gru(packed_out)                    # a packed output feeds the next layer as it is
    gru_out, _ = rnn_utils.pad_packed_sequence(gru_packed, batch_first=True, padding_value=0.0, total_length=6)
    # the forward direction's output at each sequence's last real step is its final hidden state
    last = lstm_out[torch.arange(3), torch.tensor(lengths) - 1, :4]
    loss = gru_h.pow(2).sum() + lstm_out.sum() + c_n.abs().sum()
    loss.backward()
    by_pack_sequence = rnn_utils.pack_sequence([s.detach() for s in sequences], enforce_sorted=False)
    # a plain RNN from a given initial state, sequence-first; left padding for decoder-style batches
    rnn = nn.RNN(3, 2, nonlinearity="tanh")
    with torch.no_grad():
        for parameter in rnn.parameters():
            parameter.copy_(torch.tensor(rng.standard_normal(tuple(parameter.shape)).astype(np.float32) * 0.5))
    h0 = torch.tensor(rng.standard_normal((1, 3, 2)).astype(np.float32))
    rnn_out, rnn_h = rnn(rnn_utils.pack_sequence([s.detach() for s in sequences], enforce_sorted=False), h0)
    unpacked = rnn_utils.unpack_sequence(rnn_out)
    return {**{f"grad {i}": s.grad for i, s in enumerate(sequences)}, "padded": padded,
            "packed_data": packed.data, "batch_sizes": packed.batch_sizes, "sorted_indices": packed.sorted_indices,
            "unsorted_indices": packed.unsorted_indices, "lstm_out": lstm_out, "lengths": out_lengths.tolist(),
            "lstm_h_n": h_n[-2], "lstm_last": last, "c_n": c_n, "gru_out": gru_out, "gru_h": gru_h,
            "loss": loss.item(), "lstm_padding": lstm_out[1, 2:], "gru_padding": gru_out[1, 2:],
            "weight_grad": lstm.weight_hh_l1_reverse.grad, "gru_grad": gru.weight_ih_l0.grad,
            "pack_sequence_data": by_pack_sequence.data, "pack_sequence_sizes": by_pack_sequence.batch_sizes,
            "lengths_dtype": str(out_lengths.dtype), "rnn_h": rnn_h,
            **{f"rnn_out {i}": out for i, out in enumerate(unpacked)},
            "left_padded": rnn_utils.pad_sequence(sequences, batch_first=True, padding_value=-1.0,
                                                  padding_side="left"),
            "unpadded": [s.shape[0] for s in rnn_utils.unpad_sequence(padded, torch.tensor(lengths),
                                                                      batch_first=True)]}


def _expect_lu(r):
    np.testing.assert_allclose(r["P @ L @ U"], r["A"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r["solved"], r["solve"], rtol=1e-10)


@program("LU factorizations as the older and newer APIs spell them: Tensor.lu, torch.lu_unpack, "
         "linalg.lu_factor(_ex), linalg.lu, batched, with gradients", expect=_expect_lu)
def lu_factorizations(torch, rng):
    A = torch.tensor(rng.standard_normal((4, 4)), requires_grad=True)
    batch = torch.tensor(rng.standard_normal((2, 3, 3)))
    b = torch.tensor(rng.standard_normal((4, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # PyTorch marks torch.lu deprecated (linalg.lu_factor)
        LU, pivots = A.lu()
        old_batch = torch.lu(batch)
    P, L, U = torch.lu_unpack(LU, pivots)
    factor, factor_pivots = torch.linalg.lu_factor(A)
    ex = torch.linalg.lu_factor_ex(batch)
    P2, L2, U2 = torch.linalg.lu(A)
    # a solve from the factors: permute, then the two triangular solves
    y = torch.linalg.solve_triangular(L, P.mT @ b, upper=False, unitriangular=True)
    solved = torch.linalg.solve_triangular(U, y, upper=True)
    (L2.sum() + (U2 ** 2).sum() + solved.sum()).backward()
    batch_P, batch_L, batch_U = torch.lu_unpack(*torch.linalg.lu_factor(batch))
    return {"A": A, "LU": LU, "pivots": pivots, "pivots_dtype": str(pivots.dtype), "P @ L @ U": P @ L @ U,
            "lu_factor": factor, "lu_factor_pivots": factor_pivots, "ex_LU": ex.LU, "ex_pivots": ex.pivots,
            "ex_info": ex.info, "old_batch_LU": old_batch[0], "old_batch_pivots": old_batch[1],
            "P": P2, "L": L2, "U": U2, "batch_P": batch_P, "batch_L": batch_L, "batch_U": batch_U,
            "batch_rebuilt": batch_P @ batch_L @ batch_U - batch, "solved": solved,
            "solve": torch.linalg.solve(A, b), "A_grad": A.grad, "det_from_lu": torch.prod(torch.diagonal(U)),
            "det": torch.linalg.det(A)}


def _expect_distributions(r):
    assert r["sample_shapes"] == "[] [] [5, 3] [5, 3] [4, 2] [4, 2] [7] [3, 2, 4] [6, 3]"
    assert r["transforms_exported"]


@program("A tour of torch.distributions: log_prob, entropy, cdf/icdf, sample shapes, Independent, "
         "TransformedDistribution over the exported transforms (a logistic, a tanh-squashed normal)",
         expect=_expect_distributions)
def distributions_tour(torch, rng):
    D = torch.distributions
    torch.manual_seed(0)
    loc = torch.tensor(rng.standard_normal(3), requires_grad=True)
    scale = torch.tensor(rng.uniform(0.5, 2.0, 3), requires_grad=True)
    value = torch.tensor(rng.standard_normal((5, 3)))
    unit = torch.tensor(rng.uniform(0.05, 0.95, (5, 3)))
    normal = D.Normal(loc, scale)
    diagonal = D.Independent(normal, 1)
    uniform = D.Uniform(torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64))
    logistic = D.TransformedDistribution(uniform, [D.SigmoidTransform().inv, D.AffineTransform(loc=loc, scale=scale)])
    squashed = D.TransformedDistribution(normal, [D.TanhTransform(cache_size=1)])
    log_normal = D.TransformedDistribution(normal, [D.ExpTransform()])
    categorical = D.Categorical(logits=torch.tensor(rng.standard_normal((2, 4))))
    one_hot = D.OneHotCategorical(logits=categorical.logits)
    dirichlet = D.Dirichlet(torch.tensor(rng.uniform(0.5, 3.0, (4, 2))))
    mvn = D.MultivariateNormal(torch.zeros(2, dtype=torch.float64),
                               torch.tensor([[2.0, 0.3], [0.3, 0.5]], dtype=torch.float64))
    composed = D.ComposeTransform([D.AffineTransform(1.0, 2.0), D.SigmoidTransform()])
    terms = (normal.log_prob(value).sum() + diagonal.entropy().sum() + logistic.log_prob(value).sum()
             + squashed.log_prob(unit * 1.8 - 0.9).sum() + log_normal.log_prob(unit).sum())
    terms.backward()
    # 0-d parameters and values: no batch shape at all
    point = torch.tensor(0.75)
    scalars = [D.Bernoulli(0.3).log_prob(torch.tensor(1.0)), D.Gamma(2.0, 3.0).log_prob(point),
               D.AffineTransform(0.0, 2.0).log_abs_det_jacobian(point, 2 * point),
               D.MultivariateNormal(torch.zeros(2), torch.eye(2)).entropy(), D.Normal(0.0, 1.0).cdf(point)]
    # the values drawn differ (two generators); their shapes and dtypes agree
    samples = [D.Gamma(2.0, 3.0).rsample(), D.Bernoulli(0.3).sample(), normal.sample((5,)), normal.rsample((5,)),
               categorical.sample((4,)), dirichlet.sample(), mvn.sample((7,))[:, 0], one_hot.sample((3,)),
               logistic.sample((6,))]
    names = ("AbsTransform", "AffineTransform", "ComposeTransform", "ExpTransform", "SigmoidTransform",
             "TanhTransform", "Transform")
    return {"scalars": torch.stack(scalars), "normal_log_prob": normal.log_prob(value),
            "normal_cdf": normal.cdf(value), "normal_icdf": normal.icdf(unit), "normal_entropy": normal.entropy(),
            "diagonal_log_prob": diagonal.log_prob(value),
            "shapes": f"{diagonal.batch_shape} {diagonal.event_shape} {logistic.event_shape} {mvn.event_shape}",
            "logistic_log_prob": logistic.log_prob(value), "squashed_log_prob": squashed.log_prob(unit * 1.8 - 0.9),
            "log_normal_log_prob": log_normal.log_prob(unit), "categorical_entropy": categorical.entropy(),
            "categorical_probs": categorical.probs, "one_hot_entropy": one_hot.entropy(),
            "categorical_log_prob": categorical.log_prob(torch.tensor([[0, 3]]).T),
            "dirichlet_log_prob": dirichlet.log_prob(torch.tensor([[0.3, 0.7]], dtype=torch.float64)),
            "dirichlet_entropy": dirichlet.entropy(), "mvn_entropy": mvn.entropy(),
            "mvn_log_prob": mvn.log_prob(value[:, :2]), "composed": composed(value),
            "composed_inverse": composed.inv(composed(value)), "absolute": D.AbsTransform()(value),
            "composed_log_det": composed.log_abs_det_jacobian(value, composed(value)),
            "loc_grad": loc.grad, "scale_grad": scale.grad,
            "sample_shapes": " ".join(str(list(sample.shape)) for sample in samples),
            "sample_dtypes": " ".join(str(sample.dtype) for sample in samples),
            "kl": D.kl_divergence(normal, D.Normal(torch.zeros(3, dtype=torch.float64), 1.0)),
            "support": str(D.Beta(2.0, 3.0).support), "repr": repr(normal),
            "transforms_exported": all(getattr(D, name) is getattr(D.transforms, name) for name in names)}
