"""Known answers for the beyond-one-to-one analyses: rank correlation, temporal offset, dictionary."""

import math

import torch

from companion.aitken2021 import beyond, enfr, escan
from companion.aitken2021.analysis import Analysis
from companion.aitken2021.decompose import decompose


def test_spearman():
    assert abs(beyond.spearman([1, 2, 3, 4], [10, 20, 30, 40]) - 1) < 1e-12
    assert abs(beyond.spearman([1, 2, 3, 4], [4, 3, 2, 1]) + 1) < 1e-12
    assert abs(beyond.spearman([1, 2, 3, 4, 5], [1, 2, 2, 4, 5]) - 0.9747) < 1e-3  # ties get average ranks
    assert math.isnan(beyond.spearman([1, 2], [1, 2]))


def _circle(angles):
    return torch.stack([torch.cos(angles), torch.sin(angles)], -1)


def test_temporal_offset_finds_a_known_shift():
    """Temporal components on a circle, decoder one step ahead: the argmax offset is +1 everywhere."""
    data = escan.generate(40, seed=0)
    B, S = data.inputs.shape
    T = data.targets.shape[1]
    enc_states = _circle(0.4 * torch.arange(S).float()).expand(1, B, S, 2).contiguous()
    dec_states = _circle(0.4 * (torch.arange(T).float() + 1)).expand(1, B, T, 2).contiguous()
    ones_e, ones_d = torch.ones(1, B, S, dtype=torch.bool), torch.ones(1, B, T, dtype=torch.bool)
    enc = decompose(enc_states, data.inputs.unsqueeze(0), ones_e, len(data.in_vocab))
    dec = decompose(dec_states, data.targets.unsqueeze(0), ones_d, len(data.out_vocab))
    a = Analysis(ensemble=None, data=data, trace=None, enc=enc, dec=dec)
    off = beyond.temporal_offset(a, min_count=1)
    ok = off["t_ok"] & (torch.arange(T) < S - 1)
    assert (off["argmax_offset"][ok] == 1).all()
    assert torch.allclose(torch.nan_to_num(off["normalised"]).amax(-1)[ok].double(), torch.ones(int(ok.sum())).double())
    assert torch.allclose(off["avg_offset_input"].double(), escan.find_scan_offset(data.inputs, data.in_index).double(), equal_nan=True)


def test_dice_dictionary(tmp_path):
    lines = ["The cat.\tLe chat.", "A cat.\tUn chat.", "The dog.\tLe chien.", "A dog.\tUn chien.",
             "The cat sleeps.\tLe chat dort.", "The dog sleeps.\tLe chien dort."]
    p = tmp_path / "pairs.tsv"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    task = enfr.EnFrTask(data_path=str(p), test_fraction=0.2, min_count=1)
    pairs = {x: y for x, y, _ in beyond.dice_dictionary(task, n_words=10, min_dice=0.5)}
    for x, y in (("cat", "chat"), ("dog", "chien")):
        if x in {w for e, _ in task.corpus.train_tokens for w in e}:
            assert pairs.get(x) == y


def test_interesting_steps():
    ex = {"targets": list("abcdef"), "expected": torch.tensor([0, 2, 1, 3, 5, 4])}
    steps = beyond.interesting_steps(ex, 3)
    assert set(steps) <= {1, 2, 4, 5} and len(steps) >= 2
