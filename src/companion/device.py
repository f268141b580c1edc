"""Device selection: CUDA when present, else the CPU (the tested path)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import threading
import time

import torch


def default_device() -> torch.device:
    """``COMPANION_DEVICE`` if set (e.g. ``cpu`` to force the CPU), else CUDA when available."""
    name = os.environ.get("COMPANION_DEVICE")
    if name:
        return torch.device(name)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


THREADS_ENV = "COMPANION_TRAIN_THREADS"


@contextlib.contextmanager
def train_threads(n: int | None = None):
    """Run CPU training on ``n`` intra-op threads (default ``$COMPANION_TRAIN_THREADS`` or 1), then restore.

    Why one thread: the models of both papers are chains of small matrix
    products, and on a small CPU shared with other processes OpenMP threads
    spin-wait on each other. Measured on the 2-core machine under load: an AED
    step 60-75 ms on one thread against over 1 s on two; small batched matmuls
    of the image nets 50-80x slower. On an idle machine one thread loses at most
    about 2x. Ignored by CUDA kernels.
    """
    reuse_freed_memory()
    n = max(1, int(n or os.environ.get(THREADS_ENV, 1)))
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4
_reuse_applied: bool | None = None
TRIM_ENV = "COMPANION_MALLOC_TRIM_S"


def _trim_every(libc, period: float) -> None:
    """Return the heap's free pages to the kernel every ``period`` seconds (glibc's malloc_trim takes the
    allocator's own locks, so it is safe beside the training thread)."""
    while True:
        time.sleep(period)
        libc.malloc_trim(0)


def reuse_freed_memory() -> bool:
    """Let this process reuse the memory it frees (glibc only; once per process); True if applied.

    Why: glibc gives every block above its mmap threshold (at most 32 MB) back to the kernel as soon as it
    is freed, so a training loop whose activations exceed that size pays, at every step, for the kernel
    to hand it fresh zeroed pages. Measured on the 2-core machine, T-CPLX-D1's focus-100 program (36
    members, double precision): 20 epochs took 62 s, 30 of them system time, against 32 s with
    reuse (``benchmarks/bench_malloc.py`` prints the ratio). The price: the process keeps its peak
    heap. Some programs fragment that heap so that it keeps growing (one of f-trend's dataset-1
    programs of 114 seeds held 17 GB, almost all of it free, after 90 minutes, and grew 0.5 GB a minute),
    so a background thread hands the free pages back every ``COMPANION_MALLOC_TRIM_S`` seconds
    (default 60; 0 turns it off): a minute's worth of fresh pages costs far less than a page per step.
    ``COMPANION_MALLOC=system`` leaves glibc's defaults alone.
    """
    global _reuse_applied
    if _reuse_applied is None:
        _reuse_applied = False
        if os.environ.get("COMPANION_MALLOC", "reuse") != "system" and platform.libc_ver()[0] == "glibc":
            try:
                libc = ctypes.CDLL(None)  # this process's own C library
                # no mmap for large blocks (they come from the heap, which is reused), no trim at each free
                # (the thread below trims on a timer instead)
                ok = libc.mallopt(_M_MMAP_MAX, 0) == 1
                ok = libc.mallopt(_M_TRIM_THRESHOLD, 2**31 - 1) == 1 and ok
                _reuse_applied = ok
                raw = os.environ.get(TRIM_ENV, "60")
                try:
                    period = float(raw)
                except ValueError:
                    raise ValueError(f"{TRIM_ENV} must be seconds (0: off), got {raw!r}") from None
                if ok and period > 0:
                    threading.Thread(target=_trim_every, args=(libc, period), daemon=True,
                                     name="companion-malloc-trim").start()
            except (OSError, AttributeError):
                pass
    return _reuse_applied
