"""Translation pairs and English->French scores.

* :func:`readout_rank`: for (input word, output word) pairs, the rank of the output
  word's readout row among all readout rows by angle to the input word's
  component ``chi^E`` (the input/readout alignment of Figure 5, for any word list);
* :func:`dice_dictionary`: English->French word pairs from sentence co-occurrence
  (our construction, only used to choose pairs for :func:`readout_rank`);
* :func:`enfr_scores`: held-out greedy word / phrase accuracy, teacher-forced token
  accuracy and corpus BLEU (sacrebleu) per network;
* :func:`source_shuffled` / :func:`uses_source`: the same token accuracy with every English
  sentence swapped for another held-out sentence: a network that ignores its input scores
  the same either way.
"""

from __future__ import annotations

import collections

import torch

from .. import cache
from ..device import train_threads
from . import metrics as M
from .analysis import Analysis
from .enfr import EnFrTask, decode, detokenize
from .tasks import Seq2SeqData

__all__ = ["readout_rank", "dice_dictionary", "enfr_scores", "source_shuffled", "uses_source",
           "held_out_scores", "example_translations"]

SHUFFLE_SEED = 0


def readout_rank(a: Analysis, pairs) -> dict:
    """For (input word, output word) pairs: the rank (0 = closest) of the output word's readout row
    among all output rows by angle to ``chi^E`` of the input word, per network ``(E, P)``, and the
    angle itself. Words that never occur in the analysis set are dropped."""
    iv, ov = a.data.in_vocab, a.data.out_vocab
    ang = a.readout_alignment["angle"].detach()  # (E, V_out, V_in)
    counts = (a.enc.labels[0][a.enc.valid[0]]).bincount(minlength=len(iv))
    keep = [(x, y) for x, y, *_ in pairs if x in iv.tokens and y in ov.tokens and counts[iv.index(x)] > 0]
    if not keep:
        return {"pairs": [], "rank": torch.zeros(ang.shape[0], 0), "angle": torch.zeros(ang.shape[0], 0)}
    ranks, angles = [], []
    for x, y in keep:
        col = ang[:, :, iv.index(x)]  # (E, V_out)
        mine = col[:, ov.index(y)]
        ranks.append((col < mine[:, None]).sum(-1))
        angles.append(mine)
    return {"pairs": keep, "rank": torch.stack(ranks, -1), "angle": torch.stack(angles, -1)}


def dice_dictionary(task: EnFrTask, n_words: int = 40, min_dice: float = 0.3) -> list[tuple[str, str, float]]:
    """For each of the ``n_words`` most frequent English words (punctuation left out), the French
    word with the largest Dice coefficient ``2 c(x, y) / (c(x) + c(y))`` over training sentence
    pairs; pairs below ``min_dice`` are dropped."""
    pairs = task.corpus.train_tokens
    ce, cf, cef = collections.Counter(), collections.Counter(), collections.Counter()
    for en, fr in pairs:
        se, sf = set(en), set(fr)
        ce.update(se)
        cf.update(sf)
        cef.update((x, y) for x in se for y in sf)
    words = [w for w, _ in ce.most_common() if any(ch.isalnum() for ch in w)][:n_words]
    best = {}
    for (x, y), c in cef.items():
        if x in words and any(ch.isalnum() for ch in y):
            d = 2 * c / (ce[x] + cf[y])
            if d > best.get(x, ("", 0.0))[1]:
                best[x] = (y, d)
    return [(x, best[x][0], best[x][1]) for x in words if x in best and best[x][1] >= min_dice]


def source_shuffled(data: Seq2SeqData, seed: int = SHUFFLE_SEED) -> Seq2SeqData:
    """The same targets, each paired with another sentence's source (a fixed derangement)."""
    n = len(data)
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    perm = torch.where(perm == torch.arange(n), (perm + 1) % n, perm)  # nobody keeps its own source
    return Seq2SeqData(inputs=data.inputs[perm], targets=data.targets, in_index=data.in_index[perm],
                       out_index=data.out_index, in_vocab=data.in_vocab, out_vocab=data.out_vocab)


@torch.no_grad()
def teacher_accuracy(model, data: Seq2SeqData) -> torch.Tensor:
    """Teacher-forced token accuracy over valid positions, per network ``(E,)``."""
    with train_threads():
        return M.accuracy_from_logits(model(data, mode="teacher").predictions, data)[0]


@torch.no_grad()
def uses_source(model, data: Seq2SeqData) -> dict:
    """Teacher-forced token accuracy with the true sources and with shuffled ones, per network."""
    return {"true": teacher_accuracy(model, data), "shuffled": teacher_accuracy(model, source_shuffled(data))}


@torch.no_grad()
def enfr_scores(a: Analysis) -> dict:
    """Held-out scores per network: greedy word / phrase accuracy (valid positions), teacher-forced
    token accuracy (true and shuffled sources) and corpus BLEU (sacrebleu on our tokens,
    ``tokenize="none"``; unknown words in our output never match the reference)."""
    import sacrebleu

    data = a.data
    word, phrase = M.accuracy_from_logits(a.trace.predictions, data)
    source = uses_source(a.model, data)
    refs = [" ".join(f) for _, f in a.ensemble.task.corpus.test_tokens]
    bleu = []
    for e in range(a.trace.predictions.shape[0]):
        hyps = [" ".join(decode(data.out_vocab, row)) for row in a.trace.predictions[e]]
        bleu.append(sacrebleu.corpus_bleu(hyps, [refs], tokenize="none", force=True).score)
    return {"word": word, "phrase": phrase, "teacher_word": source["true"],
            "teacher_word_shuffled": source["shuffled"], "bleu": torch.tensor(bleu, dtype=torch.float64)}


def held_out_scores(a: Analysis) -> dict:
    """:func:`enfr_scores`, cached by the ensemble's description (the table chapters reuse it)."""
    ens = a.ensemble
    key = {"model": ens.payload.get("model"), "task": ens.payload.get("task"), "seeds": list(ens.seeds),
           "train": ens.payload.get("train")}
    # the whole subpackage in the key: the scores depend on the model's code, not only its description
    return cache.cached("aitken2021-enfr-heldout", key, lambda: enfr_scores(a), scope=("aitken2021",))


def example_translations(a: Analysis, k: int = 5, member: int = 0) -> list[tuple[str, str, str]]:
    """``k`` held-out (English, reference, ours) triples, detokenised."""
    out = []
    task = a.ensemble.task
    for i in range(min(k, len(a.data))):
        en, fr = task.corpus.test_tokens[i]
        hyp = decode(a.data.out_vocab, a.trace.predictions[member, i])
        out.append((detokenize(en, "en"), detokenize(fr), detokenize(hyp)))
    return out
