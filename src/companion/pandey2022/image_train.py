"""Training of the image-mosaic attention models (T-CIFAR-ENT, T-CIFAR-SPARSE, T-INIT), as one batched
program per shape.

A *program* trains E members at once. All members share the data, the architecture family, width and
averaging layer (those fix the tensor shapes); each member has its own seed, entropy weight k, attention
normaliser (softmax, sparsemax or spherical softmax), initialisation (random "R" or pre-trained "P" focus /
classifier) and choice of which part trains ("both", "focus", "classify", "none"). Members' parameters are
stacked along a leading axis and the single-network modules of :mod:`.cnn` are mapped over that axis with
``torch.func.vmap`` + ``functional_call``; the loss is the sum of the members' losses, so each member
receives exactly its own gradient, and Adam or SGD with momentum (both element-wise) then updates each
member exactly as a separate optimiser would.

Per member:

* loss = (1 − k)·CE + k·mean_batch H(α) (H in nats; see :func:`entropy_nats`);
* two optimisers (focus net, classification net), stepped every minibatch: Adam (the authors' later code) or
  SGD with momentum (their earlier, ECML-era code), a program-level choice like the initialisation
  convention of the nets (:data:`.cnn.INITS`);
* data order: a fresh permutation of the training mosaics every epoch from the member's seed;
* early stop when the member's mean minibatch loss over an epoch is ≤ ``stop_loss`` (0.05 for CIFAR); from
  then on the member is no longer computed, so a program costs the sum of its members' epochs;
* a member whose part is not trained, or that has stopped, keeps its parameters exactly (its update is
  undone after each step).

Pre-training (T-INIT): the focus net as a foreground-vs-background classifier of single
images (its scalar score is the logit), and the classification net as a K-way classifier of single
foreground images. Both only use the training image pool.

Results go through :func:`companion.cache.cached`; the cache key holds every setting that changes them.
"""
from __future__ import annotations

import copy
from functools import lru_cache

import torch
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap

from .. import cache
from ..device import default_device, train_threads
from ..progress import progress
from ..seeding import generator, seed_all
from . import images as images_mod
from . import metrics
from .cnn import INITS, SDCImageNet, averaging_layers
from .normalisers import NORMALISERS

#: Code the cached results depend on (fingerprinted by the cache with the shared modules). Narrower than the
#: whole subpackage, so edits to unrelated pandey2022 modules do not throw away the image ensembles.
SCOPE = ("pandey2022/images.py", "pandey2022/cnn.py", "pandey2022/image_train.py",
         "pandey2022/normalisers.py", "pandey2022/metrics.py")
KIND = "pandey2022-image-sdc"
KIND_PRETRAIN = "pandey2022-image-pretrain"
PARTS = ("both", "focus", "classify", "none")
OPTIMIZERS = ("adam", "sgd")


# --------------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------------
def data_config(data_dir, n_train: int, n_test: int, data_seed: int = 0,
                max_images: int | None = None) -> dict:
    """The data part of a program's configuration (digits when ``data_dir`` is None)."""
    return {
        "source": "digits" if data_dir is None else "cifar10",
        "data_dir": None if data_dir is None else str(data_dir),
        "max_images": max_images if data_dir is not None else None,
        "n_train": int(n_train),
        "n_test": int(n_test),
        "data_seed": int(data_seed),
        "disjoint": True,
    }


@lru_cache(maxsize=4)
def _split(source, data_dir, max_images, n_train, n_test, data_seed, disjoint):
    imgs = images_mod.load_images(data_dir, max_images=max_images)
    return images_mod.make_mosaics(imgs, n_train, n_test, data_seed, disjoint=disjoint)


def load_split(data: dict) -> images_mod.MosaicSplit:
    """The mosaic split a data configuration describes (memoised within a process)."""
    return _split(data["source"], data["data_dir"], data["max_images"], data["n_train"], data["n_test"],
                  data["data_seed"], data["disjoint"])


def arch_for(data: dict) -> str:
    return "digits" if data["source"] == "digits" else "cifar"


def last_layer(data: dict) -> int:
    """The latest averaging layer available (3 for the digits nets, 6 = "sixth" for CIFAR)."""
    return max(averaging_layers(arch_for(data)))


def middle_layer(data: dict) -> int:
    """The averaging layer between the input and the last conv: the conv after the first pooling (2 for the
    digits nets, 3 = "third" for CIFAR)."""
    return averaging_layers(arch_for(data))[1]


