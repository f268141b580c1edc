"""A non-gated attention-only network: AO with a plain tanh layer where AO has a GRU cell.

AO is feed-forward, but its layer is a GRU cell run from a zero state, and that still has a gate:
with ``h = 0`` the cell computes ``h = (1 - u) * c``, ``u = sigmoid(W_u x + b_u)``,
``c = tanh(W_c x + b_c)``. The development code also offers a non-gated ("Vanilla") cell,
``h' = tanh(W x + U h + b)`` [CODE ``train_and_build.py``, ``cell_type``; ``renn.rnn.cells.VanillaRNN``];
run from a zero state it is a one-layer perceptron,

    h^E_s = tanh(W_E (x_s + p_s) + b_E),    h^D_t = tanh(W_D (y_{t-1} + p_t) + b_D),

with the same positional encoding ``p``, dot-product attention and context-only readout as AO.
One summary of the paper names a "non-gated feed-forward" network [SUM-arxivlens]; whether the
paper trained exactly this one is not known, so this network is our reading.

* :class:`EnsembleTanhLayer` - ``tanh(W x + b)`` per ensemble member, with the interface the AO
  forward pass uses (``input_projection``, ``step_from_zero``);
* :class:`NonGatedAO` - :class:`~.models.Seq2Seq` (arch ``"AO"``) with that layer as encoder and decoder;
* :func:`nongated_ensemble` - trained with the recipe of :mod:`.train`, cached like every ensemble.

Kept in its own module so that the trained VED / AED / AO networks, whose cache key covers the
source of :mod:`.models` and :mod:`.train`, stay valid.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence

import torch

from ..ensemble import EnsembleLinear, clip_grad_norm_per_member, per_member_sq_norm
from .models import ModelConfig, Seq2Seq
from .tasks import Task
from .train import TRAIN_SCOPE, TrainConfig, TrainedEnsemble, _batches, derive_seed, evaluate, sequence_loss

__all__ = ["EnsembleTanhLayer", "NonGatedAO", "train_nongated", "nongated_ensemble", "NONGATED_SCOPE"]

#: Library source the cached non-gated networks depend on: the recipe's modules plus this one.
NONGATED_SCOPE = (*TRAIN_SCOPE, "aitken2021/nongated")


class EnsembleTanhLayer(EnsembleLinear):
    """``h = tanh(W x + b)`` per member: a non-gated feed-forward layer.

    Weights ``N(0, 1/hidden)`` (the fan-in scaling of the code's cells, as for the GRU), bias zero.
    """

    def __init__(self, n_members: int, input_size: int, hidden_size: int):
        super().__init__(n_members, input_size, hidden_size, bias=True, init_std=1.0 / math.sqrt(hidden_size))
        self.hidden_size = int(hidden_size)

    def input_projection(self, x: torch.Tensor) -> torch.Tensor:
        """``W x + b`` for inputs ``(E, ..., input_size)``."""
        return EnsembleLinear.forward(self, x)

    def step_from_zero(self, xproj: torch.Tensor) -> torch.Tensor:
        """The layer's output, ``tanh(W x + b)``, from a projected input of any shape ``(E, ..., n)``."""
        return torch.tanh(xproj)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.step_from_zero(self.input_projection(x))


class NonGatedAO(Seq2Seq):
    """AO whose encoder and decoder are :class:`EnsembleTanhLayer` instead of GRU cells.

    Everything else - one-hot inputs padded to 50, the rotated positional encoding, dot-product
    attention, the readout of the context alone, the traces - is :class:`~.models.Seq2Seq`'s.
    """

    def __init__(self, config: ModelConfig, seeds: Sequence[int]):
        if config.arch != "AO":
            raise ValueError("the non-gated network is a variant of AO")
        super().__init__(config, seeds)
        E, n = len(self.seeds), config.hidden
        self.encoder = EnsembleTanhLayer(E, self.embed_in.dim, n)
        self.decoder = EnsembleTanhLayer(E, self.embed_out.dim, n)
        self.reset_parameters()  # draw every member again, now with the tanh layers

    def member(self, e: int) -> NonGatedAO:
        m = NonGatedAO(self.config, [self.seeds[e]])
        m.load_state_dict({k: v[e : e + 1].clone() for k, v in self.state_dict().items()})
        return m


def train_nongated(model_cfg: ModelConfig, task: Task, seeds: Sequence[int], cfg: TrainConfig,
                   progress=None, log_every: int = 50) -> dict:
    """Train :class:`NonGatedAO` members with the recipe of :func:`.train.train_ensemble` (same batches,
    loss, L2, Adam, schedule and per-network clipping); returns the same cache-ready payload."""
    seeds = [int(s) for s in seeds]
    model = NonGatedAO(model_cfg, seeds)
    l2 = cfg.l2 if cfg.l2 is not None else 1e-3  # AO's L2 on one-to-one [CODE]
    params = list(model.parameters())
    opt = torch.optim.Adam(params, lr=cfg.lr, betas=tuple(cfg.betas), eps=cfg.eps)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=cfg.lr_decay)
    steps, losses = [], []
    t0 = time.perf_counter()
    it = _batches(task, seeds, cfg)
    if progress is not None:
        it = progress(it, total=cfg.steps, desc=f"train non-gated AO x{len(seeds)}")
    for step, batch in enumerate(it):
        loss = sequence_loss(model(batch, mode="teacher").logits, batch) + l2 * per_member_sq_norm(params)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        clip_grad_norm_per_member(params, cfg.clip)
        opt.step()
        sched.step()
        if step % log_every == 0 or step == cfg.steps - 1:
            steps.append(step)
            losses.append(loss.detach().clone())
    seconds = time.perf_counter() - t0
    model.eval()
    return {
        "state": {k: v.detach().clone() for k, v in model.state_dict().items()},
        "seeds": seeds, "model": model_cfg.as_dict(), "train": cfg.as_dict(), "task": task.config(),
        "history": {"step": steps, "loss": torch.stack(losses) if losses else torch.zeros(0)},
        "test": evaluate(model, task, [derive_seed(s, "test") for s in seeds], cfg.n_test),
        "seconds": seconds,
    }


