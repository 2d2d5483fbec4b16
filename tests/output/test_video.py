"""`slinky3d record`: films are deterministic, have fps x duration x slowmo frames, replay
a session bit for bit, and bad options are one-line errors (small, short clips)."""

import errno
import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from slinky3d import cli
from slinky3d.output import paths
from slinky3d.output.session import SESSION_KEY, load_session, save_session
from slinky3d.output.video import decode
from slinky3d.runtime.commands import Grab, Move, Release, replay
from slinky3d.runtime.session import Session
from slinky3d.scene import loader
from slinky3d.viewer.film import filming

SIZE = "160x96"
FPS = 20


def record(tmp: Path, name: str, *extra: str, scene: str = "drop-plastic") -> Path:
    out = tmp / name
    rc = cli.main(["record", scene, "--out", str(out), "--size", SIZE, "--fps", str(FPS),
                   *extra])
    assert rc == 0
    return out


@pytest.fixture(scope="module")
def tmp(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("films")


@pytest.fixture(scope="module")
def slow(tmp) -> Path:
    return record(tmp, "slow.mp4", "--duration", "0.2", "--slowmo", "2", "--hud",
                  "--frames", str(tmp / "pngs"))


def test_a_film_has_fps_x_duration_x_slowmo_frames_and_is_reproducible(tmp, slow):
    first = decode(slow)
    assert len(first) == FPS * 0.2 * 2
    assert first[0].shape == (96, 160, 3)
    again = decode(record(tmp, "again.mp4", "--duration", "0.2", "--slowmo", "2", "--hud"))
    assert len(again) == len(first)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    # the Slinky moves: the drop is not a still picture
    assert not np.array_equal(first[0], first[-1])


def test_frames_writes_one_png_per_frame(tmp, slow):
    pngs = sorted((tmp / "pngs").glob("frame_*.png"))
    assert [p.name for p in pngs[:2]] == ["frame_00000.png", "frame_00001.png"]
    assert len(pngs) == len(decode(slow))
    assert Image.open(pngs[-1]).size == (160, 96)


def test_a_gif_is_written_and_decodes_to_the_rendered_colours(tmp):
    gif = record(tmp, "loop.gif", "--duration", "0.25", "--orbit", "90",
                 "--frames", str(tmp / "gif-pngs"))
    frames = decode(gif)
    assert gif.read_bytes()[:4] == b"GIF8"
    assert len(frames) == 5 and frames[0].shape == (96, 160, 3)
    # 256 colours from the first frame: close to the rendered pixels, channels in order
    for k in (0, 4):
        png = np.asarray(Image.open(tmp / "gif-pngs" / f"frame_{k:05d}.png"), float)
        assert np.abs(frames[k] - png).mean() < 4.0


def test_the_step_divides_a_frame_interval(tmp):
    """1/(fps K) of simulated time per frame, a whole number of steps no larger than dt."""
    sc = loader.load("drop-plastic")
    shot = filming.Shot(size=(32, 32), fps=FPS, slowmo=3.0)
    stats = filming.film(sc, 0.1, shot, list)
    assert stats["frames"] == 6
    assert stats["h"] <= sc.dt
    assert stats["h"] * stats["steps_per_frame"] == pytest.approx(1 / (FPS * 3.0), rel=1e-12)


@pytest.fixture(scope="module")
def session_file(tmp) -> tuple[Path, Session]:
    """A short grabbed-and-released session on hanging-plastic, saved as the app does."""
    sc = loader.load("hanging-plastic")
    every = round(1 / (FPS * sc.dt))  # steps per filmed frame
    nsteps = 3 * every
    log = ((0, Grab(0, 75, (0.05, -0.1))), (5, Move(0, (0.2, 0.0))), (20, Release(0)))
    final = replay(sc, log, nsteps).state_hash()
    session = Session(scene=sc, log=log, nsteps=nsteps, final_hash=final)
    return save_session(tmp / "session.npz", session), session


def test_a_filmed_session_ends_on_its_logged_state(tmp, session_file):
    path, session = session_file
    shot = filming.Shot(size=(32, 32), fps=FPS)
    stats = filming.film_session(load_session(path), None, shot, list)
    assert stats["frames"] == 4
    assert stats["final_hash"] == session.final_hash
    out = tmp / "session.mp4"
    assert cli.main(["record", "hanging-plastic", "--replay", str(path), "--out", str(out),
                     "--size", SIZE, "--fps", str(FPS)]) == 0
    assert len(decode(out)) == 4


def test_a_scene_on_the_3d_solver_films_as_a_planar_one(tmp):
    """`record` unchanged for 3D: a turned scene on the 3D solver gives its frames,
    reproducibly, and a session whose grab pulled out of the plane ends filmed on its
    logged state."""
    turned = ("--duration", "0.15", "--solver", "3d", "--set", "rotate=37")
    first = decode(record(tmp, "3d.mp4", *turned, scene="3Pa"))
    assert len(first) == FPS * 0.15 and first[0].shape == (96, 160, 3)
    again = decode(record(tmp, "3d-again.mp4", *turned, scene="3Pa"))
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not np.array_equal(first[0], first[-1])
    sc = loader.load("3Pa", ['solver = "3d"'])  # held at its top, no world
    every = round(1 / (FPS * sc.dt))
    far = sc.slinkies[0].params.N
    log = ((0, Grab(0, far, (0.05, -0.1, 0.15))), (5, Move(0, (0.2, 0.0, -0.1))),
           (20, Release(0)))
    session = Session(scene=sc, log=log, nsteps=3 * every,
                      final_hash=replay(sc, log, 3 * every).state_hash())
    path = save_session(tmp / "session3d.npz", session)
    stats = filming.film_session(load_session(path), None, filming.Shot(size=(32, 32), fps=FPS),
                                 list)
    assert stats["frames"] == 4 and stats["final_hash"] == session.final_hash


def _one_line_error(capsys, argv: list[str], says: str) -> None:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("slinky3d: error:") and len(err.splitlines()) == 1, err
    assert says in err, err


@pytest.mark.parametrize("extra,says", [
    (["--out", "film.avi"], "unknown film extension"),
    (["--out", "no/such/folder/film.mp4"], "does not exist"),
    (["--out", "film.mp4", "--size", "161x96"], "even width and height"),
    (["--out", "film.mp4", "--size", "8x8"], "16 to 8192"),
    (["--out", "film.mp4", "--duration", "nan"], "--duration"),
    (["--out", "film.mp4", "--slowmo", "inf"], "--slowmo"),
    (["--out", "film.mp4", "--orbit", "-inf"], "--orbit"),
    (["--out", "film.mp4", "--fps", "0"], "--fps"),
    (["--out", "film.mp4", "--fps", "30.5"], "--fps"),
    (["--out", "film.mp4", "--duration", "1e9"], "frames"),
])
def test_bad_options_are_one_line_errors(capsys, tmp_path, monkeypatch, extra, says):
    monkeypatch.chdir(tmp_path)
    _one_line_error(capsys, ["record", "drop-plastic", *extra], says)
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.fixture
def no_filming(monkeypatch):
    """A command that gets as far as simulating fails the test: every bad output must be
    found before."""
    def refuse(*args, **kwargs):
        raise AssertionError("the simulation ran")

    monkeypatch.setattr(filming, "film", refuse)
    monkeypatch.setattr(filming, "film_session", refuse)


@pytest.mark.parametrize("extra,says", [
    (["--out", "d.mp4"], "--out: cannot write d.mp4: it is a folder"),
    (["--out", "d.gif"], "--out: cannot write d.gif: it is a folder"),
    (["--out", "/proc/x.mp4"], "--out: cannot write /proc/x.mp4: "),
    (["--out", "afile/x.mp4"], "--out: afile is a file, not a folder"),
    (["--out", "x.gif", "--frames", "afile"], "--frames: afile is a file, not a folder"),
    (["--out", "x.mp4", "--frames", "afile/sub"], "--frames: cannot create afile/sub: a folder "
                                                  "on its path is a file"),
    (["--out", "x.mp4", "--frames", "pngs"], "--frames: cannot write pngs/frame_00000.png: "
                                             "it is a folder"),
])
def test_an_unusable_output_is_refused_before_filming(capsys, tmp_path, monkeypatch,
                                                       no_filming, extra, says):
    """Tried, not guessed: os.access lets root write anywhere, and PyAV opens the file
    only at its first packet, after the simulation."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.mp4").mkdir()
    (tmp_path / "d.gif").mkdir()
    (tmp_path / "afile").write_text("a file")
    (tmp_path / "pngs" / "frame_00000.png").mkdir(parents=True)
    before = sorted(tmp_path.rglob("*"))
    _one_line_error(capsys, ["record", "drop-plastic", *extra], says)
    assert sorted(tmp_path.rglob("*")) == before  # nothing written, nothing left
    assert (tmp_path / "afile").read_text() == "a file"


def test_a_read_only_file_system_is_refused_before_filming(capsys, tmp_path, monkeypatch,
                                                            no_filming):
    """EROFS as the kernel gives it (a read-only mount cannot be made here)."""
    monkeypatch.chdir(tmp_path)
    real_open = os.open

    def read_only(path, flags, *args, **kwargs):
        if Path(path).name == "film.mp4" and flags & (os.O_WRONLY | os.O_RDWR):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(paths.os, "open", read_only)
    _one_line_error(capsys, ["record", "drop-plastic", "--out", "film.mp4"],
                    f"--out: cannot write film.mp4: {os.strerror(errno.EROFS)}")
    assert not list(tmp_path.iterdir())


def test_the_check_neither_truncates_an_old_file_nor_leaves_a_new_one(capsys, tmp_path,
                                                                      monkeypatch, no_filming):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "old.mp4").write_bytes(b"an old film")
    (tmp_path / "afile").write_text("a file")
    for out in ("old.mp4", "new.mp4"):  # --out is tried first, then --frames fails
        _one_line_error(capsys, ["record", "drop-plastic", "--out", out, "--frames", "afile"],
                        "--frames: afile is a file")
    assert (tmp_path / "old.mp4").read_bytes() == b"an old film"
    assert not (tmp_path / "new.mp4").exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("name", ["full.mp4", "full.gif"])
def test_an_error_while_writing_is_one_line(capsys, tmp_path, name):
    """/dev/full opens for writing, then every write fails (ENOSPC): a full disk."""
    out = tmp_path / name
    out.symlink_to("/dev/full")
    _one_line_error(capsys, ["record", "drop-plastic", "--out", str(out), "--size", SIZE,
                             "--fps", str(FPS), "--duration", "0.1"],
                    f"--out: cannot write {out}: {os.strerror(errno.ENOSPC)}")


def test_a_replay_of_another_scene_or_version_is_refused(capsys, tmp, session_file):
    path, _ = session_file
    out = str(tmp / "x.mp4")
    _one_line_error(capsys, ["record", "1Pa", "--replay", str(path), "--out", out],
                    "another scene")
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    d = json.loads(str(arrays[SESSION_KEY][()]))
    d["version"] = "0.0.1"
    arrays[SESSION_KEY] = np.array(json.dumps(d))
    old = tmp / "old.npz"
    np.savez(old, **arrays)
    _one_line_error(capsys, ["record", "--replay", str(old), "--out", out], "0.0.1")


def test_a_clip_filmed_in_the_background_plays_the_logged_states(tmp, session_file):
    """The app's V/K clip: the session's last frames, filmed in another process, are the
    frames of the same window filmed here (the same logged states, the same pixels)."""
    _, session = session_file
    shot = filming.Shot(size=(64, 48), fps=FPS)
    start = 1 / FPS  # the clip leaves out the first frame interval
    here = tmp / "here.mp4"
    stats = filming.film_session(session, None, shot,
                                 lambda: [filming.VideoWriter(here, shot.size, FPS)],
                                 start=start)
    assert stats["frames"] == 3 and stats["final_hash"] == session.final_hash
    out = filming.clip_path(session.scene, tmp / "videos")
    assert out.parent == tmp / "videos" and out.name.startswith("hanging-plastic-")
    job = filming.BackgroundFilm(session, out, shot, start=start)
    deadline = time.monotonic() + 120
    while not job.poll():
        assert time.monotonic() < deadline, job.status()
        time.sleep(0.1)
    assert job.error is None and job.status() == f"clip saved: {out}"
    clip, ref = decode(out), decode(here)
    assert len(clip) == 3
    assert all(np.array_equal(a, b) for a, b in zip(clip, ref, strict=True))


@pytest.mark.parametrize("name,says", [
    ("clip.avi", "clip failed: clip: unknown film extension"),
    ("folder.mp4", "clip failed: clip: cannot write {out}: it is a folder"),
])
def test_a_background_clip_that_fails_says_why_in_one_line(tmp_path, session_file, name,
                                                           says):
    _, session = session_file
    out = tmp_path / name
    if name == "folder.mp4":
        out.mkdir()
    job = filming.BackgroundFilm(session, out, filming.Shot(size=(64, 48), fps=FPS))
    deadline = time.monotonic() + 120
    while not job.poll():
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert job.status().startswith(says.format(out=out)), job.status()
    assert len(job.status().splitlines()) == 1
    assert [p.name for p in tmp_path.iterdir()] == (["folder.mp4"] if out.is_dir() else [])


def test_a_cancelled_clip_leaves_no_half_written_file(tmp_path):
    """Quitting the app cancels a clip: its file, written up to then, is removed."""
    sc = loader.load("hanging-plastic")
    session = Session(scene=sc, log=(), nsteps=300 * round(1 / (FPS * sc.dt)))  # 301 frames
    out = tmp_path / "clip.mp4"
    job = filming.BackgroundFilm(session, out, filming.Shot(size=(64, 48), fps=FPS))
    deadline = time.monotonic() + 120
    while not out.exists():  # PyAV creates it at the first packet, some frames in
        assert not job.poll(), job.status()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    job.cancel()
    assert job.status() == "clip failed: cancelled"
    assert not out.exists()




class Frames:
    """A sink that keeps the frames (tests only: a film never holds them all)."""

    def __init__(self) -> None:
        self.frames: list[np.ndarray] = []

    def write(self, frame: np.ndarray) -> None:
        self.frames.append(frame.copy())

    def close(self) -> None:
        pass


def test_start_films_the_same_frames_later_in_the_run():
    sc = loader.load("drop-plastic")
    shot = filming.Shot(size=(64, 48), fps=FPS, slowmo=2.0)
    whole, tail = Frames(), Frames()
    filming.film(sc, 0.2, shot, lambda: [whole])
    stats = filming.film(sc, 0.1, shot, lambda: [tail], start=0.1)
    assert stats["start"] == pytest.approx(0.1, abs=1e-12)
    assert len(whole.frames) == 8 and len(tail.frames) == 4
    assert all(np.array_equal(a, b) for a, b in zip(whole.frames[4:], tail.frames, strict=True))