def member(seed: int, k: float = 0.0, normaliser: str = "softmax", focus_init: str = "R",
           classify_init: str = "R", train: str = "both") -> dict:
    """One member of a program: seed, entropy weight, normaliser, initialisations, trained part."""
    if normaliser not in NORMALISERS:
        raise ValueError(f"normaliser must be one of {NORMALISERS}")
    if focus_init not in ("R", "P") or classify_init not in ("R", "P"):
        raise ValueError("initialisations are 'R' (random) or 'P' (pre-trained)")
    if train not in PARTS:
        raise ValueError(f"train must be one of {PARTS}")
    return {"seed": int(seed), "k": float(k), "normaliser": normaliser, "focus_init": focus_init,
            "classify_init": classify_init, "train": train}


def entropy_nats(scores: torch.Tensor, alpha: torch.Tensor, is_softmax: torch.Tensor) -> torch.Tensor:
    """Differentiable attention entropy per mosaic (nats), safe for exact zeros.

    Softmax members use log_softmax of the scores (the authors' form). Sparse normalisers produce exact
    zeros; ``xlogy(α, α)`` — used by ``normalisers.attention_entropy`` — has a NaN gradient at α = 0
    (PyTorch differentiates its second argument as α/α), and a NaN times k = 0 is still NaN. Here the log
    is taken of max(α, 1e-30), whose gradient is 0 where α = 0, so α log α contributes 0 and a finite
    gradient. ``is_softmax`` is (E,) bool; inputs are (E, B, m)."""
    h_soft = -(alpha * torch.log_softmax(scores, dim=-1)).sum(-1)
    h_safe = -(alpha * torch.log(alpha.clamp_min(1e-30))).sum(-1)
    return torch.where(is_softmax.view(-1, *([1] * (h_soft.dim() - 1))), h_soft, h_safe)


# --------------------------------------------------------------------------------------------------
# Batched model
# --------------------------------------------------------------------------------------------------
class _Stacked:
    """E members of :class:`SDCImageNet` as one vmapped function over stacked parameters."""

    def __init__(self, nets: list[SDCImageNet], device: torch.device | None = None):
        self.device = torch.device("cpu") if device is None else device
        nets = [n.to(self.device) for n in nets]
        self.params, _ = stack_module_state(nets)  # leaves with requires_grad
        self.base = copy.deepcopy(nets[0]).to("meta")
        self.E = len(nets)

        self.norm_code = torch.tensor([NORMALISERS.index(n.normaliser) for n in nets], device=self.device)
        self._fns = {}

    def __call__(self, x: torch.Tensor, mode: str = "sdc", shared_input: bool = False,
                 members: torch.Tensor | None = None):
        """Run every member, or only those indexed by ``members`` (then ``x`` holds their inputs only)."""
        key = (mode, shared_input)
        if key not in self._fns:
            base = self.base

            def fn(p, x, code, _mode=mode):
                kw = {"mode": _mode, "norm_code": code} if _mode == "sdc" else {"mode": _mode}
                return functional_call(base, p, (x,), kw)

            self._fns[key] = vmap(fn, in_dims=(0, None if shared_input else 0, 0), randomness="different")
        params, code = self.params, self.norm_code
        if members is not None:  # indexing keeps the graph: the chosen rows of the leaves get gradients
            params = {n: p[members] for n, p in params.items()}
            code = code[members]
        return self._fns[key](params, x.to(self.device), code)

    def train(self, flag: bool = True):
        self.base.train(flag)

    def part(self, name: str) -> list[torch.Tensor]:
        prefix = {"focus": "focus_net.", "classify": "classification_net."}[name]
        return [p for n, p in self.params.items() if n.startswith(prefix)]

    def names(self, name: str) -> list[str]:
        prefix = {"focus": "focus_net.", "classify": "classification_net."}[name]
        return [n for n in self.params if n.startswith(prefix)]


def _optimizer(params: list[torch.Tensor], cfg: dict) -> torch.optim.Optimizer:
    """Adam, or SGD with momentum, over one part's stacked parameters."""
    if cfg["optimizer"] == "sgd":
        return torch.optim.SGD(params, lr=cfg["lr"], momentum=cfg["momentum"])
    return torch.optim.Adam(params, lr=cfg["lr"])


