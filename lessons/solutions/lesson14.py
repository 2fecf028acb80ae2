"""Reference solutions for lesson 14 (find the bug: a backward pass by hand, checked by the tutor)."""

import vizgrad as vg
import vizgrad.nn.functional as F


def cross_entropy_backward(logits, Yb):
    """Exercise 14.1: the softmax minus the one-hot targets, divided by the batch size (the mean)."""
    n, vocab = logits.shape
    return (F.softmax(logits, dim=1) - F.one_hot(Yb, vocab).double()) / n


def backprop(t):
    """Exercise 14.2: makemore's backward pass, line by line in reverse, each tensor used twice summed."""
    n, vocab = t["n"], t["vocab"]
    dlogits = cross_entropy_backward(t["logits"], t["Yb"])
    dh = dlogits @ t["W2"].T
    dW2 = t["h"].T @ dlogits
    db2 = dlogits.sum(0)
    dhpreact = (1 - t["h"] ** 2) * dh
    dbngain = (t["bnraw"] * dhpreact).sum(0, keepdim=True)
    dbnbias = dhpreact.sum(0, keepdim=True)
    dbnraw = t["bngain"] * dhpreact
    dbnvar_inv = (t["bndiff"] * dbnraw).sum(0, keepdim=True)
    dbnvar = -0.5 * (t["bnvar"] + 1e-5) ** -1.5 * dbnvar_inv
    dbndiff2 = vg.ones_like(t["bndiff2"]) / (n - 1) * dbnvar
    dbndiff = t["bnvar_inv"] * dbnraw + 2 * t["bndiff"] * dbndiff2
    dbnmeani = -dbndiff.sum(0, keepdim=True)
    dhprebn = dbndiff + dbnmeani / n
    dembcat = dhprebn @ t["W1"].T
    dW1 = t["embcat"].T @ dhprebn
    db1 = dhprebn.sum(0)
    demb = dembcat.view(t["emb"].shape)
    dC = F.one_hot(t["Xb"].view(-1), vocab).double().T @ demb.view(-1, t["C"].shape[1])
    return {"dlogits": dlogits, "dh": dh, "dW2": dW2, "db2": db2, "dhpreact": dhpreact, "dbngain": dbngain,
            "dbnbias": dbnbias, "dbnraw": dbnraw, "dbnvar_inv": dbnvar_inv, "dbnvar": dbnvar, "dbndiff2": dbndiff2,
            "dbndiff": dbndiff, "dbnmeani": dbnmeani, "dhprebn": dhprebn, "dembcat": dembcat, "dW1": dW1,
            "db1": db1, "demb": demb, "dC": dC}


def grad_none_reasons():
    """Exercise 14.3: the reason explain_grad gives for each puzzle."""
    return {"A": "not_leaf", "B": "accumulated", "C": "rebound", "D": "detached", "E": "requires_grad_false"}
