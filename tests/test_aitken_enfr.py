"""English-French loader on a small file the test writes: normalisation, tokens, split, errors."""

import pytest
import torch

from companion.aitken2021 import enfr

LINES = [
    "Go.\tVa !",
    "Go.\tMarche.",
    "Hi.\tSalut !",
    "Run!\tCours\u202f!",
    "I'm OK.\tJe vais bien.",
    "It's me.\tC\u2019est moi.",
    "Wait!\tAttends\u00a0!",
    "I see.\tJe comprends.",
    "Be calm.\tSois calme.",
    "I won!\tJ'ai gagné !",
    "This sentence has far too many words to keep here."
    "\tCette phrase est beaucoup trop longue pour être gardée ici.",
    "I see it.\tJe le vois.",
]


def write(tmp_path, lines, name="pairs.tsv"):
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def test_normalise_and_tokenise():
    assert enfr.normalize("C\u2019est\u202f!  Oui\u00a0?") == "c'est ! oui ?"
    assert enfr.tokenize("C\u2019est l'homme\u202f!") == ["c'", "est", "l'", "homme", "!"]
    assert enfr.tokenize("J'ai gagné !") == ["j'", "ai", "gagné", "!"]
    assert enfr.detokenize(["c'", "est", "moi", "."]) == "c'est moi ."
    assert enfr.tokenize("I\u2019m sure it's Tom's, don't go.", "en") == [
        "i", "'m", "sure", "it", "'s", "tom", "'s", ",", "do", "n't", "go", "."]
    assert enfr.detokenize(["i", "'m", "do", "n't"], "en") == "i'm don't"


def test_load_small_file(tmp_path):
    p = write(tmp_path, LINES)
    c = enfr.load(p, seed=0, max_len=6, test_fraction=0.3, min_count=1)
    # the 12-word sentence is filtered; 11 pairs, 10 distinct English sentences
    assert c.meta["n_train"] + c.meta["n_test"] == 11
    train_en = {" ".join(e) for e, _ in c.train_tokens}
    test_en = {" ".join(e) for e, _ in c.test_tokens}
    assert train_en.isdisjoint(test_en)  # split by English sentence
    assert len(test_en) == 3  # round(0.3 * 10)
    # both translations of "go ." travel together
    go = [f for e, f in c.train_tokens + c.test_tokens if e == ["go", "."]]
    assert len(go) == 2
    assert c.in_vocab.tokens[:2] == ("<pad>", "<unk>") and c.in_vocab.pad == 0
    for split, toks in ((c.train, c.train_tokens), (c.test, c.test_tokens)):
        assert split.inputs.shape[1] == split.targets.shape[1] == 7  # max_len + 1
        for i, (e, f) in enumerate(toks):
            assert int(split.in_index[i]) == len(e) and int(split.out_index[i]) == len(f)
            assert (split.inputs[i, len(e):] == 0).all()
            known = [w if w in c.out_vocab.tokens else "<unk>" for w in f]
            assert enfr.decode(c.out_vocab, split.targets[i]) == known
    # vocabularies come from the training split only
    for _, f in c.test_tokens:
        for w in f:
            if w not in {w for _, ff in c.train_tokens for w in ff}:
                assert w not in c.out_vocab.tokens


def test_seeded_split_and_subset(tmp_path):
    p = write(tmp_path, LINES)
    a = enfr.load(p, seed=1, max_len=6, test_fraction=0.3, min_count=1, n_train=4)
    b = enfr.load(p, seed=1, max_len=6, test_fraction=0.3, min_count=1, n_train=4)
    assert a.train_tokens == b.train_tokens and len(a.train_tokens) == 4
    task = enfr.EnFrTask(data_path=str(p), max_len=6, test_fraction=0.3, min_count=1)
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    assert torch.equal(task.sample(8, g1).inputs, task.sample(8, g2).inputs)
    from companion.aitken2021.tasks import make_task
    assert make_task(task.config()) == task


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(enfr.EnFrDataError, match="not found"):
        enfr.load(tmp_path / "nope.tsv")
    bad = write(tmp_path, LINES[:3] + ["no tab on this line"], name="bad.tsv")
    with pytest.raises(enfr.EnFrDataError, match=r"bad.tsv:4: malformed line") as err:
        enfr.load(bad)
    assert "\n" not in str(err.value)
    empty_field = write(tmp_path, ["Go.\t"], name="empty.tsv")
    with pytest.raises(enfr.EnFrDataError, match="malformed"):
        enfr.read_pairs(empty_field)
    latin = tmp_path / "latin.tsv"
    latin.write_bytes("Go.\tVa \xe0 !\n".encode("latin-1"))
    with pytest.raises(enfr.EnFrDataError, match="UTF-8"):
        enfr.read_pairs(latin)


def test_env_var_locates_the_data(tmp_path, monkeypatch):
    (tmp_path / "en_fr").mkdir()
    write(tmp_path / "en_fr", LINES)
    monkeypatch.setenv("COMPANION_DATA", str(tmp_path))
    assert enfr.default_path() == (tmp_path / "en_fr" / "pairs.tsv").resolve()
    assert len(enfr.read_pairs()) == len(LINES)
