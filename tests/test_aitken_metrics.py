"""Metrics on cases with known answers."""

import math

import torch

from companion.aitken2021 import metrics as M
from companion.aitken2021.decompose import TERM_NAMES, decompose
from companion.aitken2021.models import ModelConfig, Seq2Seq
from companion.aitken2021.tasks import OneToOne


def _data(n=50, seed=0, **kw):
    return OneToOne(min_len=5, max_len=8, **kw).sample(n, torch.Generator().manual_seed(seed))


def test_accuracy_counts_valid_positions_only():
    d = _data()
    pred = d.targets.clone().unsqueeze(0)
    w, p = M.accuracy_from_logits(pred, d)
    assert float(w) == 1.0 and float(p) == 1.0
    # errors on pad positions after the EOS are not counted
    bad = pred.clone()
    after = torch.arange(d.targets.shape[1]) > d.out_index[:, None]
    bad[0][after] = 0
    assert float(M.accuracy_from_logits(bad, d)[0]) == 1.0
    # one wrong valid word in sample 0 -> phrase accuracy drops by 1/n
    bad = pred.clone()
    bad[0, 0, 0] = (bad[0, 0, 0] + 1) % 3
    w, p = M.accuracy_from_logits(bad, d)
    assert math.isclose(float(p), 1 - 1 / 50)
    assert math.isclose(float(w), 1 - 1 / float(d.target_valid.sum()))


def test_argmax_agreement_diagonal_and_reversed():
    d = _data()
    B, T = d.targets.shape
    S = d.inputs.shape[1]
    eye = torch.eye(T, S).expand(1, B, T, S)
    assert float(M.attention_argmax_agreement(eye, d.meta["expected_source"], d)) == 1.0
    r = _data(reverse=True)
    assert float(M.attention_argmax_agreement(eye, r.meta["expected_source"], r)) < 0.5
    exp = r.meta["expected_source"].clamp(min=0)
    anti = torch.nn.functional.one_hot(exp, S).float().unsqueeze(0)
    assert float(M.attention_argmax_agreement(anti, r.meta["expected_source"], r)) == 1.0


def test_variance_and_participation_ratio():
    g = torch.Generator().manual_seed(0)
    B, L, n = 4000, 3, 6
    states = torch.zeros(1, B, L, n)
    states[0, :, 0, :2] = torch.randn(B, 2, generator=g)       # 2 equal dims -> PR 2, var 2
    states[0, :, 1, :] = torch.randn(B, n, generator=g) * 2.0  # 6 equal dims -> PR 6, var 24
    states[0, :, 2, 0] = torch.randn(B, generator=g)           # 1 dim -> PR 1
    comp = decompose(states, torch.zeros(1, B, L, dtype=torch.long), torch.ones(1, B, L, dtype=torch.bool), 1)
    r = M.variance_and_pr(comp)
    assert torch.allclose(r["pr"][0], torch.tensor([2.0, 6.0, 1.0]), rtol=0.05)
    assert torch.allclose(r["variance"][0], torch.tensor([2.0, 24.0, 1.0]), rtol=0.06)


def test_norm_ratio_word_variance_explained():
    g = torch.Generator().manual_seed(1)
    E, B, L, n, K = 1, 3000, 4, 5, 2
    mu = torch.randn(E, L, n, generator=g) * 10
    labels = torch.randint(0, K, (E, B, L), generator=g)
    chi = torch.tensor([[1.0, 0, 0, 0, 0], [-1.0, 0, 0, 0, 0]])
    states = mu.unsqueeze(1) + chi[labels]
    comp = decompose(states, labels, torch.ones(E, B, L, dtype=torch.bool), K)
    # ||h - mu|| = 1 for every state
    assert torch.allclose(M.norm_ratio(comp), mu.norm(dim=-1).mean(-1), rtol=1e-3)
    assert torch.allclose(M.explained_variance(comp), torch.ones(1), atol=1e-4)
    wv = M.word_variance(comp, labels[0], K)
    # removing mu leaves no within-word variance
    assert float(wv["mean_ratio"]) < 1e-6 and bool((wv["full"] > 10).all())


def test_term_fractions_known_terms():
    B, T, S = 3, 5, 5
    d = OneToOne(min_len=4, max_len=4, pad_to=5).sample(B, torch.Generator().manual_seed(0))
    terms = {k: torch.zeros(1, B, T, S) for k in TERM_NAMES}
    terms["temp_temp"] = torch.full((1, B, T, S), 3.0)
    terms["inp_inp"] = torch.full((1, B, T, S), -1.0)
    alignment = sum(terms.values()) + torch.eye(T, S)  # ties broken toward the diagonal

    class _Tr:
        input_valid = d.input_valid.unsqueeze(0)

    r = M.term_fractions(terms, alignment, _Tr, d, k=2)
    mean = r["mean"][0]
    assert math.isclose(float(mean[TERM_NAMES.index("temp_temp")]), 0.75, rel_tol=1e-6)
    assert math.isclose(float(mean[TERM_NAMES.index("inp_inp")]), 0.25, rel_tol=1e-6)


def test_readout_match_and_angles():
    angle = torch.tensor([[[10.0, 80.0], [90.0, 20.0]]])  # rows: output words, cols: input words
    assert float(M.readout_match(angle, [(0, 0), (1, 1)])) == 1.0
    assert float(M.readout_match(angle, [(0, 1), (1, 0)])) == 0.0


def test_own_attention_substitution_reproduces_logits():
    model = Seq2Seq(ModelConfig(arch="AED", in_vocab=4, out_vocab=4, hidden=16), [3, 4])
    d = _data(40)
    with torch.no_grad():
        tr = model(d, mode="greedy")
        assert torch.allclose(model.logits_from_attention(tr, tr.attention), tr.logits, atol=1e-5)
        r = M.aam_approximation(model, tr, d)
    # the AAM of identical attention would be exact; here just check ranges
    assert bool(((r["tv_distance"] >= 0) & (r["tv_distance"] <= 1)).all())
    assert r["aam"].shape == (2, d.targets.shape[1], d.inputs.shape[1])


def test_participation_ratio_counts_dimensions():
    g = torch.Generator().manual_seed(0)
    line = torch.randn(200, 1, generator=g) * torch.tensor([[1.0, 2.0, 0.0, 0.0]])
    assert abs(float(M.participation_ratio(line)) - 1.0) < 1e-5
    square = torch.tensor([[1.0, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0]])
    assert abs(float(M.participation_ratio(square)) - 2.0) < 1e-5
    batched = M.participation_ratio(torch.stack([line[:4, :3], square]))
    assert batched.shape == (2,)


def test_temporal_argmax_diagonal():
    eye = torch.eye(6).unsqueeze(0) * 5
    assert float(M.temporal_argmax_diagonal(eye, 6)) == 1.0
    shifted = torch.roll(eye, 1, dims=-1)  # peaks at s = t + 1
    assert float(M.temporal_argmax_diagonal(shifted, 6)) == 0.0
    assert float(M.temporal_argmax_diagonal(torch.cat([eye, shifted]), 3)[0]) == 1.0


def test_readout_angles_on_and_off_the_translation_pairs():
    angle = torch.tensor([[[10.0, 80.0, 0.0], [90.0, 20.0, 0.0]]])  # 2 output words x (2 words + pad)
    r = M.readout_angles_on_off(angle, [(0, 0), (1, 1)])
    assert float(r["on"]) == 15.0 and float(r["off"]) == 85.0
