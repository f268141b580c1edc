"""Aitken training step: how much faster could it get on this CPU? A measured bound.

Issue "more seeds for the same cost" asks for a per-network AED training step at least 2.5x
faster. This prints, side by side in one process (one thread), what bounds that:

1. **Where a step's time goes.** One real AED training step (10 members, batch 128, the
   one-to-one task) under the torch profiler: the share of time in the matrix products
   (``bmm``, ``baddbmm``, ``mm``, ``addmm``) and their achieved GFLOP/s against a dense
   1024^3 product measured in the same process.
2. **The bound.** If every operation but the matrix products were free and the products ran
   at their measured speed, a step would take the products' time. The ratio of the real
   step to that time is the largest speed-up any fusion of the other operations can give.
3. **A hand-written backward, measured.** A whole GRU run as one autograd node (the forward
   loop records nothing; the backward loop is written out, with the recurrent weights'
   gradients as one product over all steps), against the library's step loop that autograd
   records: gradients compared, forward + backward times side by side.

What it showed on the 2-core development machine (2026-12-04, nothing else running): a step took
377 ms of CPU time, 188 ms of it in the products, which ran at 88 GFLOP/s against 163 for the
dense product. So fusing everything else could give at most 2.0x, and 2.5x needs the products
themselves faster as well (bigger, better-shaped products: up to 3.7x if they ran at the dense
rate). The hand-written backward ran 0.88x as fast as autograd's step loop (0.64x in a run beside
a training job), with gradients equal to 6e-7: each backward step still runs some fifteen
element-wise kernels over 0.6-1.3 MB tensors, and at this size they are bound by memory traffic,
not by autograd's bookkeeping. Fusing them means compiled loops; an earlier trial of
``torch.compile`` on the step compiled for 89 s and gained nothing.

Usage: ``python benchmarks/bench_aitken_bound.py [--seeds 10] [--reps 4]``
"""

from __future__ import annotations

import argparse
import os
import time

import torch

# the FLOP count and the dense-product probe are the ensemble benchmark's (run as a script, this folder
# is on the path)
from bench_aitken_ensemble import aed_step_flops, matmul_gflops
from torch.profiler import profile

from companion import device
from companion.aitken2021.models import ModelConfig, Seq2Seq
from companion.aitken2021.tasks import OneToOne
from companion.aitken2021.train import TrainConfig, _batches, default_l2, sequence_loss
from companion.ensemble import EnsembleGRUCell, per_member_sq_norm

MATMUL_OPS = ("aten::bmm", "aten::baddbmm", "aten::mm", "aten::addmm", "aten::addmm_", "aten::matmul")


