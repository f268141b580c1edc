"""VED, AED and AO sequence-to-sequence networks, stacked over an ensemble axis.

The three architectures of the paper (sources: the authors' `train_and_build.py` [CODE] and the
Figure 7 caption [SUM-liner]; see the sources appendix):

======  =======================================  ===========================  ======================
arch    encoder / decoder                        attention                    readout (no bias)
======  =======================================  ===========================  ======================
VED     GRU / GRU, decoder starts at encoder EOS  none                         ``W_o h^D_t``
AED     GRU / GRU, decoder starts at encoder EOS  ``a_st = h^E_s . h^D_t``     ``W_o [h^D_t ; c_t]``
AO      GRU cell from a zero state (feed-forward)  same                         ``W_o c_t``
        on input + rotated sinusoidal PE
======  =======================================  ===========================  ======================

Hidden size 128, one-hot inputs (AO: one-hot zero-padded to ``emb_dim`` = 50 so
that a dense positional encoding can be added), EOS freezing of the encoder
state, attention masked beyond the EOS with score -1e4, decoder start input
``(1/d) * 1`` (the "average input").

Every forward pass returns a :class:`Trace` with named tensors, so analyses
never reach into the model. All tensors carry the ensemble axis first.

Extension points (for learned embeddings, QKV / multi-head attention):
``EMBEDDINGS`` and ``ATTENTIONS`` map a name to a factory; pass the name as
``embedding=`` / ``attention=`` in :class:`ModelConfig` (``embedding_options`` /
``attention_options`` are handed to the factory).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields

import torch
import torch.nn.functional as F
from torch import nn

from ..ensemble import EnsembleGRUCell, EnsembleLinear, EnsembleModule, init_members
from .tasks import Seq2SeqData

__all__ = [
    "ARCHS",
    "ModelConfig",
    "Trace",
    "Seq2Seq",
    "OneHotEmbedding",
    "DotProductAttention",
    "EMBEDDINGS",
    "ATTENTIONS",
    "sinusoidal_encoding",
    "random_rotation",
    "MASK_SCORE",
    "architecture_table",
]

ARCHS = ("VED", "AED", "AO")
MASK_SCORE = -1e4  # the original code's masking constant


# --------------------------------------------------------------------------- config


@dataclass(frozen=True)
class ModelConfig:
    """Everything that defines a network (all plain data: it goes into cache keys).

    ``arch``: "VED", "AED" or "AO". ``hidden``: GRU size n.
    ``embedding``: name in :data:`EMBEDDINGS` ("onehot"); ``emb_dim``: input width
    (None = vocabulary size; AO default 50). ``pe_tau``/``pe_amplitude``: AO's
    sinusoidal encoding; ``pe`` None = on for AO only.
    ``attention``: name in :data:`ATTENTIONS` ("dot"); ignored for VED.
    """

    arch: str
    in_vocab: int
    out_vocab: int
    hidden: int = 128
    embedding: str = "onehot"
    emb_dim: int | None = None
    embedding_options: tuple = ()
    attention: str = "dot"
    attention_options: tuple = ()
    pe: bool | None = None
    pe_tau: float = 20.0
    pe_amplitude: float = 1.0

    def __post_init__(self):
        if self.arch not in ARCHS:
            raise ValueError(f"arch must be one of {ARCHS}, got {self.arch!r}")

    @property
    def use_pe(self) -> bool:
        return self.arch == "AO" if self.pe is None else bool(self.pe)

    @property
    def input_dim(self) -> int:
        if self.emb_dim is not None:
            return self.emb_dim
        return 50 if self.arch == "AO" and self.embedding == "onehot" else None  # type: ignore[return-value]

    def as_dict(self) -> dict:
        d = asdict(self)
        d["embedding_options"] = [list(x) for x in self.embedding_options]
        d["attention_options"] = [list(x) for x in self.attention_options]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> ModelConfig:
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        for k in ("embedding_options", "attention_options"):
            if k in kw:
                kw[k] = tuple(tuple(x) for x in kw[k])
        return cls(**kw)


# --------------------------------------------------------------------------- trace


@dataclass
class Trace:
    """What one forward pass computed; all tensors ``(E, B, ...)``.

    encoder_states  ``(E, B, S, n)``  h^E_s (frozen after the EOS)
    decoder_states  ``(E, B, T, n)``  h^D_t
    attention       ``(E, B, T, S)``  alpha_ts (rows: decoder step t), None for VED
    alignment       ``(E, B, T, S)``  a_ts before masking, None for VED
    context         ``(E, B, T, n)``  c_t, None for VED
    logits          ``(E, B, T, V)``
    predictions     ``(E, B, T)``     argmax of logits
    decoder_inputs  ``(E, B, T)``     token fed at step t (-1 = the start input)
    input_valid     ``(E, B, S)``     attendable positions (s <= EOS)
    mode            "teacher" or "greedy"
    """

    encoder_states: torch.Tensor
    decoder_states: torch.Tensor
    attention: torch.Tensor | None
    alignment: torch.Tensor | None
    context: torch.Tensor | None
    logits: torch.Tensor
    predictions: torch.Tensor
    decoder_inputs: torch.Tensor
    input_valid: torch.Tensor
    mode: str = "greedy"
    extras: dict = field(default_factory=dict)

    def detach(self) -> Trace:
        kw = {}
        for f in fields(self):
            v = getattr(self, f.name)
            kw[f.name] = v.detach() if torch.is_tensor(v) else v
        return Trace(**kw)


# --------------------------------------------------------------------------- pieces


class OneHotEmbedding(EnsembleModule):
    """Token id -> one-hot vector, zero-padded to ``dim`` (no parameters)."""

    def __init__(self, n_members: int, vocab: int, dim: int | None = None):
        super().__init__(n_members)
        self.vocab, self.dim = int(vocab), int(dim if dim is not None else vocab)
        if self.dim < self.vocab:
            raise ValueError("one-hot width below the vocabulary size")

    def init_member(self, e, generator):
        return None

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return F.one_hot(ids.clamp(min=0), self.dim).to(torch.get_default_dtype())

    def start_vector(self) -> torch.Tensor:
        """The decoder's first input: the average input ``(1/dim) * 1``, shape ``(E, dim)``."""
        return torch.full((self.n_members, self.dim), 1.0 / self.dim)


