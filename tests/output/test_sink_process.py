"""Frame sinks in a forked process (output/sink_process.py): the frames in order and
unchanged, an error or a death in the child a one-line error in the parent, never a
hang, and at most SLOTS frames in flight."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from slinky3d.errors import SlinkyError
from slinky3d.output.sink_process import SLOTS, SinkProcess, fork_available
from slinky3d.output.video import GL_ROWS

pytestmark = pytest.mark.skipif(not fork_available(), reason="needs fork")


class Logged:
    """A sink that writes each frame's digest to a file: what the child saw."""

    pixels = GL_ROWS

    def __init__(self, path: Path, fail_at: int = -1, die_at: int = -1,
                 wait_for: Path | None = None):
        self.path, self.fail_at, self.die_at, self.wait_for = path, fail_at, die_at, wait_for
        self.n = 0

    def write(self, frame: np.ndarray) -> None:
        if self.n == self.fail_at:
            raise OSError(28, "No space left on device")
        if self.n == self.die_at:
            os._exit(3)
        while self.wait_for is not None and not self.wait_for.exists():
            time.sleep(0.01)
        with open(self.path, "a") as f:
            f.write(hashlib.sha1(frame.tobytes()).hexdigest() + "\n")
        self.n += 1

    def close(self) -> None:
        with open(self.path, "a") as f:
            f.write("closed\n")


def frames(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    return [rng.integers(0, 256, (6, 8, 4), dtype=np.uint8) for _ in range(n)]


def test_frames_arrive_in_order_and_unchanged_in_the_child(tmp_path):
    log = tmp_path / "log"
    p = SinkProcess([Logged(log), Logged(tmp_path / "log2")])
    assert p.pixels == GL_ROWS
    shown = frames(20)
    for f in shown:
        p.write(f)
        f[:] = 0  # the caller may reuse its array once write returns
    p.close()
    want = [hashlib.sha1(f.tobytes()).hexdigest() for f in frames(20)] + ["closed"]
    assert log.read_text().split() == want
    assert (tmp_path / "log2").read_text().split() == want


def test_an_error_in_the_child_is_one_line_at_a_write_or_at_close(tmp_path):
    log = tmp_path / "log"
    p = SinkProcess([Logged(log, fail_at=3)])
    with pytest.raises(SlinkyError, match="No space left on device") as e:
        for f in frames(30):
            p.write(f)
        p.close()
    assert "\n" not in str(e.value)
    want = [hashlib.sha1(f.tobytes()).hexdigest() for f in frames(3)] + ["closed"]
    assert log.read_text().split() == want  # the sink closed after the error too
    p.close()  # closed already: nothing more


def test_a_child_that_dies_is_an_error_not_a_hang(tmp_path):
    p = SinkProcess([Logged(tmp_path / "log", die_at=2)])
    t0 = time.monotonic()
    with pytest.raises(SlinkyError, match="ended unexpectedly"):
        for f in frames(30):
            p.write(f)
        p.close()
    assert time.monotonic() - t0 < 30


def test_a_slow_sink_holds_the_writer_back_to_a_few_frames_in_flight(tmp_path):
    go = tmp_path / "go"
    p = SinkProcess([Logged(tmp_path / "log", wait_for=go)])
    written: list[int] = []

    def writer() -> None:
        for k, f in enumerate(frames(SLOTS + 2)):
            p.write(f)
            written.append(k)

    t = threading.Thread(target=writer)
    t.start()
    time.sleep(1.0)
    assert len(written) == SLOTS  # every slot taken: the next write waits
    go.touch()
    t.join(timeout=30)
    assert len(written) == SLOTS + 2
    p.close()
    assert len((tmp_path / "log").read_text().split()) == SLOTS + 2 + 1


def test_no_frame_closes_the_sinks_here(tmp_path):
    log = tmp_path / "log"
    p = SinkProcess([Logged(log)])
    p.close()
    assert log.read_text().split() == ["closed"]
