"""`slinky3d record`: a scene (or a logged session) filmed off screen, frame by frame.

No clock: each frame advances the simulation by exactly 1 / (fps x slowmo) simulated
seconds, a whole number of solver steps, so nothing is dropped and two recordings are
identical. One headless context and one renderer serve the whole clip; each frame is
drawn, read back and handed to the sinks (`output/video.py`), which encode it in a
process of their own (an MP4: `output/sink_process.py`) or on a thread of their own
(`output/sink_thread.py`) while the next frame is made.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import queue
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs
from PIL import Image, ImageDraw, ImageFont
from tqdm import tqdm  # type: ignore[import-untyped]  # no stubs shipped

from slinky3d.dynamics.engine3d import warm_up as warm_up3d
from slinky3d.dynamics.solver import warm_up
from slinky3d.engines import THREE_D
from slinky3d.errors import SlinkyError, error_line, note, one_line
from slinky3d.output.paths import check_folder, check_writable
from slinky3d.output.session import load_session
from slinky3d.output.sink_process import SinkProcess, fork_available
from slinky3d.output.sink_thread import SinkThread
from slinky3d.output.video import (
    GL_ROWS,
    FrameSink,
    PngSequence,
    VideoWriter,
    check_out,
    pixels_for,
    png_path,
)
from slinky3d.runtime.commands import replay
from slinky3d.runtime.session import scene_text, session_from_json, session_json
from slinky3d.runtime.simulation import Simulation, grid_step
from slinky3d.runtime.snapshot import Snapshot
from slinky3d.scene.loader import load
from slinky3d.scene.look import CameraHint, Look, merge_camera
from slinky3d.scene.reach import lowest, reach_of
from slinky3d.scene.spec import Scene
from slinky3d.viewer.camera import OrbitCamera, frame_snapshots
from slinky3d.viewer.director import FOLLOW, Director
from slinky3d.viewer.gl.context import headless_context
from slinky3d.viewer.gl.quality import AUTO
from slinky3d.viewer.gl.renderer import Renderer
from slinky3d.viewer.jobs import parse_camera_option, parse_size
from slinky3d.viewer.stage import stage_for

MAX_FRAMES = 1_000_000  # about 4.6 h at 60 fps: more is a typo


@dataclass(frozen=True)
class Shot:
    """How a clip is filmed: its size, rate, slow motion and camera."""

    size: tuple[int, int]
    fps: int
    slowmo: float = 1.0  # film seconds per simulated second
    hint: CameraHint = CameraHint()
    mode: str = FOLLOW  # the camera's, when the hint has none
    orbit: float = 0.0  # degrees of yaw per second of film
    hud: bool = False
    quality: str = AUTO


class Camera:
    """The clip's camera: the director (viewer/director.py) in the shot's mode, framed
    on the run's first snapshot and how low the Slinkies will hang (the fixed camera;
    its angles are the others' too), and driven by the film's own clock: simulated
    time for the motion it follows, film time for the sway and --orbit."""

    def __init__(self, scene: Scene, first: Snapshot, look: Look, shot: Shot):
        hanging, falling = reach_of(scene)
        self.stage = stage_for(look, first, lowest(hanging, falling))
        # framed down to the hanging reach only, as screenshot: a fall would shrink the view
        base = frame_snapshots((first,), shot.size, shot.hint, self.stage, hanging)
        self.director = Director(shot.hint.mode or shot.mode, base, shot.size,
                                 self.stage.floor_y if look.floor else None)
        self.orbit = math.radians(shot.orbit)
        self.fps = shot.fps
        self._t: float | None = None  # the simulated time of the last frame

    def at(self, frame: int, snap: Snapshot) -> OrbitCamera:
        """The camera of film frame `frame`, which shows `snap`."""
        self.director.turn = self.orbit * frame / self.fps
        if self._t is None:
            cam = self.director.start(snap)
        else:
            cam = self.director.step(snap, snap.t - self._t, 1.0 / self.fps)
        self._t = snap.t
        return cam


def hud_line(snap: Snapshot, t: float, slowmo: float) -> str:
    """The HUD's text: time, the mechanical energy of all Slinkies, the slow motion."""
    e = sum(s.energy.kinetic + s.energy.gravity + s.energy.spring
            for s in snap.slinkies if s.energy is not None)
    slow = f"   slow motion x{slowmo:g}" if slowmo != 1 else ""
    return f"t = {t:6.3f} s   E = {e:+.4f} J{slow}"


