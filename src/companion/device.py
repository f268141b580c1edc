"""Device selection: CUDA when present, else the CPU (the tested path)."""

from __future__ import annotations

import os

import torch


def default_device() -> torch.device:
    """``COMPANION_DEVICE`` if set (e.g. ``cpu`` to force the CPU), else CUDA when available."""
    name = os.environ.get("COMPANION_DEVICE")
    if name:
        return torch.device(name)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
