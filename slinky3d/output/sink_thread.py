"""Frame sinks fed from a thread of their own, so that encoding overlaps rendering.

`record` draws a frame, then hands it over: H.264 encoding (PyAV releases the GIL while
FFmpeg works) runs on this thread while the next frame is simulated and drawn. Frames
are written in the order given, each exactly as given (the caller hands over arrays it
no longer writes to). A bounded queue keeps at most QUEUE frames in flight, so memory
stays that of a few frames however long the clip. An error in the thread (a full disk)
comes back to the caller at its next `write` or at `close`, as the error the sink
raised; the caller never waits on a thread that has stopped.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence

import numpy as np

from slinky3d.errors import SlinkyError
from slinky3d.output.video import FrameSink, pixels_for

QUEUE = 3  # frames in flight: enough to smooth a slow frame, a few frames of memory
POLL_S = 0.1  # how often a caller waiting on a full queue looks whether the thread ended
_END = None  # the last item: close the sinks


class SinkThread:
    """`FrameSink`s written on one thread: `write` queues a frame, `close` drains the
    queue, closes the sinks and raises the first error the thread met."""

    def __init__(self, sinks: Sequence[FrameSink], name: str = "slinky3d-encoder"):
        self.sinks = list(sinks)
        self.pixels = pixels_for(self.sinks)  # what they all take
        self._queue: queue.Queue[np.ndarray | None] = queue.Queue(maxsize=QUEUE)
        self._error: BaseException | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def write(self, frame: np.ndarray) -> None:
        self._raise()
        self._put(frame)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._thread.is_alive():
            self._put(_END)
            self._thread.join()
        self._raise()

    def _put(self, item: np.ndarray | None) -> None:
        """Queue `item`, waiting while the queue is full, unless the thread has ended."""
        while True:
            try:
                self._queue.put(item, timeout=POLL_S)
                return
            except queue.Full:
                if not self._thread.is_alive():
                    self._raise()
                    raise SlinkyError("the film's encoder stopped") from None

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            self._closed = True
            raise error

    def _run(self) -> None:
        try:
            while True:
                frame = self._queue.get()
                if frame is _END:
                    break
                for sink in self.sinks:
                    sink.write(frame)
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            self._error = e
        finally:
            self._close_sinks()

    def _close_sinks(self) -> None:
        """Close every sink (after an error too: a writer then gives its file up); the
        first error is kept."""
        for sink in self.sinks:
            try:
                sink.close()
            except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
                if self._error is None:
                    self._error = e
