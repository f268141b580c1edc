"""Known-answer tests for companion.pandey2022 (normalisers, data, models, metrics, training)."""

import numpy as np
import pytest
import torch

from companion.pandey2022 import data, metrics, models, normalisers, train


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny matrices: a second OpenMP thread only spin-waits on a shared machine
    (see companion.device.train_threads)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --- normalisers -------------------------------------------------------------------------------


def _project_simplex_qp(v):
    """Euclidean projection onto the simplex by bisection on the threshold (independent of sort)."""
    lo, hi = v.min() - 1.0, v.max()
    for _ in range(200):
        tau = (lo + hi) / 2
        if np.clip(v - tau, 0, None).sum() > 1:
            lo = tau
        else:
            hi = tau
    return np.clip(v - (lo + hi) / 2, 0, None)


def test_sparsemax_is_simplex_projection():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(200, 9, generator=g, dtype=torch.float64) * 3
    p = normalisers.sparsemax(z)
    assert torch.allclose(p.sum(-1), torch.ones(200, dtype=torch.float64), atol=1e-12)
    assert (p >= 0).all()
    for row, prow in zip(z.numpy(), p.numpy()):
        np.testing.assert_allclose(prow, _project_simplex_qp(row), atol=1e-9)
    # a clear winner gives a one-hot vector; equal scores give the uniform vector
    assert torch.equal(normalisers.sparsemax(torch.tensor([[5.0, 0, 0]])), torch.tensor([[1.0, 0, 0]]))
    assert torch.allclose(normalisers.sparsemax(torch.zeros(1, 9)), torch.full((1, 9), 1 / 9))


