"""A CPU-sized analogue of the paper's captioning motivation (F-COCO, T-COCO): a small
Show-Attend-Tell-style captioner on digit mosaics, and the attention–box overlap score β of its words.

**This is not COCO.** The authors trained Show-Attend-Tell (VGG-19 grid features, LSTM decoder with soft
attention) on COCO-2014 and measured, for each generated object word, how well the top-k % most attended
pixels overlap the object's bounding box. COCO and a VGG encoder are far beyond a
2-core CPU, so the companion builds a task with the same ingredients where every box is known exactly:

* an image is a 3×3 grid of tiles (8×8 scikit-learn digits by default, 24×24 pixels; 32×32 CIFAR-10
  images when a CIFAR directory is given, 96×96 pixels); ``n_objects`` tiles hold an image, the rest are
  blank (pixel value −1);
* its "caption" is the sequence of those images' classes in raster order, then ``<end>``;
* each digit's box is its tile.

The captioner: a 3-conv encoder with two 2×2 poolings turns the image into a grid of feature vectors at
a quarter of the resolution (6×6 for digits; each cell sees an 18×18-pixel window, so features of
neighbouring tiles mix, as VGG features do); an LSTM decoder with
additive soft attention over the 36 cells emits one token per step. Training uses teacher forcing;
evaluation decodes greedily. As in Show-Attend-Tell visualisations the attention map is upsampled
(bilinearly) to the image size before top-k % pixels are taken.

Several seeds train as one program: the parameters of E single-seed models are stacked and the model
is mapped over them with ``torch.func.vmap``.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from .. import cache
from ..device import default_device, train_threads
from ..progress import progress
from ..seeding import generator, seed_all
from . import images as images_mod
from . import overlap

#: Code the cached captioners depend on (see image_train.SCOPE for why it is narrow).
SCOPE = ("pandey2022/images.py", "pandey2022/captioning.py", "pandey2022/overlap.py",
         "pandey2022/image_train.py")
KIND = "pandey2022-captioner"
START, END = 10, 11  # token ids after the ten classes (digits or CIFAR-10 classes)
VOCAB = 12
GRID = 3  # tiles per side


# --------------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------------
@dataclass
class CaptionSet:
    images: torch.Tensor     # (N, 1, 24, 24)
    tokens: torch.Tensor     # (N, n_objects + 1): digits in raster order, then END
    tiles: torch.Tensor      # (N, n_objects): tile index (0..8) of each caption digit
    classes: torch.Tensor    # (N, 9): class per tile, -1 for blank

    def __len__(self) -> int:
        return int(self.images.shape[0])

    @property
    def tile(self) -> int:
        return int(self.images.shape[-1]) // GRID

    @property
    def size(self) -> int:
        return int(self.images.shape[-1])


def _draw_captions(bank, labels, pool, n, n_objects, gen) -> CaptionSet:
    tiles = torch.stack([torch.randperm(GRID * GRID, generator=gen)[:n_objects] for _ in range(n)])
    tiles = tiles.sort(dim=1).values  # raster order = caption order
    pick = pool[torch.randint(0, len(pool), (n, n_objects), generator=gen)]
    canvas = torch.full((n, GRID * GRID, *bank.shape[1:]), -1.0)
    canvas[torch.arange(n).unsqueeze(1), tiles] = bank[pick]
    classes = torch.full((n, GRID * GRID), -1, dtype=torch.int64)
    classes[torch.arange(n).unsqueeze(1), tiles] = labels[pick]
    imgs = torch.stack([images_mod.mosaic_grid(c) for c in canvas])
    tokens = torch.cat([labels[pick], torch.full((n, 1), END)], 1)
    return CaptionSet(imgs, tokens, tiles, classes)


def make_caption_data(n_train: int, n_test: int, seed: int, n_objects: int = 3, data_dir=None,
                      max_images: int | None = None) -> tuple[CaptionSet, CaptionSet]:
    """Train and test caption mosaics from disjoint random halves of an image set (all ten classes are
    objects): scikit-learn digits by default, CIFAR-10 from ``data_dir`` if given."""
    imgs = images_mod.load_images(data_dir, max_images=max_images)
    gen = generator(seed)
    perm = torch.randperm(len(imgs), generator=gen)
    half = len(perm) // 2
    test_pool, train_pool = perm[:half], perm[half:]
    tr = _draw_captions(imgs.images, imgs.labels, train_pool, n_train, n_objects, gen)
    te = _draw_captions(imgs.images, imgs.labels, test_pool, n_test, n_objects, gen)
    return tr, te


def tile_box(tile: int, size: int) -> tuple[int, int, int, int]:
    """Pixel box (top, left, bottom, right) of tile 0..8 of a size×size image."""
    t = size // GRID
    r, c = divmod(int(tile), GRID)
    return (r * t, c * t, (r + 1) * t, (c + 1) * t)


# --------------------------------------------------------------------------------------------------
# Model (one seed; vmapped for ensembles)
# --------------------------------------------------------------------------------------------------
class Captioner(nn.Module):
    """Encoder CNN -> (size/4)² grid of C-vectors; LSTM decoder with soft (additive) attention,
    Show-Attend-Tell style."""

    def __init__(self, in_ch: int = 1, size: int = 24, width: int = 32, embed: int = 16, hidden: int = 64,
                 attn: int = 32):
        super().__init__()
        self.grid = size // 4
        self.conv1 = nn.Conv2d(in_ch, width // 2, 3, padding=1)
        self.conv2 = nn.Conv2d(width // 2, width, 3, padding=1)
        self.conv3 = nn.Conv2d(width, width, 3, padding=1)
        # a learned embedding per grid cell: VGG features carry position implicitly (padding, large
        # receptive fields); our small encoder needs it explicitly to find "the next digit in raster order"
        self.pos = nn.Parameter(torch.randn(self.grid * self.grid, width))
        self.embed = nn.Embedding(VOCAB, embed)
        self.init_h = nn.Linear(width, hidden)
        self.init_c = nn.Linear(width, hidden)
        self.att_f = nn.Linear(width, attn)
        self.att_h = nn.Linear(hidden, attn)
        self.att_v = nn.Linear(attn, 1)
        self.lstm_x = nn.Linear(embed + width, 4 * hidden)
        self.lstm_h = nn.Linear(hidden, 4 * hidden, bias=False)
        self.out = nn.Linear(hidden + width, VOCAB)
        self.hidden = hidden

    def encode(self, img: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(torch.relu(self.conv1(img)), 2)
        x = F.max_pool2d(torch.relu(self.conv2(x)), 2)
        x = torch.relu(self.conv3(x))  # (B, C, g, g)
        return x.flatten(2).transpose(1, 2) + self.pos  # (B, g², C)

    def step(self, feats, pf, tok, h, c):
        e = self.att_v(torch.tanh(pf + self.att_h(h).unsqueeze(1))).squeeze(-1)  # (B, g²)
        alpha = torch.softmax(e, -1)
        ctx = torch.einsum("bl,blc->bc", alpha, feats)
        g = self.lstm_x(torch.cat([self.embed(tok), ctx], -1)) + self.lstm_h(h)
        i, f, gg, o = g.chunk(4, -1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg)
        h = torch.sigmoid(o) * torch.tanh(c)
        logits = self.out(torch.cat([h, ctx], -1))
        return logits, alpha, h, c

    def forward(self, img: torch.Tensor, tokens: torch.Tensor | None = None, steps: int = 4):
        """Teacher-forced when ``tokens`` (B, T) is given, else greedy for ``steps`` steps.
        Returns logits (B, T, V) and attention (B, T, g²)."""
        feats = self.encode(img)
        pf = self.att_f(feats)
        mean = feats.mean(1)
        h, c = torch.tanh(self.init_h(mean)), torch.tanh(self.init_c(mean))
        tok = torch.full(img.shape[:1], START, dtype=torch.long, device=img.device)
        T = tokens.shape[1] if tokens is not None else steps
        logits, alphas = [], []
        for t in range(T):
            lg, a, h, c = self.step(feats, pf, tok, h, c)
            logits.append(lg)
            alphas.append(a)
            tok = tokens[:, t] if tokens is not None else lg.argmax(-1)
        return torch.stack(logits, 1), torch.stack(alphas, 1)


def _build(seed: int, **kw) -> Captioner:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        return Captioner(**kw)


# --------------------------------------------------------------------------------------------------
# Training and the β analysis
# --------------------------------------------------------------------------------------------------
def captioner_config(seeds, n_train: int, n_test: int, epochs: int, data_seed: int = 0, n_objects: int = 3,
                     width: int = 32, lr: float = 4e-3, batch: int = 64, fracs=(0.1, 0.2),
                     n_examples: int = 8, data_dir=None, max_images: int | None = None) -> dict:
    return {"seeds": [int(s) for s in seeds], "n_train": int(n_train), "n_test": int(n_test),
            "data_dir": None if data_dir is None else str(data_dir),
            "max_images": None if data_dir is None else max_images,
            "epochs": int(epochs), "data_seed": int(data_seed), "n_objects": int(n_objects),
            "width": int(width), "lr": float(lr), "batch": int(batch), "fracs": [float(f) for f in fracs],
            "n_examples": int(n_examples)}


def train_captioner(cfg: dict) -> dict:
    """Train E captioners (one per seed) as one program and measure β on the test set (cached)."""
    def compute():
        with train_threads():
            return _train(cfg)

    return cache.cached(KIND, cfg, compute, scope=SCOPE)


def word_betas(alpha_grid: torch.Tensor, gen_tokens: torch.Tensor, data: CaptionSet, fracs, rand_gen) -> dict:
    """β of every correctly generated object word of one model.

    ``alpha_grid`` (N, T, g, g) attention per step, ``gen_tokens`` (N, T) greedy tokens. A word at step t
    counts when it is a digit that occurs in the image (as the authors count: object words that are
    generated and have a box); its box mask is the union of the tiles holding that digit. Returns, per
    fraction f: β of the top-f mask and of a random-f mask, plus whether the attention peak lies in the
    box ("focus true") for each counted word."""
    n, T = gen_tokens.shape
    S = data.size
    up = overlap.upsample_attention(alpha_grid, (S, S))  # (N, T, S, S)
    rows, steps, masks = [], [], []
    for i in range(n):
        for t in range(min(T, data.tokens.shape[1] - 1)):
            w = int(gen_tokens[i, t])
            if w >= 10:
                continue
            tiles = (data.classes[i] == w).nonzero().flatten()
            if len(tiles) == 0:
                continue
            m = torch.zeros(S, S, dtype=torch.bool)
            for tl in tiles.tolist():
                m |= overlap.box_mask(S, S, tile_box(tl, S))
            rows.append(i)
            steps.append(t)
            masks.append(m)
    out = {"n_words": len(rows)}
    if not rows:
        for f in fracs:
            out[f"top{int(round(100 * f))}"] = float("nan")
            out[f"random{int(round(100 * f))}"] = float("nan")
        out["peak_in_box"] = float("nan")
        return out
    u = torch.stack(masks)
    att = up[torch.tensor(rows), torch.tensor(steps)]
    for f in fracs:
        tag = int(round(100 * f))
        per_word = overlap.beta(u, overlap.topk_mask(att, f))
        out[f"top{tag}"] = float(per_word.mean())
        if tag == 10:  # spread over words: the paper's examples run from 0 to 0.79
            q = torch.quantile(per_word, torch.tensor([0.1, 0.5, 0.9], dtype=per_word.dtype))
            out["top10_q10"], out["top10_median"], out["top10_q90"] = (float(v) for v in q)
            out["top10_below_0.2"] = float(100.0 * (per_word < 0.2).double().mean())
        out[f"random{tag}"] = float(overlap.beta(u, overlap.random_mask(att.shape, f, rand_gen)).mean())
    peak = att.flatten(1).argmax(1)
    out["peak_in_box"] = float(100.0 * u.flatten(1)[torch.arange(len(rows)), peak].double().mean())
    out["box_area_fraction"] = float(u.flatten(1).double().mean(1).mean())
    return out


def _train(cfg: dict) -> dict:
    seeds = cfg["seeds"]
    E = len(seeds)
    seed_all(seeds[0])
    train, test = make_caption_data(cfg["n_train"], cfg["n_test"], cfg["data_seed"], cfg["n_objects"],
                                    cfg["data_dir"], cfg["max_images"])
    dev = default_device()
    in_ch = train.images.shape[1]
    nets = [_build(s, in_ch=in_ch, size=train.size, width=cfg["width"]).to(dev) for s in seeds]
    params, _ = stack_module_state(nets)
    base = copy.deepcopy(nets[0]).to("meta")
    tf = vmap(lambda p, x, tok: functional_call(base, p, (x, tok)), in_dims=(0, 0, 0))
    steps = {"steps": cfg["n_objects"] + 1}
    greedy = vmap(lambda p, x: functional_call(base, p, (x,), steps), in_dims=(0, None))
    opt = torch.optim.Adam(list(params.values()), lr=cfg["lr"])
    gens = [generator(s) for s in seeds]
    N, B = len(train), cfg["batch"]
    curve = []
    for _ in progress(range(cfg["epochs"]), desc="captioner"):
        perm = torch.stack([torch.randperm(N, generator=g) for g in gens])
        tot = torch.zeros(E)
        nb = max(N // B, 1)
        for b in range(nb):
            rows = perm[:, b * B:(b + 1) * B]
            tok = train.tokens[rows].to(dev)
            logits, _ = tf(params, train.images[rows].to(dev), tok)
            loss = F.cross_entropy(logits.flatten(0, 2), tok.flatten(), reduction="none")
            loss = loss.view(E, -1).mean(1)
            opt.zero_grad()
            loss.sum().backward()
            opt.step()
            tot += loss.detach().cpu()
        curve.append(tot / nb)
    with torch.no_grad():
        logits, alpha = greedy(params, test.images.to(dev))  # (E, N, T, V), (E, N, T, g²)
        logits, alpha = logits.cpu(), alpha.cpu()
    gen_tok = logits.argmax(-1)
    T = test.tokens.shape[1]
    word_acc = 100.0 * (gen_tok[..., : T - 1] == test.tokens[:, : T - 1]).double().mean((1, 2))
    caption_acc = 100.0 * (gen_tok == test.tokens).all(-1).double().mean(1)
    g = nets[0].grid
    grid = alpha.view(E, len(test), T, g, g)
    per_member = []
    for e in range(E):
        per_member.append(word_betas(grid[e], gen_tok[e], test, cfg["fracs"], generator(7919 + seeds[e])))
    n_ex = min(cfg["n_examples"], len(test))
    return {
        "seeds": seeds,
        "loss_curve": torch.stack(curve, 1) if curve else torch.zeros(E, 0),
        "word_acc": word_acc,
        "caption_acc": caption_acc,
        "betas": per_member,
        "examples_alpha": grid[:, :n_ex].clone(),
        "examples_tokens": gen_tok[:, :n_ex].clone(),
    }
