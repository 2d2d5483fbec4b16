"""Giving freed memory back to the operating system, for processes that run for months.

glibc's malloc keeps the pages of freed small objects (snapshots, the history ring's
arrays) mapped in its heaps: after a scene with a large Slinky gives way to a small one,
the resident memory stays at the large one's high-water mark, and over hours it creeps
up in steps as the heaps fragment. `malloc_trim(0)` hands every whole free page back
(glibc >= 2.8 does so in all arenas, not only at the heap's top). Elsewhere (musl,
macOS, Windows) this is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def release_free_memory() -> bool:
    """Return the allocator's free pages to the OS; True if anything was released."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False
