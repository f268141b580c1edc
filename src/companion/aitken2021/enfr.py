"""English -> French sentence pairs: loading, normalisation, tokens, vocabularies, splits.

Why: Aitken et al. contrast the synthetic tasks with natural translation,
where attention is still roughly diagonal but word order and sentence lengths
differ between the languages, so the input-driven components must do more.
The paper's own corpus and preprocessing are unknown [REC];
we use the Tatoeba/Anki pairs provided at ``../shared/data/en_fr/pairs.tsv``
(see its SOURCE.md), lower-cased and tokenised, short pairs only.

Credit: contains sentences from the Tatoeba Project (tatoeba.org),
CC-BY 2.0 FR, via www.manythings.org/anki.

Pipeline
1. **Locate** the file: an explicit path, else ``$COMPANION_DATA/en_fr/pairs.tsv``,
   else ``<repo>/../shared/data/en_fr/pairs.tsv`` (:func:`companion.paths.shared_data_dir`).
   Missing or malformed files raise :class:`EnFrDataError` with a one-line message.
2. **Normalise**: Unicode NFC; the narrow no-break space U+202F, the no-break space
   U+00A0, the thin space U+2009 (and other Unicode spaces) become an ASCII space;
   curly apostrophes U+2019/U+2018 and U+02BC become ``'``; lower case.
3. **Tokenise**: words and punctuation marks. French keeps the apostrophe on the
   elided word (``c'est`` -> ``c'`` ``est``); English splits clitics to the right
   (``don't`` -> ``do`` ``n't``, ``i'm`` -> ``i`` ``'m``).
4. **Filter** pairs with at most ``max_len`` tokens on both sides.
5. **Split by English sentence**: all French translations of one English
   sentence fall in the same split (the corpus has ~1.5 translations per
   English sentence; a random pair split would leak test sentences).
6. **Vocabularies** from the training split only: words seen at least
   ``min_count`` times, plus ``<pad>`` (index 0; its first occurrence is the
   end-of-sequence token, as in the synthetic tasks) and ``<unk>`` (index 1).
7. **Tensors**: (N, max_len + 1) integer ids, right-padded, at least one pad, in the
   common :class:`~companion.aitken2021.tasks.Seq2SeqData` layout.

Every random draw (split, subset) comes from ``seed``.
"""

from __future__ import annotations

import collections
import functools
import os
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from companion import paths
from companion.aitken2021.models import EMBEDDINGS
from companion.aitken2021.tasks import TASK_BUILDERS, Seq2SeqData, Task, Vocab
from companion.ensemble import EnsembleModule

PAD, UNK = "<pad>", "<unk>"
SPECIALS = (PAD, UNK)
UNK_ID = 1
CREDIT = ("Contains sentences from the Tatoeba Project (tatoeba.org), CC-BY 2.0 FR, "
          "via www.manythings.org/anki.")

_SPACES = {"\u202f", "\u00a0", "\u2009", "\u2007", "\u2002", "\u2003", "\u200a", "\u3000"}
_APOSTROPHES = {"\u2019", "\u2018", "\u02bc", "\u00b4"}
_TOKEN_FR = re.compile(r"[^\W_]+'|[^\W_]+|\S", re.UNICODE)
_TOKEN_EN = re.compile(r"[^\W_]+(?=n't\b)|n't\b|'[^\W_]+|[^\W_]+|\S", re.UNICODE)


class EnFrDataError(ValueError):
    """The English-French pairs file is missing or not in ``english<TAB>french`` form."""


# --------------------------------------------------------------------------------------
# locating and reading
# --------------------------------------------------------------------------------------
def default_path() -> Path:
    """``$COMPANION_DATA/en_fr/pairs.tsv``, else ``<repo>/../shared/data/en_fr/pairs.tsv``."""
    return paths.shared_data_dir() / "en_fr" / "pairs.tsv"


def resolve_path(path: str | os.PathLike | None = None) -> Path:
    """The pairs file to read. A relative ``path`` is taken relative to the repository root
    (so chapters run from any working directory); ``None`` gives :func:`default_path`."""
    if path is None:
        return default_path()
    p = Path(path).expanduser()
    if not p.is_absolute():
        try:
            root = paths.repo_root()
        except FileNotFoundError:
            root = Path.cwd()
        p = root / p
    return p.resolve()


