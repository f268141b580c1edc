"""Focus and classification CNNs for image mosaics, and the SDC model around them.

The attention model of the paper applied to images: a *focus network* scores every one of the 9 images
of a mosaic (shared weights), the scores are normalised to attention weights α, the images — or, when
averaging happens at a later layer ℓ, the tanh of the focus net's ℓ-th conv pre-activation — are
averaged with weights α, and a *classification network* labels the average.

Architectures are written as small specs so that one builder serves

* ``cifar``: the authors' full-size nets for 32×32×3 images (focus: six 3×3 convs without bias,
  BatchNorm without running statistics, an fc head 256-64-32-10-1; classifier: six convs 128…512 and
  fc 512-128-3). Averaging layer ∈ {0, 3, 6} ("zeroth", "third", "sixth" in the paper).
* ``digits``: a scaled version for scikit-learn's 8×8 digits (three convs, widths 16-16-32 at width 1),
  which trains in about a minute on a CPU. Averaging layer ∈ {0, 2, 3} (2 = the conv after the first
  pooling, as CIFAR's third; 3 = the last conv, as CIFAR's sixth).

Both accept a width multiplier that scales every conv and hidden fc width. Two initialisation
conventions (``init``): ``"xavier"`` (the authors' later code, the default): Xavier-normal weights, no
biases in the focus net, the classifier's biases at zero; ``"default"`` (their earlier, ECML-era code):
PyTorch's default initialisation with biases in every conv and fc layer of both nets. BatchNorm uses batch
statistics in training *and* evaluation (``track_running_stats=False``), as the authors did, so
evaluation results depend on the evaluation batch size (250 in the authors' code).

Everything is a plain single-network ``nn.Module``. Ensembles of seeds and settings are trained as one
program by stacking the members' parameters and mapping :func:`torch.func.functional_call` with
:func:`torch.func.vmap` (see :mod:`companion.pandey2022.image_train`); convolutions of a vmapped
ensemble run as grouped convolutions.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from .normalisers import NORMALISERS, normalise

__all__ = ["ConvSpec", "NetSpec", "FOCUS_SPECS", "CLASSIFIER_SPECS", "INPUT_SHAPES", "FocusCNN",
           "ClassificationCNN", "SDCImageNet", "averaging_layers", "spec_summary", "LAYER_NAMES", "INITS"]


@dataclass(frozen=True)
class ConvSpec:
    out: int                 # output channels at width multiplier 1
    pad: int = 0
    bn: bool = False
    pool: tuple | None = None  # (kernel, padding) of a MaxPool with stride = kernel, after the ReLU
    dropout: float = 0.0     # Dropout2d after the (pooled) activation


@dataclass(frozen=True)
class NetSpec:
    convs: tuple[ConvSpec, ...]
    fcs: tuple[int, ...]       # hidden fc widths at width 1 (output layer added by the builder)
    avgpool: int | None = None  # AvgPool kernel before the fc head (classifier only; per input size)
    fc_dropout: tuple[float, ...] = ()  # dropout before each fc layer (len = len(fcs) + 1 or empty)


# --- the authors' CIFAR nets ------------------------------------------------------------------------
_CIFAR_FOCUS = NetSpec(
    convs=(
        ConvSpec(32, 0, bn=True),
        ConvSpec(64, 0, pool=(2, 0)),
        ConvSpec(64, 0, bn=True),
        ConvSpec(128, 0, pool=(2, 0), dropout=0.05),
        ConvSpec(256, 0, bn=True),
        ConvSpec(256, 1, pool=(2, 0)),
    ),
    fcs=(64, 32, 10),
    fc_dropout=(0.1, 0.0, 0.1, 0.0),
)
_CIFAR_CLASSIFIER = NetSpec(
    convs=(
        ConvSpec(128, 1, bn=True),
        ConvSpec(128, 1, pool=(2, 1)),
        ConvSpec(256, 1, bn=True),
        ConvSpec(256, 1, pool=(2, 1), dropout=0.05),
        ConvSpec(512, 1, bn=True),
        ConvSpec(512, 1, pool=(2, 1)),
    ),
    fcs=(128,),
    avgpool=4,
    fc_dropout=(0.1, 0.0),
)

# --- scaled nets for 8×8 digits (our choice; no dropout so that a batched ensemble is exactly a set of
# single runs, and the nets stay tiny) ---------------------------------------------------------------
_DIGITS_FOCUS = NetSpec(
    convs=(ConvSpec(16, 1, bn=True, pool=(2, 0)), ConvSpec(16, 1), ConvSpec(32, 1, bn=True, pool=(2, 0))),
    fcs=(32,),
)
_DIGITS_CLASSIFIER = NetSpec(
    convs=(ConvSpec(16, 1, bn=True, pool=(2, 0)), ConvSpec(16, 1), ConvSpec(32, 1, bn=True, pool=(2, 0))),
    fcs=(32,),
    avgpool=2,
)

FOCUS_SPECS = {"cifar": _CIFAR_FOCUS, "digits": _DIGITS_FOCUS}
CLASSIFIER_SPECS = {"cifar": _CIFAR_CLASSIFIER, "digits": _DIGITS_CLASSIFIER}
#: image (channels, size) per architecture family
INPUT_SHAPES = {"cifar": (3, 32), "digits": (1, 8)}
#: averaging layers allowed per family (0 = zeroth = raw images)
_LAYERS = {"cifar": (0, 3, 6), "digits": (0, 2, 3)}
LAYER_NAMES = {0: "zeroth", 2: "second", 3: "third", 6: "sixth"}
#: initialisation conventions: Xavier-normal without focus biases (AAAI code); PyTorch's default, with biases
#: (ECML code)
INITS = ("xavier", "default")


def averaging_layers(arch: str) -> tuple[int, ...]:
    return _LAYERS[arch]


def _w(n: int, width: float) -> int:
    return max(2, int(round(n * width)))


def _check_init(init: str) -> str:
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, not {init!r}")
    return init


def _xavier(module: nn.Module) -> None:
    for m in module.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.xavier_normal_(m.weight)
            if m.bias is not None:
                nn.init.zeros_(m.bias)


class _ConvStack(nn.Module):
    """Convs of a spec; ``forward(x, upto, tap)`` also returns the pre-activation of conv ``tap``."""

    def __init__(self, in_ch: int, spec: NetSpec, width: float, bias: bool):
        super().__init__()
        self.convs, self.bns, self.specs = nn.ModuleList(), nn.ModuleList(), spec.convs
        c = in_ch
        for cs in spec.convs:
            o = _w(cs.out, width)
            self.convs.append(nn.Conv2d(c, o, 3, padding=cs.pad, bias=bias))
            self.bns.append(nn.BatchNorm2d(o, track_running_stats=False) if cs.bn else nn.Identity())
            c = o
        self.out_channels = c
        self.drop = nn.ModuleList(nn.Dropout2d(cs.dropout) if cs.dropout > 0 else nn.Identity()
                                  for cs in spec.convs)

    def forward(self, x: torch.Tensor, tap: int = 0):
        feat = None
        for i, (conv, bn, cs, dr) in enumerate(zip(self.convs, self.bns, self.specs, self.drop), start=1):
            h = bn(conv(x))
            if i == tap:
                feat = torch.tanh(h)  # the authors: layer-ℓ features = tanh of the ℓ-th pre-activation
            x = torch.relu(h)
            if cs.pool is not None:
                x = nn.functional.max_pool2d(x, cs.pool[0], cs.pool[0], cs.pool[1])
            x = dr(x)
        return x, feat


def _probe(trunk: _ConvStack, c: int, s: int, tap: int = 0):
    """Output shapes of a trunk, found with a zero batch in eval mode (no RNG draws)."""
    was = trunk.training
    trunk.eval()
    with torch.no_grad():
        out = trunk(torch.zeros(2, c, s, s), tap)
    trunk.train(was)
    return out


def _fc_head(in_f: int, hidden: tuple[int, ...], out: int, width: float, bias: bool) -> nn.ModuleList:
    layers, f = nn.ModuleList(), in_f
    for h in hidden:
        layers.append(nn.Linear(f, _w(h, width), bias=bias))
        f = _w(h, width)
    layers.append(nn.Linear(f, out, bias=bias))
    return layers


class FocusCNN(nn.Module):
    """Scores one image (the "where" net). ``forward(x, tap)`` -> (score (N,), tanh features of conv
    ``tap`` or None)."""

    def __init__(self, arch: str = "digits", width: float = 1.0, init: str = "xavier"):
        super().__init__()
        spec = FOCUS_SPECS[arch]
        in_ch, size = INPUT_SHAPES[arch]
        bias = _check_init(init) == "default"
        self.trunk = _ConvStack(in_ch, spec, width, bias=bias)
        flat = _probe(self.trunk, in_ch, size)[0].flatten(1).shape[1]
        self.fc = _fc_head(flat, spec.fcs, 1, width, bias=bias)
        self.fc_dropout = tuple(spec.fc_dropout) or (0.0,) * len(self.fc)
        if init == "xavier":
            _xavier(self)

    def forward(self, x: torch.Tensor, tap: int = 0):
        h, feat = self.trunk(x, tap)
        h = h.flatten(1)
        for i, lin in enumerate(self.fc):
            if self.fc_dropout[i] > 0:
                h = nn.functional.dropout(h, self.fc_dropout[i], self.training)
            h = lin(h)
            if i < len(self.fc) - 1:
                h = torch.relu(h)
        return h.squeeze(-1), feat


class ClassificationCNN(nn.Module):
    """Labels an averaged image or feature map (the "what" net): (N, C_in, s, s) -> (N, K) logits."""

    def __init__(self, arch: str = "digits", in_ch: int | None = None, size: int | None = None,
                 n_classes: int = 3, width: float = 1.0, init: str = "xavier"):
        super().__init__()
        spec = CLASSIFIER_SPECS[arch]
        c0, s0 = INPUT_SHAPES[arch]
        in_ch, size = in_ch or c0, size or s0
        self.trunk = _ConvStack(in_ch, spec, width, bias=True)
        probe = _probe(self.trunk, in_ch, size)[0]
        s = probe.shape[-1]
        # The authors: AvgPool k=4 for a 32×32 input and k=2 for the 3×3 sixth-layer input; in general
        # average over what is left, so the head always sees one vector per channel.
        self.avg_k = min(spec.avgpool or s, s)
        flat = self.trunk.out_channels * ((s - self.avg_k) // self.avg_k + 1) ** 2
        self.fc = _fc_head(flat, spec.fcs, n_classes, width, bias=True)
        self.fc_dropout = tuple(spec.fc_dropout) or (0.0,) * len(self.fc)
        if _check_init(init) == "xavier":
            _xavier(self)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        h, _ = self.trunk(z)
        h = nn.functional.avg_pool2d(h, self.avg_k).flatten(1)
        for i, lin in enumerate(self.fc):
            if self.fc_dropout[i] > 0:
                h = nn.functional.dropout(h, self.fc_dropout[i], self.training)
            h = lin(h)
            if i < len(self.fc) - 1:
                h = torch.relu(h)
        return h


class SDCImageNet(nn.Module):
    """Focus net + classification net with averaging at ``layer`` (0 = raw images).

    With ``seed`` given, the nets are initialised as the authors do: ``torch.manual_seed(seed)`` before
    the focus net and again before the classification net; the global RNG state is restored. ``init``
    picks the initialisation convention (see :data:`INITS`).

    ``forward(x, mode)``:
      * ``mode="sdc"`` — x (B, 9, C, H, W) -> (scores (B, 9), alpha (B, 9), logits (B, K));
      * ``mode="focus"`` — x (N, C, H, W) -> focus score (N,) (fg-vs-bg pre-training logit);
      * ``mode="classify"`` — x (N, C, H, W) -> classifier logits (N, K) (pre-training on fg images;
        only meaningful at the zeroth layer).
    """

    def __init__(self, arch: str = "digits", layer: int = 0, normaliser: str = "softmax",
                 width: float = 1.0, n_classes: int = 3, seed: int | None = None, init: str = "xavier"):
        super().__init__()
        if layer not in _LAYERS[arch]:
            raise ValueError(f"averaging layer {layer} not available for {arch!r}; "
                             f"choose from {_LAYERS[arch]}")
        self.arch, self.layer, self.normaliser = arch, layer, normaliser
        c, s = INPUT_SHAPES[arch]
        with torch.random.fork_rng(devices=[], enabled=seed is not None):
            if seed is not None:
                torch.manual_seed(int(seed))
            self.focus_net = FocusCNN(arch, width, init)
            if layer > 0:
                feat = _probe(self.focus_net.trunk, c, s, tap=layer)[1]
                c, s = feat.shape[1], feat.shape[-1]
            if seed is not None:
                torch.manual_seed(int(seed))
            self.classification_net = ClassificationCNN(arch, c, s, n_classes, width, init)

    def forward(self, x: torch.Tensor, mode: str = "sdc", norm_code: torch.Tensor | None = None):
        """``norm_code`` (0-d tensor: index into ``NORMALISERS``) overrides the normaliser per call, so a
        vmapped ensemble can mix softmax, sparsemax and spherical-softmax members."""
        if mode == "focus":
            return self.focus_net(x)[0]
        if mode == "classify":
            return self.classification_net(x)
        b, m = x.shape[:2]
        score, feat = self.focus_net(x.flatten(0, 1), tap=self.layer)
        scores = score.view(b, m)
        if norm_code is None:
            alpha = normalise(scores, self.normaliser)
        else:
            alpha = torch.where(norm_code == 0, normalise(scores, NORMALISERS[0]),
                                torch.where(norm_code == 1, normalise(scores, NORMALISERS[1]),
                                            normalise(scores, NORMALISERS[2])))
        phi = x if self.layer == 0 else feat.view(b, m, *feat.shape[1:])
        z = torch.einsum("bj,bj...->b...", alpha, phi)
        return scores, alpha, self.classification_net(z)


def spec_summary(arch: str, width: float) -> dict:
    """Widths actually used (for the chapters' architecture table)."""
    f, c = FOCUS_SPECS[arch], CLASSIFIER_SPECS[arch]
    return {
        "focus convs": [_w(cs.out, width) for cs in f.convs],
        "focus fc": [_w(h, width) for h in f.fcs] + [1],
        "classifier convs": [_w(cs.out, width) for cs in c.convs],
        "classifier fc": [_w(h, width) for h in c.fcs] + ["K"],
    }
