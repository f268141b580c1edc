"""eSCAN: the extended SCAN task, generated from the SCAN grammar (no download).

Why this task: on one-to-one translation the correct attention is exactly the
diagonal, so it can be set by the temporal components alone. eSCAN keeps the
attention *close* to the diagonal but moves it by input-dependent amounts:
"and" emits nothing, "U left" emits ``I_TURN_LEFT`` before the verb, "U twice"
repeats the verb. Aitken et al. use it to show the input-delta components
bending the attention off the diagonal.

Construction (from the development code's ``scan_functions.py`` [CODE]):

* **Base commands.** The SCAN commands whose words are all in
  {run, walk, jump, left, and, twice}, minus every command holding
  "left twice". With ``U`` a verb, ``S := U | U left | U twice`` (9 phrases) and
  ``C := S | S and S`` (9 + 81 = 90 commands). Without the "left twice" filter
  ``S`` has 12 forms and there are 12 + 144 = 156 commands.
* **Meaning.** [[U]] = I_U, [[U left]] = I_TURN_LEFT I_U, [[U twice]] = I_U I_U,
  [[S1 and S2]] = [[S1]] [[S2]].
* **Extension.** Concatenate commands drawn uniformly from the 90, each
  followed by a period token ``<.>`` on both sides, until the output holds at
  least ``min_out_len`` tokens; a command that would push the output above
  ``max_out_len`` is skipped and redrawn; a finished pair whose input is longer
  than ``max_in_len`` is rejected.
* **Padding.** Every sequence gets at least one ``<pad>``; the first pad is the
  end-of-sequence token. We pad to the *largest length the generator can
  produce* plus one (computed from the grammar), not to the largest length in
  the drawn set, so that every dataset drawn with the same settings has the
  same shape (fresh training sets can then be stacked and batched).

All randomness comes from a seed (``numpy.random.default_rng``).
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import numpy as np
import torch

from companion.aitken2021.tasks import TASK_BUILDERS, Seq2SeqData, Task, Vocab

VERBS = ("run", "walk", "jump")
ACTION_OF = {"run": "I_RUN", "walk": "I_WALK", "jump": "I_JUMP"}
PERIOD = "<.>"
PAD = "<pad>"
IN_WORDS = ("run", "walk", "jump", "left", "and", "twice", PERIOD, PAD)
OUT_WORDS = ("I_RUN", "I_WALK", "I_JUMP", "I_TURN_LEFT", PERIOD, PAD)
IN_VOCAB = Vocab(IN_WORDS, pad=IN_WORDS.index(PAD))
OUT_VOCAB = Vocab(OUT_WORDS, pad=OUT_WORDS.index(PAD))


# --------------------------------------------------------------------------------------
# grammar
# --------------------------------------------------------------------------------------
def _phrase_meaning(words: tuple[str, ...]) -> list[str]:
    """[[S]] for one phrase ``U``, ``U left``, ``U twice`` or ``U left twice``."""
    if not words or words[0] not in ACTION_OF:
        raise ValueError(f"an eSCAN phrase must start with a verb {VERBS}, got {' '.join(words)!r}")
    verb, rest = ACTION_OF[words[0]], list(words[1:])
    unit = [verb]
    if rest[:1] == ["left"]:
        unit = ["I_TURN_LEFT", verb]
        rest = rest[1:]
    if rest[:1] == ["twice"]:
        unit = unit * 2
        rest = rest[1:]
    if rest:
        raise ValueError(f"cannot parse eSCAN phrase {' '.join(words)!r}")
    return unit


def interpret(command: str | tuple[str, ...] | list[str]) -> list[str]:
    """The action sequence of a command of the SCAN subset used here.

    >>> interpret("jump left and run twice")
    ['I_TURN_LEFT', 'I_JUMP', 'I_RUN', 'I_RUN']
    """
    words = tuple(command.split()) if isinstance(command, str) else tuple(command)
    if words.count("and") > 1:
        raise ValueError(f"at most one 'and' per command, got {' '.join(words)!r}")
    if "and" in words:
        k = words.index("and")
        return _phrase_meaning(words[:k]) + _phrase_meaning(words[k + 1 :])
    return _phrase_meaning(words)


def _phrases(filter_left_twice: bool) -> list[tuple[str, ...]]:
    forms: list[tuple[str, ...]] = [(), ("left",), ("twice",)]
    if not filter_left_twice:
        forms.append(("left", "twice"))
    return [(u, *f) for u in VERBS for f in forms]


@functools.lru_cache(maxsize=2)
def base_commands(filter_left_twice: bool = True) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """All (command, actions) pairs of the subset: 90 with the filter, 156 without.

    Ordered: single phrases first, then ``S and S`` in row-major order.
    """
    phrases = _phrases(filter_left_twice)
    commands = list(phrases) + [a + ("and",) + b for a, b in itertools.product(phrases, phrases)]
    return tuple((c, tuple(interpret(c))) for c in commands)


@functools.lru_cache(maxsize=16)
def length_bounds(min_out_len: int = 10, max_out_len: int = 15, max_in_len: int = 27) -> tuple[int, int]:
    """The largest (input, output) lengths the extension can produce, periods included.

    Computed exactly by exploring every reachable (output length, input length)
    state of the generator; used to fix the padded shape of all datasets.
    """
    cmds = base_commands(True)
    steps = {(len(c) + 1, len(a) + 1) for c, a in cmds}  # (+input, +output) per appended command
    frontier, seen, finished = {(0, 0)}, set(), set()
    while frontier:
        nxt = set()
        for i, o in frontier:
            if (i, o) in seen:
                continue
            seen.add((i, o))
            if o >= min_out_len:
                if i <= max_in_len:
                    finished.add((i, o))
                continue
            for di, do in steps:
                if o + do <= max_out_len:
                    nxt.add((i + di, o + do))
        frontier = nxt
    if not finished:
        raise ValueError("no eSCAN sequence satisfies these length bounds")
    return max(i for i, _ in finished), max(o for _, o in finished)


# --------------------------------------------------------------------------------------
# datasets
# --------------------------------------------------------------------------------------
def _sources(command: tuple[str, ...], offset: int) -> list[int]:
    """Input position (shifted by ``offset``) that each action of ``command`` comes from."""
    out: list[int] = []
    pos = 0
    for part in _split_and(command):
        verb_pos = offset + pos
        rest = part[1:]
        unit = [verb_pos]
        if rest[:1] == ("left",):
            unit = [verb_pos + 1, verb_pos]
        if rest[-1:] == ("twice",):
            unit = unit + [verb_pos + len(part) - 1] * len(unit)
        out.extend(unit)
        pos += len(part) + 1  # skip the 'and'
    return out


def _split_and(command: tuple[str, ...]) -> list[tuple[str, ...]]:
    if "and" in command:
        k = command.index("and")
        return [command[:k], command[k + 1 :]]
    return [command]


def generate(
    n: int,
    seed: int,
    *,
    min_out_len: int = 10,
    max_out_len: int = 15,
    max_in_len: int = 27,
    pad_to: tuple[int, int] | None = None,
) -> Seq2SeqData:
    """Draw ``n`` eSCAN pairs from ``seed``, as a :class:`~companion.aitken2021.tasks.Seq2SeqData`.

    ``meta["expected_source"]`` (N, T) gives, for each output token, the input
    position it comes from: the verb for ``I_U``, the word "left" for
    ``I_TURN_LEFT``, "twice" for the repeated verb, the period for a period,
    the input EOS for the output EOS, and -1 for the later pads. It is the
    ground-truth alignment (not used in training).

    ``pad_to=(S, T)`` fixes the padded lengths; by default they are the
    grammar's bounds plus one (:func:`length_bounds`), the same for every seed.
    """
    if n < 1:
        raise ValueError("n must be positive")
    if not (1 <= min_out_len <= max_out_len):
        raise ValueError("need 1 <= min_out_len <= max_out_len")
    rng = np.random.default_rng(int(seed))
    cmds = base_commands(True)
    cmd_in = [c for c, _ in cmds]
    cmd_out = [a for _, a in cmds]
    s_max, t_max = length_bounds(min_out_len, max_out_len, max_in_len)
    S, T = pad_to if pad_to is not None else (s_max + 1, t_max + 1)
    if S < s_max + 1 or T < t_max + 1:
        raise ValueError(f"pad_to={pad_to} is too short: sequences reach {s_max} inputs and {t_max} outputs")
    iw = {w: k for k, w in enumerate(IN_WORDS)}
    ow = {w: k for k, w in enumerate(OUT_WORDS)}
    inputs = np.full((n, S), iw[PAD], dtype=np.int64)
    labels = np.full((n, T), ow[PAD], dtype=np.int64)
    source = np.full((n, T), -1, dtype=np.int64)
    in_index = np.zeros(n, dtype=np.int64)
    out_index = np.zeros(n, dtype=np.int64)
    filled = 0
    draws_per_round = 8
    while filled < n:
        new_in: list[str] = []
        new_out: list[str] = []
        new_src: list[int] = []
        while len(new_out) < min_out_len:
            for k in rng.integers(len(cmds), size=draws_per_round):
                if len(new_out) + len(cmd_out[k]) + 1 > max_out_len:
                    continue
                new_src.extend(_sources(cmd_in[k], len(new_in)))
                new_in.extend(cmd_in[k])
                new_out.extend(cmd_out[k])
                new_src.append(len(new_in))
                new_in.append(PERIOD)
                new_out.append(PERIOD)
                if len(new_out) >= min_out_len:
                    break
        if len(new_in) > max_in_len:
            continue
        inputs[filled, : len(new_in)] = [iw[w] for w in new_in]
        labels[filled, : len(new_out)] = [ow[w] for w in new_out]
        source[filled, : len(new_src)] = new_src
        in_index[filled], out_index[filled] = len(new_in), len(new_out)
        filled += 1
    rows = np.arange(n)
    source[rows, out_index] = in_index  # the output EOS comes from the input EOS
    return Seq2SeqData(
        inputs=torch.from_numpy(inputs), targets=torch.from_numpy(labels),
        in_index=torch.from_numpy(in_index), out_index=torch.from_numpy(out_index),
        in_vocab=IN_VOCAB, out_vocab=OUT_VOCAB,
        meta={"expected_source": torch.from_numpy(source)},
    )


@dataclass(frozen=True)
class ESCAN(Task):
    """The eSCAN task behind the common :class:`~companion.aitken2021.tasks.Task` interface.

    ``sample(n, generator)`` draws one integer from the torch ``generator`` and
    uses it to seed :func:`generate`, so a task sampled from a seeded generator
    is reproducible, and shapes are the same for every draw.
    """

    min_out_len: int = 10
    max_out_len: int = 15
    max_in_len: int = 27

    def __post_init__(self):
        length_bounds(self.min_out_len, self.max_out_len, self.max_in_len)  # validates

    name = "eSCAN"

    @property
    def in_vocab(self) -> Vocab:  # type: ignore[override]
        return IN_VOCAB

    @property
    def out_vocab(self) -> Vocab:  # type: ignore[override]
        return OUT_VOCAB

    @property
    def lengths(self) -> tuple[int, int]:
        """Padded (S, T)."""
        s, t = length_bounds(self.min_out_len, self.max_out_len, self.max_in_len)
        return s + 1, t + 1

    def config(self) -> dict:
        """Plain data for cache keys; ``code`` fingerprints this module, so trained eSCAN
        networks are retrained when the task's generator changes."""
        from companion import cache

        return {"task": "escan", "min_out_len": self.min_out_len, "max_out_len": self.max_out_len,
                "max_in_len": self.max_in_len, "code": cache.fingerprint(("aitken2021/escan",))}

    def sample(self, n: int, generator: torch.Generator) -> Seq2SeqData:
        seed = int(torch.randint(0, 2**62, (1,), generator=generator))
        return generate(n, seed, min_out_len=self.min_out_len, max_out_len=self.max_out_len,
                        max_in_len=self.max_in_len)


