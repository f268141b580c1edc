"""Broken-configuration controls for the learned-attention and eSCAN claims.

Each test runs the chapter's real pipeline at tiny scale with training cut to one step, then
decides registered claims with the registry's own rules: a network that has not learnt the task
must not pass a claim about what trained networks do. Three networks each, so the rules can decide.
"""

from types import SimpleNamespace

import torch

from companion import registry
from companion.aitken2021 import ensembles, learned, translation
from companion.aitken2021.analysis import analyse


def _verdict(cid, **data):
    return registry.decide(registry.get(cid), **data).status


def test_one_step_qkv_networks_fail_the_learned_attention_claims():
    S = SimpleNamespace(seed=1, n_seeds=3, steps=1, n_words=3, min_len=4, max_len=6, qk_size=32,
                        n_analysis=100)
    ens = learned.learned_ensemble(S, "qkv")
    a = analyse(ens, n=S.n_analysis, seed=S.seed)
    pt = learned.projected_temporal(a, min_count=1)
    # a precondition over three networks can only fail with more of them (Wilson); it must not pass
    solves = [bool(x >= 0.99) for x in a.accuracy["phrase"]]
    assert not any(solves)
    assert _verdict("app-learned-attention/solves-task", values=solves) != "pass"
    assert _verdict("app-learned-attention/temporal-align-after-projection",
                    values=pt["diag_after"]) == "fail"
    # Not a control: one Adam step at lr 0.1 already turns each readout row towards its input's
    # value-mapped component on this three-word task, so "inputs-along-readouts-after-values"
    # passes here (the chapter says so).


def test_one_step_escan_networks_fail_the_readout_claim():
    S = SimpleNamespace(seed=1, escan_seeds=3, escan_steps_aed=1, escan_steps_ao=1, n_analysis=100,
                        profile="smoke")
    a = analyse(ensembles.escan_ensemble(S, "AED"), n=S.n_analysis, seed=S.seed)
    share = (translation.readout_rank(a, ensembles.ESCAN_PAIRS)["rank"] == 0).double().mean(-1)
    assert share.shape == (3,) and torch.isfinite(share).all()
    assert _verdict("fig5/escan-readout-aed", values=share) == "fail"