def test_sparsemax_gradient_matches_finite_differences():
    z = torch.tensor([[0.3, 0.1, -0.2, 0.25, 0.0]], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(normalisers.sparsemax, (z,))


def test_spherical_softmax_zero_input_and_sum():
    a = normalisers.spherical_softmax(torch.zeros(3, 9, dtype=torch.float64))
    assert not torch.isnan(a).any() and (a == 0).all()
    z = torch.zeros(2, 9, dtype=torch.float64, requires_grad=True)
    normalisers.spherical_softmax(z).sum().backward()
    assert not torch.isnan(z.grad).any()
    b = normalisers.spherical_softmax(torch.tensor([[1.0, -2.0, 2.0]], dtype=torch.float64))
    assert torch.allclose(b, torch.tensor([[1 / 9, 4 / 9, 4 / 9]], dtype=torch.float64))


# --- data --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["dist1", "dist2", "dist4"])
def test_error_mode_boxes_and_fore_idx(name):
    d = data.load(name, 0)
    for c, ((a, b), (lo, hi)) in enumerate(data.BOXES[name]):
        pts = d.base_x[d.base_y == c]
        assert len(pts) > 0
        assert (pts[:, 0] >= min(a, b)).all() and (pts[:, 0] <= max(a, b)).all()
        assert (pts[:, 1] >= min(lo, hi)).all() and (pts[:, 1] <= max(lo, hi)).all()
    bg = data.BOXES[name][-1]
    for x, y, J in ((d.x_train, d.y_train, d.fore_train), (d.x_test, d.y_test, d.fore_test)):
        n = len(y)
        fg_pt = x[torch.arange(n), J]
        # the foreground segment lies in the box of its label ...
        for c in range(d.n_classes):
            (a, b), (lo, hi) = data.BOXES[name][c]
            p = fg_pt[y == c]
            assert (
                (p[:, 0] >= min(a, b))
                & (p[:, 0] <= max(a, b))
                & (p[:, 1] >= min(lo, hi))
                & (p[:, 1] <= max(lo, hi))
            ).all()
        # ... and every other segment in the background box
        mask = torch.ones(n, 9, dtype=torch.bool)
        mask[torch.arange(n), J] = False
        others = x[mask]
        assert ((others[:, 0] >= bg[0][0]) & (others[:, 0] <= bg[0][1])).all()
        assert ((others[:, 1] >= min(bg[1])) & (others[:, 1] <= max(bg[1]))).all()
        assert set(J.tolist()) == set(range(9))
    assert d.x_train.shape == (3000, 9, 2) and d.x_test.shape == (1000, 9, 2)


def test_dataset1_matches_authors_class_counts_and_ring():
    d = data.load("d1")
    # np.random.seed(12); randint(0, 10, 5000) gives these class sizes (printed in the authors' notebook)
    assert d.base_y.bincount().tolist() == [530, 463, 494, 517, 488, 497, 493, 507, 492, 519]
    for c, mean in enumerate(data.D1_MEANS):
        assert torch.allclose(
            d.base_x[d.base_y == c].mean(0), torch.tensor(mean, dtype=torch.float64), atol=0.03
        )
    fg = d.x_train[torch.arange(3000), d.fore_train]
    for c in range(3):
        assert (fg[d.y_train == c] - torch.tensor(data.D1_MEANS[c], dtype=torch.float64)).norm(
            dim=1
        ).max() < 0.6
    assert d.x_train.shape == (3000, 9, 2) and d.x_test.shape == (3000, 9, 2)


def test_dataset2_segments_come_from_the_right_pools():
    d = data.load("d2")
    assert d.base_y.bincount().tolist() == [500] * 10
    n = 3000
    fg = d.x_train[torch.arange(n), d.fore_train]
    # the foreground segment is a point of the label's class (exact match in the base data)
    dist = torch.cdist(fg, d.base_x, compute_mode="donot_use_mm_for_euclid_dist")
    assert (dist.min(1).values < 1e-12).all()
    assert torch.equal(d.base_y[dist.argmin(1)], d.y_train)
    mask = torch.ones(n, 9, dtype=torch.bool)
    mask[torch.arange(n), d.fore_train] = False
    others = d.x_train[mask][:2000]
    assert (d.base_y[torch.cdist(others, d.base_x).argmin(1)] >= 3).all()
    # mosaic 0 is drawn from RandomState(0) exactly as documented
    rs = np.random.RandomState(0)
    bg_idx, fg_idx, pos = rs.randint(0, 3500, 8), rs.randint(0, 1500), rs.randint(0, 9)
    assert int(d.fore_train[0]) == pos and int(d.y_train[0]) == fg_idx // 500
    assert torch.equal(d.x_train[0, pos], d.base_x[fg_idx])
    assert torch.equal(d.x_train[0, 0 if pos else 1], d.base_x[1500 + bg_idx[0]])


# --- models ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,layer", [("A_1", 0), ("A_1", 2), ("A_2_1", 1), ("A_2_2", 2)])
def test_functionally_zero_focus_gives_uniform_attention(name, layer):
    spec = models.arch(name, layer=layer)
    ens = models.Ensemble([spec] * 3, [0, 1, 2])
    x = torch.randn(50, 9, spec.d_in, dtype=torch.float64) * 5
    tr = ens(x)
    # zero in exact arithmetic; float64 leaves only rounding residue of the cancelling halves
    assert tr.scores.abs().max() < 1e-12
    assert torch.allclose(tr.alpha, torch.full_like(tr.alpha, 1 / 9), atol=1e-13)
    # not-zero variant: genuinely non-uniform
    ens2 = models.Ensemble([spec.with_(focus_zero=False)], [0])
    assert ens2(x).scores.abs().max() > 1e-3
    # gradients are not zero (the point of the construction)
    loss = ens(x).logits.sum()
    loss.backward()
    assert ens.params["focus.0.weight"].grad.abs().max() > 0


def test_ensemble_members_equal_single_nets_with_padding():
    spec = models.arch("A_2_1")
    specs = [
        spec.with_(focus_hidden=(10,), cls_hidden=(20,)),
        spec.with_(focus_hidden=(50,), cls_hidden=(8,)),
    ]
    ens = models.Ensemble(specs, [4, 7])
    x = torch.randn(13, 9, 5, dtype=torch.float64)
    out = ens(x)
    for e, (s, n) in enumerate(zip(specs, [4, 7])):
        f, c = models.build_single(s, n)
        sc, feats = f(x)
        a = torch.softmax(sc, -1)
        ref = c((a.unsqueeze(-1) * feats).sum(-2))
        assert torch.allclose(out.logits[e], ref, atol=1e-12)


# --- metrics -----------------------------------------------------------------------------------


def test_categories_partition_and_accuracy():
    g = torch.Generator().manual_seed(1)
    alpha = torch.softmax(torch.randn(4, 500, 9, generator=g), -1)
    logits = torch.randn(4, 500, 3, generator=g)
    y = torch.randint(0, 3, (500,), generator=g)
    J = torch.randint(0, 9, (500,), generator=g)
    m = metrics.categories(alpha, logits, y, J)
    total = m["ftpt"] + m["ffpt"] + m["ftpf"] + m["ffpf"]
    assert torch.allclose(total, torch.full((4,), 100.0, dtype=torch.float64))
    assert torch.allclose(m["acc"], m["ftpt"] + m["ffpt"])
    # a hand-made case
    a = torch.tensor([[[0.6, 0.4], [0.2, 0.8], [0.5, 0.5]]])
    lg = torch.tensor([[[1.0, 0], [1.0, 0], [0, 1.0]]])
    r = metrics.categories(a, lg, torch.tensor([0, 0, 0]), torch.tensor([0, 0, 0]))
    assert [round(float(r[c]), 4) for c in metrics.CATEGORIES] == [33.3333, 33.3333, 33.3333, 0.0]
    assert float(r["alpha_ge_half"]) == 3.0
    assert float(metrics.sparsity_value(torch.tensor([[0.995, 0.005]]))) == 1.0
    assert abs(float(metrics.entropy_bits(torch.tensor([[0.5, 0.5, 0.0]]))) - 1.0) < 1e-12
    assert abs(float(metrics.simplex_distance(torch.tensor([[0.5, 0.5]]))) - 2**-0.5) < 1e-7


# --- training ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arch_name,dataset,opt,lr,k,norm",
    [
        ("A_1", "d1", "adam", 0.001, 0.0, "softmax"),
        ("A_2_2", "d2", "adam", 0.001, 0.01, "sparsemax"),
        ("em-linear", "dist1", "sgd", 0.01, 0.0, "softmax"),
    ],
)
def test_batched_training_equals_single_runs(arch_name, dataset, opt, lr, k, norm):
    d = data.subset(data.load(dataset, 0), 600, 200)  # 3 minibatches of 250, 250, 100 per epoch
    spec = models.arch(arch_name)
    seeds = [3, 11]
    ens = models.Ensemble([spec] * 2, seeds)
    train.train_ensemble(
        ens,
        d,
        k=k,
        lr=lr,
        optimiser=opt,
        max_epochs=2,
        stop_loss=None,
        normaliser=norm,
        eval_every=2,
        show_progress=False,
    )
    for e, s in enumerate(seeds):
        f, c, _ = train.train_single(
            spec, s, d, k=k, lr=lr, optimiser=opt, max_epochs=2, stop_loss=None, normaliser=norm
        )
        st = ens.member_state(e)
        for key, v in f.state_dict().items():
            assert torch.allclose(st["focus"][key], v, atol=1e-9), key
        for key, v in c.state_dict().items():
            assert torch.allclose(st["cls"][key], v, atol=1e-9), key


