"""What each chapter of this paper trains, declared without executing its notebook.

:data:`DECLARATIONS` maps a chapter id to ``declare(S) -> [Spec]`` (``S``: the chapter's resolved
settings). Each declaration is built from the spec makers the chapter's own code fetches through
(:func:`.analysis.one_to_one_spec`, :func:`.ensembles.escan_spec`, :func:`.ensembles.enfr_spec`,
and below the non-gated and learned-attention ones), so a build can train every network as its own
task first and the notebook then only loads; ``tests/test_netspec.py`` runs chapters and checks that
every entry they touch is declared. A chapter missing here trains inside its notebook, as before.

The non-gated and learned-attention spec makers describe the entries that
:func:`.nongated.nongated_ensemble` and :func:`.learned.learned_ensemble` store, and fetch through
those functions. Their configurations are spelled out here rather than factored out of those
modules because each module is part of its own entries' code fingerprint: editing it would retrain
the networks. The tests pin the keys computed here to the keys those functions log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

from .. import cache, netspec
from . import ensembles, specs
from .analysis import one_to_one_spec, task_from_settings, train_config_from_settings
from .tasks import OneToOne
from .train import TrainConfig, member_seeds

O2O_VARIANTS = (dict(reverse=True), dict(rules=("prev0",)))


def nongated_spec(S: Mapping, seeds_key: str = "variant_seeds") -> netspec.Spec:
    """The spec of :func:`.nongated.nongated_ensemble` ``(S, seeds_key)``."""
    from .models import ModelConfig
    from .nongated import NONGATED_SCOPE, nongated_ensemble

    task = task_from_settings(S)
    train = train_config_from_settings(S, "AO")
    seeds = member_seeds(int(S["seed"]), int(S[seeds_key]))
    model_cfg = ModelConfig(arch="AO", in_vocab=len(task.in_vocab), out_vocab=len(task.out_vocab))
    cfg = {"model": model_cfg.as_dict(), "layer": "tanh", "task": task.config(), "seeds": seeds,
           "train": train.as_dict()}
    return netspec.Spec(kind="aitken2021-nongated", config=cfg, scope=NONGATED_SCOPE,
                        description=(f"one-to-one non-gated AO x{len(seeds)} (seed {seeds[0]}+), "
                                     f"{train.steps} steps"),
                        cost_s=specs.cost("nongated", train.steps, len(seeds), cfg["task"]),
                        fetch=partial(nongated_ensemble, S, seeds_key))


def learned_spec(S, attention: str = "qkv") -> netspec.Spec:
    """The spec of :func:`.learned.learned_ensemble` ``(S, attention)`` (QKV or multi-head AED)."""
    from .learned import learned_ensemble

    if attention == "qkv":
        opts = {"qk_size": S.qk_size}
    elif attention == "mh":
        opts = {"heads": S.heads}
    else:
        raise ValueError(f"attention must be 'qkv' or 'mh', got {attention!r}")
    opts["code"] = cache.fingerprint(("aitken2021/learned",))
    task = OneToOne(n_words=S.n_words, min_len=S.min_len, max_len=S.max_len)
    options = {"attention": attention, "attention_options": tuple(opts.items())}
    name = "QKV" if attention == "qkv" else "multi-head"
    return specs.ensemble_spec("AED", task, seed=S.seed, n_seeds=S.n_seeds, train=TrainConfig(steps=S.steps),
                               model_options=options, description=f"one-to-one {name} AED x{S.n_seeds}",
                               fetch=partial(learned_ensemble, S, attention), split=True)


def _one_to_one(archs, variants=False, nongated=False) -> Callable:
    def declare(S) -> list[netspec.Spec]:
        out = [one_to_one_spec(S, arch) for arch in archs]
        if variants:
            out += [one_to_one_spec(S, "AED", **v) for v in O2O_VARIANTS]
        if nongated:
            out.append(nongated_spec(S, "nongated_seeds"))
        return out
    return declare


def _beyond(escan=True, enfr=False, one_to_one=False) -> Callable:
    def declare(S) -> list[netspec.Spec]:
        out = [ensembles.escan_spec(S, arch) for arch in ensembles.ARCHS] if escan else []
        if enfr and not ensembles.enfr_available(S):  # without the corpus the chapter trains none
            out += [ensembles.enfr_spec(S, arch) for arch in ensembles.ARCHS]
        if one_to_one:
            out += [one_to_one_spec(ensembles.one_to_one_settings(S, arch), arch) for arch in ensembles.ARCHS]
        return out
    return declare


#: chapter id -> declare(S) -> [Spec]; every chapter of this paper is declared (fig7 trains nothing)
DECLARATIONS: dict[str, Callable] = {
    "fig1": _one_to_one(("AED",)),
    "fig2": _one_to_one(("AED",)),
    "fig3": _one_to_one(("AO",)),
    "fig4": _one_to_one(("VED", "AED", "AO")),
    "tab-accuracy": _one_to_one(("VED", "AED", "AO"), variants=True),
    "app-one-to-one": _one_to_one(("AED",), variants=True, nongated=True),
    "fig5": _beyond(enfr=True, one_to_one=True),
    "fig6": _beyond(one_to_one=True),
    "tab-accuracy-beyond": _beyond(enfr=True),
    "fig7": lambda S: [],
    "app-learned-attention": lambda S: [learned_spec(S, "qkv")],
    "app-multihead": lambda S: [learned_spec(S, "mh")],
}
