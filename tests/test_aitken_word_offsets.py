"""Where eSCAN's decoder reads each input word, and the per-word table beside the word/temporal products."""

import math
from types import SimpleNamespace

import torch

from companion.aitken2021 import escan, offdiagonal
from companion.aitken2021.tasks import Seq2SeqData


def _one_sample():
    """ "jump left and run twice <.>" -> I_TURN_LEFT I_JUMP I_RUN I_RUN <.>, with its true sources."""
    src = ["jump", "left", "and", "run", "twice", "<.>", "<pad>"]
    tgt = ["I_TURN_LEFT", "I_JUMP", "I_RUN", "I_RUN", "<.>", "<pad>"]
    source = [1, 0, 3, 4, 5, 6]  # the word "left", the verb, the verb, "twice", the period, the EOS
    data = Seq2SeqData(
        inputs=torch.tensor([[escan.IN_VOCAB.index(w) for w in src]]),
        targets=torch.tensor([[escan.OUT_VOCAB.index(w) for w in tgt]]),
        in_index=torch.tensor([6]), out_index=torch.tensor([5]),
        in_vocab=escan.IN_VOCAB, out_vocab=escan.OUT_VOCAB, meta={"expected_source": torch.tensor([source])})
    return SimpleNamespace(data=data)


def test_read_offsets_of_a_known_sample():
    read = offdiagonal.word_read_offsets(_one_sample())
    assert read["left"] == (-1.0, 1)   # I_TURN_LEFT at t=0 reads "left" at s=1
    assert read["jump"] == (1.0, 1)    # I_JUMP at t=1 reads the verb at s=0
    assert read["run"] == (-1.0, 1) and read["twice"] == (-1.0, 1) and read["<.>"] == (-1.0, 1)
    assert math.isnan(read["and"][0]) and read["and"][1] == 0
    assert read["walk"][1] == 0


def test_and_is_never_read_in_generated_data():
    read = offdiagonal.word_read_offsets(SimpleNamespace(data=escan.generate(300, seed=1)))
    assert read["and"][1] == 0
    for w in ("run", "walk", "jump", "left", "twice", "<.>"):
        assert read[w][1] > 0 and read[w][0] <= 1.0  # outputs lag their inputs: reads at o <= +1


def test_word_offset_table_peaks_and_reads():
    offsets = [-1, 0, 1]
    vals = torch.tensor([[[0.0, 1.0, 0.5], [-0.2, -0.5, -0.1]],
                         [[0.0, 2.0, 0.5], [-0.3, -0.4, -0.2]]])  # (E=2 networks, K=2 words, O=3)
    wdt = {"values": vals, "offsets": offsets, "words": ["run", "and"]}
    table = offdiagonal.word_offset_table(wdt, {"run": (-1.0, 10), "and": (math.nan, 0)})
    assert list(table.index) == ["run", "and"]
    assert table.loc["run", "o=+0"] == 1.5 and math.isclose(table.loc["and", "o=-1"], -0.25)
    assert table.loc["run", "peak offset"].startswith("0.0 ± 0.0")
    assert table.loc["and", "peak offset"].startswith("1.0 ± 0.0")
    assert table.loc["run", "read at offset"] == "-1.00"
    assert table.loc["and", "read at offset"] == "never read"