def test_early_stopped_member_is_frozen():
    d = data.subset(data.load("dist1", 0), 500)
    spec = models.arch("em-linear")
    ens = models.Ensemble([spec] * 2, [0, 1])
    # a threshold every member meets after the first epoch: all stop at epoch 1 and must equal a
    # single run that stopped there too
    out = train.train_ensemble(
        ens,
        d,
        k=0.0,
        lr=0.01,
        optimiser="sgd",
        max_epochs=5,
        stop_loss=10.0,
        eval_every=1,
        show_progress=False,
    )
    assert out["stop_epoch"].tolist() == [1, 1] and out["epochs_run"] == 1
    f, c, stop = train.train_single(spec, 0, d, lr=0.01, optimiser="sgd", max_epochs=5, stop_loss=10.0)
    assert stop == 1
    assert torch.allclose(ens.member_state(0)["cls"]["layers.0.weight"], c.layers[0].weight, atol=1e-12)


def test_optimiser_mask_freezes_parameters_and_state():
    p = torch.zeros(2, 3, dtype=torch.float64, requires_grad=True)
    opt = train.BatchedOptimiser([p], "adam", torch.tensor([0.1, 0.1], dtype=torch.float64))
    p.grad = torch.ones_like(p)
    opt.step(torch.tensor([True, False]))
    assert (p[1] == 0).all() and (p[0] != 0).all()
    assert (opt.state[0]["m"][1] == 0).all() and opt.t.tolist() == [1.0, 0.0]


