"""One-to-one task generators: documented lengths, pads, EOS and translations."""

import torch

from companion.aitken2021.tasks import OneToOne, make_task, stack_members


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_defaults_lengths_pads_and_translation():
    task = OneToOne()
    d = task.sample(2000, _gen())
    assert d.inputs.shape == (2000, 20) and d.targets.shape == (2000, 20)
    assert task.in_vocab.tokens == ("I0", "I1", "I2", "<pad>")
    assert task.out_vocab.tokens == ("O0", "O1", "O2", "<pad>")
    L = d.in_index
    assert int(L.min()) == 15 and int(L.max()) == 19  # uniform on {15..19}, all values reached
    assert set(L.tolist()) == set(range(15, 20))
    pos = torch.arange(20)
    words = pos < L[:, None]
    assert bool((d.inputs[words] < 3).all()) and bool((d.inputs[~words] == 3).all())
    # the first pad is the EOS: index == length, and every sequence has one
    assert bool((d.inputs[torch.arange(2000), L] == 3).all())
    # one-to-one: I_k -> O_k position by position, same pads
    assert torch.equal(d.targets, d.inputs)
    assert torch.equal(d.out_index, d.in_index)
    assert torch.equal(d.input_valid, pos <= L[:, None])


def test_seeded_and_parameters():
    a = OneToOne(n_words=5, min_len=4, max_len=6, pad_to=9)
    x, y = a.sample(50, _gen(3)), a.sample(50, _gen(3))
    assert torch.equal(x.inputs, y.inputs)
    assert not torch.equal(x.inputs, a.sample(50, _gen(4)).inputs)
    assert x.inputs.shape == (50, 9) and int(x.in_index.max()) <= 6 and int(x.in_index.min()) >= 4
    assert len(a.in_vocab) == 6
    assert make_task(a.config()) == a


def test_reversed_output():
    task = OneToOne(reverse=True)
    d = task.sample(300, _gen(1))
    for i in range(300):
        L = int(d.in_index[i])
        assert d.targets[i, :L].tolist() == d.inputs[i, :L].flip(0).tolist()
        assert bool((d.targets[i, L:] == task.out_vocab.pad).all())
        exp = d.meta["expected_source"][i]
        assert exp[:L].tolist() == list(range(L - 1, -1, -1)) and int(exp[L]) == L


def test_prev0_rule():
    task = OneToOne(rules=("prev0",))
    assert task.out_vocab.tokens == ("O0", "O1", "O2", "O0P", "<pad>")
    d = task.sample(300, _gen(2))
    o0p = task.out_vocab.index("O0P")
    n_rule = 0
    for i in range(300):
        L = int(d.in_index[i])
        x, y = d.inputs[i].tolist(), d.targets[i].tolist()
        for t in range(L):
            if t >= 1 and x[t] == 0 and x[t - 1] == 0:
                assert y[t] == o0p
                n_rule += 1
            else:
                assert y[t] == x[t]
        assert y[L] == task.out_vocab.pad
    assert n_rule > 0


def test_stack_members():
    task = OneToOne()
    s = stack_members([task.sample(7, _gen(k)) for k in range(3)])
    assert s.inputs.shape == (3, 7, 20) and s.in_index.shape == (3, 7)
    assert s.meta["expected_source"].shape == (3, 7, 20)
