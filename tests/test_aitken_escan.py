"""eSCAN built from the SCAN grammar: commands, meanings, lengths, the offset curve."""

import torch

from companion.aitken2021 import escan


def test_exactly_90_commands_and_156_before_filter():
    cmds = escan.base_commands()
    assert len(cmds) == 90
    assert len({c for c, _ in cmds}) == 90
    assert len(escan.base_commands(filter_left_twice=False)) == 156
    for c, _ in cmds:
        text = " ".join(c)
        assert "left twice" not in text
        assert set(c) <= {"run", "walk", "jump", "left", "and", "twice"}
    assert max(len(c) for c, _ in cmds) == 5  # "run left and walk twice"
    assert max(len(a) for _, a in cmds) == 4


def test_documented_meanings():
    assert escan.interpret("jump left and run twice") == ["I_TURN_LEFT", "I_JUMP", "I_RUN", "I_RUN"]
    assert escan.interpret("walk") == ["I_WALK"]
    assert escan.interpret("run twice and walk left") == ["I_RUN", "I_RUN", "I_TURN_LEFT", "I_WALK"]
    assert escan.interpret("jump left twice") == ["I_TURN_LEFT", "I_JUMP"] * 2
    # every base command's output is no longer than its input once "left twice" is gone
    assert all(len(a) <= len(c) for c, a in escan.base_commands())


def test_generated_lengths_pads_and_translation():
    d = escan.generate(500, seed=3)
    S, T = d.inputs.shape[1], d.targets.shape[1]
    assert (S, T) == escan.ESCAN().lengths == (19, 15)
    assert int(d.targets.shape[0]) == 500
    assert (d.out_index >= 10).all() and (d.out_index <= 15).all()
    assert (d.in_index <= 27).all() and (d.in_index < S).all()  # at least one pad = EOS
    pad_in, pad_out = d.in_vocab.pad, d.out_vocab.pad
    pos_s, pos_t = torch.arange(S), torch.arange(T)
    assert ((d.inputs == pad_in) == (pos_s >= d.in_index[:, None])).all()
    assert ((d.targets == pad_out) == (pos_t >= d.out_index[:, None])).all()
    for i in range(50):  # re-derive each output from the commands between periods
        src, tgt = escan.as_words(d, i)
        assert src[-1] == tgt[-1] == "<.>"
        cmds = " ".join(src).split(" <.>")[:-1]
        expect = []
        for c in cmds:
            expect += escan.interpret(c.strip()) + ["<.>"]
        assert tgt == expect
        # the ground-truth source of each output token names the right word
        srcpos = d.meta["expected_source"][i, : len(tgt)].tolist()
        for a, s in zip(tgt, srcpos):
            w = src[s]
            ok = {"I_TURN_LEFT": {"left"}, "<.>": {"<.>"}}.get(a, {a[2:].lower(), "twice"})
            assert w in ok, (a, w)


def test_seeded_and_task_interface():
    a, b = escan.generate(64, seed=7), escan.generate(64, seed=7)
    assert torch.equal(a.inputs, b.inputs) and torch.equal(a.targets, b.targets)
    assert not torch.equal(escan.generate(64, seed=8).inputs, a.inputs)
    task = escan.ESCAN()
    g1, g2 = torch.Generator().manual_seed(1), torch.Generator().manual_seed(1)
    assert torch.equal(task.sample(32, g1).inputs, task.sample(32, g2).inputs)
    from companion.aitken2021.tasks import make_task
    assert make_task(task.config()) == task


def test_offset_curve_rises_from_about_0p3_to_about_3():
    d = escan.generate(4000, seed=0)
    off = escan.find_scan_offset(d.inputs, d.in_index)
    # reference values from the authors' notebook (1000 sequences): 0.32 at i = 0-1, ~1 at 2-5, ~3 at 13-16
    assert abs(off[0].item() - 0.32) < 0.06 and abs(off[1].item() - 0.31) < 0.06
    assert 0.85 < off[2:6].mean().item() < 1.25
    assert 2.7 < off[13:17].mean().item() < 3.3
    # it rises overall, and the ground-truth source offset per decoder step tracks it
    assert off[13:17].mean() - off[0:2].mean() > 2.4
    so = escan.source_offset(d)
    assert so[-3:].nanmean() > so[:2].mean() + 1.5
