"""One seed for every random draw: Python's ``random``, NumPy and torch."""

from __future__ import annotations

import random

import numpy as np
import torch


def seed_all(seed: int) -> None:
    """Seed ``random``, NumPy's global state and torch from one integer."""
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def generator(seed: int, device: str | torch.device = "cpu") -> torch.Generator:
    """A private torch generator, so that a draw does not disturb the global stream."""
    g = torch.Generator(device=device)
    g.manual_seed(int(seed))
    return g


def rng(seed: int) -> np.random.Generator:
    """A private NumPy generator for data generation."""
    return np.random.default_rng(int(seed))
