"""Benchmark: an AED ensemble trained as one batched program vs a loop of single runs.

Trains AED on one-to-one translation (3 words, lengths 15-19, padded to 20,
hidden 128, batch 128) for a fixed number of steps, for 8 seeds:

1. batched: one :class:`Seq2Seq` with the 8 weight sets stacked on a leading
   ensemble axis (one optimiser, one backward pass per step);
2. loop: 8 separate one-member runs, one after another (as the original code
   trains its networks).

It checks that both give the same weights and losses (float tolerance), prints
both wall times and their ratio, the achieved GFLOP/s (analytic FLOP count of a
training step) next to a dense matmul measured in the same process, and a
breakdown of where the time of a batched step goes.

``--attention qkv`` swaps the dot-product alignment for the learned query/key/value attention of the
learned-attention appendix (``--qk-size``, 32 there), to check that its one-seed tasks cost no more either.

Usage: ``python benchmarks/bench_aitken_ensemble.py [--steps 30] [--seeds 8] [--threads 1] [--attention qkv]``
"""

from __future__ import annotations

import argparse
import os
import time

import torch

from companion.aitken2021.models import ModelConfig, Seq2Seq
from companion.aitken2021.tasks import OneToOne
from companion.aitken2021.train import TrainConfig, _batches, default_l2, sequence_loss, train_ensemble
from companion.ensemble import clip_grad_norm_per_member, per_member_sq_norm


def aed_step_flops(B: int, S: int, T: int, n: int, d_in: int, d_out: int, V: int,
                   qk: int | None = None) -> float:
    """Multiply-adds x 2 of one AED training step for one network (forward x 3 for forward + backward).

    ``qk``: the query/key width of learned attention (None: dot product on the hidden states)."""
    enc = 2 * B * S * d_in * 3 * n + S * 2 * B * n * 3 * n  # input projection + (U_ur, U_c) per step
    dec = 2 * B * T * d_out * 3 * n + T * 2 * B * n * 3 * n
    if qk is None:
        att = 2 * (2 * B * T * S * n)  # alignment + context
    else:  # W_K, W_Q, W_V projections, then alignment in qk and context in n
        att = 2 * B * (S + T) * n * qk + 2 * B * S * n * n + 2 * B * T * S * (qk + n)
    readout = 2 * B * T * 2 * n * V
    return 3.0 * (enc + dec + att + readout)


def matmul_gflops(m: int, k: int, n: int, device: torch.device, seconds: float = 1.0) -> float:
    a, b = torch.randn(m, k, device=device), torch.randn(k, n, device=device)
    for _ in range(3):
        a @ b
    reps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        a @ b
        reps += 1
    if device.type == "cuda":
        torch.cuda.synchronize()
    return 2 * m * k * n * reps / (time.perf_counter() - t0) / 1e9


