"""Sinks on their own thread (`record`'s encoding overlapping its rendering): frames
arrive in order and unchanged, and an error in the thread comes back to the caller as
the sink's own error, at its next write or at close, without a hang."""

import threading

import numpy as np
import pytest

from slinky3d.errors import SlinkyError
from slinky3d.output.sink_thread import QUEUE, SinkThread


class Frames:
    def __init__(self, fail_at: int | None = None, gate: threading.Event | None = None):
        self.frames: list[np.ndarray] = []
        self.closed = 0
        self.fail_at, self.gate = fail_at, gate
        self.thread: str | None = None

    def write(self, frame: np.ndarray) -> None:
        self.thread = threading.current_thread().name
        if self.gate is not None:
            self.gate.wait()
        if len(self.frames) == self.fail_at:
            raise SlinkyError("--out: cannot write film.mp4: No space left on device")
        self.frames.append(frame.copy())

    def close(self) -> None:
        self.closed += 1


def frames(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [rng.integers(0, 256, (6, 8, 3), dtype=np.uint8) for _ in range(n)]


def test_frames_arrive_in_order_and_unchanged_on_another_thread():
    a, b = Frames(), Frames()
    sent = frames(40)
    t = SinkThread([a, b])
    for f in sent:
        t.write(f)
    t.close()
    t.close()  # a second close does nothing
    for sink in (a, b):
        assert len(sink.frames) == len(sent) and sink.closed == 1
        assert all(np.array_equal(x, y) for x, y in zip(sink.frames, sent, strict=True))
    assert a.thread != threading.current_thread().name


def test_an_error_in_the_thread_is_raised_at_the_next_write_or_at_close():
    sink = Frames(fail_at=3)
    t = SinkThread([sink])
    with pytest.raises(SlinkyError, match="No space left on device"):
        for f in frames(200):  # the queue fills up behind the failed sink: no hang
            t.write(f)
    t.close()  # the error was given once; the sinks were closed by the thread
    assert sink.closed == 1 and len(sink.frames) == 3
    late = Frames(fail_at=2)
    t = SinkThread([late])
    for f in frames(3):
        t.write(f)
    with pytest.raises(SlinkyError, match="No space left"):
        t.close()


def test_a_slow_sink_holds_the_writer_back_to_a_few_frames_in_flight():
    gate = threading.Event()
    sink = Frames(gate=gate)
    t = SinkThread([sink])
    done = threading.Event()

    def writer():
        for f in frames(QUEUE + 5):
            t.write(f)
        done.set()

    w = threading.Thread(target=writer)
    w.start()
    assert not done.wait(0.5)  # blocked: the sink takes none while the gate is shut
    assert t._queue.qsize() == QUEUE
    gate.set()
    w.join()
    t.close()
    assert len(sink.frames) == QUEUE + 5


@pytest.mark.gl
def test_a_film_is_the_frames_the_renderer_draws_in_order():
    """`film` (encoding on the sinks' thread) hands over exactly the frames a renderer
    draws of the same states, in order."""
    from slinky3d.runtime.simulation import Simulation, grid_step
    from slinky3d.scene.loader import load
    from slinky3d.viewer.film import filming
    from slinky3d.viewer.gl.context import headless_context
    from slinky3d.viewer.gl.renderer import Renderer

    sc = load("drop-plastic")
    shot = filming.Shot(size=(64, 48), fps=20, slowmo=2.0)
    got = Frames()
    filming.film(sc, 0.3, shot, lambda: [got])
    h, per = grid_step(sc.dt, 1.0 / (shot.fps * shot.slowmo))
    sim = Simulation(sc, h)
    camera = filming.Camera(sc, sim.snapshot(), sc.look, shot)
    ctx = headless_context()
    try:
        r = Renderer(ctx, shot.size, quality=shot.quality)
        drawn = []
        for k in range(len(got.frames)):
            if k:
                sim.step(per)
            snap = sim.snapshot()
            r.render(snap, sc.look, camera.at(k, snap), camera.stage, slowmo=shot.slowmo)
            drawn.append(r.read())
    finally:
        ctx.release()
    assert len(drawn) == 12
    assert all(np.array_equal(a, b) for a, b in zip(got.frames, drawn, strict=True))
    assert not np.array_equal(drawn[0], drawn[-1])