class HandWrittenGRU(torch.autograd.Function):
    """A whole GRU run as one autograd node: the forward loop records nothing,
    the backward loop is written out by hand.

    Why: recorded step by step, a 20-step run is a few hundred small autograd
    nodes, and the time goes to their bookkeeping and to the many element-wise
    kernels of their backward passes, not to the matrix products. Here each
    backward step does two small products, and the recurrent weights' gradients
    are two large products over all steps at once.

    Buffers are laid out ``(E, L, B, .)``, time before batch: a step is one
    ``(E, B, .)`` slice, the recurrent weights' gradients are one product over
    all ``L * B`` rows per member, and the input projection's gradient comes out
    in the layout the projection needs. The products write fresh contiguous
    tensors (a strided output sends them down a slow per-matrix path); the
    element-wise kernels write into the buffers. With ``a = W x + b`` the
    projected input, per step: ``u = sigmoid(a_u + h U_u)``,
    ``r = sigmoid(a_r + h U_r)``, ``c = tanh(a_c + (r h) U_c)``,
    ``h' = u h + (1 - u) c`` and, where ``keep``, ``h' = h``.
    """

    @staticmethod
    def forward(ctx, xproj, h0, U_ur, U_c, keep):
        E, L, B, _ = xproj.shape  # (E, L, B, 3n)
        n = U_c.shape[-1]
        U_u, U_r = U_ur[..., :n], U_ur[..., n:]
        H = xproj.new_empty(E, L + 1, B, n)  # H[:, s] is the state before step s
        Gu, Gr, C, RH = (xproj.new_empty(E, L, B, n) for _ in range(4))  # u, r, c and r * h
        H[:, 0] = h0
        for s in range(L):
            h, a = H[:, s], xproj[:, s]
            u = torch.sigmoid(torch.baddbmm(a[..., :n], h, U_u), out=Gu[:, s])
            r = torch.sigmoid(torch.baddbmm(a[..., n : 2 * n], h, U_r), out=Gr[:, s])
            rh = torch.mul(r, h, out=RH[:, s])
            c = torch.tanh(torch.baddbmm(a[..., 2 * n :], rh, U_c), out=C[:, s])
            if keep is None:
                torch.lerp(c, h, u, out=H[:, s + 1])
            else:
                torch.where(keep[:, s], h, torch.lerp(c, h, u), out=H[:, s + 1])
        ctx.save_for_backward(H, Gu, Gr, C, RH, U_ur, U_c, keep)
        return H[:, 1:]

    @staticmethod
    def backward(ctx, grad_states):
        H, Gu, Gr, C, RH, U_ur, U_c, keep = ctx.saved_tensors
        E, L, B, n = C.shape
        U_uT, U_rT, U_cT = U_ur[..., :n].transpose(1, 2), U_ur[..., n:].transpose(1, 2), U_c.transpose(1, 2)
        dA = grad_states.new_empty(E, L, B, 3 * n)  # gradient of the pre-activations = of xproj
        dA_u, dA_r, dA_c = dA[..., :n], dA[..., n : 2 * n], dA[..., 2 * n :]
        dh = torch.zeros_like(H[:, 0])
        for s in range(L - 1, -1, -1):
            dh = dh + grad_states[:, s]
            h, u, r, c = H[:, s], Gu[:, s], Gr[:, s], C[:, s]
            carry = None
            if keep is not None:  # a kept step passes its gradient straight to the previous state
                carry = dh.masked_fill(~keep[:, s], 0.0)
                dh = dh.masked_fill(keep[:, s], 0.0)
            one_minus_u = 1.0 - u
            dc = dh * one_minus_u
            da_c = torch.addcmul(dc, dc * c, c, value=-1.0, out=dA_c[:, s])  # dc (1 - c^2)
            drh = torch.bmm(da_c, U_cT)
            da_u = torch.mul(dh * (h - c), u * one_minus_u, out=dA_u[:, s])
            da_r = torch.mul(drh * h, r - r * r, out=dA_r[:, s])
            dh = torch.addcmul(dh * u, drh, r)
            dh = torch.baddbmm(torch.baddbmm(dh, da_u, U_uT), da_r, U_rT)
            if carry is not None:
                dh = dh + carry
        flat = lambda t: t.reshape(E, L * B, t.shape[-1])  # noqa: E731 - views: time and batch are adjacent
        Hs = flat(H[:, :-1]).transpose(1, 2)
        dU_ur = torch.cat([torch.bmm(Hs, flat(dA_u)), torch.bmm(Hs, flat(dA_r))], dim=-1)
        dU_c = torch.bmm(flat(RH).transpose(1, 2), flat(dA_c))
        return dA, dh, dU_ur, dU_c, None


