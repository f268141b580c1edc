"""What the temporal components do alone: the temporal-only attention and the null-input comparison,
on a network whose states cannot depend on the words (so both have known answers)."""

import torch

from companion.aitken2021 import analysis as A
from companion.aitken2021 import checks as C
from companion.aitken2021 import metrics as M
from companion.aitken2021.models import ModelConfig, Seq2Seq
from companion.aitken2021.tasks import OneToOne
from companion.aitken2021.train import TrainConfig, TrainedEnsemble


def _word_blind_ao():
    """An AO whose layers ignore the one-hot part of their input: every state is a function of its
    position only, so it equals its temporal component and the null-input state."""
    task = OneToOne(min_len=4, max_len=7)
    cfg = ModelConfig(arch="AO", in_vocab=len(task.in_vocab), out_vocab=len(task.out_vocab), hidden=16)
    model = Seq2Seq(cfg, [2, 3])
    with torch.no_grad():
        model.encoder.W[:, : len(task.in_vocab)] = 0
        model.decoder.W[:, : len(task.out_vocab)] = 0
    ens = TrainedEnsemble(model=model, task=task, seeds=[2, 3], train_config=TrainConfig(), history={},
                          test={}, seconds=0.0)
    return A.analyse(ens, n=60, seed=0)


def test_temporal_only_attention_is_the_attention_when_states_are_temporal():
    a = _word_blind_ao()
    ta = M.temporal_attention(a.enc, a.dec, a.trace)
    valid = a.trace.input_valid.unsqueeze(-2).expand_as(ta)
    assert torch.allclose(ta[valid], a.trace.attention[valid], atol=1e-5)
    drop = C.temporal_only_drop(a)
    assert drop.shape == (2,) and abs(drop).max() == 0.0


def test_temporal_only_drop_is_own_minus_temporal_accuracy():
    class Stub:
        accuracy = {"word": torch.tensor([1.0, 0.9])}
        aam = {"temporal_word": torch.tensor([0.97, 0.9])}

    assert C.temporal_only_drop(Stub()).round(6).tolist() == [0.03, 0.0]


def test_null_input_matches_temporal_components_of_a_word_blind_network():
    a = _word_blind_ao()
    enc = a.null_input["encoder"]
    assert enc["relative"].shape == a.enc.mu.shape[:2]
    assert float(torch.nanmean(enc["relative"])) < 1e-5 and float(torch.nanmean(enc["angle"])) < 0.1
    # the decoder's first input is the start vector, not zero: only later steps match the null input
    dec = a.null_input["decoder"]["relative"][:, 1:]
    assert float(torch.nan_to_num(dec, nan=0.0).max()) < 1e-5


def test_errors_from_end_weighted_by_steps_give_back_the_word_accuracies():
    """Known answer: every network sees the same sequences, so the rows' error rates weighted by their
    numbers of steps add up to one minus the mean word accuracy, with either attention; on the
    word-blind network the two attentions are the same, so are their columns."""
    a = _word_blind_ao()
    table = A.errors_from_end(a, last=3)
    assert list(table.index) == ["end of sequence", "1 before the end", "2 before the end",
                                 "3 or more before the end"]
    valid = a.data.target_valid
    back = valid.sum(-1, keepdim=True) - 1 - torch.arange(valid.shape[-1])
    steps = [int((valid & (back == k)).sum()) for k in range(3)] + [int((valid & (back >= 3)).sum())]
    own = sum(r * n for r, n in zip(table["error rate, own attention"], steps)) / sum(steps)
    temporal = sum(r * n for r, n in zip(table["error rate, temporal-only attention"], steps)) / sum(steps)
    assert abs(own - (1 - float(a.accuracy["word"].mean()))) < 1e-9
    assert abs(temporal - (1 - float(a.aam["temporal_word"].mean()))) < 1e-9
    assert own > 0  # an untrained network errs, so the identity is not 0 = 0
    assert list(table["error rate, own attention"]) == list(table["error rate, temporal-only attention"])
