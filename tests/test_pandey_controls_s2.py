"""Broken-configuration controls for the synthetic table claims: the real pipeline (data, batched
training, per-run frame, the registry's rules) run at tiny scale with a setting that must not reproduce
the paper. If one of these claims passed here, its rule could not tell a working run from a broken one."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from companion import registry
from companion.pandey2022 import data, models, studies, tables, train

SEEDS = (0, 1, 2, 3, 4)


def _runs(d, layer: str = "zeroth", k: float = 0.0, epochs: int = 1, n: int = 500):
    """Train A_1 on (the first ``n`` mosaics of) ``d`` and return the per-run frame the chapters use."""
    d = data.subset(d, n)
    cfg = train.ensemble_config(
        "d1",
        "A_1",
        layer=studies.LAYER_IDS[layer],
        seeds=SEEDS,
        ks=(k,),
        epochs=epochs,
        eval_every=epochs,
        dtype="float32",
    )
    ens = train.build(cfg)
    out = train.train_ensemble(
        ens, d, k=k, lr=0.001, max_epochs=epochs, eval_every=epochs, show_progress=False
    )
    out["members"] = {
        key: [m[key] for m in train.members(cfg)] for key in ("seed", "k", "lr", "focus_hidden", "cls_hidden")
    }
    out["config"] = cfg
    return tables.member_frame(out)


@pytest.fixture(scope="module")
def d1():
    return data.load("d1")


def test_shuffled_labels_fail_the_accuracy_claim(d1):
    """Labels shuffled against the foreground: the training accuracy cannot reach the paper's."""
    g = torch.Generator().manual_seed(0)
    broken = dataclasses.replace(d1, y_train=d1.y_train[torch.randperm(len(d1.y_train), generator=g)])
    runs = _runs(broken, epochs=3)
    v = registry.decide(
        registry.get("t-d1/zeroth-acc"), values=studies.values(runs, "acc", layer="zeroth", k=0)
    )
    assert v.status == "fail", v


def test_one_epoch_fails_the_ftpt_claim(d1):
    """One epoch of training: the attention is still near uniform, so FTPT is far below the paper's."""
    runs = _runs(d1, epochs=1)
    v = registry.decide(
        registry.get("t-d1/zeroth-ftpt"), values=studies.values(runs, "ftpt", layer="zeroth", k=0)
    )
    assert v.status == "fail", v


def test_one_epoch_does_not_pass_the_entropy_failure_claim(d1):
    """One epoch at k = 0 and at k = 0.02: no run trains in either, so 'fails more often' must not pass."""
    runs = tables.pd.concat([_runs(d1, epochs=1), _runs(d1, k=0.02, epochs=1)], ignore_index=True)
    v = registry.decide(
        registry.get("t-d1/entropy-fails-zeroth"),
        **studies.rates(runs, dict(layer="zeroth", k=0.02), dict(layer="zeroth", k=0)),
    )
    assert v.status != "pass", v


def test_uniform_attention_fails_the_ftpt_claim(d1):
    """Attention replaced by uniform weights (a focus net with lr 0 that outputs 0): the argmax is always
    the first segment, so FTPT is at most a ninth of the mosaics, far below the authors' 74.7 %, however
    well the classifier fits. The dataset-1 FTPT claim (which also owns the final FFPT these runs end
    with; the plateau claim of the training-curve chapter was merged into it) must fail with the
    attention switched off."""
    d = data.subset(d1, 500)
    spec = models.arch("A_1")
    ens = models.Ensemble([spec] * len(SEEDS), list(SEEDS), torch.float32)
    lr = torch.full((len(SEEDS),), 0.001, dtype=torch.float64)
    opt_c = train.BatchedOptimiser(ens.cls_params(), "adam", lr)
    gens = [torch.Generator().manual_seed(s) for s in SEEDS]
    active = torch.ones(len(SEEDS), dtype=torch.bool)
    frozen = train.BatchedOptimiser(ens.focus_params(), "adam", torch.zeros_like(lr))
    x = d.x_train.float()
    for _ in range(12):
        train.run_epoch(ens, x, d.y_train, torch.zeros(len(SEEDS)), "softmax", gens, frozen, opt_c, active)
    m = train.evaluate(ens, x, d.y_train, d.fore_train, "softmax", torch.zeros(len(SEEDS)))
    v = registry.decide(registry.get("t-d1/zeroth-ftpt"), values=m["ftpt"].numpy())
    assert v.status == "fail", (v, m["acc"])
