"""device.reuse_freed_memory: large freed blocks are reused instead of paged in afresh (glibc only)."""

import os
import platform
import subprocess
import sys

import pytest

# Allocate, fill and free a 64 MB tensor 40 times; print the minor page faults it cost.
_PROBE = """
import resource, sys, torch
from companion import device
if sys.argv[1] == "reuse":
    assert device.reuse_freed_memory()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(40):
    x = torch.ones(8_000_000, dtype=torch.float64)
    del x
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""
PAGES = 64_000_000 // 4096  # pages of one 64 MB tensor


def _faults(mode: str) -> int:
    env = {**os.environ, "COMPANION_MALLOC": "reuse"}
    out = subprocess.run([sys.executable, "-c", _PROBE, mode], env=env, capture_output=True, text=True,
                         check=True)
    return int(out.stdout.strip())


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_freed_large_blocks_are_reused_not_paged_in_again():
    plain, reuse = _faults("plain"), _faults("reuse")
    # glibc's default: every allocation maps fresh pages (40 tensors' worth of faults)
    assert plain > 35 * PAGES
    # with reuse the heap grows for the first few (glibc 2.36: 7, while freed blocks settle into its
    # bins), then serves every later tensor from memory it already has
    assert reuse < 15 * PAGES


def test_system_setting_leaves_malloc_alone():
    env = {**os.environ, "COMPANION_MALLOC": "system"}
    code = "from companion import device; print(device.reuse_freed_memory())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
