"""Pandey et al. (2022), error modes, architecture, data and sparse attention: properties of the specified
data and of our implementation (unit tests, not claims), and broken-configuration controls for claims.

A control runs the real pipeline at tiny scale with a setting that must break the finding (one epoch of
training; the same normaliser on both sides of a paired comparison) and asserts that its rule does not pass.
"""
import pytest
import torch

from companion import registry
from companion.pandey2022 import data, models
from companion.pandey2022 import errormodes as EM
from companion.pandey2022 import studies as St


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --- properties of the specified data ----------------------------------------------------------------

def test_dist1_has_an_interpretable_linear_focus():
    """Every foreground box of dist-1 lies right of the background box: f(x) = x1 always ranks it first."""
    assert EM.linear_focus_hit_rate(data.load("dist1"), w=(1.0, 0.0), b=0.0) == 100.0


def test_dist2_has_no_interpretable_linear_focus():
    """fg 2 lies on the other side of the background box: the best direction reaches about two thirds."""
    best = EM.best_linear_focus_hit_rate(data.load("dist2"))
    assert 55.0 < best < 80.0


def test_dataset1_needs_a_nonlinear_focus():
    """The foreground classes lie inside the convex hull of the background ring."""
    assert EM.best_linear_focus_hit_rate(data.load("d1")) < 80.0


def test_dataset1_base_draw_has_the_authors_class_sizes():
    assert data.load("d1").base_y.bincount().tolist() == [530, 463, 494, 517, 488, 497, 493, 507, 492, 519]


# --- our implementation -------------------------------------------------------------------------------

def test_traced_forward_shapes_and_uniform_start():
    """F-ARCH: second-layer averaging feeds the classifier 50 tanh features; the functionally-zero focus gives
    exactly uniform attention at initialisation."""
    ens = models.Ensemble([models.arch("A_1", layer=2)], [0])
    tr = ens(data.load("d1").x_train[:4])
    assert tuple(tr.scores.shape) == (1, 4, 9) and tuple(tr.z.shape) == (1, 4, 50)
    assert tuple(tr.logits.shape) == (1, 4, 3)
    assert float((tr.alpha.detach() - 1 / 9).abs().max()) <= 1e-12


@pytest.mark.parametrize("name,base", [("A_2_2-random-focus", "A_2_2"), ("A_1-random-focus", "A_1")])
def test_random_focus_variants_follow_the_authors_sparsity_notebooks(name, base):
    """No functionally-zero step (attention not uniform at init) and one manual_seed per run: both nets come
    from one random stream, so the classification net differs from the re-seeded variant's."""
    spec = models.arch(name)
    focus, cls = models.build_single(spec, 3)
    x = data.load("d2" if base.startswith("A_2") else "d1").x_train[:8].double()
    assert float(focus(x)[0].detach().std()) > 0
    torch.manual_seed(3)
    ref_focus = models.FocusNet(spec).double()
    ref_cls = models.ClassificationNet(spec).double()
    for a, b in zip(list(focus.parameters()) + list(cls.parameters()),
                    list(ref_focus.parameters()) + list(ref_cls.parameters())):
        assert torch.equal(a, b)
    _, cls_reseeded = models.build_single(spec.with_(reseed_cls=True), 3)
    assert not torch.equal(cls.layers[0].weight, cls_reseeded.layers[0].weight)


# --- broken-configuration controls --------------------------------------------------------------------

def test_control_one_epoch_of_training_shows_no_error_mode():
    """f-em1/error-mode-occurs: after one epoch no run is accurate, so the rate must fail (80 seeds)."""
    d, res, ens, frame = EM.run("dist1", 0, 80, epochs=1)
    runs = EM.ensemble_runs(frame)
    k = int((runs["outcome"] == "error mode").sum())
    v = registry.decide(registry.get("f-em1/error-mode-occurs"), successes=k, trials=len(runs))
    assert v.status == "fail", (k, len(runs), v)


def test_control_one_epoch_softmax_does_not_match_the_table():
    """t-a1/softmax-ftpt: after one epoch of training no run reaches a high FTPT (80 %), so the share of
    high runs cannot be 'most'."""
    setup = St.SPARSITY_SETUPS["T-A1"]
    runs, _, _ = St.sparsity_table("T-A1", setup["dataset"], setup["arch"], "zeroth", "softmax", 5, 1,
                                   "float32", lr_by_method=setup["lr"], stop_on=setup["stop_on"])
    v = registry.decide(registry.get("t-a1/softmax-ftpt"), values=[f >= 80 for f in runs["ftpt"]])
    assert v.status == "fail", v


def test_control_same_normaliser_on_both_sides_cannot_raise_ftpt():
    """t-a1/sparsemax-raises-ftpt: with softmax on both sides of the paired comparison it must not pass."""
    setup = St.SPARSITY_SETUPS["T-A1"]
    runs, _, _ = St.sparsity_table("T-A1", setup["dataset"], setup["arch"], "zeroth", "softmax", 5, 5,
                                   "float32", lr_by_method=setup["lr"], stop_on=setup["stop_on"])
    high = [v >= 80 for v in St.values(runs, "ftpt", method="softmax")]
    v = registry.decide(registry.get("t-a1/sparsemax-raises-ftpt"), successes=(sum(high), sum(high)),
                        trials=(len(high), len(high)))
    assert v.status != "pass", v


def test_error_mode_claims_ignore_the_showcased_seed():
    """The claims use seeds 0..n_seeds-1: a showcased seed outside that range changes no ensemble row."""
    _, _, _, f1 = EM.run("dist1", 1238, 4, epochs=2)
    _, _, _, f2 = EM.run("dist1", 999, 4, epochs=2)
    cols = ["seed", "acc", "ftpt", "ffpt"]
    r1 = EM.ensemble_runs(f1)[cols].reset_index(drop=True)
    assert r1.equals(EM.ensemble_runs(f2)[cols].reset_index(drop=True))
