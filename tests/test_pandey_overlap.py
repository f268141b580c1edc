"""Attention–box overlap score β and the digit-mosaic captioner (pandey2022, F-COCO / T-COCO analogue)."""
import math

import torch

from companion.device import train_threads
from companion.pandey2022 import captioning, overlap


def test_beta_box_fully_inside_topk_known_answer():
    # a 10x10 box in a 40x40 image; attention peaked on 40 pixels inside the box -> top-k mask inside the box
    H = W = 40
    box = (5, 5, 15, 15)
    u = overlap.box_mask(H, W, box)
    attn = torch.zeros(H, W)
    attn[6:10, 5:15] = 1.0  # 4 x 10 = 40 pixels, all inside the box
    # break ties away from the box
    attn += 1e-3 * torch.rand(H, W, generator=torch.Generator().manual_seed(0))
    attn[6:10, 5:15] += 1.0
    frac = 40 / (H * W)
    v = overlap.topk_mask(attn, frac)
    assert int(v.sum()) == 40 and bool((v & ~u).sum() == 0)
    assert math.isclose(float(overlap.beta(u, v)), math.sqrt(40 / 100), rel_tol=1e-12)


def test_beta_identical_disjoint_and_empty():
    u = overlap.box_mask(8, 8, (0, 0, 4, 4))
    assert float(overlap.beta(u, u)) == 1.0
    assert float(overlap.beta(u, overlap.box_mask(8, 8, (4, 4, 8, 8)))) == 0.0
    assert float(overlap.beta(u, torch.zeros(8, 8, dtype=torch.bool))) == 0.0


def test_box_covering_whole_topk_mask_of_whole_image():
    # box = whole image: beta = sqrt(K / N)
    u = torch.ones(20, 20, dtype=torch.bool)
    v = overlap.topk_mask(torch.rand(20, 20, generator=torch.Generator().manual_seed(1)), 0.25)
    assert math.isclose(float(overlap.beta(u, v)), math.sqrt(100 / 400), rel_tol=1e-12)


def test_random_baseline_matches_sqrt_frac_times_area():
    H = W = 60
    u = overlap.box_mask(H, W, (0, 0, 30, 40))  # area fraction 1/3
    g = torch.Generator().manual_seed(0)
    v = overlap.random_mask((500, H, W), 0.1, g)
    assert bool((v.flatten(1).sum(1) == 360).all())
    b = overlap.beta(u.expand(500, H, W), v).mean()
    expected = overlap.expected_random_beta(0.1, 1 / 3)  # = 0.1826, cf. the paper's 0.181 on COCO
    assert abs(float(b) - expected) < 0.01


def test_topk_mask_batched_and_upsample():
    a = torch.rand(3, 2, 6, 6, generator=torch.Generator().manual_seed(2))
    m = overlap.topk_mask(a, 0.1)
    assert m.shape == a.shape and bool((m.flatten(-2).sum(-1) == 4).all())
    up = overlap.upsample_attention(a, (24, 24))
    assert up.shape == (3, 2, 24, 24)
    near = overlap.upsample_attention(a, (24, 24), mode="nearest")
    assert torch.allclose(near[..., ::4, ::4], a)


def test_caption_data_boxes_and_tokens():
    tr, te = captioning.make_caption_data(20, 10, seed=0)
    assert tr.images.shape == (20, 1, 24, 24) and tr.tokens.shape == (20, 4)
    assert bool((tr.tokens[:, -1] == captioning.END).all())
    for i in range(5):
        for j, tile in enumerate(tr.tiles[i].tolist()):
            t, l, b, r = captioning.tile_box(tile, 24)
            assert int(tr.classes[i, tile]) == int(tr.tokens[i, j])
            assert float(tr.images[i, 0, t:b, l:r].max()) > -1.0  # a digit is drawn in its box
        blank = [k for k in range(9) if k not in tr.tiles[i].tolist()]
        for tile in blank:
            t, l, b, r = captioning.tile_box(tile, 24)
            assert float(tr.images[i, 0, t:b, l:r].max()) == -1.0


def test_captioner_batched_equals_single_and_word_betas(tmp_path):
    cfg2 = captioning.captioner_config([0, 1], 64, 20, epochs=1, batch=32)
    cfg1 = captioning.captioner_config([1], 64, 20, epochs=1, batch=32)
    with train_threads():
        both, alone = captioning._train(cfg2), captioning._train(cfg1)
    assert torch.allclose(both["loss_curve"][1], alone["loss_curve"][0], atol=1e-5)
    assert torch.allclose(both["examples_alpha"][1], alone["examples_alpha"][0], atol=1e-5)
    # word_betas: attention exactly on the named object's tile gives the known answer sqrt(K / A)
    _, te = captioning.make_caption_data(64, 20, seed=0)
    T = te.tokens.shape[1]
    grid = torch.zeros(len(te), T, 6, 6)
    for i in range(len(te)):
        for t, tile in enumerate(te.tiles[i].tolist()):
            r, c = divmod(tile, 3)
            grid[i, t, 2 * r:2 * r + 2, 2 * c:2 * c + 2] = 1.0
    out = captioning.word_betas(grid, te.tokens, te, [0.1], torch.Generator().manual_seed(0))
    assert out["n_words"] == 3 * len(te)
    assert out["peak_in_box"] == 100.0
    # each tile is 64 px; top-10 % = 58 px, mostly inside the (possibly merged) box
    assert out["top10"] > 0.85