def breakdown(model_cfg, task, seeds, cfg, steps: int) -> dict:
    """Per-step time split of the batched run: data, forward, backward, clip + Adam."""
    model = Seq2Seq(model_cfg, seeds)
    params = list(model.parameters())
    opt = torch.optim.Adam(params, lr=cfg.lr, betas=tuple(cfg.betas), eps=cfg.eps)
    l2 = default_l2(model_cfg.arch)
    acc = dict(data=0.0, forward=0.0, backward=0.0, optimiser=0.0)
    it = _batches(task, seeds, TrainConfig(steps=steps + 1, dataset_batches=cfg.dataset_batches))
    next(it)  # dataset generation happens once per dataset; keep it out of the per-step mean
    t = time.perf_counter()
    for batch in it:
        t1 = time.perf_counter()
        trace = model(batch, mode="teacher")
        loss = sequence_loss(trace.logits, batch) + l2 * per_member_sq_norm(params)
        t2 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        t3 = time.perf_counter()
        clip_grad_norm_per_member(params, cfg.clip)
        opt.step()
        t4 = time.perf_counter()
        acc["data"] += t1 - t
        acc["forward"] += t2 - t1
        acc["backward"] += t3 - t2
        acc["optimiser"] += t4 - t3
        t = time.perf_counter()
    return {k: v / steps for k, v in acc.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("COMPANION_TRAIN_THREADS", 1)))
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--attention", choices=("dot", "qkv"), default="dot")
    ap.add_argument("--qk-size", type=int, default=32)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device("cpu")

    task = OneToOne()
    seeds = list(range(1, args.seeds + 1))
    options = {}
    if args.attention == "qkv":
        from companion.aitken2021 import learned  # noqa: F401  (registers the "qkv" attention)

        options = {"attention": "qkv", "attention_options": (("qk_size", args.qk_size),)}
    model_cfg = ModelConfig(arch="AED", in_vocab=len(task.in_vocab), out_vocab=len(task.out_vocab),
                            hidden=args.hidden, **options)
    cfg = TrainConfig(steps=args.steps, dataset_batches=50, n_test=200)
    print(f"AED ({args.attention} attention) one-to-one, hidden {args.hidden},"
          f" batch {cfg.batch}, {args.steps} steps, {args.seeds} seeds, "
          f"{torch.get_num_threads()} thread(s), torch {torch.__version__}, "
          f"load avg {os.getloadavg()[0]:.1f}")

    # warm-up (allocator, one-off kernel selection)
    train_ensemble(model_cfg, task, seeds[:1], TrainConfig(steps=3, dataset_batches=50, n_test=16))

    t0 = time.perf_counter()
    batched = train_ensemble(model_cfg, task, seeds, cfg)
    t_batched = time.perf_counter() - t0

    t0 = time.perf_counter()
    singles = [train_ensemble(model_cfg, task, [s], cfg) for s in seeds]
    t_loop = time.perf_counter() - t0

    # agreement: weights and loss curves of member e == single run e
    max_w = max(
        float((one["state"][k][0] - batched["state"][k][e]).abs().max())
        for e, one in enumerate(singles) for k in one["state"]
    )
    max_l = max(float((one["history"]["loss"][:, 0] - batched["history"]["loss"][:, e]).abs().max())
                for e, one in enumerate(singles))
    same_acc = all(float(one["test"]["word_accuracy"][0]) == float(batched["test"]["word_accuracy"][e])
                   for e, one in enumerate(singles))
    agree = max_w < 1e-3 and max_l < 1e-4

    S = T = task.length
    flops = aed_step_flops(cfg.batch, S, T, args.hidden, model_cfg.in_vocab, model_cfg.out_vocab,
                           model_cfg.out_vocab, args.qk_size if args.attention == "qkv" else None)
    total = flops * args.steps * args.seeds
    # the time of train_ensemble includes data generation and the final test; time the step loop alone too
    steps_only_b = breakdown(model_cfg, task, seeds, cfg, min(args.steps, 10))
    steps_only_1 = breakdown(model_cfg, task, seeds[:1], cfg, min(args.steps, 10))
    step_b = sum(steps_only_b.values())
    step_1 = sum(steps_only_1.values())
    big = matmul_gflops(1024, 1024, 1024, device)
    gru = matmul_gflops(cfg.batch, args.hidden, 3 * args.hidden, device)
    gru8 = matmul_gflops(cfg.batch * args.seeds, args.hidden, 3 * args.hidden, device)

    print("\n== wall time (train_ensemble: data, steps, final greedy test) ==")
    print(f"batched ({args.seeds} members, one program): {t_batched:8.2f} s")
    print(f"loop of {args.seeds} single runs:               {t_loop:8.2f} s")
    print(f"speed-up loop / batched:                {t_loop / t_batched:8.2f} x   "
          "(near 1: one-seed tasks, as the build trains them, cost no more CPU time)")
    print("\n== agreement (member e of the batch vs single run e, same seed) ==")
    print(f"max |weight difference| {max_w:.2e}; max |loss difference| {max_l:.2e}; "
          f"identical test accuracy: {same_acc} -> {'AGREE' if agree else 'DISAGREE'}")
    print("\n== throughput (analytic FLOPs of a training step, forward + backward = 3 x forward) ==")
    print(f"FLOPs per network per step: {flops / 1e9:.3f} GFLOP")
    print(f"batched run: {total / t_batched / 1e9:6.2f} GFLOP/s end to end; "
          f"{flops * args.seeds / step_b / 1e9:6.2f} GFLOP/s in the step loop")
    print(f"single runs: {total / t_loop / 1e9:6.2f} GFLOP/s end to end; "
          f"{flops / step_1 / 1e9:6.2f} GFLOP/s in the step loop")
    print(f"dense matmul 1024^3: {big:6.2f} GFLOP/s; "
          f"GRU-shaped {cfg.batch}x{args.hidden}x{3 * args.hidden}: {gru:6.2f} GFLOP/s; "
          f"{args.seeds} members stacked ({cfg.batch * args.seeds}x{args.hidden}x{3 * args.hidden}): "
          f"{gru8:6.2f} GFLOP/s")
    print("\n== where a step's time goes (ms per step, mean of the timed steps) ==")
    for name, d in ((f"batched x{args.seeds}", steps_only_b), ("single", steps_only_1)):
        parts = ", ".join(f"{k} {1000 * v:6.1f}" for k, v in d.items())
        print(f"{name:>11}: total {1000 * sum(d.values()):7.1f} | {parts}")
    print(f"per network: batched {1000 * step_b / args.seeds:.1f} ms vs single {1000 * step_1:.1f} ms "
          f"-> step-loop speed-up {args.seeds * step_1 / step_b:.2f} x")


if __name__ == "__main__":
    main()