def nongated_ensemble(S: Mapping, seeds_key: str = "variant_seeds") -> TrainedEnsemble:
    """The non-gated AO on the chapter's one-to-one task, trained once and cached.

    Settings read: ``seed``, ``S[seeds_key]`` networks, and the task and step budget of the chapter's
    AO (``n_words``, ``min_len``, ``max_len``, ``pad_to``, ``steps``, ``compress_lr``).
    """
    from .. import cache, device
    from .. import progress as _progress
    from .analysis import task_from_settings, train_config_from_settings
    from .train import member_seeds

    task = task_from_settings(S)
    train = train_config_from_settings(S, "AO")
    seeds = member_seeds(int(S["seed"]), int(S[seeds_key]))
    model_cfg = ModelConfig(arch="AO", in_vocab=len(task.in_vocab), out_vocab=len(task.out_vocab))
    key = {"model": model_cfg.as_dict(), "layer": "tanh", "task": task.config(), "seeds": seeds,
           "train": train.as_dict()}
    with device.train_threads():  # small matrices: one intra-op thread avoids OpenMP contention
        payload = cache.cached(
            "aitken2021-nongated", key,
            lambda: train_nongated(model_cfg, task, seeds, train, progress=_progress.progress),
            scope=NONGATED_SCOPE)
    model = NonGatedAO(ModelConfig.from_dict(payload["model"]), payload["seeds"])
    model.load_state_dict(payload["state"])
    model.eval()
    model.requires_grad_(False)  # analysis only from here on
    return TrainedEnsemble(model=model, task=task, seeds=list(payload["seeds"]), train_config=train,
                           history=payload["history"], test=payload["test"],
                           seconds=float(payload["seconds"]), payload=payload)
