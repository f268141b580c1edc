"""Device selection: CUDA when present, else the CPU (the tested path)."""

from __future__ import annotations

import contextlib
import os

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
    n = max(1, int(n or os.environ.get(THREADS_ENV, 1)))
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)
