"""Clips from the app (V, K): made from the live solver's log without pausing it, of the
steps between the two V presses (or the last 10 s), and the clip plays exactly the
states the solver went through."""

from types import SimpleNamespace

import pytest

from slinky3d.runtime.commands import Grab, Move, Release, Step, replay
from slinky3d.runtime.thread import SimThread
from slinky3d.scene import loader
from slinky3d.viewer.app import keys
from slinky3d.viewer.film import clips, filming

pytestmark = pytest.mark.gl


class FakeFilm:
    """Stands in for the filming process: what the app asked it to film."""

    made: list["FakeFilm"] = []

    def __init__(self, session, out, shot, start=0.0, duration=None):
        self.session, self.out, self.shot, self.start, self.duration = (
            session, out, shot, start, duration)
        self.finished, self.error = False, None
        FakeFilm.made.append(self)

    def poll(self):
        self.finished = True
        return True

    def status(self):  # as the real one: it polls first
        return f"clip saved: {self.out}" if self.poll() else "filming clip..."


class App(clips.Clips):
    """The window's part, saying into a list."""

    def __init__(self, source, scene, live=True):
        self.said: list[str] = []
        super().__init__(source, lambda: scene, self.said.append, keys.CLIP_KEEP, live)


@pytest.fixture
def running(monkeypatch, tmp_path):
    monkeypatch.setattr(clips, "BackgroundFilm", FakeFilm)
    monkeypatch.setattr(clips, "clip_path", lambda scene: tmp_path / "clip.mp4")
    FakeFilm.made = []
    sc = loader.load("hanging-plastic")
    th = SimThread(sc, realtime=False)
    th.start()
    yield th, App(th, sc)
    th.stop()


def steps(th, n, *cmds):
    for c in cmds:
        th.send(c)
    th.send(Step(n))
    assert th.drain(60)


def test_v_films_the_steps_between_its_two_presses(running, tmp_path):
    th, app = running
    steps(th, 20)
    app.key_clip()
    assert app.clip_from == 20 and app.said[-1].startswith("filming")
    steps(th, 30, Grab(0, 75, (0.1, -0.5)), Move(0, (0.2, -0.4)))
    steps(th, 10, Release(0))
    app.key_clip()
    (film,) = FakeFilm.made
    h = film.session.h if film.session.h is not None else film.session.scene.dt
    assert film.session.nsteps == th.steps == 60
    assert film.start == pytest.approx(20 * h) and film.duration == pytest.approx(40 * h)
    assert film.shot == clips.CLIP_SHOT and app.clip_from is None
    # the session replays to the live state, and the clip's last frame is that state
    again = replay(film.session.scene, film.session.log, film.session.nsteps, film.session.h)
    assert again.state_hash() == th.sim.state_hash()
    shot = filming.Shot(size=(64, 48), fps=25)
    stats = filming.film_session(
        film.session, film.duration, shot,
        lambda: [filming.VideoWriter(tmp_path / "here.mp4", shot.size, shot.fps)],
        start=film.start)
    assert stats["final_hash"] == th.sim.state_hash()
    app.poll()
    assert app.said[-1] == f"clip saved: {film.out}" and app.film is None


def test_k_films_the_last_seconds(running):
    th, app = running
    h = th.sim.h
    keep = round(keys.CLIP_KEEP / h)
    steps(th, keep + 50)
    app.key_keep()
    (film,) = FakeFilm.made
    assert film.session.nsteps == keep + 50
    assert film.start == pytest.approx(50 * h) and film.duration == pytest.approx(keep * h)


def test_a_replayed_session_is_not_filmed_again():
    app = App(SimpleNamespace(initial_scene=None, log=[], steps=3, h_override=None), None,
              live=False)
    app.key_clip()
    app.key_keep()
    assert app.said == ["clips film the live solver only"] * 2 and app.clip_from is None


def test_a_clips_frames_are_drawn_at_full_scale():
    """Dynamic resolution is the window's alone: every frame of a film is drawn at the
    film's full size (a clip is filmed in a process of its own, with its own renderer)."""
    from slinky3d.runtime.simulation import Simulation

    sc = loader.load("hanging-steel")
    first = Simulation(sc).snapshot()
    got = []

    class Sink:
        def write(self, img):
            got.append(img.shape)

        def close(self):
            pass

    f = filming.Filmer(sc, first, sc.look, filming.Shot(size=(96, 64), fps=30), [Sink()],
                       total=2, progress=False)
    try:
        for k in range(2):
            f.frame(k, first, first.t)
            assert f.renderer.inner == f.renderer.size == (96, 64)
    finally:
        f.close()
    assert got == [(64, 96, 3)] * 2
