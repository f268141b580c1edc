"""The training curves, the one-to-one trap measures and the solving-network filter, on known answers."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from companion import config, stats
from companion.aitken2021 import analysis as A
from companion.aitken2021 import checks as C
from companion.aitken2021 import failure as F
from companion.aitken2021.models import ModelConfig, Seq2Seq
from companion.aitken2021.tasks import OneToOne, stack_members
from companion.aitken2021.train import TrainConfig, TrainedEnsemble, derive_seed, train_ensemble
from companion.ensemble import per_member_sq_norm

TASK = OneToOne(n_words=3, min_len=4, max_len=6)


def _fake(phrase_curves, test_phrase) -> TrainedEnsemble:
    """A trained ensemble whose recorded curves and test scores are given (no model needed)."""
    p = torch.tensor(phrase_curves, dtype=torch.float64).T  # (K, E): history rows are logged steps
    K, E = p.shape
    history = {"step": list(range(0, 50 * K, 50)), "phrase_accuracy": p, "word_accuracy": p,
               "grad_norm": torch.ones(K, E), "loss": torch.ones(K, E), "ce": torch.ones(K, E),
               "position_accuracy": torch.ones(K, E, 3)}
    test = {"phrase_accuracy": torch.tensor(test_phrase, dtype=torch.float64)}
    model = SimpleNamespace(config=SimpleNamespace(arch="AED"))
    return TrainedEnsemble(model=model, task=TASK, seeds=list(range(E)), train_config=TrainConfig(),
                           history=history, test=test, seconds=0.0)


def test_outcomes_known_courses():
    ens = _fake([[0.0, 0.2, 0.5, 0.6],    # never reaches, ends below
                 [0.0, 1.0, 1.0, 1.0],    # reaches, stays
                 [0.0, 1.0, 0.3, 1.0],    # reaches, collapses, comes back
                 [0.0, 1.0, 0.3, 0.34],   # reaches, collapses, ends below: trapped
                 [0.0, 0.98, 0.98, 0.98]],  # never every curve sequence right, but the test passes
                [0.5, 1.0, 0.995, 0.33, 0.992])
    assert F.outcomes(ens) == ["never solved", "stable", "recovered", "trapped", "stable"]
    assert F.trapped(ens).tolist() == [False, False, False, True, False]
    iv = F.trap_rate(ens)
    ref = stats.rate_interval(1, 5)
    assert (iv.estimate, iv.lo, iv.hi) == (0.2, ref.lo, ref.hi)
    assert 0 < iv.lo < 0.2 < iv.hi < 1


def test_a_trapped_network_is_one_that_ends_below_the_threshold_it_reached():
    ens = _fake([[1.0, 1.0]], [0.989])
    assert F.outcomes(ens) == ["trapped"]
    assert F.outcomes(ens, threshold=0.98) == ["stable"]


def test_curves_missing_in_old_entries_is_a_clear_error():
    ens = _fake([[1.0]], [1.0])
    ens.history = {"step": [0], "loss": torch.ones(1, 1)}
    assert not F.has_curves(ens)
    with pytest.raises(ValueError, match="no accuracy curves"):
        F.curves(ens)


def test_solving_members_and_the_per_network_check():
    ens = _fake([[1.0]] * 4, [1.0, 0.99, 0.9899, 0.0])
    assert A.solving_members(ens) == [0, 1]
    assert C.solves_task(ens).tolist() == [True, True, False, False]


def test_position_error_and_eos_attention_known_answer():
    data = TASK.sample(5, torch.Generator().manual_seed(0))
    E, (B, T) = 2, data.targets.shape
    pred = data.targets.expand(E, B, T).clone()
    pred[0, :, 0] = (pred[0, :, 0] + 1) % 3  # member 0: every first word wrong, the rest right
    S = data.inputs.shape[-1]
    att = torch.full((E, B, T, S), 0.0)
    att[1] = 1.0 / S  # member 1: uniform attention
    att[0, torch.arange(B), 0, data.in_index] = 1.0  # member 0: first step entirely on the EOS
    a = SimpleNamespace(trace=SimpleNamespace(predictions=pred, attention=att), data=data)
    err = F.position_error(a)
    assert err[0, 0] == 1.0 and err[1, 0] == 0.0
    assert np.all(err[:, 1:int(data.out_index.min()) + 1] == 0.0)
    assert np.isnan(err[0, -1]) == bool(data.out_index.max() < T - 1)
    eos = F.eos_attention_first_step(a)
    assert eos[0] == pytest.approx(1.0) and eos[1] == pytest.approx(1.0 / S)
    a.trace.attention = None
    assert np.isnan(F.eos_attention_first_step(a)).all()


@pytest.fixture(scope="module")
def tiny():
    """Three AED networks trained 60 steps on a small task, curves every 50 steps."""
    cfg = TrainConfig(steps=60, dataset_batches=20, n_test=50, n_curve=16)
    mc = ModelConfig(arch="AED", in_vocab=len(TASK.in_vocab), out_vocab=len(TASK.out_vocab), hidden=16)
    seeds = [3, 4, 5]
    payload = train_ensemble(mc, TASK, seeds, cfg, log_every=50)
    model = Seq2Seq(mc, seeds)
    model.load_state_dict(payload["state"])
    model.eval()
    ens = TrainedEnsemble(model=model, task=TASK, seeds=seeds, train_config=cfg, history=payload["history"],
                          test=payload["test"], seconds=payload["seconds"], payload=payload)
    return mc, cfg, seeds, ens


def test_training_records_curves_at_the_cadence(tiny):
    mc, cfg, seeds, ens = tiny
    h = ens.history
    assert h["step"] == [0, 50, 59]
    for k in ("loss", "ce", "grad_norm", "word_accuracy", "phrase_accuracy"):
        assert tuple(h[k].shape) == (3, 3), k
    assert tuple(h["position_accuracy"].shape) == (3, 3, TASK.length)
    assert torch.all(h["grad_norm"] > 0)


def test_first_curve_row_scores_the_initial_network(tiny):
    """Row 0 is the network before its first update: the fresh initialisation, scored on the curve batch."""
    mc, cfg, seeds, ens = tiny
    init = Seq2Seq(mc, seeds)
    data = stack_members([TASK.sample(cfg.n_curve, torch.Generator().manual_seed(derive_seed(s, "curve")))
                          for s in seeds])
    with torch.no_grad():
        trace = init(data, mode="greedy")
    from companion.aitken2021.metrics import accuracy_from_logits
    word, phrase = accuracy_from_logits(trace.predictions, data)
    assert torch.allclose(ens.history["word_accuracy"][0], word)
    assert torch.allclose(ens.history["phrase_accuracy"][0], phrase)
    # loss - cross-entropy is the L2 term of the initial weights (AED's L2: 1e-3)
    l2 = (ens.history["loss"][0] - ens.history["ce"][0]).double()
    expected = 1e-3 * per_member_sq_norm(list(init.parameters())).detach().double()
    assert torch.allclose(l2, expected, rtol=1e-4)


def test_select_members_is_the_same_network(tiny):
    _, _, seeds, ens = tiny
    sub = A.select_members(ens, [2, 0])
    assert sub.seeds == [seeds[2], seeds[0]]
    data = TASK.sample(20, torch.Generator().manual_seed(1))
    with torch.no_grad():
        full, part = ens.model(data, mode="greedy"), sub.model(data, mode="greedy")
    assert torch.equal(part.logits[0], full.logits[2]) and torch.equal(part.logits[1], full.logits[0])
    assert torch.equal(sub.test["phrase_accuracy"], ens.test["phrase_accuracy"][[2, 0]])
    assert torch.equal(sub.history["word_accuracy"], ens.history["word_accuracy"][:, [2, 0]])
    assert sub.payload["selection"]["members"] == [2, 0]
    assert sub.payload["selection"]["n_trained"] == 3
    # a selection of a selection keeps the indices into the trained ensemble
    assert A.select_members(sub, [1]).payload["selection"]["members"] == [0]
    with pytest.raises(ValueError):
        A.select_members(ens, [])
    with pytest.raises(ValueError):
        A.select_members(ens, [3])


def test_solving_ensemble_keeps_only_solvers_and_says_so(tiny):
    _, _, _, ens = tiny
    ens.test = {k: v.clone() for k, v in ens.test.items()}
    ens.test["phrase_accuracy"] = torch.tensor([1.0, 0.5, 0.995], dtype=torch.float64)
    sub = A.solving_ensemble(ens)
    assert sub.seeds == [ens.seeds[0], ens.seeds[2]]
    assert "2 of 3 trained networks solve the task" in A.selection_note(sub)
    ens.test["phrase_accuracy"] = torch.zeros(3, dtype=torch.float64)
    none = A.solving_ensemble(ens)
    assert none.seeds == ens.seeds and "none of the 3" in A.selection_note(none)


def test_l2_parameter_is_a_labelled_deviation():
    S = config.resolve("tab-accuracy", "smoke")
    assert S["l2"] is None
    assert A.train_config_from_settings(S, "AED").l2 is None
    S = config.resolve("tab-accuracy", "smoke", l2=1e-4)
    assert A.train_config_from_settings(S, "AED").l2 == 1e-4
    # VED's own value stays the default entry (the same cached networks)
    assert A.train_config_from_settings(S, "VED").l2 is None


def test_curve_rows_are_what_the_figure_draws_and_survive_a_record(tmp_path, monkeypatch):
    """The rows a recorded run keeps draw the same figure; the record lists them with its data, not its
    tables."""
    import json

    import matplotlib

    matplotlib.use("Agg")
    from companion import claims
    from companion.card import ChapterCard, recorded_frame, recorded_tables_html

    ens = _fake([[0.0, 1.0, 1.0, 0.3], [0.0, 0.5, 1.0, 1.0]], [0.33, 1.0])
    rows = F.curve_rows({"AED": ens})
    assert list(rows["course"]) == ["trapped", "stable"] and list(rows["network"]) == [0, 1]
    assert rows["phrase"][0] == [0.0, 1.0, 1.0, 0.3] and rows["step"][1] == [0, 50, 100, 150]
    card = ChapterCard(config.resolve("tab-accuracy", "smoke"))
    card.table(rows, F.CURVES_TABLE, listed=False)
    monkeypatch.setenv(claims.CLAIMS_FILE_ENV, str(tmp_path / "tab-accuracy.claims.json"))
    monkeypatch.setattr(claims, "store_dir", lambda profile: tmp_path / "store")
    card.save()
    kept = json.loads((tmp_path / "tab-accuracy.claims.tables.json").read_text())
    assert recorded_tables_html({"profile": "paper", "tables": kept}) == ""
    from companion import records

    monkeypatch.setattr(records, "results_dir", lambda profile: tmp_path / "results" / profile)
    records._write(records.record_path("tab-accuracy", "paper"), {"tables": kept})
    back = recorded_frame("tab-accuracy", F.CURVES_TABLE)
    assert back.to_dict() == rows.to_dict()
    live, again = F.p_curves({"AED": ens}), F.p_curves(back)
    for a, b in zip(live.axes, again.axes):
        assert [list(line.get_ydata()) for line in a.lines] == [list(line.get_ydata()) for line in b.lines]
    assert again.axes[0].get_title(loc="left") == "AED: 2 networks (1 stable, 1 trapped)"
