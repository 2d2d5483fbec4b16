"""Frame sinks fed from a process of their own, so that encoding overlaps rendering
without sharing Python's lock with it.

On one thread (`output/sink_thread.py`) the encoder waits for Python's lock between
FFmpeg's calls while the drawing thread holds it inside the GL driver (moderngl keeps it
through a draw and the read-back): on a 2-core machine that wait, not the encoder's CPU,
made a recording cost 1.5x the bare render. Here the sinks run in a child forked at the
first frame, with a lock of their own; the frames travel through shared memory, SLOTS
of them in flight at most (memory stays that of a few frames however long the clip),
each slot handed over and back as its index through a pipe. Frames are written in the
order given, each exactly as given. An error in the child (a full disk) comes back to the
caller at its next `write` or at `close` as a one-line SlinkyError; a child that dies is
one too, never a hang.

The child is forked, not spawned: it starts in milliseconds with the sinks the caller
made (a spawned one would import numpy, PyAV and the compiled conversion again, most of
a short clip's wall time). It only writes the sinks and leaves by `os._exit`, touching
nothing else the parent had (no GL, no atexit handlers). Off Linux (macOS forks
threaded processes unsafely; Windows cannot) the caller keeps the thread:
`fork_available()`.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Sequence
from multiprocessing import shared_memory
from multiprocessing.connection import Connection
from typing import Any, NoReturn

import numpy as np

from slinky3d.errors import SlinkyError, error_line
from slinky3d.output.sink_thread import POLL_S, QUEUE
from slinky3d.output.video import FrameSink, pixels_for

SLOTS = QUEUE  # frames in flight, as on a thread
_END = -1  # the last index sent: close the sinks


def fork_available() -> bool:
    """Whether sinks can run in a forked process here (Linux)."""
    return sys.platform.startswith("linux")


class SinkProcess:
    """`FrameSink`s written in a child process: `write` hands a frame over (waiting for
    a free slot), `close` drains, closes the sinks and raises the first error."""

    def __init__(self, sinks: Sequence[FrameSink]):
        self.sinks = list(sinks)
        self.pixels = pixels_for(self.sinks)
        self._shm: shared_memory.SharedMemory | None = None
        self._slots: list[np.ndarray] = []
        self._free: list[int] = []
        self._conn: Connection | None = None
        self._pid = 0
        self._closed = False

    def write(self, frame: np.ndarray) -> None:
        if self._closed:
            raise SlinkyError("the film's encoder stopped")
        if self._conn is None:
            self._start(frame)
        k = self._free_slot()
        np.copyto(self._slots[k], frame)
        self._send(k)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._conn is None:  # no frame came: the sinks were never handed over
            for sink in self.sinks:
                sink.close()
            return
        try:
            self._send(_END)
            while True:  # the free slots, then how the sinks closed
                msg = self._recv()
                if msg[0] == "closed":
                    if msg[1]:
                        raise SlinkyError(msg[1])
                    return
        finally:
            self._end()

    # -- the parent's side -------------------------------------------------------------
    def _start(self, frame: np.ndarray) -> None:
        shape, dtype = frame.shape, frame.dtype
        size = max(1, int(np.prod(shape)) * dtype.itemsize)
        self._shm = shared_memory.SharedMemory(create=True, size=SLOTS * size)
        buf = self._shm.buf
        self._slots = [np.ndarray(shape, dtype, buf, offset=k * size) for k in range(SLOTS)]
        self._free = list(range(SLOTS))
        mine, theirs = multiprocessing.Pipe()
        pid = os.fork()
        if pid == 0:  # the child
            mine.close()
            _child(self.sinks, self._slots, theirs)  # never returns
        theirs.close()
        self._conn, self._pid = mine, pid
        # the sinks are the child's now; the parent's copies were never written to
        self.sinks = []

    def _free_slot(self) -> int:
        while not self._free:
            msg = self._recv()
            if msg[0] == "free":
                self._free.append(msg[1])
            elif msg[0] == "closed":  # the child gave up after an error
                self._closed = True
                self._end()
                raise SlinkyError(msg[1] or "the film's encoder stopped")
        return self._free.pop(0)

    def _send(self, k: int) -> None:
        assert self._conn is not None
        try:
            self._conn.send(k)
        except OSError:  # the child has gone: after an error, it said which
            self._give_up()

    def _recv(self) -> tuple[str, Any]:
        assert self._conn is not None
        while True:
            try:
                if self._conn.poll(POLL_S):
                    msg: tuple[str, Any] = self._conn.recv()
                    return msg
            except (EOFError, OSError):
                pass
            else:
                if self._alive():
                    continue
            self._give_up()

    def _give_up(self) -> NoReturn:
        """The child is gone: raise the error it sent as it closed the sinks, if it did
        (its last message), or say it ended unexpectedly."""
        error = "the film's encoder ended unexpectedly"
        assert self._conn is not None
        try:
            while self._conn.poll(0):
                msg = self._conn.recv()
                if msg[0] == "closed" and msg[1]:
                    error = msg[1]
        except (EOFError, OSError):
            pass
        self._closed = True
        self._end()
        raise SlinkyError(error)

    def _alive(self) -> bool:
        try:
            pid, _ = os.waitpid(self._pid, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid:
            self._pid = 0
        return pid == 0

    def _end(self) -> None:
        """Wait for the child (it has ended or is ending) and free the shared memory."""
        if self._conn is not None:
            self._conn.close()
        if self._pid:
            try:
                os.waitpid(self._pid, 0)
            except ChildProcessError:
                pass
            self._pid = 0
        if self._shm is not None:
            self._slots = []
            self._shm.close()
            self._shm.unlink()
            self._shm = None


def _child(sinks: list[FrameSink], slots: list[np.ndarray], conn: Connection) -> None:
    """The child's whole life: write each frame handed over, hand its slot back, close
    the sinks at the end (or after the first error), say how, and leave."""
    error = ""
    try:
        while True:
            k = conn.recv()
            if k == _END:
                break
            for sink in sinks:
                sink.write(slots[k])
            conn.send(("free", k))
    except BaseException as e:  # noqa: BLE001 - handed to the parent as one line
        error = error_line(e)
    for sink in sinks:  # after an error too: a writer then gives its file up
        try:
            sink.close()
        except BaseException as e:  # noqa: BLE001 - handed to the parent as one line
            error = error or error_line(e)
    try:
        conn.send(("closed", error))
        conn.close()
    finally:
        os._exit(0)