def hand_written_run(cell: EnsembleGRUCell, xproj: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """States ``(E, B, L, n)`` of ``cell`` over ``xproj`` ``(E, B, L, 3n)``, by :class:`HandWrittenGRU`."""
    E, B = xproj.shape[:2]
    n = cell.hidden_size
    states = HandWrittenGRU.apply(xproj.transpose(1, 2).contiguous(), h0.expand(E, B, n), cell.U_ur, cell.U_c,
                                  None)
    return states.transpose(1, 2)


def library_run(cell: EnsembleGRUCell, xproj: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """The library's loop over :meth:`EnsembleGRUCell.step`, recorded by autograd (as the models run it)."""
    h, out = h0, []
    for x_s in xproj.unbind(2):
        h = cell.step(x_s, h)
        out.append(h)
    return torch.stack(out, dim=2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--reps", type=int, default=4)
    args = ap.parse_args()
    torch.set_num_threads(1)
    device.reuse_freed_memory()  # as every training run does
    task = OneToOne()
    seeds = list(range(1, args.seeds + 1))
    cfg = ModelConfig(arch="AED", in_vocab=len(task.in_vocab), out_vocab=len(task.out_vocab))
    batch = next(_batches(task, seeds, TrainConfig(steps=2, dataset_batches=2)))
    model = Seq2Seq(cfg, seeds)
    params = list(model.parameters())
    l2 = default_l2("AED")

    def step():
        trace = model(batch, mode="teacher")
        loss = sequence_loss(trace.logits, batch) + l2 * per_member_sq_norm(params)
        model.zero_grad(set_to_none=True)
        loss.sum().backward()

    E, B, S = batch.inputs.shape if batch.inputs.dim() == 3 else (args.seeds, *batch.inputs.shape)
    T = batch.targets.shape[-1]
    print(f"AED one-to-one, {args.seeds} members, batch {B}, {S} input and {T} output steps, hidden 128, "
          f"1 thread, torch {torch.__version__}, load avg {os.getloadavg()[0]:.1f}")
    for _ in range(2):
        step()
    t0 = time.process_time()
    for _ in range(args.reps):
        step()
    t_step = (time.process_time() - t0) / args.reps
    with profile() as prof:
        for _ in range(args.reps):
            step()
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events) / 1e6 / args.reps
    mm = sum(e.self_cpu_time_total for e in events if e.key in MATMUL_OPS) / 1e6 / args.reps
    flops = args.seeds * aed_step_flops(B, S, T, 128, cfg.in_vocab, cfg.out_vocab, cfg.out_vocab)
    peak = matmul_gflops(1024, 1024, 1024, torch.device("cpu"))

    print("\n== where a training step's time goes ==")
    print(f"step (CPU time, not profiled): {1000 * t_step:7.1f} ms")
    print(f"profiled: {1000 * total:7.1f} ms, of which matrix products {1000 * mm:7.1f} ms "
          f"({100 * mm / total:.0f} %)")
    print(f"matrix products: {flops / 1e9:.2f} GFLOP per step at {flops / mm / 1e9:6.1f} GFLOP/s; "
          f"dense 1024^3 product here: {peak:6.1f} GFLOP/s ({100 * flops / mm / 1e9 / peak:.0f} % of it)")
    print(f"step if everything but the products were free: {1000 * mm:7.1f} ms")
    print(f"largest speed-up from fusing the rest: {t_step / mm:5.2f} x   (goal >= 2.5 x)")
    print(f"with the products at the dense rate as well:  {t_step / (flops / peak / 1e9):5.2f} x")

    # the hand-written backward against autograd's, on the model's own encoder cell
    cell = model.encoder
    L, n = S, 128
    gen = torch.Generator().manual_seed(0)
    xproj = torch.randn(args.seeds, B, L, 3 * n, generator=gen)
    h0 = torch.zeros(args.seeds, B, n)
    grad = torch.randn(args.seeds, B, L, n, generator=gen)
    results = {}
    for name, run in (("autograd step loop", library_run), ("hand-written backward", hand_written_run)):
        x = xproj.clone().requires_grad_(True)
        cell.zero_grad(set_to_none=True)
        run(cell, x, h0).backward(grad)  # warm-up, and the gradients compared below
        results[name] = [x.grad.clone(), cell.U_ur.grad.clone(), cell.U_c.grad.clone()]
    times = {name: 0.0 for name in results}
    for _ in range(args.reps):  # interleaved, so both see the same machine
        for name, run in (("autograd step loop", library_run), ("hand-written backward", hand_written_run)):
            x = xproj.clone().requires_grad_(True)
            t0 = time.process_time()
            run(cell, x, h0).backward(grad)
            times[name] += (time.process_time() - t0) / args.reps
    a, b = results.values()
    diff = max(float((p - q).abs().max() / q.abs().max()) for p, q in zip(a, b))
    print(f"\n== one GRU run of {L} steps, forward + backward ({args.seeds} members, batch {B}) ==")
    for name, t in times.items():
        print(f"{name:>22}: {1000 * t:7.1f} ms")
    ratio = times["autograd step loop"] / times["hand-written backward"]
    print(f"ratio autograd / hand-written: {ratio:5.2f} x; "
          f"largest relative gradient difference {diff:.1e}")


if __name__ == "__main__":
    main()
