"""Broken configurations: the real one-to-one pipeline, trained for one step, must fail the claims.

A claim that cannot fail is not evidence. These controls run the chapters' own path (settings ->
cached ensemble -> analysis -> the claim's statistic -> the registered rule) on a tiny task with a
network trained for a single step, and require a ``fail`` verdict.
"""

import pytest

from companion import config, registry
from companion.aitken2021 import analysis as A
from companion.aitken2021 import checks as C


@pytest.fixture(scope="module")
def untrained():
    S = config.resolve("fig2", profile="smoke", steps=1, n_seeds=3, n_words=3, min_len=4, max_len=6,
                       n_analysis=60)
    ens = A.one_to_one_ensemble(S, "AED")
    return ens, A.analyse(ens, n=S.n_analysis, seed=S.seed)


def _verdict(cid, **data):
    return registry.decide(registry.get(cid), **data).status


def test_one_step_networks_fail_the_accuracy_precondition():
    # The precondition is a rate over networks: none of twelve solving is the fewest that can fail it
    # (Wilson upper end 0.24 < 0.25); none of three stays undecided.
    S = config.resolve("fig2", profile="smoke", steps=1, n_seeds=12, n_words=3, min_len=4, max_len=6)
    ens = A.one_to_one_ensemble(S, "AED")
    assert _verdict("tab-accuracy/aed-accuracy", values=C.solves_task(ens)) == "fail"
    assert _verdict("tab-accuracy/aed-accuracy", values=C.solves_task(ens)[:3]) == "undecided"


def test_one_step_network_fails_the_diagonal_claim(untrained):
    _, a = untrained
    assert _verdict("fig2/diagonal", values=C.diagonal_share(a)) == "fail"


def test_one_step_network_fails_the_norm_ratio_claim(untrained):
    # the average-attention claim of this chapter was merged into Figure 5's comparison across tasks
    _, a = untrained
    assert _verdict("fig2/norm-ratio", values=C.norm_ratio(a)) == "fail"
