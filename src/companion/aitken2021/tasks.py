"""Sequence-to-sequence tasks with a known correct attention pattern.

Every task returns the same structure, :class:`Seq2SeqData`: padded token
tensors, the two vocabularies and the index of each sequence's first pad (its
end-of-sequence, EOS). The models, the training loop and every analysis only
use this structure, so a new task (eSCAN, English-French, ...) only has to
implement :class:`Task` (``in_vocab``, ``out_vocab``, ``sample``, ``config``).

One-to-one translation [CODE `toy_functions.py`]:
words ``I0..I{N-1}`` translate position by position to ``O0..O{N-1}``; the
length is uniform on ``{min_len..max_len}``; sequences are padded with
``<pad>`` to ``pad_to`` (> max_len, so there is always a pad, and the first pad
is the EOS token). Variants: ``reverse=True`` (the translation is emitted in
reverse order; pads stay at the end) and ``rules=("prev0",)`` (``I0`` that
follows ``I0`` becomes ``O0P``, a context-dependent output).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import torch

__all__ = ["Vocab", "Seq2SeqData", "Task", "OneToOne", "make_task", "stack_members"]

PAD = "<pad>"


@dataclass(frozen=True)
class Vocab:
    """Token names; ``pad`` is the index of ``<pad>`` (the first pad is EOS)."""

    tokens: tuple[str, ...]
    pad: int

    def __len__(self) -> int:
        return len(self.tokens)

    def index(self, token: str) -> int:
        return self.tokens.index(token)

    def decode(self, ids: Sequence[int]) -> list[str]:
        return [self.tokens[int(i)] for i in ids]


@dataclass
class Seq2SeqData:
    """A batch of padded sequence pairs, optionally with a leading ensemble axis.

    ``inputs``  long ``(..., S)``: input token ids, padded with ``in_vocab.pad``.
    ``targets`` long ``(..., T)``: output token ids, padded with ``out_vocab.pad``.
    ``in_index`` / ``out_index`` long ``(...)``: index of the first pad (EOS).
    Valid (scored, attendable) positions are ``s <= in_index`` and ``t <= out_index``:
    the EOS is attended to and must be predicted.
    ``meta`` holds task-specific extras (e.g. ``expected_source``: for each output
    position the input position a perfect alignment attends to, or -1 if none).
    """

    inputs: torch.Tensor
    targets: torch.Tensor
    in_index: torch.Tensor
    out_index: torch.Tensor
    in_vocab: Vocab
    out_vocab: Vocab
    meta: dict = field(default_factory=dict)

    @property
    def input_valid(self) -> torch.Tensor:
        """Bool ``(..., S)``: positions up to and including the EOS."""
        S = self.inputs.shape[-1]
        return torch.arange(S) <= self.in_index.unsqueeze(-1)

    @property
    def target_valid(self) -> torch.Tensor:
        """Bool ``(..., T)``: output positions that are scored (up to and including EOS)."""
        T = self.targets.shape[-1]
        return torch.arange(T) <= self.out_index.unsqueeze(-1)

    def __len__(self) -> int:
        return self.inputs.shape[-2]

    def index_select(self, idx: torch.Tensor) -> Seq2SeqData:
        """Rows ``idx`` along the sample axis (the axis before the sequence axis)."""
        def sel(t: torch.Tensor, seq: bool) -> torch.Tensor:
            return t.index_select(t.dim() - (2 if seq else 1), idx)

        meta = {k: (sel(v, True) if torch.is_tensor(v) and v.dim() >= 2 else v) for k, v in self.meta.items()}
        return replace(
            self,
            inputs=sel(self.inputs, True),
            targets=sel(self.targets, True),
            in_index=sel(self.in_index, False),
            out_index=sel(self.out_index, False),
            meta=meta,
        )


class Task:
    """Interface every task implements (one-to-one here; eSCAN, En-Fr elsewhere)."""

    name: str = "task"
    in_vocab: Vocab
    out_vocab: Vocab

    def sample(self, n: int, generator: torch.Generator) -> Seq2SeqData:  # pragma: no cover - interface
        raise NotImplementedError

    def config(self) -> dict:  # pragma: no cover - interface
        """Plain-data description (goes into cache keys)."""
        raise NotImplementedError


@dataclass(frozen=True)
class OneToOne(Task):
    """One-to-one translation (defaults: 3 words, lengths 15-19, padded to 20)."""

    n_words: int = 3
    min_len: int = 15
    max_len: int = 19
    pad_to: int | None = None  # default max_len + 1
    reverse: bool = False
    rules: tuple[str, ...] = ()

    def __post_init__(self):
        if self.n_words < 1:
            raise ValueError("n_words must be >= 1")
        if not 1 <= self.min_len <= self.max_len:
            raise ValueError("need 1 <= min_len <= max_len")
        if self.pad_to is not None and self.pad_to <= self.max_len:
            raise ValueError("pad_to must exceed max_len (the first pad is the EOS)")
        unknown = set(self.rules) - {"prev0"}
        if unknown:
            raise ValueError(f"unknown one-to-one rules: {sorted(unknown)}")

    @property
    def length(self) -> int:
        return self.pad_to if self.pad_to is not None else self.max_len + 1

    @property
    def name(self) -> str:  # type: ignore[override]
        parts = ["one-to-one"]
        if self.reverse:
            parts.append("reversed")
        parts.extend(self.rules)
        return " / ".join(parts)

    @property
    def in_vocab(self) -> Vocab:  # type: ignore[override]
        return Vocab(tuple(f"I{k}" for k in range(self.n_words)) + (PAD,), pad=self.n_words)

    @property
    def out_vocab(self) -> Vocab:  # type: ignore[override]
        words = tuple(f"O{k}" for k in range(self.n_words))
        if "prev0" in self.rules:
            words = words + ("O0P",)
        return Vocab(words + (PAD,), pad=len(words))

    def config(self) -> dict:
        return {
            "task": "one_to_one",
            "n_words": self.n_words,
            "min_len": self.min_len,
            "max_len": self.max_len,
            "pad_to": self.length,
            "reverse": self.reverse,
            "rules": list(self.rules),
        }

    def sample(self, n: int, generator: torch.Generator) -> Seq2SeqData:
        """``n`` fresh sequence pairs drawn from ``generator`` (lengths first, then words)."""
        S = self.length
        lengths = torch.randint(self.min_len, self.max_len + 1, (n,), generator=generator)
        words = torch.randint(0, self.n_words, (n, S), generator=generator)
        pos = torch.arange(S)
        valid = pos < lengths[:, None]
        in_pad, out_pad = self.in_vocab.pad, self.out_vocab.pad
        inputs = torch.where(valid, words, torch.full_like(words, in_pad))
        out = words.clone()  # I_k -> O_k share the index k
        if "prev0" in self.rules:
            # I0 preceded by I0 -> O0P. (The original code applies it from index 2 on;
            # we apply it wherever the previous word exists, i.e. from index 1.)
            prev0 = torch.zeros_like(valid)
            prev0[:, 1:] = (words[:, 1:] == 0) & (words[:, :-1] == 0)
            out = torch.where(prev0, torch.full_like(out, self.out_vocab.index("O0P")), out)
        expected = torch.where(valid | (pos == lengths[:, None]), pos.expand(n, S),
                               torch.full_like(words, -1))
        if self.reverse:
            rev = (lengths[:, None] - 1 - pos).clamp(min=0)
            out = torch.gather(out, 1, rev)
            expected = torch.where(valid, rev, expected)
        targets = torch.where(valid, out, torch.full_like(out, out_pad))
        return Seq2SeqData(
            inputs=inputs,
            targets=targets,
            in_index=lengths.clone(),
            out_index=lengths.clone(),
            in_vocab=self.in_vocab,
            out_vocab=self.out_vocab,
            meta={"expected_source": expected},
        )


def make_task(config: dict) -> Task:
    """Rebuild a task from its :meth:`Task.config` (one-to-one here; others register below)."""
    kind = config.get("task")
    if kind == "one_to_one":
        return OneToOne(
            n_words=config["n_words"],
            min_len=config["min_len"],
            max_len=config["max_len"],
            pad_to=config["pad_to"],
            reverse=config.get("reverse", False),
            rules=tuple(config.get("rules", ())),
        )
    if kind in TASK_BUILDERS:
        return TASK_BUILDERS[kind](config)
    raise ValueError(f"unknown task {kind!r}")


#: Extension point: ``TASK_BUILDERS["escan"] = lambda cfg: ESCAN(**...)`` from another module.
TASK_BUILDERS: dict = {}


def stack_members(datas: Sequence[Seq2SeqData]) -> Seq2SeqData:
    """Stack per-member datasets of equal shape along a new leading ensemble axis."""
    first = datas[0]
    meta = {}
    for k, v in first.meta.items():
        if torch.is_tensor(v):
            meta[k] = torch.stack([d.meta[k] for d in datas])
        else:
            meta[k] = v
    return replace(
        first,
        inputs=torch.stack([d.inputs for d in datas]),
        targets=torch.stack([d.targets for d in datas]),
        in_index=torch.stack([d.in_index for d in datas]),
        out_index=torch.stack([d.out_index for d in datas]),
        meta=meta,
    )