TASK_BUILDERS["escan"] = lambda cfg: ESCAN(
    min_out_len=cfg.get("min_out_len", 10), max_out_len=cfg.get("max_out_len", 15),
    max_in_len=cfg.get("max_in_len", 27))


# --------------------------------------------------------------------------------------
# the dataset's average offset
# --------------------------------------------------------------------------------------
def find_scan_offset(inputs: torch.Tensor, in_index: torch.Tensor, in_words=IN_WORDS) -> torch.Tensor:
    """Average offset between input position and output position, per input index.

    Per sample, the offset at input index ``i`` is the number of "and" up to
    ``i`` (each "and" emits nothing, so later outputs lag behind by one more
    input) plus one if the *next* word is "left" (the verb before "left" is
    emitted one step later, after ``I_TURN_LEFT``). Equivalently the cumulative
    sum of ``is_and[i] - is_left[i] + is_left[i+1]``. The curve averages over
    the samples whose input (without pads) covers ``i``; it has length S and is
    NaN where no sample is that long. This is the development code's ``find_scan_offset``,
    set beside the peak of the temporal alignment in Figure 5.
    """
    x = torch.as_tensor(inputs)
    is_and = (x == in_words.index("and")).double()
    is_left = (x == in_words.index("left")).double()
    nxt_left = torch.zeros_like(is_left)
    nxt_left[:, :-1] = is_left[:, 1:]
    offset = torch.cumsum(is_and - is_left + nxt_left, dim=1)
    pos = torch.arange(x.shape[1])
    valid = (pos[None, :] < torch.as_tensor(in_index)[:, None]).double()  # words only, not the EOS
    count = valid.sum(0)
    mean = (offset * valid).sum(0) / count.clamp(min=1)
    mean[count == 0] = float("nan")
    return mean


def source_offset(data: Seq2SeqData) -> torch.Tensor:
    """Mean of (source input position - output position) per output step t (words and EOS).

    The ground-truth counterpart of :func:`find_scan_offset` indexed by the
    decoder step instead of the input index.
    """
    source = data.meta["expected_source"]
    t = torch.arange(source.shape[-1])
    valid = source >= 0
    off = (source - t).double() * valid
    count = valid.sum(0)
    mean = off.sum(0) / count.clamp(min=1)
    mean[count == 0] = float("nan")
    return mean


def as_words(data: Seq2SeqData, i: int) -> tuple[list[str], list[str]]:
    """Sample ``i`` of a (non-ensemble) dataset as words, without pads."""
    src = data.in_vocab.decode(data.inputs[i, : int(data.in_index[i])].tolist())
    tgt = data.out_vocab.decode(data.targets[i, : int(data.out_index[i])].tolist())
    return src, tgt
