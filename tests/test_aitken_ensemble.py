"""Batched ensembles equal single runs; ensemble layers; the AO positional-encoding rotation."""

import torch

from companion.aitken2021.models import ModelConfig, Seq2Seq, random_rotation, sinusoidal_encoding
from companion.aitken2021.tasks import OneToOne
from companion.aitken2021.train import TrainConfig, train_ensemble
from companion.ensemble import EnsembleGRUCell, EnsembleLinear, clip_grad_norm_per_member, init_members

SMALL = TrainConfig(steps=6, batch=16, dataset_batches=3, epochs_per_dataset=2, n_test=32)


def test_ensemble_linear_matches_per_member():
    lin = EnsembleLinear(3, 5, 4)
    init_members([lin], [1, 2, 3])
    x = torch.randn(3, 7, 5)
    y = lin(x)
    for e in range(3):
        assert torch.allclose(y[e], x[e] @ lin.member_weight(e).T + lin.bias[e], atol=1e-6)


def test_gru_cell_matches_formula_and_from_zero():
    cell = EnsembleGRUCell(2, 3, 6)
    init_members([cell], [4, 5])
    x, h = torch.randn(2, 5, 3), torch.randn(2, 5, 6)
    W, U_ur, U_c, b = cell.W, cell.U_ur, cell.U_c, cell.b
    for e in range(2):
        p = x[e] @ W[e] + b[e]
        u = torch.sigmoid(p[:, :6] + h[e] @ U_ur[e][:, :6])
        r = torch.sigmoid(p[:, 6:12] + h[e] @ U_ur[e][:, 6:])
        c = torch.tanh(p[:, 12:] + (r * h[e]) @ U_c[e])
        assert torch.allclose(cell(x, h)[e], u * h[e] + (1 - u) * c, atol=1e-6)
    z = torch.zeros_like(h)
    assert torch.allclose(cell(x, z), cell.step_from_zero(cell.input_projection(x)), atol=1e-6)


def test_member_init_independent_of_ensemble():
    cfg = ModelConfig(arch="AO", in_vocab=4, out_vocab=4, hidden=16)
    big, small = Seq2Seq(cfg, [7, 8, 9]), Seq2Seq(cfg, [8])
    for k, v in small.state_dict().items():
        assert torch.equal(v[0], big.state_dict()[k][1]), k


def test_per_member_clipping():
    p = torch.nn.Parameter(torch.zeros(2, 3))
    p.grad = torch.tensor([[30.0, 40.0, 0.0], [0.3, 0.4, 0.0]])
    norms = clip_grad_norm_per_member([p], 10.0)
    assert torch.allclose(norms, torch.tensor([50.0, 0.5]))
    assert torch.allclose(p.grad[0].norm(), torch.tensor(10.0), atol=1e-4)
    assert torch.allclose(p.grad[1], torch.tensor([0.3, 0.4, 0.0]))


def test_batched_training_equals_single_runs():
    task = OneToOne(min_len=5, max_len=7)
    for arch in ("AED", "AO", "VED"):
        cfg = ModelConfig(arch=arch, in_vocab=4, out_vocab=4, hidden=16, emb_dim=8 if arch == "AO" else None)
        seeds = [11, 12, 13]
        ens = train_ensemble(cfg, task, seeds, SMALL)
        for e, s in enumerate(seeds):
            one = train_ensemble(cfg, task, [s], SMALL)
            for k, v in one["state"].items():
                assert torch.allclose(v[0], ens["state"][k][e], rtol=1e-4, atol=1e-5), (arch, k)
            assert torch.allclose(one["history"]["loss"][:, 0], ens["history"]["loss"][:, e],
                                  rtol=1e-5, atol=1e-6)
            for m in ("word_accuracy", "phrase_accuracy"):
                assert float(one["test"][m][0]) == float(ens["test"][m][e])


def test_pe_rotation_orthogonal_and_encoding():
    R = random_rotation(50, torch.Generator().manual_seed(0))
    assert torch.allclose(R @ R.T, torch.eye(50), atol=1e-5)
    assert abs(float(torch.linalg.det(R.double())) - 1.0) < 1e-4
    pe = sinusoidal_encoding(20, 50, tau=20.0)
    assert torch.allclose(pe[:, 0], torch.sin(torch.arange(20.0)))
    assert torch.allclose(pe[:, 1], torch.cos(torch.arange(20.0)))
    assert torch.allclose(pe[3, 10], torch.sin(torch.tensor(3.0) / 20.0 ** (10 / 50)), atol=1e-6)
    model = Seq2Seq(ModelConfig(arch="AO", in_vocab=4, out_vocab=4, hidden=8), [1, 2])
    for e in range(2):
        R = model.pe.rotation[e]
        assert torch.allclose(R @ R.T, torch.eye(50), atol=1e-5)
        # the rotation preserves the encoding's norms
        assert torch.allclose(model.pe(20)[e].norm(dim=-1), pe.norm(dim=-1), atol=1e-4)
    assert not torch.allclose(model.pe.rotation[0], model.pe.rotation[1])
