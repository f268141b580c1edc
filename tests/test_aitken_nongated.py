"""The non-gated attention-only network: its layer, its members, its training and its cache entry."""

import math

import torch

from companion import cache
from companion.aitken2021 import nongated as NG
from companion.aitken2021.models import ModelConfig
from companion.aitken2021.tasks import OneToOne
from companion.aitken2021.train import TRAIN_SCOPE


def _cfg(task):
    return ModelConfig(arch="AO", in_vocab=len(task.in_vocab), out_vocab=len(task.out_vocab), hidden=16)


def test_tanh_layer_is_tanh_of_an_affine_map():
    layer = NG.EnsembleTanhLayer(2, 3, 4)
    with torch.no_grad():
        layer.weight.copy_(torch.arange(24.0).view(2, 3, 4) / 50)
        layer.bias.copy_(torch.tensor([[0.1, -0.2, 0.0, 0.3], [0.0, 0.0, 1.0, -1.0]]))
    x = torch.tensor([[[1.0, 0.0, -1.0]], [[0.5, 0.5, 0.5]]])  # (E=2, B=1, 3)
    want = torch.tanh(torch.stack([x[e] @ layer.weight[e] + layer.bias[e] for e in range(2)]))
    assert torch.allclose(layer(x), want)
    assert torch.allclose(layer.step_from_zero(layer.input_projection(x)), want)


def test_states_are_a_perceptron_of_word_plus_position():
    task = OneToOne(min_len=4, max_len=6)
    data = task.sample(8, torch.Generator().manual_seed(0))
    model = NG.NonGatedAO(_cfg(task), [5])
    assert not any("U_ur" in k or "U_c" in k for k in model.state_dict())  # no gate, no recurrence
    trace = model(data, mode="teacher")
    x = model.embed_in(data.inputs.unsqueeze(0)) + model.pe(data.inputs.shape[1]).unsqueeze(1)
    want = torch.tanh(x @ model.encoder.weight[0] + model.encoder.bias[0])
    assert torch.allclose(trace.encoder_states, want, atol=1e-6)
    # initialisation: weights N(0, 1/hidden), biases zero
    assert float(model.encoder.bias.detach().abs().max()) == 0.0
    assert math.isclose(float(model.encoder.weight.detach().std()), 1 / math.sqrt(16), rel_tol=0.2)


def test_a_member_equals_the_one_member_network_with_its_seed():
    task = OneToOne(min_len=4, max_len=6)
    pair = NG.NonGatedAO(_cfg(task), [3, 4])
    alone = NG.NonGatedAO(_cfg(task), [4])
    got = pair.member(1).state_dict()
    for k, v in alone.state_dict().items():
        assert torch.equal(got[k], v), k


def test_trained_once_then_loaded_and_the_network_cache_key_does_not_cover_this_module(tmp_path, monkeypatch):
    log = tmp_path / "cache.log"
    monkeypatch.setenv(cache.LOG_ENV, str(log))
    S = {"seed": 1, "variant_seeds": 2, "n_words": 3, "min_len": 4, "max_len": 6, "pad_to": None, "steps": 4,
         "compress_lr": True}
    first = NG.nongated_ensemble(S)
    again = NG.nongated_ensemble(S)
    events = [line.split()[0] for line in log.read_text().splitlines()]
    assert events == ["computed", "loaded"]
    assert first.seeds == again.seeds == [1, 2] and first.arch == "AO"
    assert isinstance(again.model, NG.NonGatedAO)
    assert first.test["phrase_accuracy"].shape == (2,)
    for k, v in first.model.state_dict().items():
        assert torch.equal(v, again.model.state_dict()[k]), k
    # the VED/AED/AO networks are keyed on TRAIN_SCOPE, which leaves this module out
    assert "aitken2021/nongated" not in TRAIN_SCOPE
    assert cache.fingerprint(NG.NONGATED_SCOPE) != cache.fingerprint(TRAIN_SCOPE)