def test_stopped_member_frozen_while_others_continue():
    """Member 0 has lr 0 (its loss never changes); with a threshold between the two members' losses after
    epoch 1, member 1 stops and stays frozen while member 0 continues (no update either, lr 0) - then we check
    the stopped member's weights equal a single run stopped at epoch 1."""
    d = data.subset(data.load("dist1", 0), 500)
    spec = models.arch("em-linear")
    ens = models.Ensemble([spec] * 2, [7, 7])
    init_loss = float(
        train.evaluate(
            ens, d.x_train, d.y_train, d.fore_train, "softmax", torch.zeros(2, dtype=torch.float64)
        )["loss"][0]
    )
    out = train.train_ensemble(
        ens,
        d,
        k=0.0,
        lr=[0.0, 0.01],
        optimiser="sgd",
        max_epochs=3,
        stop_loss=init_loss - 1e-6,
        eval_every=1,
        show_progress=False,
        stop_on="full",
    )
    assert out["stop_epoch"].tolist() == [3, 1]
    f, c, stop = train.train_single(spec, 7, d, lr=0.01, optimiser="sgd", max_epochs=1, stop_loss=None)
    assert torch.allclose(ens.member_state(1)["cls"]["layers.0.weight"], c.layers[0].weight, atol=1e-12)
    assert torch.allclose(ens.member_state(1)["focus"]["layers.0.weight"], f.layers[0].weight, atol=1e-12)