def read_pairs(path: str | os.PathLike | None = None, max_lines: int | None = None) -> list[tuple[str, str]]:
    """Raw (english, french) pairs, exactly as in the file (no normalisation).

    Raises :class:`EnFrDataError` (one line) if the file is missing, empty, not
    UTF-8, or a line does not hold exactly one TAB between two non-empty fields.
    """
    p = resolve_path(path)
    if not p.is_file():
        raise EnFrDataError(
            f"English-French pairs not found at {p}; put the Tatoeba pairs there "
            "(see shared/data/en_fr/SOURCE.md) or set COMPANION_DATA / the chapter's data_path"
        )
    pairs: list[tuple[str, str]] = []
    try:
        with open(p, encoding="utf-8", newline="") as fh:
            for lineno, line in enumerate(fh, start=1):
                if max_lines is not None and lineno > max_lines:
                    break
                line = line.rstrip("\n").rstrip("\r")
                if not line.strip():
                    continue
                fields = line.split("\t")
                if len(fields) < 2 or not fields[0].strip() or not fields[1].strip():
                    raise EnFrDataError(
                        f"{p}:{lineno}: malformed line, expected 'english<TAB>french' "
                        f"(got {len(fields)} field(s)): {line[:60]!r}"
                    )
                # a third column (Tatoeba attribution in newer manythings files) is ignored
                pairs.append((fields[0], fields[1]))
    except UnicodeDecodeError as exc:
        raise EnFrDataError(f"{p}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    if not pairs:
        raise EnFrDataError(f"{p}: no sentence pairs in the file")
    return pairs


@functools.lru_cache(maxsize=8)
def _digest(path: str, mtime_ns: int, size: int) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_digest(path: str | os.PathLike | None = None) -> str | None:
    """sha256 of the pairs file (None if missing): the cache key uses the content, not the location."""
    p = resolve_path(path)
    if not p.is_file():
        return None
    st = p.stat()
    return _digest(str(p), st.st_mtime_ns, st.st_size)


# --------------------------------------------------------------------------------------
# text
# --------------------------------------------------------------------------------------
def normalize(text: str) -> str:
    """Unicode NFC, special spaces -> ' ', curly apostrophes -> "'", collapse spaces, lower case."""
    text = unicodedata.normalize("NFC", text)
    text = "".join(" " if ch in _SPACES else "'" if ch in _APOSTROPHES else ch for ch in text)
    return " ".join(text.split()).lower()


def tokenize(text: str, lang: str = "fr") -> list[str]:
    """Tokens of a normalised sentence; every punctuation mark is its own token.

    French keeps the apostrophe on the elided word: ``"c'est l'homme !"`` ->
    ``["c'", 'est', "l'", 'homme', '!']``. English splits clitics to the right:
    ``"I'm sure it's Tom's, don't go"`` ->
    ``['i', "'m", 'sure', 'it', "'s", 'tom', "'s", ',', 'do', "n't", 'go']``.
    """
    pattern = _TOKEN_EN if lang == "en" else _TOKEN_FR
    return pattern.findall(normalize(text))


def detokenize(tokens: list[str], lang: str = "fr") -> str:
    """Inverse of :func:`tokenize` up to spacing: tokens joined by spaces, elided words / clitics glued."""
    out = " ".join(tokens)
    if lang == "en":
        return out.replace(" n't", "n't").replace(" '", "'")
    return out.replace("' ", "'")


def build_vocab(sentences: list[list[str]], min_count: int = 2, max_size: int | None = None) -> Vocab:
    """``<pad>`` = 0, ``<unk>`` = 1, then words seen >= ``min_count`` times by count (ties alphabetically)."""
    counts = collections.Counter(w for s in sentences for w in s)
    ranked = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    if max_size is not None:
        ranked = ranked[: max(0, max_size - len(SPECIALS))]
    return Vocab(SPECIALS + tuple(ranked), pad=0)


def encode(vocab: Vocab, tokens: list[str]) -> list[int]:
    """Token ids, unknown words -> ``<unk>`` (1)."""
    index = _index_of(vocab)
    return [index.get(w, UNK_ID) for w in tokens]


def decode(vocab: Vocab, ids, stop_at_pad: bool = True) -> list[str]:
    """Tokens of an id sequence, stopping at the first pad (the EOS) by default."""
    out = []
    for i in ids:
        i = int(i)
        if stop_at_pad and i == vocab.pad:
            break
        out.append(vocab.tokens[i])
    return out


@functools.lru_cache(maxsize=8)
def _index_of(vocab: Vocab) -> dict[str, int]:
    return {w: i for i, w in enumerate(vocab.tokens)}


# --------------------------------------------------------------------------------------
# dataset
# --------------------------------------------------------------------------------------
@dataclass
class EnFrCorpus:
    """Train and test splits (as :class:`Seq2SeqData`), their token lists, and the settings.

    In each split ``inputs`` (N, S) / ``targets`` (N, T) are right-padded with
    ``<pad>`` (id 0) and ``in_index`` / ``out_index`` are the sentence lengths
    (= the position of the first pad, the EOS). ``train_tokens`` / ``test_tokens``
    keep the (english, french) token lists; the French ones are the BLEU references.
    """

    train: Seq2SeqData
    test: Seq2SeqData
    train_tokens: list[tuple[list[str], list[str]]]
    test_tokens: list[tuple[list[str], list[str]]]
    meta: dict = field(default_factory=dict)

    @property
    def in_vocab(self) -> Vocab:
        return self.train.in_vocab

    @property
    def out_vocab(self) -> Vocab:
        return self.train.out_vocab


def _tensorize(pairs, src_vocab: Vocab, tgt_vocab: Vocab, S: int, T: int) -> Seq2SeqData:
    n = len(pairs)
    inputs = np.zeros((n, S), dtype=np.int64)
    labels = np.zeros((n, T), dtype=np.int64)
    in_index = np.zeros(n, dtype=np.int64)
    out_index = np.zeros(n, dtype=np.int64)
    for i, (en, fr) in enumerate(pairs):
        inputs[i, : len(en)] = encode(src_vocab, en)
        labels[i, : len(fr)] = encode(tgt_vocab, fr)
        in_index[i], out_index[i] = len(en), len(fr)
    return Seq2SeqData(
        inputs=torch.from_numpy(inputs), targets=torch.from_numpy(labels),
        in_index=torch.from_numpy(in_index), out_index=torch.from_numpy(out_index),
        in_vocab=src_vocab, out_vocab=tgt_vocab, meta={},
    )


def load(
    path: str | os.PathLike | None = None,
    *,
    seed: int = 0,
    max_len: int = 10,
    test_fraction: float = 0.1,
    n_train: int | None = None,
    n_test: int | None = None,
    min_count: int = 2,
    max_vocab: int | None = None,
    max_lines: int | None = None,
) -> EnFrCorpus:
    """Read, normalise, tokenise, filter, split by English sentence and index the corpus.

    ``n_train`` / ``n_test`` draw a random subset (from ``seed``) of each split
    after the split, for small runs; ``max_lines`` reads only the first lines
    of the file (they are the shortest pairs). Padded lengths are ``max_len + 1``.
    """
    if max_len < 1:
        raise ValueError("max_len must be >= 1")
    if not 0.0 < test_fraction < 1.0:
        raise ValueError("test_fraction must lie in (0, 1)")
    raw = read_pairs(path, max_lines=max_lines)
    pairs = [(tokenize(en, "en"), tokenize(fr, "fr")) for en, fr in raw]
    pairs = [(e, f) for e, f in pairs if 1 <= len(e) <= max_len and 1 <= len(f) <= max_len]
    if not pairs:
        raise EnFrDataError(f"no pair has at most {max_len} tokens on both sides")
    english = sorted({" ".join(e) for e, _ in pairs})
    rng = np.random.default_rng(int(seed))
    order = rng.permutation(len(english))
    n_test_sent = max(1, int(round(test_fraction * len(english))))
    if n_test_sent >= len(english):
        raise EnFrDataError(f"too few distinct English sentences ({len(english)}) to split")
    test_sent = {english[k] for k in order[:n_test_sent]}
    train_pairs = [p for p in pairs if " ".join(p[0]) not in test_sent]
    test_pairs = [p for p in pairs if " ".join(p[0]) in test_sent]

    def subset(ps, k):
        if k is None or k >= len(ps):
            return ps
        idx = np.sort(rng.choice(len(ps), size=int(k), replace=False))
        return [ps[i] for i in idx]

    train_pairs = subset(train_pairs, n_train)
    test_pairs = subset(test_pairs, n_test)
    src_vocab = build_vocab([e for e, _ in train_pairs], min_count, max_vocab)
    tgt_vocab = build_vocab([f for _, f in train_pairs], min_count, max_vocab)
    S = T = max_len + 1
    meta = {"task": "enfr", "path": str(resolve_path(path)), "seed": int(seed), "max_len": max_len,
            "test_fraction": test_fraction, "n_train": len(train_pairs), "n_test": len(test_pairs),
            "min_count": min_count, "max_vocab": max_vocab, "max_lines": max_lines,
            "src_vocab": len(src_vocab), "tgt_vocab": len(tgt_vocab)}
    return EnFrCorpus(
        train=_tensorize(train_pairs, src_vocab, tgt_vocab, S, T),
        test=_tensorize(test_pairs, src_vocab, tgt_vocab, S, T),
        train_tokens=train_pairs, test_tokens=test_pairs, meta=meta,
    )


def unk_rate(data: Seq2SeqData, which: str = "targets") -> float:
    """Fraction of word tokens (EOS excluded) that are ``<unk>``: a check on the vocabulary cut-off."""
    x = getattr(data, which)
    idx = data.in_index if which == "inputs" else data.out_index
    valid = torch.arange(x.shape[-1]) < idx.unsqueeze(-1)
    return float(((x == UNK_ID) & valid).sum() / valid.sum().clamp(min=1))


# --------------------------------------------------------------------------------------
# the Task interface
# --------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4)
def _load_cached(key: tuple) -> EnFrCorpus:
    return load(**dict(key))


@dataclass(frozen=True)
class EnFrTask(Task):
    """English -> French behind the common ``Task`` interface.

    The corpus is fixed, so ``sample(n, generator)`` draws ``n`` training pairs
    uniformly with replacement (the synthetic tasks draw fresh sequences
    instead); :meth:`test_set` is the held-out split (disjoint English sentences).
    ``data_path`` is resolved as in :func:`resolve_path`; the cache key holds the
    file's sha256, so a changed corpus is a different task wherever it lives.
    """

    data_path: str | None = None
    seed: int = 0
    max_len: int = 10
    test_fraction: float = 0.1
    n_train: int | None = None
    n_test: int | None = None
    min_count: int = 2
    max_vocab: int | None = None

    name = "English-French"

    def _key(self) -> tuple:
        return (("path", self.data_path), ("seed", self.seed), ("max_len", self.max_len),
                ("test_fraction", self.test_fraction), ("n_train", self.n_train), ("n_test", self.n_test),
                ("min_count", self.min_count), ("max_vocab", self.max_vocab))

    @property
    def corpus(self) -> EnFrCorpus:
        return _load_cached(self._key())

    @property
    def in_vocab(self) -> Vocab:  # type: ignore[override]
        return self.corpus.in_vocab

    @property
    def out_vocab(self) -> Vocab:  # type: ignore[override]
        return self.corpus.out_vocab

    def config(self) -> dict:
        """Plain data for cache keys: the corpus content (sha256) and a fingerprint of this
        module (tokenisation, vocabularies, the learned embedding)."""
        from companion import cache

        return {"task": "enfr", "data_path": self.data_path, "file_sha256": file_digest(self.data_path),
                "code": cache.fingerprint(("aitken2021/enfr",)),
                "seed": self.seed, "max_len": self.max_len, "test_fraction": self.test_fraction,
                "n_train": self.n_train, "n_test": self.n_test, "min_count": self.min_count,
                "max_vocab": self.max_vocab}

    def sample(self, n: int, generator: torch.Generator) -> Seq2SeqData:
        train = self.corpus.train
        idx = torch.randint(0, len(train), (n,), generator=generator)
        return train.index_select(idx)

    def test_set(self) -> Seq2SeqData:
        return self.corpus.test


TASK_BUILDERS["enfr"] = lambda cfg: EnFrTask(
    data_path=cfg.get("data_path"), seed=cfg.get("seed", 0), max_len=cfg.get("max_len", 10),
    test_fraction=cfg.get("test_fraction", 0.1), n_train=cfg.get("n_train"), n_test=cfg.get("n_test"),
    min_count=cfg.get("min_count", 2), max_vocab=cfg.get("max_vocab"))


# --------------------------------------------------------------------------------------
# the learned embedding (this task only)
# --------------------------------------------------------------------------------------
class LearnedEmbedding(EnsembleModule):
    """A trainable ``vocab x dim`` table per ensemble member (registered as ``"learned"``).

    One-hot inputs, used for the synthetic tasks, would be thousands of
    dimensions wide here, so English-French alone gets a
    learned embedding of ``dim`` (default 128). Rows start at ``N(0, 1/dim)``,
    so an embedded word has about unit norm like a one-hot vector. The decoder's
    start input is the mean embedding row, i.e. the embedding of the uniform
    "average input" the one-hot models use.
    """

    def __init__(self, n_members: int, vocab: int, dim: int | None = None):
        super().__init__(n_members)
        self.vocab, self.dim = int(vocab), int(dim or 128)
        self.table = nn.Parameter(torch.zeros(n_members, self.vocab, self.dim))

    def init_member(self, e: int, generator: torch.Generator) -> None:
        with torch.no_grad():
            self.table.data[e].copy_(torch.randn(self.vocab, self.dim, generator=generator) / self.dim**0.5)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        ids = ids.clamp(min=0)
        E = self.n_members
        if ids.shape[0] != E:
            ids = ids.expand(E, *ids.shape[1:])
        flat = ids.reshape(E, -1)
        out = torch.gather(self.table, 1, flat.unsqueeze(-1).expand(E, flat.shape[1], self.dim))
        return out.reshape(*ids.shape, self.dim)

    def start_vector(self) -> torch.Tensor:
        return self.table.mean(1)

    def extra_repr(self) -> str:
        return f"n_members={self.n_members}, vocab={self.vocab}, dim={self.dim}"


EMBEDDINGS["learned"] = LearnedEmbedding
