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
    env = {**os.environ, "COMPANION_MALLOC": "reuse", "COMPANION_MALLOC_TRIM_S": "0"}
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


# Fill 400 MB of heap in 8 MB tensors, each followed by a small tensor that stays alive (so the freed
# blocks sit between live ones and cannot shrink the heap from its top), free the large ones, wait a
# second; print the resident MB before and after the wait.
_FRAGMENT = """
import time, torch
from companion import device
assert device.reuse_freed_memory()
rss = lambda: int(open("/proc/self/statm").read().split()[1]) * 4096 // 2**20
big, small = [], []
for _ in range(50):
    big.append(torch.ones(1_000_000, dtype=torch.float64))
    small.append(torch.ones(16))
del big
before = rss()
time.sleep(1.0)
print(before, rss())
"""


def _fragment_rss(trim_s: str) -> tuple[int, int]:
    env = {**os.environ, "COMPANION_MALLOC": "reuse", "COMPANION_MALLOC_TRIM_S": trim_s}
    out = subprocess.run([sys.executable, "-c", _FRAGMENT], env=env, capture_output=True, text=True,
                         check=True)
    before, after = map(int, out.stdout.split())
    return before, after


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc" or not os.path.exists("/proc/self/statm"),
                    reason="mallopt is glibc's; resident size from Linux's /proc")
def test_free_heap_pages_go_back_to_the_kernel_periodically():
    before, after = _fragment_rss("0")
    assert after > before - 50  # no trimming: the 400 MB freed stay resident
    before, after = _fragment_rss("0.2")
    assert before - after > 300  # trimmed within the second: most of the 400 MB handed back


def test_system_setting_leaves_malloc_alone():
    env = {**os.environ, "COMPANION_MALLOC": "system"}
    code = "from companion import device; print(device.reuse_freed_memory())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
