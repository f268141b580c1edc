"""Argument-parsing helpers shared by the ``companion`` command and ``python -m companion.bookbuild``."""

from __future__ import annotations

import argparse


def positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return n


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's own convention)
        self.exit(2, f"companion: error: {message}\n")
