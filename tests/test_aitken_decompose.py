"""mu + chi + delta reproduces every state; the nine terms sum to the alignment."""

import torch

from companion.aitken2021.decompose import (
    TERM_NAMES,
    alignment_terms,
    decompose,
    decompose_decoder,
    decompose_encoder,
    first_pad_mask,
)
from companion.aitken2021.models import ModelConfig, Seq2Seq
from companion.aitken2021.tasks import OneToOne


def _trace(arch="AED", E=2, n=24, B=64):
    task = OneToOne(min_len=5, max_len=8)
    model = Seq2Seq(ModelConfig(arch=arch, in_vocab=4, out_vocab=4, hidden=n), list(range(E)))
    data = task.sample(B, torch.Generator().manual_seed(0))
    with torch.no_grad():
        return model, data, model(data, mode="greedy")


def test_first_pad_mask():
    tok = torch.tensor([[0, 1, 3, 3, 3], [2, 3, 3, 3, 3]])
    assert first_pad_mask(tok, 3).tolist() == [[True, True, True, False, False],
                                               [True, True, False, False, False]]


def test_reconstruction_exact_and_estimator():
    for arch in ("VED", "AED", "AO"):
        model, data, tr = _trace(arch)
        for comp in (decompose_encoder(tr, data), decompose_decoder(tr, data)):
            assert torch.allclose(comp.reconstruct(), comp.states, atol=1e-6)
            w = comp.valid.unsqueeze(-1).float()
            # mu is the mean of valid states per step
            mu = (comp.states * w).sum(1) / w.sum(1).clamp_min(1)
            assert torch.allclose(comp.mu, mu, atol=1e-6)
            # delta has zero mean within every (label) class over valid states
            for k in range(comp.chi.shape[1]):
                m = ((comp.labels == k) & comp.valid).unsqueeze(-1).float()
                if m.sum() > 0:
                    assert torch.allclose((comp.delta * m).sum((1, 2)) / m.sum((1, 2)).clamp_min(1),
                                          torch.zeros(1), atol=1e-5)


def test_decoder_labels_use_previous_prediction_and_bos():
    model, data, tr = _trace("AED")
    dec = decompose_decoder(tr, data)
    V = len(data.out_vocab)
    assert bool((dec.labels[..., 0] == V).all())  # <BoS>
    assert torch.equal(dec.labels[..., 1:], tr.predictions[..., :-1])
    assert dec.label_names[-1] == "<BoS>"


def test_known_answer_recovers_components():
    # states built as mu_t + chi_x exactly (chi centred per step) -> recovered exactly, delta = 0
    g = torch.Generator().manual_seed(5)
    E, B, L, n, K = 1, 400, 6, 3, 3
    labels = torch.randint(0, K, (E, B, L), generator=g)
    mu = torch.randn(E, L, n, generator=g)
    chi = torch.randn(E, K, n, generator=g)
    states = mu.unsqueeze(1) + chi[0][labels]
    comp = decompose(states, labels, torch.ones(E, B, L, dtype=torch.bool), K)
    # recovered chi equals the true one up to the label-frequency-weighted shift at each step
    assert torch.allclose(comp.reconstruct(), states, atol=1e-6)
    assert comp.delta.abs().max() < 0.2  # only sampling imbalance remains
    assert torch.allclose(comp.chi - comp.chi.mean(1, keepdim=True), chi - chi.mean(1, keepdim=True),
                          atol=0.2)


def test_nine_terms_sum_to_alignment():
    for arch in ("AED", "AO"):
        model, data, tr = _trace(arch)
        enc, dec = decompose_encoder(tr, data), decompose_decoder(tr, data)
        terms = alignment_terms(enc, dec, model.attn)
        assert tuple(terms) == TERM_NAMES and len(terms) == 9
        total = sum(terms.values())
        assert torch.allclose(total, tr.alignment, rtol=1e-4, atol=1e-4)
        # temporal-temporal is the same for every sample
        assert torch.allclose(terms["temp_temp"][:, 0], terms["temp_temp"][:, 1])


def test_rest_dimension_known_answer():
    # network 0: h - mu spreads over one axis, network 1 over three, each with its own mu; the
    # participation ratio of equal-variance axes is their number, and a mixed-up mu would shift it
    from types import SimpleNamespace

    from companion.aitken2021.checks import rest_dimension
    from companion.aitken2021.decompose import Components

    B, L, n = 6, 2, 4
    eye = torch.eye(n)
    rest = torch.zeros(2, B, L, n)
    for b in range(B):
        sign = 1.0 if b % 2 == 0 else -1.0
        rest[0, b, :] = sign * eye[0]
        rest[1, b, :] = sign * eye[b // 2]  # +-e0, +-e1, +-e2
    mu = torch.stack([torch.full((L, n), 5.0), torch.arange(L * n, dtype=torch.float32).reshape(L, n)])
    valid = torch.ones(2, B, L, dtype=torch.bool)

    def side():
        return Components(states=mu.unsqueeze(1) + rest, mu=mu, chi=torch.zeros(2, 1, n),
                          labels=torch.zeros(2, B, L, dtype=torch.long), valid=valid, delta=rest,
                          label_names=["x"])

    got = rest_dimension(SimpleNamespace(enc=side(), dec=side()))
    assert got.shape == (2,)
    assert abs(got[0] - 1.0) < 1e-6 and abs(got[1] - 3.0) < 1e-6
