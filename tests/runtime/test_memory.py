import platform

import numpy as np
import pytest

from slinky3d.runtime.memory import release_free_memory, resident_mb


def rss_mb() -> float:
    now = resident_mb()[0]
    assert now > 0.0, "no VmRSS"
    return now


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_freed_small_objects_pages_go_back_to_the_os():
    # 160 MB of 8 kB arrays (below malloc's mmap threshold: in its heap), one in 50 kept,
    # so the heap cannot shrink from its top: its free pages stay resident until trimmed
    arrays = [np.ones(1000) for _ in range(20000)]
    kept = arrays[::50]
    del arrays
    before = rss_mb()
    assert release_free_memory()
    after = rss_mb()
    assert before - after > 80.0, (before, after)
    assert all(float(a.sum()) == 1000.0 for a in kept)  # what is still used stays
