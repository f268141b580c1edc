"""Broken configurations must make the image chapters' claims fail.

The real pipeline runs at a tiny scale on digits; one setting is broken on purpose (a normaliser that
never trains, attention replaced by the object's box or by its complement) and the claim's registered rule
is applied to the result. A rule that passed these would not be testing anything.
"""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from companion import registry
from companion.pandey2022 import captioning, image_train
from companion.pandey2022 import image_report as R

SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """Per seed: softmax attention trained normally, sparsemax attention never trained (the broken arm)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("COMPANION_CACHE", str(tmp_path_factory.mktemp("cache")))
    data = image_train.data_config(None, 120, 60, data_seed=0)
    members = [m for s in SEEDS for m in (image_train.member(s, 0.0, "softmax"),
                                          image_train.member(s, 0.0, "sparsemax", train="none"))]
    cfg = image_train.program_config(data, members, layer=0, width=0.25, lr=0.004, batch=20, epochs=5,
                                     stop_loss=0.05)
    df = R.member_frame({(0, 0.004): image_train.train_program(cfg)})
    mp.undo()
    return df


def test_untrained_sparsemax_fails_the_accuracy_claim(program):
    soft = R.per_seed(program, "train_acc", normaliser="softmax")
    frozen = R.per_seed(program, "train_acc", normaliser="sparsemax")
    assert soft.mean() > frozen.mean() + 10, "the control needs a trained softmax arm"
    v = registry.decide(registry.get("t-cifar-sparse/sparsemax-keeps-accuracy"), values=frozen - soft)
    assert v.status == "fail"


def test_equal_failure_counts_do_not_pass_the_failure_claim(program):
    # "large k" set to 0: both arms are the same runs, so the rate difference is exactly 0
    same = R.failure_counts(program, dict(normaliser="softmax"), dict(normaliser="softmax"))
    v = registry.decide(registry.get("t-cifar-ent/large-entropy-fails"), **same)
    assert v.status != "pass" and np.isclose(v.estimate, 0.0)


def _betas_with_attention(on_box: bool, seed: int) -> dict:
    """β of every object word when the attention grid is the object's tiles (or everything else)."""
    _, test = captioning.make_caption_data(40, 30, seed)
    g = test.size // 4
    n, T = test.tokens.shape
    grid = torch.zeros(n, T, g, g)
    for i in range(n):
        for t in range(T - 1):
            box = torch.zeros(test.size, test.size)
            for tile in (test.classes[i] == test.tokens[i, t]).nonzero().flatten().tolist():
                top, left, bottom, right = captioning.tile_box(tile, test.size)
                box[top:bottom, left:right] = 1.0
            cell = F.avg_pool2d(box[None, None], test.size // g)[0, 0]
            grid[i, t] = cell if on_box else 1.0 - cell
    return captioning.word_betas(grid, test.tokens, test, (0.1, 0.2), torch.Generator().manual_seed(seed))


def test_attention_exactly_on_the_box_fails_far_from_perfect():
    ratios = []
    for s in SEEDS:
        b = _betas_with_attention(True, s)
        ratios.append(b["top10"] / R.ideal_top10_beta(b["box_area_fraction"]))
    v = registry.decide(registry.get("t-coco/far-from-perfect"), values=ratios)
    assert v.status == "fail"


def test_attention_off_the_box_fails_top10_above_random():
    b = [_betas_with_attention(False, s) for s in SEEDS]
    v = registry.decide(registry.get("t-coco/top10-above-random"), a=[x["top10"] for x in b],
                        b=[x["random10"] for x in b])
    assert v.status == "fail"
