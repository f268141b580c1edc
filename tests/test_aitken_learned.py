"""Learned (QKV, multi-head) attention: shapes, ensemble = single runs, and the decomposition sums back."""

import math

import pytest
import torch

from companion.aitken2021 import learned
from companion.aitken2021.models import ModelConfig, Seq2Seq
from companion.aitken2021.tasks import OneToOne


@pytest.fixture(autouse=True)
def _one_thread():
    """Tiny matrices: one intra-op thread avoids OpenMP contention on a shared CPU."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def _model(attention, seeds, **opts):
    task = OneToOne(n_words=3, min_len=4, max_len=6)
    cfg = ModelConfig(arch="AED", in_vocab=len(task.in_vocab), out_vocab=len(task.out_vocab), hidden=16,
                      attention=attention, attention_options=tuple(opts.items()))
    return Seq2Seq(cfg, seeds), task


def test_qkv_matches_its_definition():
    model, task = _model("qkv", [3], qk_size=8)
    data = task.sample(5, torch.Generator().manual_seed(0))
    tr = model(data, mode="greedy")
    att = model.attn
    assert isinstance(att, learned.QKVAttention)
    assert att.W_Q.shape == (1, 16, 8) and att.W_V.shape == (1, 16, 16)
    enc, dec = tr.encoder_states[0], tr.decoder_states[0]  # (B, S, n), (B, T, n)
    a = (dec @ att.W_Q[0]) @ (enc @ att.W_K[0]).transpose(1, 2) / math.sqrt(16)
    assert torch.allclose(tr.alignment[0], a, atol=1e-5)
    w = torch.softmax(a.masked_fill(~tr.input_valid[0][:, None, :], -1e4), -1)
    assert torch.allclose(tr.attention[0], w, atol=1e-6)
    assert torch.allclose(tr.context[0], w @ (enc @ att.W_V[0]), atol=1e-5)
    # Glorot-normal scale (fan_in + fan_out = 16 + 8)
    assert abs(att.W_Q.std().item() - math.sqrt(2 / 24)) < 0.08


def test_ensemble_equals_single_members():
    for attention in ("qkv", "mh"):
        big, task = _model(attention, [11, 12, 13])
        data = task.sample(4, torch.Generator().manual_seed(1))
        tr = big(data, mode="greedy")
        for e, seed in enumerate([11, 12, 13]):
            one, _ = _model(attention, [seed])
            t1 = one(data, mode="greedy")
            assert torch.allclose(tr.logits[e], t1.logits[0], atol=1e-5), attention
            assert torch.allclose(tr.attention[e], t1.attention[0], atol=1e-6), attention


def test_multihead_heads_and_mean():
    model, task = _model("mh", [5], heads=3)
    data = task.sample(6, torch.Generator().manual_seed(2))
    tr = model(data, mode="teacher")
    att = model.attn
    per = att.head_weights(tr.encoder_states, tr.decoder_states, tr.input_valid)
    assert per.shape == (1, 6, 3) + tr.attention.shape[2:]
    assert torch.allclose(per.mean(2), tr.attention, atol=1e-6)
    assert torch.allclose(per.sum(-1), torch.ones_like(per.sum(-1)), atol=1e-5)
    # the context equals W_O applied to the heads' contexts, i.e. the sum of the effective value maps
    M = att.head_value_maps()  # (E, H, n, n)
    ctx = sum(torch.einsum("ebts,ebsn,enm->ebtm", per[:, :, k], tr.encoder_states, M[:, k]) for k in range(3))
    assert torch.allclose(ctx, tr.context, atol=1e-5)


def _split(states, tokens, valid, n_tokens):
    """mu (per step), chi (per token), delta: a minimal decomposition for the test."""
    v = valid.unsqueeze(-1).float()
    mu = (states * v).sum(1, keepdim=True) / v.sum(1, keepdim=True).clamp(min=1)  # (E, 1, L, n)
    dev = (states - mu) * v
    onehot = torch.nn.functional.one_hot(tokens.clamp(min=0), n_tokens).float() * v  # (E, B, L, K)
    chi_tab = torch.einsum("eblk,ebln->ekn", onehot, dev) / onehot.sum((1, 2))[..., None].clamp(min=1)
    chi = torch.einsum("eblk,ekn->ebln", onehot, chi_tab)
    mu = mu.expand_as(states)
    return {"mu": mu, "chi": chi, "delta": states - mu - chi}


def test_learned_alignment_terms_sum_to_the_full_alignment():
    model, task = _model("qkv", [7], qk_size=8)
    data = task.sample(32, torch.Generator().manual_seed(3))
    tr = model(data, mode="greedy")
    enc_valid = tr.input_valid
    dec_valid = torch.ones(tr.decoder_states.shape[:3], dtype=torch.bool)
    enc = _split(tr.encoder_states, data.inputs.unsqueeze(0), enc_valid, len(task.in_vocab))
    dec_tokens = tr.decoder_inputs.clone()
    dec_tokens[dec_tokens < 0] = len(task.out_vocab)  # <BoS> class
    dec = _split(tr.decoder_states, dec_tokens, dec_valid, len(task.out_vocab) + 1)
    for parts, states in ((enc, tr.encoder_states), (dec, tr.decoder_states)):
        assert torch.allclose(parts["mu"] + parts["chi"] + parts["delta"], states, atol=1e-6)
    att = model.attn
    terms = learned.learned_alignment_terms(enc, dec, att.W_K, att.W_Q, att.scale)
    assert set(terms) == set(learned.TERM_NAMES)
    total = sum(terms.values())
    assert torch.allclose(total, tr.alignment, atol=1e-4)
    # and the projection of the parts adds up to the projection of the states (linearity)
    K = learned.projected_components(enc, att.W_K)
    assert torch.allclose(K["mu"] + K["chi"] + K["delta"], att.project_keys(tr.encoder_states), atol=1e-5)


def _analysis(attention, seeds, **opts):
    from companion.aitken2021.analysis import Analysis
    from companion.aitken2021.decompose import decompose_decoder, decompose_encoder
    from companion.aitken2021.train import TrainedEnsemble

    model, task = _model(attention, seeds, **opts)
    model.requires_grad_(False)
    data = task.sample(64, torch.Generator().manual_seed(4))
    trace = model(data, mode="greedy")
    ens = TrainedEnsemble(model=model, task=task, seeds=list(seeds), train_config=None, history={}, test={},
                          seconds=0.0, payload={})
    return Analysis(ens, data, trace, decompose_encoder(trace, data), decompose_decoder(trace, data))


def test_projected_terms_of_the_library_decomposition_sum_to_the_alignment():
    """The identity the QKV appendix relies on, with the library's own decomposition."""
    a = _analysis("qkv", [8, 9], qk_size=8)
    total = sum(a.terms.values())
    assert torch.allclose(total, a.trace.alignment, atol=1e-4 * float(a.trace.alignment.abs().max()))


def test_each_heads_terms_sum_to_its_alignment():
    """The multi-head appendix splits every head's own alignment; the nine terms must add back up."""
    a = _analysis("mh", [5, 6], heads=2)
    per_head = a.model.attn.head_alignment(a.trace.encoder_states, a.trace.decoder_states)
    for k in range(2):
        total = sum(learned.head_terms(a, k).values())
        assert torch.allclose(total, per_head[:, :, k], atol=1e-4 * float(per_head.abs().max()))
