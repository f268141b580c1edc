"""Joint training of focus and classification nets, many runs as one batched program.

What is trained: for every member, loss = (1 - k) * CE(logits, y) + k * mean_batch H(alpha)
(k = entropy weight, H in nats), with two optimisers of the same kind - one for the focus net, one
for the classification net - both stepped after every minibatch, as in the authors' scripts.

Why batched: a table cell of the paper is 10-20 seeds of a tiny network; a grid of cells is hundreds
of runs. The members of an ``Ensemble`` (seeds x entropy weights x learning rates x widths) are
trained together: one forward/backward on weights stacked on a leading axis, one optimiser update
for all. Members are independent: their losses are summed, so member e's gradient only depends on
member e; each member draws its own minibatch order from ``torch.Generator().manual_seed(seed)``.

Early stopping is per member and tested after every epoch. By default (``stop_on="minibatch"``) it
reads the loss the way the authors' scripts did: the sum of the epoch's minibatch losses (each taken
before its update) divided by the number of minibatches minus one (their loop divided by the last
batch index: 12 minibatches of 250, divided by 11); ``stop_on="full"`` evaluates the loss on the whole
training set instead. A member whose loss is <= ``stop_loss`` is *frozen* (no further parameter or
optimiser-state update) and no longer computed, while the others continue. Training ends when all
members stopped or at ``max_epochs``. Metrics are recorded every ``eval_every`` epochs and at the end.

``train_single`` is the plain one-run version with ``torch.optim`` (how the authors trained); the
tests check that the batched program reproduces it and the benchmark times one against the other.
"""
from __future__ import annotations

import itertools
import time
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from ..cache import cached
from ..device import train_threads
from ..progress import progress
from . import data as data_mod
from . import metrics as met
from .models import ArchSpec, Ensemble, arch, build_single
from .normalisers import attention_entropy, normalise

DTYPES = {"float64": torch.float64, "float32": torch.float32}
CACHE_KIND = "pandey2022-ensemble"