def _masked_step(opt: torch.optim.Optimizer, params: list[torch.Tensor], active: torch.Tensor) -> None:
    """Step ``opt`` and undo the update of inactive members (frozen part or early-stopped)."""
    if not bool(active.any()):
        return
    if bool(active.all()):
        opt.step()
        return
    old = [p.detach().clone() for p in params]
    opt.step()
    with torch.no_grad():
        for p, o in zip(params, old):
            keep = (~active).to(p.device).view(-1, *([1] * (p.dim() - 1)))
            p.copy_(torch.where(keep, o, p))


# --------------------------------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------------------------------
@torch.no_grad()
def evaluate(model: _Stacked, mosaics: images_mod.MosaicSet, batch: int = 250) -> dict:
    """Eval mode (BN still uses batch statistics, as the authors' nets do), all mosaics in order.
    Returns alpha (E, N, 9) and logits (E, N, K)."""
    model.train(False)
    alphas, logits = [], []
    for start in range(0, len(mosaics), batch):
        x = mosaics.segments(slice(start, start + batch))
        _, a, lg = model(x, "sdc", shared_input=True)
        alphas.append(a)
        logits.append(lg)
    model.train(True)
    return {"alpha": torch.cat(alphas, 1).cpu(), "logits": torch.cat(logits, 1).cpu()}


def _summaries(out: dict, mosaics: images_mod.MosaicSet) -> dict:
    s = metrics.summary(out["alpha"], out["logits"], mosaics.labels, mosaics.fore_idx)
    return {k: v.double() for k, v in s.items()}


