"""Known answers for the beyond-one-to-one analyses: rank correlation, temporal offset, dictionary,
diagonal share, shuffled sources."""

import math

import torch

from companion.aitken2021 import comparison, enfr, escan, offdiagonal, translation
from companion.aitken2021.analysis import Analysis
from companion.aitken2021.decompose import decompose


def test_spearman():
    assert abs(comparison.spearman([1, 2, 3, 4], [10, 20, 30, 40]) - 1) < 1e-12
    assert abs(comparison.spearman([1, 2, 3, 4], [4, 3, 2, 1]) + 1) < 1e-12
    # ties get average ranks
    assert abs(comparison.spearman([1, 2, 3, 4, 5], [1, 2, 2, 4, 5]) - 0.9747) < 1e-3
    assert math.isnan(comparison.spearman([1, 2], [1, 2]))


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
    off = offdiagonal.temporal_offset(a, min_count=1)
    ok = off["t_ok"] & (torch.arange(T) < S - 1)
    assert (off["argmax_offset"][ok] == 1).all()
    peaks = torch.nan_to_num(off["normalised"]).amax(-1)[ok].double()
    assert torch.allclose(peaks, torch.ones(int(ok.sum())).double())
    curve = escan.find_scan_offset(data.inputs, data.in_index).double()
    assert torch.allclose(off["avg_offset_input"].double(), curve, equal_nan=True)
    st = offdiagonal.offset_stats(off)
    assert st["early"].shape == (1,) and torch.isfinite(st["gap"]).all()


def test_dice_dictionary(tmp_path):
    lines = ["The cat.\tLe chat.", "A cat.\tUn chat.", "The dog.\tLe chien.", "A dog.\tUn chien.",
             "The cat sleeps.\tLe chat dort.", "The dog sleeps.\tLe chien dort."]
    p = tmp_path / "pairs.tsv"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    task = enfr.EnFrTask(data_path=str(p), test_fraction=0.2, min_count=1)
    pairs = {x: y for x, y, _ in translation.dice_dictionary(task, n_words=10, min_dice=0.5)}
    for x, y in (("cat", "chat"), ("dog", "chien")):
        if x in {w for e, _ in task.corpus.train_tokens for w in e}:
            assert pairs.get(x) == y


def test_interesting_steps():
    ex = {"targets": list("abcdef"), "expected": torch.tensor([0, 2, 1, 3, 5, 4])}
    steps = offdiagonal.interesting_steps(ex, 3)
    assert set(steps) <= {1, 2, 4, 5} and len(steps) >= 2


def test_diagonal_share_counts_argmax_on_s_equals_t():
    data = escan.generate(20, seed=1)
    B, S = data.inputs.shape
    T = data.targets.shape[1]
    eye = torch.zeros(T, S)
    eye[torch.arange(min(S, T)), torch.arange(min(S, T))] = 1.0
    att = eye.expand(2, B, T, S).clone()
    att[1] = att[1].roll(1, dims=-1)  # member 1 attends one step late everywhere
    a = Analysis(ensemble=None, data=data, trace=type("T", (), {"attention": att})(), enc=None, dec=None)
    share = offdiagonal.diagonal_share(a)
    assert share[0] == 1.0 and share[1] == 0.0


def test_source_shuffled_keeps_targets_and_moves_every_source():
    data = escan.generate(30, seed=2)
    sh = translation.source_shuffled(data)
    assert torch.equal(sh.targets, data.targets) and torch.equal(sh.out_index, data.out_index)
    moved = [(sh.inputs[i] != data.inputs[i]).any() or sh.in_index[i] != data.in_index[i]
             for i in range(len(data))]
    assert sum(bool(m) for m in moved) >= len(data) - 3  # identical commands can coincide by chance
    assert sorted(sh.in_index.tolist()) == sorted(data.in_index.tolist())
