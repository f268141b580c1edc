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


def test_one_step_network_fails_the_accuracy_claim(untrained):
    ens, _ = untrained
    assert _verdict("tab-accuracy/aed-accuracy", values=C.test_phrase_accuracy(ens)) == "fail"


def test_one_step_network_fails_the_diagonal_claim(untrained):
    _, a = untrained
    assert _verdict("fig2/diagonal", values=C.diagonal_share(a)) == "fail"


def test_one_step_network_fails_the_norm_ratio_claim(untrained):
    # the average-attention claim of this chapter was merged into Figure 5's comparison across tasks
    _, a = untrained
    assert _verdict("fig2/norm-ratio", values=C.norm_ratio(a)) == "fail"