# --------------------------------------------------------------------------------------------------
# Pre-training (T-INIT)
# --------------------------------------------------------------------------------------------------
def _pretrain(cfg: dict) -> dict:
    data, seeds = cfg["data"], cfg["seeds"]
    split = load_split(data)
    arch = arch_for(data)
    seed_all(seeds[0])
    nets = [SDCImageNet(arch, 0, "softmax", cfg["width"], split.n_classes, seed=s) for s in seeds]
    model = _Stacked(nets, default_device())
    dev = model.device
    bank, labels = split.train.bank, split.bank_labels
    fg = torch.tensor(split.fg_classes)

    def pools(pool):
        is_fg = torch.isin(labels[pool], fg)
        fgi = pool[is_fg]
        cls = (labels[fgi].unsqueeze(1) == fg).int().argmax(1)
        return pool, is_fg.float(), fgi, cls

    tr_all, tr_isfg, tr_fg, tr_cls = pools(split.train_pool)
    te_all, te_isfg, te_fg, te_cls = pools(split.test_pool)
    opt = torch.optim.Adam(list(model.params.values()), lr=cfg["lr"])
    gens = [generator(10_000 + s) for s in seeds]
    B = cfg["batch"]
    for _ in progress(range(cfg["epochs"]), desc="pre-training"):
        pf = torch.stack([torch.randperm(len(tr_all), generator=g) for g in gens])
        pc = torch.stack([torch.randint(0, len(tr_fg), (len(tr_fg),), generator=g) for g in gens])
        nb = max(len(tr_all) // B, 1)
        nbc = max(len(tr_fg) // B, 1)
        for b in range(nb):
            rows = pf[:, b * B:(b + 1) * B]
            s = model(bank[tr_all[rows]], "focus")
            loss = F.binary_cross_entropy_with_logits(s, tr_isfg[rows].to(dev), reduction="none")
            loss = loss.mean(1).sum()
            rc = pc[:, (b % nbc) * B:((b % nbc) + 1) * B]
            lg = model(bank[tr_fg[rc]], "classify")
            loss = loss + F.cross_entropy(lg.flatten(0, 1), tr_cls[rc].flatten().to(dev),
                                          reduction="none").view(len(seeds), -1).mean(1).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()

    @torch.no_grad()
    def acc(mode, idx, target):
        model.train(False)
        outs = [model(bank[idx[i:i + 250]], mode, shared_input=True) for i in range(0, len(idx), 250)]
        model.train(True)
        o = torch.cat(outs, 1).cpu()
        pred = (o > 0).float() if mode == "focus" else o.argmax(-1)
        return (100.0 * (pred == target).double().mean(-1)).tolist()

    return {
        "focus": _part_state(model, "focus_net."),
        "classify": _part_state(model, "classification_net."),
        "seeds": list(seeds),
        "focus_acc_train": acc("focus", tr_all, tr_isfg),
        "focus_acc_test": acc("focus", te_all, te_isfg),
        "classify_acc_train": acc("classify", tr_fg, tr_cls),
        "classify_acc_test": acc("classify", te_fg, te_cls),
    }


def _part_state(model: _Stacked, prefix: str) -> dict:
    return {n: p.detach().cpu().clone() for n, p in model.params.items() if n.startswith(prefix)}


def pretrain(data: dict, seeds, width: float, epochs: int, lr: float = 1e-3, batch: int = 250) -> dict:
    """Pre-trained focus (fg vs bg) and classification (K-way on fg images) nets per seed (cached)."""
    cfg = {"data": data, "seeds": [int(s) for s in seeds], "width": float(width), "epochs": int(epochs),
           "lr": float(lr), "batch": int(batch)}
    return cache.cached(KIND_PRETRAIN, cfg, lambda: _threaded(_pretrain, cfg), scope=SCOPE)


# --------------------------------------------------------------------------------------------------
# SDC training
# --------------------------------------------------------------------------------------------------
def program_config(data: dict, members: list[dict], *, layer: int = 0, width: float = 0.5, lr: float = 5e-4,
                   batch: int = 250, epochs: int = 10,
                   stop_loss: float = 0.05, pretrain_epochs: int = 0, pretrain_lr: float = 1e-3,
                   n_examples: int = 8, optimizer: str = "adam", momentum: float = 0.0,
                   init: str = "xavier") -> dict:
    """Every setting of one batched program (this dict is the cache key). ``optimizer``: "adam" or "sgd"
    (with ``momentum``; the authors' ECML-era runs: 0.9); ``init``: the nets' initialisation convention."""
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, not {optimizer!r}")
    if optimizer == "adam" and momentum:
        raise ValueError("momentum applies to optimizer='sgd' only")
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, not {init!r}")
    if any(m["focus_init"] == "P" or m["classify_init"] == "P" for m in members):
        if layer != 0:
            raise ValueError("pre-trained initialisations are defined for zeroth-layer averaging only")
        if pretrain_epochs < 1:
            raise ValueError("pre-trained members need pretrain_epochs >= 1")
        if init != "xavier":
            raise ValueError("pre-trained members are defined for the 'xavier' initialisation only")
    return {"data": data, "members": list(members), "layer": int(layer), "width": float(width),
            "lr": float(lr), "batch": int(batch), "epochs": int(epochs),
            "stop_loss": float(stop_loss), "pretrain_epochs": int(pretrain_epochs),
            "pretrain_lr": float(pretrain_lr), "n_examples": int(n_examples), "dtype": "float32",
            "optimizer": optimizer, "momentum": float(momentum), "init": init}


def train_program(cfg: dict) -> dict:
    """Train (or load from the cache) one batched program; see :func:`program_config`."""
    return cache.cached(KIND, cfg, lambda: _threaded(_train, cfg), scope=SCOPE)


def _threaded(fn, cfg):
    with train_threads():
        return fn(cfg)


def _train(cfg: dict) -> dict:
    data, members = cfg["data"], cfg["members"]
    split = load_split(data)
    arch = arch_for(data)
    E = len(members)
    seeds = [m["seed"] for m in members]
    seed_all(seeds[0])  # dropout draws (CIFAR nets only); the digits nets have no dropout
    nets = [SDCImageNet(arch, cfg["layer"], m["normaliser"], cfg["width"], split.n_classes, seed=m["seed"],
                        init=cfg["init"]) for m in members]
    pre = None
    if any(m["focus_init"] == "P" or m["classify_init"] == "P" for m in members):
        pre = pretrain(data, sorted(set(seeds)), cfg["width"], cfg["pretrain_epochs"], cfg["pretrain_lr"],
                       cfg["batch"])
        where = {s: i for i, s in enumerate(pre["seeds"])}
        for net, m in zip(nets, members):
            i = where[m["seed"]]
            sd = {}
            if m["focus_init"] == "P":
                sd.update({n: v[i] for n, v in pre["focus"].items()})
            if m["classify_init"] == "P":
                sd.update({n: v[i] for n, v in pre["classify"].items()})
            net.load_state_dict(sd, strict=False)
    model = _Stacked(nets, default_device())
    dev = model.device
    k = torch.tensor([m["k"] for m in members], dtype=torch.float32, device=dev)
    use_ent = bool((k > 0).any())
    is_softmax = torch.tensor([m["normaliser"] == "softmax" for m in members], device=dev)
    trains_f = torch.tensor([m["train"] in ("both", "focus") for m in members])
    trains_c = torch.tensor([m["train"] in ("both", "classify") for m in members])
    opt_f, opt_c = (_optimizer(model.part(part), cfg) for part in ("focus", "classify"))
    gens = [generator(s) for s in seeds]
    N, B = len(split.train), cfg["batch"]
    nb = max(N // B, 1)
    stopped = torch.zeros(E, dtype=torch.bool)
    stop_epoch = torch.full((E,), cfg["epochs"], dtype=torch.int64)
    curves = {c: [] for c in ("loss", "acc", "ftpt", "ffpt", "ftpf", "ffpf")}
    initial = {"train": _summaries(evaluate(model, split.train), split.train),
               "test": _summaries(evaluate(model, split.test), split.test)}
    epochs_run = 0
    for epoch in progress(range(cfg["epochs"]), desc=f"{arch} layer {cfg['layer']}, {E} members"):
        if bool(stopped.all()):
            break
        epochs_run += 1
        # A stopped member is frozen, so only the live ones are computed: a program then costs the sum of its
        # members' epochs, not its longest member's epochs times E. Every member still draws its permutation,
        # so each member's data order does not depend on when the others stop.
        live = (~stopped).nonzero().squeeze(1)
        sub = None if len(live) == E else live.to(dev)
        k_live, soft_live = k[live.to(dev)], is_softmax[live.to(dev)]
        perm = torch.stack([torch.randperm(N, generator=g) for g in gens])
        tot = {c: torch.zeros(len(live), dtype=torch.float64) for c in curves}
        for b in range(nb):
            rows = perm[live, b * B:(b + 1) * B]
            x = split.train.segments(rows)
            y, fore = split.train.labels[rows].to(dev), split.train.fore_idx[rows].to(dev)
            scores, alpha, logits = model(x, members=sub)
            ce = F.cross_entropy(logits.flatten(0, 1), y.flatten(), reduction="none").view(len(live), -1)
            ce = ce.mean(1)
            ent = (entropy_nats(scores, alpha, soft_live).mean(1) if use_ent
                   else torch.zeros(len(live), device=dev))
            loss = (1 - k_live) * ce + k_live * ent
            opt_f.zero_grad()
            opt_c.zero_grad()
            loss.sum().backward()
            _masked_step(opt_f, model.part("focus"), trains_f & ~stopped)
            _masked_step(opt_c, model.part("classify"), trains_c & ~stopped)
            with torch.no_grad():
                cat = metrics.categories(alpha, logits, y, fore)
                tot["loss"] += loss.double().cpu()
                for c in ("acc", "ftpt", "ffpt", "ftpf", "ffpf"):
                    tot[c] += cat[c].cpu()
        for c in curves:  # a stopped member's curve ends at its stop epoch (NaN after)
            row = torch.full((E,), float("nan"), dtype=torch.float64)
            row[live] = tot[c] / nb
            curves[c].append(row)
        newly = (curves["loss"][-1] <= cfg["stop_loss"]) & ~stopped & (trains_f | trains_c)  # NaN: False
        stop_epoch[newly] = epoch + 1
        stopped |= newly
    tr, te = evaluate(model, split.train), evaluate(model, split.test)
    n_ex = min(cfg["n_examples"], len(split.test))
    out = {
        "members": members,
        "train": _summaries(tr, split.train),
        "test": _summaries(te, split.test),
        "initial": initial,
        "epochs_run": epochs_run,
        "stop_epoch": stop_epoch,
        "curves": {c: (torch.stack(v, 1) if v else torch.zeros(E, 0, dtype=torch.float64))
                   for c, v in curves.items()},
        "examples_alpha": te["alpha"][:, :n_ex].clone(),
        "examples_pred": te["logits"][:, :n_ex].argmax(-1),
        "test_max_alpha": te["alpha"].max(-1).values,
        "test_focus": te["alpha"].argmax(-1),
        "test_pred": te["logits"].argmax(-1),
    }
    if pre is not None:
        out["pretrain"] = {k2: v for k2, v in pre.items() if k2 not in ("focus", "classify")}
    return out