def draw_hud(frame: np.ndarray, text: str) -> np.ndarray:
    """`text` in the top left corner, white on a dark band (Pillow: the app's imgui
    overlay needs a window's input and fonts, which a headless film does not have)."""
    img = Image.fromarray(frame)
    px = max(10, frame.shape[0] // 36)
    try:
        font: Any = ImageFont.load_default(size=px)
    except TypeError:  # Pillow < 10.1: one bitmap size
        font = ImageFont.load_default()
    draw = ImageDraw.Draw(img)
    x0, y0, x1, y1 = draw.textbbox((px // 2, px // 2), text, font=font)
    draw.rectangle((x0 - 4, y0 - 4, x1 + 4, y1 + 4), fill=(0, 0, 0))
    draw.text((px // 2, px // 2), text, font=font, fill=(255, 255, 255))
    return np.asarray(img)


class Filmer:
    """One context and one renderer for a whole clip; `frame(k, snap, t)` draws frame k
    and hands it to every sink (written on the sinks' own thread)."""

    def __init__(self, scene: Scene, first: Snapshot, look: Look, shot: Shot,
                 sinks: list[FrameSink], total: int, progress: bool):
        self.look, self.shot = look, shot
        # An MP4 alone is encoded in a process of its own (it would wait for Python's
        # lock on a thread); PNGs and GIFs, and mixes, on a thread.
        thread: SinkProcess | SinkThread
        if fork_available() and pixels_for(sinks) == GL_ROWS:
            thread = SinkProcess(sinks)
        else:
            thread = SinkThread(sinks)
        self.sinks: list[FrameSink] = [thread]
        # The GL's rows as they are when every sink takes them (an MP4 alone): the
        # encoder's thread converts them. The HUD is drawn on RGB.
        self.raw = thread.pixels == GL_ROWS and not shot.hud
        self.camera = Camera(scene, first, look, shot)
        self.ctx = headless_context()
        self.renderer = Renderer(self.ctx, shot.size, quality=shot.quality)
        self.info = f"{self.ctx.info['GL_RENDERER']}, quality {self.renderer.quality.name}"
        # None: shown on a terminal only, so logs and tests stay clean
        self.bar = tqdm(total=total, unit="frame", file=sys.stderr, dynamic_ncols=True,
                        disable=None if progress else True)
        self.count = 0

    def frame(self, k: int, snap: Snapshot, t: float) -> None:
        self.renderer.render(snap, self.look, self.camera.at(k, snap), self.camera.stage,
                             slowmo=self.shot.slowmo)
        if self.raw:
            img = self.renderer.read_rgba()
        else:
            img = self.renderer.read()
            if self.shot.hud:
                img = draw_hud(img, hud_line(snap, t, self.shot.slowmo))
        for sink in self.sinks:
            sink.write(img)
        self.count += 1
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()
        try:
            for sink in self.sinks:
                sink.close()
        finally:
            self.ctx.release()


def frame_count(duration: float, fps: int, slowmo: float) -> int:
    """Frames of a clip of `duration` simulated seconds: fps x duration x slowmo."""
    n = round(fps * duration * slowmo)
    if not 1 <= n <= MAX_FRAMES:
        raise SlinkyError(f"fps x duration x slowmo = {fps * duration * slowmo:g} frames; "
                          f"a film has 1 to {MAX_FRAMES} frames")
    return n


Sinks = Callable[[], list[FrameSink]]  # opens the outputs once the options are checked


def film(scene: Scene, duration: float, shot: Shot, sinks: Sinks,
         progress: bool = False, start: float = 0.0) -> dict[str, Any]:
    """Film `duration` simulated seconds of `scene` from `start` (rounded to a frame
    interval; simulated, not filmed, before it), into the sinks that `sinks()` opens.
    Returns figures: frames, the step, steps per frame, the final state hash, wall time."""
    n = frame_count(duration, shot.fps, shot.slowmo)
    h, per = grid_step(scene.dt, 1.0 / (shot.fps * shot.slowmo))
    warm_up(note if progress else None)  # before the bar: its rate is the filming's
    if scene.solver == THREE_D:
        warm_up3d(note if progress else None)
    t0 = time.perf_counter()
    sim = Simulation(scene, h)
    first = sim.snapshot()  # frames the camera, wherever the clip starts
    skip = round(start * shot.fps * shot.slowmo)  # frame intervals before the clip
    sim.step(skip * per)
    filmer = Filmer(scene, first, scene.look, shot, sinks(), n, progress)
    try:
        for k in range(n):
            if k:
                sim.step(per)
            filmer.frame(k, sim.snapshot(), (skip + k) * per * h)
    finally:
        filmer.close()
    return {"frames": filmer.count, "h": h, "steps_per_frame": per, "start": skip * per * h,
            "sim_time": (n - 1) * per * h, "final_hash": sim.state_hash(),
            "wall": time.perf_counter() - t0, "renderer": filmer.info}


def film_session(session: Any, duration: float | None, shot: Shot, sinks: Sinks,
                 progress: bool = False, start: float = 0.0,
                 on_frame: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Film a logged session (`runtime/session.py`'s Session) as `commands.replay` runs
    it, bit for bit: its own step h, a frame every round(1 / (fps slowmo h)) steps (so the
    slow motion is as asked to within one step per frame), from `start` (rounded down to
    that grid) for `duration` simulated seconds (default: to the end). `final_hash` is
    the state at the last frame. on_frame(done, total) is called after each frame."""
    sc = session.scene
    h = session.h if session.h is not None else sc.dt
    every = max(1, round(1.0 / (shot.fps * shot.slowmo * h)))
    k0 = min(session.nsteps, round(start / h)) // every * every
    end = session.nsteps if duration is None else min(session.nsteps, k0 + round(duration / h))
    n = (end - k0) // every + 1
    if n > MAX_FRAMES:
        raise SlinkyError(f"{n} frames; a film has at most {MAX_FRAMES}")
    last = k0 + (n - 1) * every
    warm_up(note if progress else None)  # before the bar: its rate is the filming's
    if sc.solver == THREE_D:
        warm_up3d(note if progress else None)
    t0 = time.perf_counter()
    first = Simulation(sc, h).snapshot()
    filmer = Filmer(sc, first, sc.look, shot, sinks(), n, progress)
    final: list[str] = []

    def sample(k: int, sim: Simulation) -> None:
        if k < k0:  # before the clip: replayed, not filmed
            return
        filmer.frame((k - k0) // every, sim.snapshot(), k * h)
        if on_frame is not None:
            on_frame(filmer.count, n)
        if k == last:
            final.append(sim.state_hash())

    try:
        replay(sc, session.log, last, session.h, every, sample)
    finally:
        filmer.close()
    return {"frames": filmer.count, "h": h, "steps_per_frame": every,
            "sim_time": (last - k0) * h, "start": k0 * h,
            "final_hash": final[0] if final else "",
            "wall": time.perf_counter() - t0, "renderer": filmer.info,
            "slowmo": 1.0 / (shot.fps * every * h)}


# -- a clip of the app's session, filmed in the background ---------------------------
def clip_path(scene: Scene, folder: Path | None = None) -> Path:
    """Where the app saves a clip: the user's videos folder, slinky3d/SCENE-TIME.mp4."""
    folder = folder or Path(platformdirs.user_videos_dir()) / "slinky3d"
    stem = Path(scene.path).stem if scene.path else "slinky"
    return folder / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}.mp4"


def _remove(path: Path) -> None:
    """A half-written clip removed, if it is there and can be (the error said already
    why the clip failed)."""
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


def _film_in_child(text: str, out: str, shot: Shot, start: float, duration: float | None,
                   done: Any, total: Any, result: Any) -> None:
    """The body of BackgroundFilm's process: the session from its JSON, filmed to `out`."""
    try:
        os.nice(10)  # the app's window keeps the CPU it needs
    except OSError:
        pass

    def on_frame(k: int, n: int) -> None:
        total.value, done.value = n, k

    path = Path(out)
    existed = path.exists()
    try:
        session = session_from_json(text, "the app's session")
        check_folder(path.parent, "clip", create=True)
        check_out(path, shot.size, "clip")
        film_session(session, duration, shot,
                     lambda: [VideoWriter(path, shot.size, shot.fps, "clip")],
                     start=start, on_frame=on_frame)
        result.put(("done", out))
        return
    except SlinkyError as e:
        result.put(("error", one_line(str(e))))
    except Exception as e:  # noqa: BLE001 - reported to the app as one line, not raised
        result.put(("error", error_line(e)))
    if not existed:  # a failed clip leaves no half-written file behind
        _remove(path)


class BackgroundFilm:
    """A clip of a session (the app's: V or K), filmed off screen in another process at
    full quality while the app goes on: the window never waits for it. `status()` is
    what the HUD shows; `finished`, `path` and `error` tell how it ended.

    The session is re-run from its log (`film_session`), so the clip shows the logged
    states exactly, at the film's frame rate, however the window's frames were paced.
    A separate process (spawned: a fork would copy the window's GL and threads) has its
    own GIL and its own headless context; it runs at a lower priority (nice 10).
    """

    def __init__(self, session: Any, out: Path, shot: Shot, start: float = 0.0,
                 duration: float | None = None):
        mp = multiprocessing.get_context("spawn")
        self.path = out
        self._existed = out.exists()
        self.error: str | None = None
        self.finished = False
        self._done, self._total = mp.Value("i", 0), mp.Value("i", 0)
        self._result: Any = mp.Queue()
        self._process = mp.Process(
            target=_film_in_child, daemon=True, name="slinky3d-clip",
            args=(session_json(session), str(out), shot, start, duration, self._done,
                  self._total, self._result))
        self._process.start()

    def poll(self) -> bool:
        """Whether the clip is finished (written, or failed: see `error`)."""
        if self.finished:
            return True
        try:
            kind, text = self._result.get_nowait()
        except queue.Empty:
            if self._process.is_alive():
                return False
            try:  # it may have put its result just before it ended
                kind, text = self._result.get(timeout=1.0)
            except queue.Empty:
                kind, text = "error", f"the filming process died (exit {self._process.exitcode})"
        self.finished = True
        if kind == "error":
            self.error = text
        self._process.join(timeout=5.0)
        return True

    def status(self) -> str:
        """One line for the HUD: progress, then the file's path or what went wrong."""
        if not self.poll():
            n = self._total.value
            return f"filming clip: frame {self._done.value}/{n}" if n else "filming clip..."
        return f"clip failed: {self.error}" if self.error else f"clip saved: {self.path}"

    def cancel(self) -> None:
        """Stops a clip still being made and removes its half-written file (one that was
        there before the clip began is left: it was not this clip's)."""
        if self.finished:
            return
        self._process.terminate()
        self._process.join(timeout=5.0)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        try:  # it may have finished just before it was stopped
            kind, text = self._result.get_nowait()
        except queue.Empty:
            kind, text = "error", "cancelled"
        self.finished = True
        if kind == "error":
            self.error = text
            if not self._existed:
                _remove(self.path)


# -- the command --------------------------------------------------------------------
def _sinks(out: Path, size: tuple[int, int], fps: int,
           frames: Path | None) -> Sinks:
    """Checks every output path now (before any simulation); opens them when called."""
    check_out(out, size)
    if frames is not None:
        check_folder(frames, "--frames", create=True)
        check_writable(png_path(frames, 0), "--frames")

    def make() -> list[FrameSink]:
        sinks: list[FrameSink] = [VideoWriter(out, size, fps)]
        if frames is not None:
            sinks.append(PngSequence(frames))
        return sinks

    return make


def run(args: argparse.Namespace) -> int:
    """`slinky3d record`: film a scene, or a session with --replay, to --out."""
    size = parse_size(args.size)
    cam = parse_camera_option(args.camera)  # fail fast, before simulating
    if args.scene is None and args.replay is None:
        raise SlinkyError("record: give a SCENE, or a session with --replay")
    open_sinks = _sinks(args.out, size, args.fps, args.frames)
    session = None
    if args.replay is not None:
        session = load_session(args.replay)  # another version: a one-line error
        sc = session.scene
        if args.scene is not None or args.set:
            asked = load(args.scene or sc.path or sc.title, args.set)
            if scene_text(asked) != scene_text(sc):
                raise SlinkyError(f"--replay: {args.replay} is a session of another scene "
                                  f"({sc.path or sc.title}), not of {args.scene or 'the --set'}"
                                  " given")
    else:
        sc = load(args.scene, args.set)
    shot = Shot(size=size, fps=args.fps, slowmo=args.slowmo, hint=merge_camera(sc.camera, cam),
                orbit=args.orbit, hud=args.hud, quality=args.quality)
    if session is not None:
        stats = film_session(session, args.duration, shot, open_sinks, progress=True,
                             start=args.start)
    else:
        duration = sc.duration if args.duration is None else args.duration
        stats = film(sc, duration, shot, open_sinks, progress=True, start=args.start)
    print(summary(args.out, shot, stats))
    return 0


def summary(out: Path, shot: Shot, stats: dict[str, Any]) -> str:
    n, wall = stats["frames"], stats["wall"]
    slowmo = stats.get("slowmo", shot.slowmo)
    film_s = n / shot.fps
    rate = f"{n / wall:.1f} frames/s, {film_s / wall:.2f}x real time" if wall > 0 else ""
    return (f"wrote {out}: {n} frames, {shot.size[0]}x{shot.size[1]} at {shot.fps} fps "
            f"({film_s:.2f} s of film, {stats['sim_time']:.3f} s simulated from "
            f"t = {stats['start']:.3f} s, slow motion "
            f"x{slowmo:.3g}); {rate} ({stats['renderer']})")