#: name -> factory(n_members, vocab, dim, **options) returning an EnsembleModule with
#: ``forward(ids (E,...)) -> (E, ..., dim)``, ``start_vector() -> (E, dim)`` and ``.dim``.
EMBEDDINGS: dict[str, Callable[..., EnsembleModule]] = {"onehot": OneHotEmbedding}


class DotProductAttention(EnsembleModule):
    """``a_st = h^E_s . h^D_t`` (no scaling, no parameters), masked softmax over s.

    Interface shared by every attention in :data:`ATTENTIONS`:
    ``forward(enc (E,B,S,n), dec (E,B,T,n), valid (E,B,S)) -> (alignment, attention, context)``
    and ``project_keys`` / ``project_queries`` (identity here): the maps applied to
    encoder / decoder vectors before the dot product, used by the alignment
    decomposition; ``context_dim``.
    """

    def __init__(self, n_members: int, hidden: int):
        super().__init__(n_members)
        self.context_dim = hidden

    def init_member(self, e, generator):
        return None

    def project_keys(self, v: torch.Tensor) -> torch.Tensor:
        return v

    def project_queries(self, v: torch.Tensor) -> torch.Tensor:
        return v

    scale: float = 1.0

    def weights(self, alignment: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        masked = alignment.masked_fill(~valid.unsqueeze(-2), MASK_SCORE)
        return torch.softmax(masked, dim=-1)

    def forward(self, enc, dec, valid):
        alignment = torch.einsum("ebtn,ebsn->ebts", dec, enc)
        attention = self.weights(alignment, valid)
        context = torch.einsum("ebts,ebsn->ebtn", attention, enc)
        return alignment, attention, context

    def context_from_weights(self, attention: torch.Tensor, enc: torch.Tensor) -> torch.Tensor:
        return torch.einsum("ebts,ebsn->ebtn", attention, enc)


#: name -> factory(n_members, hidden, **options) -> attention module (see DotProductAttention).
ATTENTIONS: dict[str, Callable[..., EnsembleModule]] = {"dot": DotProductAttention}


def sinusoidal_encoding(length: int, dim: int, tau: float, amplitude: float = 1.0) -> torch.Tensor:
    """``PE[t, i] = A sin(t / tau^(i/d))`` for even i, ``A cos(t / tau^((i-1)/d))`` for odd i."""
    t = torch.arange(length, dtype=torch.float64)[:, None]
    i = torch.arange(dim)
    expo = (i - (i % 2)).to(torch.float64) / dim
    angle = t / torch.pow(torch.tensor(float(tau), dtype=torch.float64), expo)[None, :]
    pe = torch.where(i % 2 == 0, torch.sin(angle), torch.cos(angle))
    return (amplitude * pe).to(torch.get_default_dtype())


def random_rotation(dim: int, generator: torch.Generator) -> torch.Tensor:
    """A Haar-random rotation (orthogonal, det +1) from ``generator``."""
    a = torch.randn(dim, dim, generator=generator, dtype=torch.float64)
    q, r = torch.linalg.qr(a)
    q = q * torch.sign(torch.diagonal(r))[None, :]
    if torch.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q.to(torch.get_default_dtype())


class PositionalEncoding(EnsembleModule):
    """Sinusoidal encoding right-multiplied by one random rotation per member.

    The rotation de-aligns the encoding from the one-hot axes [CODE]; it is a
    buffer (not trained), drawn from the member's seed, and shared by encoder
    and decoder positions.
    """

    def __init__(self, n_members: int, dim: int, tau: float, amplitude: float):
        super().__init__(n_members)
        self.dim, self.tau, self.amplitude = dim, tau, amplitude
        self.register_buffer("rotation", torch.zeros(n_members, dim, dim))

    def init_member(self, e, generator):
        self.rotation[e] = random_rotation(self.dim, generator)

    def forward(self, length: int) -> torch.Tensor:
        """``(E, length, dim)``: the rotated encoding of positions 0..length-1."""
        pe = sinusoidal_encoding(length, self.dim, self.tau, self.amplitude)
        return torch.einsum("ld,edk->elk", pe, self.rotation)


# --------------------------------------------------------------------------- model


class Seq2Seq(nn.Module):
    """An ensemble of VED / AED / AO networks, one member per seed.

    ``Seq2Seq(config, seeds)``: member ``e`` is initialised from ``seeds[e]``
    alone, so the ensemble equals separate runs. Call with a
    :class:`~companion.aitken2021.tasks.Seq2SeqData` whose tensors have a leading
    ensemble axis (or none: then all members see the same batch):
    ``model(data, mode="teacher")`` for training, ``mode="greedy"`` for analysis.
    """

    def __init__(self, config: ModelConfig, seeds: Sequence[int]):
        super().__init__()
        self.config = config
        self.seeds = [int(s) for s in seeds]
        E = len(self.seeds)
        self.n_members = E
        c = config
        n = c.hidden
        emb = EMBEDDINGS[c.embedding]
        eopts = dict(c.embedding_options)
        self.embed_in = emb(E, c.in_vocab, c.input_dim, **eopts)
        self.embed_out = emb(E, c.out_vocab, c.input_dim, **eopts)
        self.encoder = EnsembleGRUCell(E, self.embed_in.dim, n)
        self.decoder = EnsembleGRUCell(E, self.embed_out.dim, n)
        self.h0 = nn.Parameter(torch.zeros(E, n))  # learnable initial encoder state, starts at 0
        self.attn = None
        if c.arch in ("AED", "AO"):
            self.attn = ATTENTIONS[c.attention](E, n, **dict(c.attention_options))
        readout_in = {"VED": n, "AED": n + (self.attn.context_dim if self.attn else 0), "AO": None}[c.arch]
        if c.arch == "AO":
            readout_in = self.attn.context_dim
        self.readout = EnsembleLinear(E, readout_in, c.out_vocab, bias=False)
        self.pe = PositionalEncoding(E, self.embed_in.dim, c.pe_tau, c.pe_amplitude) if c.use_pe else None
        if self.pe is not None and self.embed_in.dim != self.embed_out.dim:
            raise ValueError("AO needs equal input and output embedding widths (one PE for both)")
        self.reset_parameters()

    # ---- parameters
    def _init_order(self) -> list[EnsembleModule]:
        mods: list[EnsembleModule] = [self.embed_in, self.embed_out, self.encoder, self.decoder]
        if self.attn is not None:
            mods.append(self.attn)
        mods.append(self.readout)
        if self.pe is not None:
            mods.append(self.pe)
        return mods

    def reset_parameters(self) -> None:
        with torch.no_grad():
            self.h0.zero_()
            init_members(self._init_order(), self.seeds)

    @property
    def recurrent(self) -> bool:
        return self.config.arch != "AO"

    # ---- pieces used by analyses
    def context_readout_rows(self) -> torch.Tensor:
        """``(E, V, n)``: the readout rows that act on the context vector (AED: right block; AO: all)."""
        W = self.readout.weight.transpose(1, 2)  # (E, V, in)
        if self.config.arch == "AED":
            return W[..., self.config.hidden :]
        if self.config.arch == "AO":
            return W
        raise ValueError("VED has no context readout")

    def state_readout_rows(self) -> torch.Tensor:
        """``(E, V, n)``: readout rows acting on the decoder state (VED, AED)."""
        if self.config.arch == "AO":
            raise ValueError("AO reads out the context only")
        return self.readout.weight.transpose(1, 2)[..., : self.config.hidden]

    def readout_logits(self, decoder_states: torch.Tensor, context: torch.Tensor | None) -> torch.Tensor:
        arch = self.config.arch
        if arch == "VED":
            z = decoder_states
        elif arch == "AED":
            z = torch.cat([decoder_states, context], dim=-1)
        else:
            z = context
        return self.readout(z)

    def logits_from_attention(self, trace: Trace, attention: torch.Tensor) -> torch.Tensor:
        """Logits when each sample's attention is replaced by ``attention`` (same decoder states).

        ``attention`` broadcasts against ``(E, B, T, S)`` (e.g. the average attention
        matrix ``(E, 1, T, S)``); it is masked to each sample's valid positions and
        renormalised. Used for the average-attention substitution.
        """
        valid = trace.input_valid.unsqueeze(-2).to(trace.encoder_states.dtype)
        w = attention * valid
        w = w / w.sum(-1, keepdim=True).clamp_min(1e-12)
        context = self.attn.context_from_weights(w, trace.encoder_states)
        return self.readout_logits(trace.decoder_states, context)

    # ---- forward
    def _as_members(self, t: torch.Tensor, dims: int) -> torch.Tensor:
        """Add/expand the ensemble axis: ``t`` has ``dims`` non-ensemble dims."""
        if t.dim() == dims:
            t = t.unsqueeze(0)
        if t.shape[0] == 1 and self.n_members > 1:
            t = t.expand(self.n_members, *t.shape[1:])
        return t

    def encode(self, inputs: torch.Tensor, in_index: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Encoder states ``(E, B, S, n)`` and the final state (the state at the EOS)."""
        E, B, S = inputs.shape
        x = self.embed_in(inputs)
        return self.encode_embedded(x, in_index)

    def encode_embedded(self, x: torch.Tensor,
                        in_index: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        """As :meth:`encode` from embedded inputs ``(E, B, S, d)``; ``in_index=None``: no freezing."""
        E, B, S, _ = x.shape
        if self.pe is not None:
            x = x + self.pe(S).unsqueeze(1)
        xproj = self.encoder.input_projection(x)
        if not self.recurrent:
            states = self.encoder.step_from_zero(xproj)
            return states, states[:, :, -1]
        h = self.h0.unsqueeze(1).expand(E, B, self.config.hidden)
        out = []
        for s, x_s in enumerate(xproj.unbind(2)):  # unbind: its backward stacks, slicing would zero-fill
            new = self.encoder.step(x_s, h)
            if in_index is not None:
                new = torch.where((s > in_index).unsqueeze(-1), h, new)
            h = new
            out.append(h)
        return torch.stack(out, dim=2), h

    def _decoder_embed(self, tokens: torch.Tensor, start: bool) -> torch.Tensor:
        return self.embed_out(tokens)

    def forward(self, data: Seq2SeqData, mode: str = "teacher", T: int | None = None) -> Trace:
        inputs = self._as_members(data.inputs, 2)
        in_index = self._as_members(data.in_index, 1)
        if mode == "teacher":
            targets = self._as_members(data.targets, 2)
            T = targets.shape[-1]
        else:
            targets = None
            T = T if T is not None else data.targets.shape[-1]
        E, B, S = inputs.shape
        valid = torch.arange(S) <= in_index.unsqueeze(-1)
        enc, final = self.encode(inputs, in_index)
        start = self.embed_out.start_vector().to(enc.dtype)  # (E, d)
        pe_dec = self.pe(T) if self.pe is not None else None  # (E, T, d)
        if mode == "teacher":
            return self._forward_teacher(enc, final, valid, targets, start, pe_dec)
        if mode == "greedy":
            return self._forward_greedy(enc, final, valid, T, start, pe_dec)
        raise ValueError(f"mode must be 'teacher' or 'greedy', got {mode!r}")

    def _forward_teacher(self, enc, final, valid, targets, start, pe_dec) -> Trace:
        E, B, T = targets.shape
        prev = self.embed_out(targets[..., :-1])  # (E, B, T-1, d)
        x = torch.cat([start[:, None, None, :].expand(E, B, 1, start.shape[-1]), prev], dim=2)
        if pe_dec is not None:
            x = x + pe_dec.unsqueeze(1)
        xproj = self.decoder.input_projection(x)
        if self.recurrent:
            h, out = final, []
            for x_t in xproj.unbind(2):
                h = self.decoder.step(x_t, h)
                out.append(h)
            dec = torch.stack(out, dim=2)
        else:
            dec = self.decoder.step_from_zero(xproj)
        alignment = attention = context = None
        if self.attn is not None:
            alignment, attention, context = self.attn(enc, dec, valid)
        logits = self.readout_logits(dec, context)
        dec_in = torch.cat([torch.full((E, B, 1), -1, dtype=torch.long), targets[..., :-1]], dim=2)
        return Trace(enc, dec, attention, alignment, context, logits, logits.argmax(-1), dec_in, valid,
                     "teacher")

    def _forward_greedy(self, enc, final, valid, T, start, pe_dec) -> Trace:
        E, B = enc.shape[:2]
        x = start[:, None, :].expand(E, B, start.shape[-1])
        h = final
        decs, aligns, attns, ctxs, logits_all, preds, dec_in = [], [], [], [], [], [], []
        token = torch.full((E, B), -1, dtype=torch.long)
        for t in range(T):
            xt = x if pe_dec is None else x + pe_dec[:, t].unsqueeze(1)
            xproj = self.decoder.input_projection(xt)
            h = self.decoder.step(xproj, h) if self.recurrent else self.decoder.step_from_zero(xproj)
            ctx = None
            if self.attn is not None:
                a, w, ctx = self.attn(enc, h.unsqueeze(2), valid)
                aligns.append(a[:, :, 0])
                attns.append(w[:, :, 0])
                ctx = ctx[:, :, 0]
                ctxs.append(ctx)
            lg = self.readout_logits(h, ctx)
            pred = lg.argmax(-1)
            decs.append(h)
            logits_all.append(lg)
            preds.append(pred)
            dec_in.append(token)
            token = pred
            x = self.embed_out(pred)
        stack = lambda xs: torch.stack(xs, dim=2) if xs else None  # noqa: E731
        return Trace(
            encoder_states=enc,
            decoder_states=stack(decs),
            attention=stack(attns),
            alignment=stack(aligns),
            context=stack(ctxs),
            logits=stack(logits_all),
            predictions=torch.stack(preds, dim=2),
            decoder_inputs=torch.stack(dec_in, dim=2),
            input_valid=valid,
            mode="greedy",
        )

    @torch.no_grad()
    def null_input_states(self, S: int, T: int) -> tuple[torch.Tensor, torch.Tensor]:
        """States driven by the all-zero input vector (M9): encoder ``(E, S, n)``, decoder ``(E, T, n)``.

        No EOS freezing; the decoder starts from the null encoder's last state and
        also gets zero inputs (plus the positional encoding for AO).
        """
        E = self.n_members
        x = torch.zeros(E, 1, S, self.embed_in.dim)
        enc, final = self.encode_embedded(x, None)
        xd = torch.zeros(E, 1, T, self.embed_out.dim)
        if self.pe is not None:
            xd = xd + self.pe(T).unsqueeze(1)
        xproj = self.decoder.input_projection(xd)
        if self.recurrent:
            h, out = final, []
            for t in range(T):
                h = self.decoder.step(xproj[:, :, t], h)
                out.append(h)
            dec = torch.stack(out, dim=2)
        else:
            dec = self.decoder.step_from_zero(xproj)
        return enc[:, 0], dec[:, 0]

    def member(self, e: int) -> Seq2Seq:
        """A one-member copy of member ``e`` (same weights)."""
        m = Seq2Seq(self.config, [self.seeds[e]])
        m.load_state_dict({k: v[e : e + 1].clone() for k, v in self.state_dict().items()})
        return m


def architecture_table(hidden: int = 128, vocab: int = 4):
    """Properties of VED, AED and AO read off freshly built models (not typed in by hand)."""
    import pandas as pd

    rows = []
    for arch in ("VED", "AED", "AO"):
        m = Seq2Seq(ModelConfig(arch=arch, in_vocab=vocab, out_vocab=vocab, hidden=hidden), [0])
        rows.append({
            "architecture": arch,
            "recurrent encoder/decoder": m.recurrent,
            "attention": m.attn is not None,
            "positional encoding": m.pe is not None,
            "input width": m.embed_in.dim,
            "readout input width": m.readout.in_features,
            "readout bias": m.readout.bias is not None,
            "parameters": sum(p[0].numel() for p in m.parameters()),
        })
    return pd.DataFrame(rows)
