"""Giving freed memory back to the operating system, for processes that run for months.

glibc's malloc keeps the pages of freed small objects (snapshots, the history ring's
arrays) mapped in its heaps: after a scene with a large Slinky gives way to a small one,
the resident memory stays near the large one's high-water mark. `malloc_trim(0)` hands
every whole free page back (glibc >= 2.8 does so in all arenas, not only at the heap's
top). Elsewhere (musl, macOS, Windows) it is a no-op. `Upkeep` says when: a full
garbage collection shortly after each scene is opened, a trim every few seconds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import math
from collections.abc import Callable

# wall s between trims (0.2-2.4 ms each): a scene's history ring (up to 41 MB of snapshots)
# turns over every 10 s, and its freed pages are handed back before they pile up
TRIM_EVERY = 5.0
COLLECT_AFTER = 1.0  # wall s after opening a scene: the old one collected (its Load taken)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def resident_mb() -> tuple[float, float]:
    """(resident memory now, its peak) of this process in MB, from /proc (Linux; zeros
    elsewhere)."""
    now = peak = 0.0
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    now = int(line.split()[1]) / 1024
                elif line.startswith("VmHWM:"):
                    peak = int(line.split()[1]) / 1024
    except OSError:
        pass
    return now, peak


def release_free_memory() -> bool:
    """Return the allocator's free pages to the OS; True if anything was released."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


class Upkeep:
    """A long-running window's memory upkeep, driven by its frames' wall clock."""

    def __init__(self, now: float):
        self.collections = 0  # full garbage collections so far
        self.trimmed_at = now
        self.collect_at = now + COLLECT_AFTER  # the first: at the start

    def scene_opened(self, now: float) -> None:
        self.collect_at = now + COLLECT_AFTER

    def tick(self, now: float) -> None:
        """Collect when due, trim every TRIM_EVERY s (and after a collection)."""
        if now >= self.collect_at:
            # The scene replaced: what it leaves in reference cycles (Python collects
            # those only now and then, when the long-lived objects have grown by a
            # quarter) is freed now, while a new scene starts, not at random in play.
            self.collect_at = math.inf
            self.collections += 1
            gc.collect()
            if self.collections == 1:
                # Python's own objects, the libraries' and the window's, alive for good:
                # out of every later collection's scan (0.2-0.3 s down to a few ms)
                gc.freeze()
            self.trimmed_at = -math.inf
        if now - self.trimmed_at >= TRIM_EVERY:
            self.trimmed_at = now
            release_free_memory()