class BatchedOptimiser:
    """Adam or SGD-with-momentum over stacked parameters, with a per-member learning rate and an
    ``active`` mask (a frozen member's parameters *and* optimiser state stay untouched).

    The update formulas follow ``torch.optim.Adam`` / ``torch.optim.SGD`` (single-tensor path)
    so that a one-member run reproduces them to rounding.
    """

    def __init__(self, params, kind: str, lr: torch.Tensor, momentum: float = 0.9,
                 betas=(0.9, 0.999), eps: float = 1e-8):
        if kind not in ("adam", "sgd"):
            raise ValueError(f"optimiser must be 'adam' or 'sgd', not {kind!r}")
        self.params, self.kind, self.lr = list(params), kind, lr
        self.momentum, self.betas, self.eps = momentum, betas, eps
        E = lr.shape[0]
        self.t = torch.zeros(E, dtype=torch.float64)
        self.state = [{} for _ in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def _view(self, v, p):
        return v.to(p.dtype).view(-1, *([1] * (p.dim() - 1)))

    @torch.no_grad()
    def step(self, active: torch.Tensor):
        all_active = bool(active.all())
        self.t += active.double()
        for p, st in zip(self.params, self.state):
            g = p.grad
            if g is None:
                continue
            act = self._view(active, p).bool()
            lr = self._view(self.lr, p)
            if self.kind == "sgd":
                # torch.optim.SGD: the first step copies the gradient into the buffer
                if "buf" not in st:
                    st["buf"], st["seen"] = g.clone(), active.clone()
                else:
                    seen = self._view(st["seen"], p).bool()
                    new = torch.where(seen, st["buf"] * self.momentum + g, g)
                    st["buf"] = new if all_active else torch.where(act, new, st["buf"])
                    st["seen"] = st["seen"] | active
                upd = lr * st["buf"]
            else:
                b1, b2 = self.betas
                m = st.setdefault("m", torch.zeros_like(p))
                v = st.setdefault("v", torch.zeros_like(p))
                m_new = m.lerp(g, 1 - b1)
                v_new = v * b2 + (1 - b2) * g * g
                if all_active:
                    st["m"], st["v"] = m_new, v_new
                else:
                    st["m"], st["v"] = torch.where(act, m_new, m), torch.where(act, v_new, v)
                t = self._view(self.t.clamp(min=1), p)
                bc1 = 1 - b1 ** t
                bc2_sqrt = (1 - b2 ** t).sqrt()
                denom = st["v"].sqrt() / bc2_sqrt + self.eps
                upd = (lr / bc1) * st["m"] / denom
            p.sub_(upd if all_active else torch.where(act, upd, torch.zeros_like(upd)))


def member_loss(trace, y, k, normaliser):
    """Per-member objective (E,) for labels y (E, B): (1-k) CE + k mean entropy."""
    E, B, K = trace.logits.shape
    ce = F.cross_entropy(trace.logits.reshape(E * B, K), y.reshape(E * B), reduction="none")
    ce = ce.reshape(E, B).mean(1)
    if not bool((k != 0).any()):
        return ce
    ent = attention_entropy(trace.scores, trace.alpha, normaliser).mean(1)
    return (1 - k) * ce + k * ent


@torch.no_grad()
def evaluate(ens: Ensemble, x, y, fore, normaliser, k, chunk: int = 1000, full: bool = False) -> dict:
    """Loss and interpretability metrics of every member on a whole set (chunked over mosaics)."""
    alphas, logits, losses = [], [], []
    for s in range(0, x.shape[0], chunk):
        tr = ens(x[s:s + chunk], normaliser)
        yy = y[s:s + chunk].expand(ens.size, -1)
        losses.append(member_loss(tr, yy, k, normaliser) * yy.shape[1])
        alphas.append(tr.alpha)
        logits.append(tr.logits)
    alpha, logit = torch.cat(alphas, 1), torch.cat(logits, 1)
    out = met.summary(alpha, logit, y, fore) if full else met.categories(alpha, logit, y, fore)
    out["loss"] = torch.stack(losses).sum(0).double() / x.shape[0]
    return out


def train_ensemble(ens: Ensemble, data, *, k, lr, optimiser="adam", momentum=0.9, batch_size=250,
                   max_epochs=100, stop_loss=0.01, eval_every=1, normaliser="softmax",
                   show_progress=True, desc="training", stop_on="minibatch") -> dict:
    """Train all members of ``ens`` on ``data`` (a ``MosaicData``); returns curves and final metrics."""
    dtype = ens.dtype
    E = ens.size
    xtr, ytr, ftr = data.x_train.to(dtype), data.y_train, data.fore_train
    xte, yte, fte = data.x_test.to(dtype), data.y_test, data.fore_test
    k = torch.as_tensor(k, dtype=dtype).expand(E).clone()
    lr = torch.as_tensor(lr, dtype=torch.float64).expand(E).clone()
    opt_f = BatchedOptimiser(ens.focus_params(), optimiser, lr, momentum)
    opt_c = BatchedOptimiser(ens.cls_params(), optimiser, lr, momentum)
    gens = [torch.Generator().manual_seed(int(s)) for s in ens.seeds]
    N = xtr.shape[0]
    active = torch.ones(E, dtype=torch.bool)
    stop_epoch = torch.full((E,), max_epochs, dtype=torch.int64)
    curves = {"epoch": [], "train": [], "test": []}

    def record(epoch, tr_metrics):
        curves["epoch"].append(epoch)
        curves["train"].append(tr_metrics)
        curves["test"].append(evaluate(ens, xte, yte, fte, normaliser, k))

    record(0, evaluate(ens, xtr, ytr, ftr, normaliser, k))
    t0 = time.perf_counter()
    epoch = 0
    bar_kw = {} if show_progress else {"disable": True}
    for epoch in progress(range(1, max_epochs + 1), desc=desc, total=max_epochs, **bar_kw):
        running = run_epoch(ens, xtr, ytr, k, normaliser, gens, opt_f, opt_c, active, batch_size)
        tr_metrics = None
        if stop_loss is not None:
            if stop_on == "minibatch":
                loss = running / max(-(-N // batch_size) - 1, 1)   # the authors' running sum / last index
            else:
                tr_metrics = evaluate(ens, xtr, ytr, ftr, normaliser, k)
                loss = tr_metrics["loss"]
            newly = active & (loss <= stop_loss)
            stop_epoch[newly] = epoch
            active &= ~newly
        done = not bool(active.any())
        if epoch % eval_every == 0 or epoch == max_epochs or done:
            record(epoch, tr_metrics or evaluate(ens, xtr, ytr, ftr, normaliser, k))
        if done:
            break
    wall = time.perf_counter() - t0
    def stack(rows):
        return {key: torch.stack([r[key] for r in rows], 1) for key in rows[0]}

    final = {"train": evaluate(ens, xtr, ytr, ftr, normaliser, k, full=True),
             "test": evaluate(ens, xte, yte, fte, normaliser, k, full=True)}
    return {"epochs": torch.tensor(curves["epoch"]), "curves": {"train": stack(curves["train"]),
            "test": stack(curves["test"])}, "final": final, "stop_epoch": stop_epoch,
            "epochs_run": epoch, "wall_s": wall, "params": ens.state()}


def run_epoch(ens, xtr, ytr, k, normaliser, gens, opt_f, opt_c, active, batch_size=250):
    """One epoch of minibatch steps for all members (each with its own shuffle from ``gens``);
    returns each member's sum of its minibatch losses (taken before each update)."""
    N = xtr.shape[0]
    # every member draws its order, stopped or not, so what a member sees does not depend on the others
    perms = torch.stack([torch.randperm(N, generator=g) for g in gens])
    running = torch.zeros(ens.size, dtype=torch.float64)
    # Only the members still training are computed: a stopped member would cost a full forward and
    # backward pass per minibatch for updates the optimiser then throws away. Indexing the stacked
    # weights routes the gradients to the live rows only (the stopped rows get zeros, which the
    # optimiser's mask leaves untouched anyway).
    live = None if bool(active.all()) else active.nonzero().squeeze(1)
    for s in range(0, N, batch_size):
        if live is None:
            idx, kk, params = perms[:, s:s + batch_size], k, None
        else:
            idx, kk = perms[live, s:s + batch_size], k[live]
            params = {name: p[live] for name, p in ens.params.items()}
        tr = ens(xtr[idx], normaliser, params)
        loss = member_loss(tr, ytr[idx], kk, normaliser)
        if live is None:
            running += loss.detach().double()
        else:
            running[live] += loss.detach().double()
        opt_f.zero_grad()
        opt_c.zero_grad()
        loss.sum().backward()
        opt_c.step(active)
        opt_f.step(active)
    return running


def train_steps_only(ens: Ensemble, data, *, k=0.0, lr=0.001, optimiser="adam", momentum=0.9,
                     batch_size=250, epochs=1, normaliser="softmax"):
    """The training steps of ``train_ensemble`` without any evaluation (for benchmarks)."""
    E, dtype = ens.size, ens.dtype
    k = torch.as_tensor(k, dtype=dtype).expand(E).clone()
    lr = torch.as_tensor(lr, dtype=torch.float64).expand(E).clone()
    opt_f = BatchedOptimiser(ens.focus_params(), optimiser, lr, momentum)
    opt_c = BatchedOptimiser(ens.cls_params(), optimiser, lr, momentum)
    gens = [torch.Generator().manual_seed(int(s)) for s in ens.seeds]
    active = torch.ones(E, dtype=torch.bool)
    xtr = data.x_train.to(dtype)
    for _ in range(epochs):
        run_epoch(ens, xtr, data.y_train, k, normaliser, gens, opt_f, opt_c, active, batch_size)
    return ens


def train_single(spec: ArchSpec, seed: int, data, *, k=0.0, lr=0.001, optimiser="adam", momentum=0.9,
                 batch_size=250, max_epochs=100, stop_loss=0.01, normaliser="softmax",
                 dtype=torch.float64, per_segment=False, stop_on="minibatch"):
    """One run the way the authors' scripts do it: two ``nn.Module`` s, two ``torch.optim`` optimisers,
    a python loop over minibatches. Reference for the batched trainer (tests, benchmark).

    ``per_segment=True`` also scores the 9 segments one position at a time, as the authors' focus
    nets did (a Python loop over positions); the result is the same up to rounding."""
    focus, cls = build_single(spec, seed, dtype)
    Opt = (lambda ps: torch.optim.Adam(ps, lr=lr)) if optimiser == "adam" else \
        (lambda ps: torch.optim.SGD(ps, lr=lr, momentum=momentum))
    opt_f, opt_c = Opt(focus.parameters()), Opt(cls.parameters())
    g = torch.Generator().manual_seed(int(seed))
    xtr, ytr = data.x_train.to(dtype), data.y_train
    N = xtr.shape[0]

    def objective(x, y):
        if per_segment:
            outs = [focus(x[:, j:j + 1]) for j in range(x.shape[1])]
            scores = torch.cat([o[0] for o in outs], 1)
            feats = torch.cat([o[1] for o in outs], 1)
        else:
            scores, feats = focus(x)
        alpha = normalise(scores, normaliser)
        logits = cls((alpha.unsqueeze(-1) * feats).sum(-2))
        ent = attention_entropy(scores, alpha, normaliser).mean()
        return (1 - k) * F.cross_entropy(logits, y) + k * ent

    stop = max_epochs
    for epoch in range(1, max_epochs + 1):
        perm = torch.randperm(N, generator=g)
        running, batches = 0.0, 0
        for s in range(0, N, batch_size):
            idx = perm[s:s + batch_size]
            loss = objective(xtr[idx], ytr[idx])
            running, batches = running + float(loss.detach()), batches + 1
            opt_f.zero_grad()
            opt_c.zero_grad()
            loss.backward()
            opt_c.step()
            opt_f.step()
        if stop_loss is not None:
            if stop_on == "minibatch":
                value = running / max(batches - 1, 1)
            else:
                with torch.no_grad():
                    value = float(objective(xtr, ytr))
            if value <= stop_loss:
                stop = epoch
                break
    return focus, cls, stop


# ----------------------------------------------------------------------------------------------
# Configured, cached runs (what the chapters call)

def ensemble_config(dataset: str, arch_name: str, *, layer: int = 0, normaliser: str = "softmax",
                    seeds: Sequence[int] = (0,), ks: Sequence[float] = (0.0,),
                    lrs: Sequence[float] = (0.001,), widths: Sequence | None = None,
                    focus_zero: bool | None = None, optimiser: str = "adam", epochs: int = 2000,
                    stop_loss: float | None = 0.01, batch_size: int = 250, eval_every: int = 10,
                    dtype: str = "float64", data_seed: int = 0, stop_on: str = "minibatch") -> dict:
    """A plain-data description of one batched program: members = widths x ks x lrs x seeds.

    ``widths`` is a list of (focus_hidden, cls_hidden) pairs (default: the architecture's own).
    Everything that changes the result is in here, so it doubles as the cache key.
    """
    spec = arch(arch_name)
    if widths is None:
        widths = [(list(spec.focus_hidden), list(spec.cls_hidden))]
    return {"dataset": dataset, "data_seed": int(data_seed) if dataset.startswith("dist") else None,
            "arch": arch_name, "layer": int(layer), "normaliser": normaliser,
            "seeds": [int(s) for s in seeds], "ks": [float(v) for v in ks], "lrs": [float(v) for v in lrs],
            "widths": [[list(f), list(c)] for f, c in widths],
            "focus_zero": spec.focus_zero if focus_zero is None else bool(focus_zero),
            "optimiser": optimiser, "epochs": int(epochs), "stop_loss": stop_loss, "stop_on": stop_on,
            "batch_size": int(batch_size), "eval_every": int(eval_every), "dtype": dtype}


def members(cfg: dict) -> list[dict]:
    return [{"focus_hidden": tuple(f), "cls_hidden": tuple(c), "k": k, "lr": lr, "seed": s}
            for (f, c), k, lr, s in itertools.product(cfg["widths"], cfg["ks"], cfg["lrs"], cfg["seeds"])]


def specs_of(cfg: dict) -> list[ArchSpec]:
    base = arch(cfg["arch"], layer=cfg["layer"], focus_zero=cfg["focus_zero"])
    return [base.with_(focus_hidden=m["focus_hidden"], cls_hidden=m["cls_hidden"]) for m in members(cfg)]


def build(cfg: dict) -> Ensemble:
    return Ensemble(specs_of(cfg), [m["seed"] for m in members(cfg)], DTYPES[cfg["dtype"]])


def _compute(cfg: dict, show_progress=True) -> dict:
    # Tiny matrices: a second OpenMP thread only spin-waits (measured: 20 epochs of 24 linear runs,
    # 232 s wall with 2 threads vs 8 s with 1 on the shared 2-core machine).
    with train_threads():
        return _compute_inner(cfg)


def _compute_inner(cfg: dict) -> dict:
    d = data_mod.load(cfg["dataset"], cfg["data_seed"] or 0)
    ens = build(cfg)
    ms = members(cfg)
    out = train_ensemble(ens, d, k=[m["k"] for m in ms], lr=[m["lr"] for m in ms],
                         optimiser=cfg["optimiser"], batch_size=cfg["batch_size"],
                         max_epochs=cfg["epochs"], stop_loss=cfg["stop_loss"],
                         eval_every=cfg["eval_every"], normaliser=cfg["normaliser"],
                         stop_on=cfg.get("stop_on", "minibatch"),
                         desc=f"{cfg['dataset']} {cfg['arch']} l={cfg['layer']} x{ens.size}")
    out["members"] = {key: [list(m[key]) if isinstance(m[key], tuple) else m[key] for m in ms]
                      for key in ms[0]}
    out["config"] = dict(cfg)
    return out


#: The modules a trained result depends on (the cache fingerprints exactly these, plus the shared
#: harness modules), so that editing plots, tables or another chapter's module keeps the cache valid.
CACHE_SCOPE = tuple(f"pandey2022/{m}" for m in ("data", "models", "normalisers", "train", "metrics"))


def run(cfg: dict) -> dict:
    """Train (or load from the cache) the batched program described by ``cfg``."""
    return cached(CACHE_KIND, cfg, lambda: _compute(cfg), scope=CACHE_SCOPE)


def ensemble_of(result: dict) -> Ensemble:
    """The trained ensemble of a ``run`` result (to evaluate on grids, new points, ...)."""
    cfg = result["config"]
    return build(cfg).load_state(result["params"])


#: The error-mode settings of the note (section 3.1): distribution -> (architecture, optimiser, lr, epochs).
ERROR_MODES = {
    "dist1": ("em-linear", "sgd", 0.01, 100),
    "dist2": ("em-linear", "sgd", 0.01, 100),
    "dist4": ("em3", "adam", 0.01, 150),
}
#: The seeds the authors used for the showcased error-mode runs.
PAPER_SEEDS = {"dist1": 1238, "dist2": 1246, "dist4": 1236}


def error_mode_config(dist: str, seeds: Sequence[int], epochs: int | None = None, data_seed: int = 0,
                      eval_every: int = 5) -> dict:
    """Linear focus + linear (or 2-20-20-K) classifier on an error-mode distribution, float64, batch 250,
    fixed number of epochs (no early stopping, as in the authors' scripts), metrics every 5 epochs."""
    arch_name, opt, lr, n_ep = ERROR_MODES[dist]
    return ensemble_config(dist, arch_name, seeds=seeds, lrs=(lr,), optimiser=opt,
                           epochs=n_ep if epochs is None else epochs, stop_loss=None,
                           eval_every=eval_every, dtype="float64", data_seed=data_seed)
