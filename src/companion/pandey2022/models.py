"""Focus ("where") and classification ("what") networks of the SDC attention model, as ensembles.

Two layers of implementation:

* ``FocusNet`` / ``ClassificationNet``: ordinary single-run ``nn.Module`` s. They define the
  initialisation (``torch.manual_seed(n)`` then build the net, exactly like the authors' scripts)
  and serve as the reference for tests and for the loop-of-runs benchmark.
* ``Ensemble``: the parameters of E such nets stacked on a leading axis (narrower members are
  zero-padded to the widest one, which is exact: padded units have zero input and output weights, a
  zero pre-activation, zero ReLU gradient and so never move). ``forward`` runs all members at once
  with batched matrix products and returns a ``Trace`` (scores, attention weights alpha, averaged
  features z, logits).

Averaging at layer ``l``: l = 0 averages the raw segments; l >= 1 averages ``tanh`` of the
pre-activation of the l-th hidden layer of the focus net, whose own path continues with ReLU of that
same pre-activation (the first l layers are shared by the two networks).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

import torch
from torch import nn

from .normalisers import normalise

LAYERS = {"zeroth": 0, "first": 1, "second": 2}


@dataclass(frozen=True)
class ArchSpec:
    """Everything that fixes the shapes and the initialisation of one (focus, classification) pair."""

    name: str
    d_in: int
    focus_hidden: tuple = ()
    cls_hidden: tuple = ()
    n_classes: int = 3
    focus_bias: bool = True
    cls_bias: bool = True
    init: str = "default"          # "default" (PyTorch) or "xavier" (Xavier-normal weights, zero biases)
    focus_zero: bool = False       # the "functionally zero" duplicate-and-negate focus initialisation
    layer: int = 0                 # averaging layer
    reseed_cls: bool = True        # torch.manual_seed(seed) again before the classification net

    @property
    def feature_dim(self) -> int:
        return self.d_in if self.layer == 0 else self.focus_hidden[self.layer - 1]

    def with_(self, **kw) -> ArchSpec:
        return replace(self, **kw)

    def describe(self) -> dict:
        f = "-".join(map(str, (self.d_in, *self.focus_hidden, 1)))
        c = "-".join(map(str, (self.feature_dim, *self.cls_hidden, self.n_classes)))
        return {"architecture": self.name, "focus_net": f, "classification_net": c,
                "focus_bias": self.focus_bias, "cls_bias": self.cls_bias, "init": self.init,
                "focus_init": ("functionally zero" if self.focus_zero else "not zero"),
                "averaging_layer": self.layer}


#: The note's architectures (section 3). Error-mode nets use PyTorch's default init with biases.
ARCHS = {
    "em-linear": ArchSpec("em-linear", 2, (), (), 3),
    "em3": ArchSpec("em3", 2, (), (20, 20), 6),
    "A_1": ArchSpec("A_1", 2, (50, 50), (50,), 3, focus_bias=False, init="xavier", focus_zero=True),
    "A_2_1": ArchSpec("A_2_1", 5, (50,), (50,), 3, focus_bias=False, init="xavier", focus_zero=True),
    "A_2_2": ArchSpec("A_2_2", 5, (6, 12), (6, 12), 3, focus_bias=False, init="xavier", focus_zero=True),
    # the appendix sparsity tables as the authors ran them: Xavier-normal focus without the functionally-zero
    # step, one torch.manual_seed per run (the classification net continues the same random stream)
    "A_1-random-focus": ArchSpec("A_1-random-focus", 2, (50, 50), (50,), 3, focus_bias=False, init="xavier",
                                 reseed_cls=False),
    "A_2_2-random-focus": ArchSpec("A_2_2-random-focus", 5, (6, 12), (6, 12), 3, focus_bias=False,
                                   init="xavier", reseed_cls=False),
    # the earlier (ECML) variant: biases everywhere, default init, no functionally-zero trick
    "D1-ecml": ArchSpec("D1-ecml", 2, (50, 50), (50,), 3),
    "D2-ecml": ArchSpec("D2-ecml", 5, (6, 12), (6, 12), 3),
    # complexity study on D1 (exploratory folder): one hidden layer in each net, ECML convention [INFERRED]
    "D1-cplx": ArchSpec("D1-cplx", 2, (100,), (50,), 3),
}


def arch(name: str, **overrides) -> ArchSpec:
    if name not in ARCHS:
        raise ValueError(f"unknown architecture {name!r}; choose one of {sorted(ARCHS)}")
    return ARCHS[name].with_(**overrides)


class FocusNet(nn.Module):
    """Single focus net d_in -> hidden... -> 1 (ReLU), applied to each segment independently."""

    def __init__(self, spec: ArchSpec):
        super().__init__()
        widths = (spec.d_in, *spec.focus_hidden, 1)
        self.layers = nn.ModuleList(nn.Linear(a, b, bias=spec.focus_bias) for a, b in zip(widths, widths[1:]))
        self.layer = spec.layer
        if spec.init == "xavier":
            for lin in self.layers:
                nn.init.xavier_normal_(lin.weight)
                if lin.bias is not None:
                    nn.init.zeros_(lin.bias)
        if spec.focus_zero and spec.focus_hidden:
            functionally_zero_(self)

    def forward(self, x: torch.Tensor):
        """x (..., m, d) -> scores (..., m), features (..., m, f) for the averaging layer."""
        h, feats = x, x
        for i, lin in enumerate(self.layers):
            pre = lin(h)
            if i == len(self.layers) - 1:
                return pre.squeeze(-1), feats
            if i + 1 == self.layer:
                feats = torch.tanh(pre)
            h = torch.relu(pre)


@torch.no_grad()
def functionally_zero_(focus: FocusNet) -> None:
    """Duplicate the first half of the last hidden layer and negate its output weights.

    The two halves then compute identical activations whose contributions cancel, so the focus score
    is exactly 0 for every input (uniform attention 1/m at initialisation) while the gradients with
    respect to both halves are non-zero.
    """
    hid, out = focus.layers[-2], focus.layers[-1]
    h = hid.weight.shape[0] // 2
    hid.weight[h:2 * h] = hid.weight[:h]
    if hid.bias is not None:
        hid.bias[h:2 * h] = hid.bias[:h]
    out.weight[:, h:2 * h] = -out.weight[:, :h]
    if 2 * h < hid.weight.shape[0]:  # odd width: silence the unpaired unit's output
        out.weight[:, 2 * h:] = 0.0


class ClassificationNet(nn.Module):
    def __init__(self, spec: ArchSpec):
        super().__init__()
        widths = (spec.feature_dim, *spec.cls_hidden, spec.n_classes)
        self.layers = nn.ModuleList(nn.Linear(a, b, bias=spec.cls_bias) for a, b in zip(widths, widths[1:]))
        if spec.init == "xavier":
            for lin in self.layers:
                nn.init.xavier_normal_(lin.weight)
                if lin.bias is not None:
                    nn.init.zeros_(lin.bias)

    def forward(self, z):
        for i, lin in enumerate(self.layers):
            z = lin(z)
            if i < len(self.layers) - 1:
                z = torch.relu(z)
        return z


def build_single(spec: ArchSpec, seed: int, dtype=torch.float64):
    """The authors' convention: ``torch.manual_seed(seed)`` before *each* of the two nets (before the focus
    net only when ``spec.reseed_cls`` is False, as in their sparsity-comparison notebooks)."""
    torch.manual_seed(seed)
    focus = FocusNet(spec).to(dtype)
    if spec.reseed_cls:
        torch.manual_seed(seed)
    cls = ClassificationNet(spec).to(dtype)
    return focus, cls


class Trace(NamedTuple):
    scores: torch.Tensor   # (E, B, m) focus scores before normalisation
    alpha: torch.Tensor    # (E, B, m) attention weights
    z: torch.Tensor        # (E, B, f) averaged features
    logits: torch.Tensor   # (E, B, K)


def _pad(t: torch.Tensor, shape) -> torch.Tensor:
    out = t.new_zeros(shape)
    out[tuple(slice(0, s) for s in t.shape)] = t
    return out


class Ensemble:
    """E (focus_net, classification_net) pairs with parameters stacked on a leading axis.

    Weights are stored input-major, ``(E, in, out)``, so a layer is ``h @ W (+ b)`` via ``bmm``.
    ``params`` is an ordered dict of leaf tensors (the optimiser state lives in ``train.py``).
    """

    def __init__(self, specs: Sequence[ArchSpec], seeds: Sequence[int], dtype=torch.float64):
        if len(specs) != len(seeds):
            raise ValueError("one ArchSpec per seed")
        base = specs[0]
        for s in specs:
            if (s.layer, s.d_in, s.n_classes, len(s.focus_hidden), len(s.cls_hidden), s.focus_bias,
                    s.cls_bias) != (base.layer, base.d_in, base.n_classes, len(base.focus_hidden),
                                    len(base.cls_hidden), base.focus_bias, base.cls_bias):
                raise ValueError("ensemble members must share layer, depth, biases and input size")
        self.specs, self.seeds, self.dtype = list(specs), list(seeds), dtype
        self.layer = base.layer
        singles = [build_single(s, n, dtype) for s, n in zip(specs, seeds)]
        self.params = {}
        for prefix, idx in (("focus", 0), ("cls", 1)):
            n_layers = len(singles[0][idx].layers)
            for li in range(n_layers):
                ws = [m[idx].layers[li].weight.detach().T for m in singles]
                shape = [max(w.shape[d] for w in ws) for d in range(2)]
                self.params[f"{prefix}.{li}.weight"] = torch.stack([_pad(w, shape) for w in ws])
                if singles[0][idx].layers[li].bias is not None:
                    bs = [m[idx].layers[li].bias.detach() for m in singles]
                    self.params[f"{prefix}.{li}.bias"] = torch.stack([_pad(b, shape[1:]) for b in bs])
        self.n_focus = len(singles[0][0].layers)
        self.n_cls = len(singles[0][1].layers)
        for p in self.params.values():
            p.requires_grad_(True)

    @property
    def size(self) -> int:
        return len(self.seeds)

    def focus_params(self):
        return [p for k, p in self.params.items() if k.startswith("focus.")]

    def cls_params(self):
        return [p for k, p in self.params.items() if k.startswith("cls.")]

    def state(self) -> dict:
        return {k: p.detach().clone() for k, p in self.params.items()}

    def load_state(self, state: dict) -> Ensemble:
        with torch.no_grad():
            for k, p in self.params.items():
                p.copy_(state[k])
        return self

    def _lin(self, prefix, i, h, params):
        w = params[f"{prefix}.{i}.weight"]
        b = params.get(f"{prefix}.{i}.bias")
        return torch.bmm(h, w) if b is None else torch.baddbmm(b.unsqueeze(1), h, w)

    def focus_scores(self, x: torch.Tensor, params=None):
        """Scores (E, B, m) and averaging features (E, B, m, f) for x of shape (E, B, m, d) or (B, m, d)."""
        params = self.params if params is None else params
        E = params["focus.0.weight"].shape[0]  # a subset of the members when ``params`` is one
        if x.dim() == 3:
            x = x.unsqueeze(0).expand(E, *x.shape)
        _, B, m, d = x.shape
        h = x.reshape(E, B * m, d)
        feats = x
        for i in range(self.n_focus):
            pre = self._lin("focus", i, h, params)
            if i == self.n_focus - 1:
                return pre.reshape(E, B, m), feats
            if i + 1 == self.layer:
                feats = torch.tanh(pre).reshape(E, B, m, -1)
            h = torch.relu(pre)

    def classify(self, z: torch.Tensor, params=None) -> torch.Tensor:
        params = self.params if params is None else params
        for i in range(self.n_cls):
            z = self._lin("cls", i, z, params)
            if i < self.n_cls - 1:
                z = torch.relu(z)
        return z

    def forward(self, x: torch.Tensor, normaliser: str = "softmax", params=None) -> Trace:
        scores, feats = self.focus_scores(x, params)
        alpha = normalise(scores, normaliser)
        z = torch.einsum("ebm,ebmf->ebf", alpha, feats)
        return Trace(scores, alpha, z, self.classify(z, params))

    __call__ = forward

    def member_state(self, e: int) -> dict:
        """Unpadded single-net state dicts (focus, classification) of member ``e``."""
        f, c = build_single(self.specs[e], self.seeds[e], self.dtype)
        for prefix, net in (("focus", f), ("cls", c)):
            sd = {}
            for li, lin in enumerate(net.layers):
                out_f, in_f = lin.weight.shape
                sd[f"layers.{li}.weight"] = (
                    self.params[f"{prefix}.{li}.weight"][e, :in_f, :out_f].detach().T.clone())
                if lin.bias is not None:
                    sd[f"layers.{li}.bias"] = self.params[f"{prefix}.{li}.bias"][e, :out_f].detach().clone()
            net.load_state_dict(sd)
        return {"focus": f.state_dict(), "cls": c.state_dict()}


def from_state(specs, seeds, state: dict, dtype=torch.float64) -> Ensemble:
    """Rebuild an ensemble (e.g. from a cached payload) and load its trained stacked weights."""
    ens = Ensemble(specs, seeds, dtype)
    return ens.load_state({k: v.to(dtype) for k, v in state.items()})