def test_stopped_members_are_not_computed_and_the_others_train_as_alone():
    """Once a member stops, the minibatch passes compute only the members still training: the stopped
    member's weights are those of a run that ended at its stop epoch, and the others (one with an entropy
    term) end exactly where they end when trained alone."""
    d = data.subset(data.load("d1"), 500)
    spec = models.arch("A_1", layer=0)
    seeds, ks = [3, 4, 5], [0.0, 0.02, 0.0]

    def run(members, epochs, stop):
        ens = models.Ensemble([spec] * len(members), [seeds[i] for i in members])
        sizes = []  # members computed by each minibatch pass (evaluations pass (B, m, d) inputs)
        scores = ens.focus_scores
        ens.focus_scores = lambda x, *a: (sizes.append(x.shape[0]) if x.dim() == 4 else None) or scores(x, *a)
        out = train.train_ensemble(ens, d, k=[ks[i] for i in members], lr=0.01, max_epochs=epochs,
                                   stop_loss=stop, show_progress=False, stop_on="full")
        return ens, out, sizes

    _, first, _ = run([0, 1, 2], 1, None)
    loss1 = first["curves"]["train"]["loss"][:, -1]
    lo, hi = int(loss1.argmin()), int(loss1.argmax())
    stop = float(loss1[lo] + loss1[hi]) / 2
    ens, out, sizes = run([0, 1, 2], 3, stop)
    assert int(out["stop_epoch"][lo]) == 1 and int(out["stop_epoch"][hi]) == 3
    per_epoch = -(-500 // 250)  # minibatches of 250
    still = int((out["stop_epoch"] > 1).sum())
    assert 1 <= still < 3 and sizes == [3] * per_epoch + [still] * 2 * per_epoch
    for i in range(3):
        alone, _, _ = run([i], int(out["stop_epoch"][i]), None)
        for key, p in ens.params.items():
            assert torch.allclose(p[i], alone.params[key][0], atol=1e-12), (i, key)


def test_padded_widths_train_like_single_nets():
    """Members of different widths in one zero-padded program train exactly like their own single nets."""
    d = data.subset(data.load("d2"), 500)
    base = models.arch("A_2_1")
    specs = [base.with_(focus_hidden=(6,), cls_hidden=(4,)), base.with_(focus_hidden=(10,), cls_hidden=(12,))]
    ens = models.Ensemble(specs, [2, 5])
    train.train_ensemble(
        ens, d, k=0.0, lr=0.001, max_epochs=2, stop_loss=None, eval_every=2, show_progress=False
    )
    for e, (spec, seed) in enumerate(zip(specs, [2, 5])):
        f, c, _ = train.train_single(spec, seed, d, lr=0.001, max_epochs=2, stop_loss=None)
        st = ens.member_state(e)
        for key, v in f.state_dict().items():
            assert torch.allclose(st["focus"][key], v, atol=1e-9), key
        for key, v in c.state_dict().items():
            assert torch.allclose(st["cls"][key], v, atol=1e-9), key
    # the padding itself never moved
    assert (ens.params["focus.0.weight"][0, :, 6:] == 0).all()
    assert (ens.params["cls.0.weight"][0, :, 4:] == 0).all()


def test_per_segment_single_run_equals_vectorised():
    d = data.subset(data.load("d1"), 250)
    spec = models.arch("A_1", layer=1)
    f1, c1, _ = train.train_single(spec, 0, d, max_epochs=1, stop_loss=None)
    f2, c2, _ = train.train_single(spec, 0, d, max_epochs=1, stop_loss=None, per_segment=True)
    for a, b in ((f1, f2), (c1, c2)):
        for (k1, v1), (_, v2) in zip(a.state_dict().items(), b.state_dict().items()):
            assert torch.allclose(v1, v2, atol=1e-10), k1


# --- the authors' stopping rule, tables and claim inputs -------------------------------------------


def test_minibatch_stopping_rule_matches_a_single_run():
    """The batched program stops where a single run with the authors' rule (sum of the epoch's minibatch
    losses / (batches - 1)) stops, and a member frozen there equals that single run."""
    d = data.subset(data.load("dist1", 0), 750)  # 3 minibatches of 250: the sum is divided by 2
    spec = models.arch("em-linear")
    ens = models.Ensemble([spec] * 2, [3, 3])
    init = float(
        train.evaluate(
            ens, d.x_train, d.y_train, d.fore_train, "softmax", torch.zeros(2, dtype=torch.float64)
        )["loss"][0]
    )
    # with 3 minibatches the authors' epoch loss is 1.5 x the mean minibatch loss, so at 1.4 x the
    # initial loss a member stops once its minibatch losses average below ~0.93 x the initial loss;
    # member 0 (lr 0) never does
    threshold = 1.4 * init
    out = train.train_ensemble(
        ens,
        d,
        k=0.0,
        lr=[0.0, 0.05],
        optimiser="sgd",
        max_epochs=6,
        stop_loss=threshold,
        eval_every=1,
        show_progress=False,
    )
    f, c, stop = train.train_single(spec, 3, d, lr=0.05, optimiser="sgd", max_epochs=6, stop_loss=threshold)
    assert out["stop_epoch"].tolist() == [6, stop] and stop < 6
    assert torch.allclose(ens.member_state(1)["focus"]["layers.0.weight"], f.layers[0].weight, atol=1e-12)


def test_side_by_side_shows_every_row_of_the_authors_table():
    import pandas as pd

    from companion.pandey2022 import reference, tables

    runs = pd.DataFrame(
        [
            dict(layer="zeroth", k=0.0, seed=s, acc=a, test_acc=a - 1, ftpt=a - 20, ffpt=20.0)
            for s, a in enumerate([99.0, 95.0, 50.0])
        ]
    )
    summ = tables.summarise(runs, ["layer", "k"])
    assert summ.loc[0, "n_best"] == 2 and summ.loc[0, "acc"] == pytest.approx(
        81.333, abs=1e-3
    )  # training acc
    cmp = tables.side_by_side(summ, tables.reference("T-D1"), ["layer", "k"], ["acc", "ftpt", "n_best"])
    assert len(cmp) == len(reference.REFERENCE["T-D1"])
    assert (cmp["ours runs"] == tables.NOT_RUN).sum() == len(cmp) - 1
    ran = cmp[cmp["ours runs"] != tables.NOT_RUN].iloc[0]
    assert ran["ours best runs"] == "2/3" and ran["ours failed (95% Wilson)"].startswith("33%")
    assert ran["paper train acc"] == "98.16"


def test_claim_inputs_pair_runs_and_leave_unrun_settings_empty():
    import pandas as pd

    from companion.pandey2022 import studies

    rows = [
        dict(
            layer=layer,
            k=0.0,
            seed=s,
            focus_width=fw,
            cls_width=20,
            lr=0.001,
            acc=99.0,
            ftpt=float(10 * s + fw + (5 if layer == "second" else 0)),
        )
        for layer in ("second", "zeroth")
        for fw in (100, 10)
        for s in (2, 0, 1)
    ]
    runs = pd.DataFrame(rows)
    p = studies.paired(runs, "ftpt", dict(layer="second"), dict(layer="zeroth"))
    assert (p["a"] - p["b"] == 5).all() and len(p["a"]) == 6
    assert len(studies.paired(runs, "ftpt", dict(layer="first"), dict(layer="zeroth"))["a"]) == 0
    r = studies.rates(runs, dict(layer="zeroth", focus_width=10), dict(layer="first"))
    assert r == {"successes": (3, 0), "trials": (3, 0)}


def test_width_programs_group_by_focus_width_and_keep_the_authors_cells():
    from companion.pandey2022 import studies

    focus, cls = "10,100,200", "10,20,50,100,200,300"
    assert len(studies.width_cells("T-CPLX-D1", focus, cls, "all")) == 18
    cells = studies.width_cells("T-CPLX-D1", focus, cls, "authors")
    # the authors' D1 table: focus 10 without classifier 10, focus 100 complete, focus 200 only at 10 and 20
    assert len(cells) == 13 and (10, 10) not in cells and (200, 50) not in cells and (200, 20) in cells
    progs = studies.width_programs("T-CPLX-D1", "d1", "D1-cplx", "zeroth", focus, cls, 2, 5, "float64",
                                   "authors")
    assert [[(f[0], c[0]) for f, c in kw["widths"]] for kw in progs] == [
        [(10, 20), (10, 50), (10, 100), (10, 200), (10, 300)],
        [(100, c) for c in (10, 20, 50, 100, 200, 300)],
        [(200, 10), (200, 20)]]
    assert all(kw["layer"] == "zeroth" and list(kw["seeds"]) == [0, 1] for kw in progs)
    # one program per layer and focus width
    assert len(studies.width_programs("T-CPLX", "d2", "A_2_1", "zeroth,first", "50,100", "50", 1, 5,
                                      "float32")) == 4
    with pytest.raises(ValueError, match="none of the width cells"):
        studies.width_cells("T-CPLX-D1", "10", "10", "authors")
    with pytest.raises(ValueError, match="cells must be"):
        studies.width_cells("T-CPLX-D1", "10", "20", "some")


@pytest.mark.parametrize("profile", ["smoke", "quick", "paper"])
def test_f_trend_reads_the_tables_own_programs(profile):
    """Every setting F-TREND shows is a k = 0 program one of the tables (t-d1, t-d2a, t-layer) trains under
    the same profile, with the same configuration: the chapter loads it from the cache instead of training."""
    from companion import cache, config
    from companion.pandey2022 import studies

    def key(cfg):
        return cache.key(train.CACHE_KIND, cfg, train.CACHE_SCOPE)

    d1, d2a, lay = (config.resolve(ch, profile=profile) for ch in ("t-d1", "t-d2a", "t-layer"))
    tables = {key(studies.program_config("d1", "A_1", layer=layer, seeds=range(d1.n_seeds), epochs=d1.epochs,
                                         dtype=d1.dtype)) for layer in studies.parse_layers(d1.layers)}
    tables |= {key(studies.program_config("d2", "A_2_1", layer=layer, seeds=range(d2a.n_seeds),
                                          epochs=d2a.epochs, dtype=d2a.dtype))
               for layer in studies.parse_layers(d2a.layers)}
    tables |= {key(studies.program_config("d1", "D1-ecml", layer=layer, seeds=range(lay.n_seeds),
                                          epochs=lay.epochs, dtype=lay.dtype,
                                          lrs=studies.parse_list(lay.lrs)))
               for layer in studies.parse_layers(lay.layers)}
    if lay.with_d2:
        tables |= {key(studies.program_config("d2", "D2-ecml", layer=layer, seeds=range(lay.n_seeds),
                                              epochs=lay.epochs, dtype=lay.dtype, lrs=[0.01]))
                   for layer in studies.parse_layers(lay.d2_layers)}
    S = config.resolve("f-trend", profile=profile)
    settings = studies.trend_settings(S)
    assert {s["table"] for s in settings} >= {"T-D1", "T-D2a"}
    for s in settings:
        assert key(studies.trend_config(s, S.dtype)) in tables, s


def test_table_a1_runs_give_the_authors_printed_mean_and_sd():
    """The per-run FTPT kept for the T-A1 figure reproduce the mean and SD the authors printed."""
    from companion.pandey2022.reference import REFERENCE

    runs = REFERENCE["T-A1-RUNS"].groupby("normaliser")["ftpt"]
    table = REFERENCE["T-A1"].query("aggregate == 'all runs'").set_index("normaliser")
    assert (runs.size() == table["n"]).all()
    assert np.allclose(runs.mean()[table.index], table["ftpt"], atol=0.01)
    assert np.allclose(runs.std(ddof=1)[table.index], table["ftpt_sd"], atol=0.01)


def test_trend_lines_draw_the_authors_runs_beside_ours():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from companion.pandey2022 import plots

    ours = pd.DataFrame({"method": ["softmax", "softmax", "sparsemax", "sparsemax"], "layer": "zeroth",
                         "ftpt": [90.0, 70.0, 99.0, 98.0]})
    fig = plots.trend_lines(ours, "method", "ftpt", "layer", paper={"softmax": [80.0, 100.0], "other": [1.0]})
    ax = fig.axes[0]
    labels = ax.get_legend_handles_labels()[1]
    assert sorted(labels) == ["authors: each run", "authors: mean ± sd", "ours: layer zeroth"]
    crosses = ax.collections[-1].get_offsets()
    assert np.allclose(crosses[:, 1], [80.0, 100.0])  # only the x value both ran; "other" is not on the axis
    assert np.all((crosses[:, 0] > 0) & (crosses[:, 0] < 0.5))  # beside our softmax point, not on it
    plt.close(fig)


def test_cell_differences_pair_runs_within_each_cell():
    import pandas as pd

    from companion.pandey2022 import studies as St

    rows = []
    for layer, shift in (("zeroth", 0.0), ("first", 1.0)):
        for fw, cw in ((50, 50), (50, 200)):
            for seed in ((1, 0) if layer == "zeroth" else (0, 1)):  # pairing follows the seed, not the rows
                rows.append({"layer": layer, "focus_width": fw, "cls_width": cw, "seed": seed,
                             "ftpt": 10.0 * seed + cw / 10 + shift * (cw / 50)})
    # a cell run at one layer only is left out
    rows.append({"layer": "zeroth", "focus_width": 100, "cls_width": 50, "seed": 0, "ftpt": 1.0})
    d = St.cell_differences(pd.DataFrame(rows), "ftpt", {"layer": "first"}, {"layer": "zeroth"})
    assert list(d) == ["focus 50 / classifier 50", "focus 50 / classifier 200"]
    assert d["focus 50 / classifier 50"].tolist() == [1.0, 1.0]
    assert d["focus 50 / classifier 200"].tolist() == [4.0, 4.0]


def test_the_t_cplx_cells_behind_the_per_cell_claims_text():
    """The registry's text for t-cplx/first-raises-ftpt (raises of 4.4 to 13.8 pp in eight cells, one tie)."""
    from companion.pandey2022.reference import REFERENCE

    t = REFERENCE["T-CPLX"].pivot_table(index=["focus_width", "cls_width"], columns="layer", values="ftpt")
    d = (t["first"] - t["zeroth"]).round(2)
    assert len(d) == 9 and (d == 0).sum() == 1 and d[(50, 200)] == 0
    assert (d[d > 0].min(), d.max()) == (4.39, 13.81)
