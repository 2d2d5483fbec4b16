"""The `slinky3d` command line: simulate, figure, scenes, screenshot, run, replay, record
sweep and kiosk; `slinky3d` alone opens the app on DEFAULT_SCENE.

Every user error prints one line, `slinky3d: error: ...`, and exits with status 2;
Ctrl-C exits with 130. Heavy modules (solvers, matplotlib, OpenGL) load lazily inside
the subcommand that needs them, so `slinky3d --help` and errors stay fast.
"""

from __future__ import annotations

import argparse
import math
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from slinky3d.engines import ENGINES, PLANAR, THREE_D
from slinky3d.errors import SlinkyError, note, one_line
from slinky3d.output import DEFAULT_FPS, DEFAULT_SOLVER, REALTIME, REFERENCE, SOLVERS
from slinky3d.version import __version__
from slinky3d.viewer import WINDOW_SIZE
from slinky3d.viewer.gl.quality import AUTO, QUALITY

MAX_FPS = 10000.0  # samples per second; more only fills the disk
DEFAULT_SIZE = "{}x{}".format(*WINDOW_SIZE)
DEFAULT_SCENE = "hanging-plastic"  # what `slinky3d` alone opens: the desk demo
MAX_RECORD_BYTES = 2 * 2**30  # the samples a `simulate` or `figure` run keeps in memory


class _Parser(argparse.ArgumentParser):
    """argparse with its usage errors turned into the one-line SlinkyError form."""

    def error(self, message: str) -> Any:
        raise SlinkyError(f"{message} (see '{self.prog} --help')")


def _number(lo: float, hi: float, lo_open: bool, what: str):
    """An argparse type: a finite float in [lo, hi] (lo excluded when lo_open)."""

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not math.isfinite(v) or v < lo or v > hi or (lo_open and v == lo):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return v

    return parse


def _add_run_options(p: argparse.ArgumentParser) -> None:
    """Options shared by the commands that run a scene."""
    p.add_argument("--solver", choices=SOLVERS, default=DEFAULT_SOLVER,
                   help=f"{PLANAR}: the fixed-step O(N) solver of the paper's planar model; "
                        f"{THREE_D}: the 3D model's (docs/solver.md); {REFERENCE}: the planar "
                        f"model adaptive, event-located (accurate, slow); {REALTIME} (default): "
                        f"the one the scene names, {PLANAR} unless it says or needs {THREE_D}")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scene value before validation, e.g. slinky.C_D=0, "
                        "slinky.contact.enabled=false, slinky.1.preset=steel (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="slinky3d", description="Real-time 3D Slinky: the torsion-spring "
                     "model with coil impacts (Cumber), headless runs, figures and a viewer.")
    parser.add_argument("--version", action="version", version=f"slinky3d {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    sim = sub.add_parser("simulate", help="run a scene headless and save its trajectory (.npz)",
                         description="Run a scene headless and write its trajectory as .npz.")
    sim.add_argument("scene", help="scene file, or the name of a shipped scene (e.g. 1Pa)")
    sim.add_argument("--duration", type=_number(0, math.inf, False, "a time >= 0 in s"),
                     help="simulated time in s (default: the scene's; 0: the initial state)")
    sim.add_argument("--fps", type=_number(0, MAX_FPS, True, f"a rate in (0, {MAX_FPS:g}]"),
                     default=DEFAULT_FPS, help="samples per second (default: %(default)g)")
    sim.add_argument("--out", type=Path, help="output .npz (default: SCENE_STEM.npz here)")
    _add_run_options(sim)
    sim.set_defaults(func=cmd_simulate)

    fig = sub.add_parser("figure", help="draw the paper-style side view at a few times",
                         description="Draw the Slinky's side view at the given times.")
    fig.add_argument("scene", nargs="+", help="scene file, shipped scene name, or a recorded "
                     ".npz; several are drawn together, in the same panels")
    fig.add_argument("--times", required=True,
                     help="start:stop:step in s, stop included (0:1.4:0.2), or 0,0.5,1")
    fig.add_argument("--out", type=Path, help="image file, png/pdf/svg (default: "
                     "SCENE_STEM.png here; A-vs-B.png for several)")
    fig.add_argument("--layout", choices=("panels", "overlay"), default="panels",
                     help="one panel per time (default) or all times in one panel")
    fig.add_argument("--title", help="figure title (default: the scene's title)")
    _add_run_options(fig)
    fig.set_defaults(func=cmd_figure)

    ls = sub.add_parser("scenes", help="list the shipped scenes",
                        description="List the scenes that ship with slinky3d.")
    ls.set_defaults(func=cmd_scenes)

    shot = sub.add_parser(
        "screenshot", help="render the scene at a time to a PNG (headless, no display)",
        description="Simulate the scene up to --time, then render one frame off screen "
        "(EGL; llvmpipe when there is no GPU) and write it as a PNG.")
    shot.add_argument("scene", help="scene file or shipped scene name")
    shot.add_argument("--time", type=str, default="0", metavar="T",
                      help="simulated time of the frame, s (default 0: the initial shape)")
    shot.add_argument("--out", type=Path, help="PNG file (default: SCENE_STEM.png here)")
    _add_view_options(shot)
    shot.set_defaults(func=cmd_screenshot)

    run = sub.add_parser(
        "run", help="the app: play a scene in a window, grab it, drive it (the default)",
        description="Open the app's window and play the scene in real time. Mouse: drag "
        "the Slinky to grab it, left drag elsewhere orbits, right or middle drag pans, "
        "wheel zooms. Keys: arrows/WASD move the held base, L lets go, Space pauses, "
        "H shows them all, Esc quits (docs/app.md).")
    run.add_argument("scene", nargs="?", default=DEFAULT_SCENE,
                     help=f"scene file or shipped scene name (default: {DEFAULT_SCENE})")
    _add_view_options(run)
    run.add_argument("--log-state", type=Path, metavar="FILE.npz",
                     help="on exit, write the session (trajectory and the timed command "
                          "log) for `slinky3d replay`")
    _add_solver_thread_option(run)
    _add_resolution_option(run)
    _add_window_test_options(run)
    run.set_defaults(func=cmd_run)

    rep = sub.add_parser(
        "replay", help="play a session written by `run --log-state` in a window",
        description="Play a logged session in a window, bit-identical to the session.")
    rep.add_argument("log", type=Path, help="session file written by `run --log-state`")
    rep.add_argument("--size", default=DEFAULT_SIZE, metavar="WxH",
                     help=f"window size (default {DEFAULT_SIZE})")
    rep.add_argument("--quality", choices=(AUTO, *QUALITY), default=AUTO,
                     help=f"{AUTO} (default): 'software' on a CPU rasterizer, else 'gpu'")
    _add_solver_thread_option(rep)
    _add_resolution_option(rep)
    _add_window_test_options(rep)
    rep.set_defaults(func=cmd_replay)
    _add_record(sub)
    _add_sweep(sub)
    _add_kiosk(sub)
    return parser


def _add_sweep(sub: Any) -> None:
    sw = sub.add_parser(
        "sweep", help="run a grid of scenes (e.g. step height x depth) and map steps walked",
        description="Run every point of a sweep spec's grid of scene overrides headless "
        "(real-time solver), measure how far the Slinky walks down the stairs, and write "
        "a table (PREFIX.csv) and a heat map (PREFIX.png) (docs/sweep.md).")
    sw.add_argument("spec", help="sweep spec (.toml), or the name of a shipped one "
                    "(e.g. walking)")
    sw.add_argument("--jobs", type=_int(1, 4096, "a number of processes"), metavar="N",
                    help="local worker processes (default: the number of CPUs)")
    sw.add_argument("--cluster", metavar="ADDRESS",
                    help="run on the Dask distributed cluster whose scheduler is at ADDRESS "
                         "(e.g. tcp://10.0.0.5:8786); needs pip install 'slinky3d[cluster]'")
    sw.add_argument("--duration", type=_number(0, math.inf, True, "a time > 0 in s"), metavar="T",
                    help="simulated seconds per point (default: the spec's, else the scene's)")
    sw.add_argument("--out", metavar="PREFIX",
                    help="write PREFIX.csv and PREFIX.png (default: the spec's `out`, "
                         "else its name, here)")
    sw.add_argument("--quiet", action="store_true", help="no progress bar")
    sw.set_defaults(func=cmd_sweep)


def _add_kiosk(sub: Any) -> None:
    kiosk = sub.add_parser(
        "kiosk", help="the app as an unattended exhibit: attract loop, hands-on play",
        description="Full screen: an attract loop through the playlist's scenes with their "
        "captions; a touch of the mouse or a key hands over the app's controls; back to "
        "the loop after the idle time. Only the exit chord (default Ctrl+Alt+Shift+Q) "
        "quits (docs/kiosk.md).")
    kiosk.add_argument("playlist", nargs="?", help="playlist file (default: the shipped one)")
    kiosk.add_argument("--window", metavar="WxH", help="in a window of this size instead of "
                       "full screen (to try a playlist)")
    kiosk.add_argument("--quality", choices=(AUTO, *QUALITY), default=AUTO,
                       help=f"{AUTO} (default): 'software' on a CPU rasterizer, else 'gpu'")
    kiosk.add_argument("--log-dir", type=Path, metavar="DIR",
                       help="folder of the rotating log (default: the user's log folder)")
    kiosk.add_argument("--print-unit", action="store_true",
                       help="print the systemd user unit for this installation and exit")
    _add_window_test_options(kiosk)
    kiosk.set_defaults(func=cmd_kiosk)


def _add_record(sub: Any) -> None:
    from slinky3d.output.video import MAX_FPS as MAX_FILM_FPS

    rec = sub.add_parser(
        "record", help="film a scene (or a logged session) to MP4, GIF or PNGs, headless",
        description="Film a scene off screen (EGL; llvmpipe when there is no GPU): each "
        "frame advances the simulation by exactly 1/(fps x slowmo) s, so nothing is "
        "dropped and a film is reproducible (docs/recording.md).")
    rec.add_argument("scene", nargs="?", help="scene file or shipped scene name (with "
                     "--replay: optional, checked against the session's)")
    rec.add_argument("--out", type=Path, required=True, metavar="FILM",
                     help="film file: .mp4 (H.264) or .gif (short loops)")
    rec.add_argument("--duration", type=_number(0, math.inf, True, "a time > 0 in s"),
                     help="simulated seconds to film (default: the scene's, or the session)")
    rec.add_argument("--start", type=_number(0, math.inf, False, "a time >= 0 in s"),
                     default=0.0, metavar="T0", help="simulated time of the first frame "
                     "(the run before it is simulated, not filmed; default 0)")
    rec.add_argument("--fps", type=_int(1, MAX_FILM_FPS, "frames per second"), default=60,
                     help="frames per second of the film (default: %(default)s)")
    rec.add_argument("--slowmo", type=_number(1 / 64, 64, False, "a factor in [1/64, 64]"),
                     default=1.0, metavar="K",
                     help="slow motion: K seconds of film per simulated second (default 1)")
    rec.add_argument("--orbit", type=_number(-3600, 3600, False, "degrees per second "
                     "in [-3600, 3600]"), default=0.0, metavar="DEG_PER_S",
                     help="turn the camera about the Slinky, degrees per second of film")
    rec.add_argument("--hud", action="store_true",
                     help="write the time and energy on the frames")
    rec.add_argument("--replay", type=Path, metavar="SESSION.npz",
                     help="film a session written by `run --log-state`, bit for bit")
    rec.add_argument("--frames", type=Path, metavar="DIR",
                     help="also write every frame as DIR/frame_NNNNN.png")
    _add_view_options(rec)
    rec.set_defaults(func=cmd_record)


def _int(lo: int, hi: int, what: str):
    """An argparse type: an integer in [lo, hi]."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"expected {what} in [{lo}, {hi}], got {v}")
        return v

    return parse


def _add_solver_thread_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--solver-thread", action="store_true",
                   help="step the solver in a thread of the app's process instead of a "
                        "process of its own (slower where the picture is drawn on the CPU)")


def _add_resolution_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-dynamic-resolution", action="store_true",
                   help="draw the 3D picture at full resolution always (by default it is "
                        "drawn smaller and stretched when a frame would miss 60 Hz)")


def _add_window_test_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--frames", type=int, default=0, help=argparse.SUPPRESS)  # tests: quit
    p.add_argument("--save-frame", type=Path, help=argparse.SUPPRESS)  # tests: last frame


def _add_view_options(p: argparse.ArgumentParser) -> None:
    """Options shared by the commands that draw a scene."""
    p.add_argument("--size", default=DEFAULT_SIZE, metavar="WxH",
                   help=f"image size (default {DEFAULT_SIZE})")
    p.add_argument("--camera", default="", metavar="MODE,KEY=VALUE,...",
                   help="camera: a mode, fixed, follow (keeps the Slinky in frame; the "
                        "default of record and run) or cinematic (follows, swaying), and "
                        "values, e.g. follow,yaw=30,pitch=10,distance=1.5,target=0:-0.4:0,"
                        "fov=35 (degrees, metres; unset values frame the Slinky)")
    p.add_argument("--quality", choices=(AUTO, *QUALITY), default=AUTO,
                   help=f"{AUTO} (default): 'software' on a CPU rasterizer, else 'gpu'")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scene value, e.g. look.rainbow=true (repeatable)")
    _add_engine_option(p)


def _add_engine_option(p: argparse.ArgumentParser) -> None:
    """--solver for the commands that run a scene in real time: the scene's `solver`
    key, set (engine_overrides)."""
    p.add_argument("--solver", choices=ENGINES, default=None,
                   help=f"the solver: {PLANAR}, the paper's planar model, or {THREE_D}, "
                        "the 3D model (docs/solver.md; default: the one the scene names, "
                        f"{PLANAR} unless it says or needs {THREE_D})")


def engine_overrides(args: argparse.Namespace) -> None:
    """--solver planar|3d as the scene's `solver` key, written like a --set (so that a
    session or a film records it with the scene)."""
    solver = getattr(args, "solver", None)
    if solver in ENGINES and hasattr(args, "set"):
        args.set = [*args.set, f'solver = "{solver}"']


def _record(sc: Any, duration: float, fps: float, solver: str) -> tuple[dict, dict]:
    from slinky3d.model.chain import BASE
    from slinky3d.output.recording import record

    # Refused up front rather than failing to allocate (or filling the memory) late: a
    # sample holds each Slinky's q and qd, N + BASE numbers each, and a few per-sample
    # values.
    n = math.floor(min(duration * fps, 1e300)) + 1
    size = n * sum(16 * (s.params.N + BASE) + 64 for s in sc.slinkies)
    if size > MAX_RECORD_BYTES:
        raise SlinkyError(f"{duration:g} s at {fps:g} samples/s is {n:.3g} samples, "
                          f"{size / 2**30:.3g} GiB: more than the {MAX_RECORD_BYTES // 2**30} GiB "
                          "a run may keep in memory; lower --duration or --fps")
    return record(sc, duration, fps, solver=solver, say=note)


def _meta(sc: Any, args: argparse.Namespace, stats: dict, fps: float) -> dict[str, Any]:
    return {
        "scene": sc.path, "title": sc.title, "solver": stats.get("solver", args.solver),
        "fps": fps,
        "overrides": list(args.set), "names": [s.name for s in sc.slinkies],
        "stats": stats, "version": __version__,
    }


# Each command imports what it runs, inside it: a headless one loads neither pyglet nor
# GL, and `slinky3d --help` loads no solver.
def cmd_simulate(args: argparse.Namespace) -> int:
    from slinky3d.output import trajectory
    from slinky3d.output.paths import check_output
    from slinky3d.scene import loader

    sc = loader.load(args.scene, args.set)
    duration = sc.duration if args.duration is None else args.duration
    out = args.out or Path(Path(sc.path).stem + trajectory.EXTENSION)
    check_output(out, "--out", (trajectory.EXTENSION,), "trajectory")  # before the run
    data, stats = _record(sc, duration, args.fps, args.solver)
    trajectory.save(out, data, _meta(sc, args, stats, args.fps))
    print(summary(Path(sc.path).stem, stats, stats.get("solver", args.solver), out))
    return 0


def summary(name: str, stats: dict, solver: str, out: Path) -> str:
    """The one-line report of a run."""
    sim_t, wall = float(stats.get("sim_time", 0.0)), float(stats.get("wall", 0.0))
    speed = f", {sim_t / wall:.3g}x real time" if wall > 0 and sim_t > 0 else ""
    return (f"{name}: {sim_t:.3f} s simulated in {wall:.2f} s wall ({solver}{speed}), "
            f"{int(stats.get('steps', 0))} steps, {int(stats.get('impacts', 0))} impacts, "
            f"energy change {float(stats.get('energy_change', 0.0)):+.3e} J -> {out}")


def cmd_figure(args: argparse.Namespace) -> int:
    from slinky3d.output import figure
    from slinky3d.output.paths import check_output

    times = figure.parse_times(args.times)
    # Every source is read and validated, and the output checked, before any of them is
    # simulated.
    opened = [_open_source(src, args) for src in args.scene]
    stems = [o[1] if isinstance(o, tuple) else Path(o.path).stem for o in opened]
    out = args.out or Path("-vs-".join(stems) + ".png")
    check_output(out, "--out", figure.EXTENSIONS, "figure")
    runs = [_run_source(o, args, times) for o in opened]
    traj = figure.combine([r[0] for r in runs], times)
    if len(runs) == 1:
        title, names = runs[0][1], runs[0][3]
    else:  # several runs: each Slinky is labelled with its run's title
        title = ""
        names = [f"{r[1]}{': ' + n if n else ''}" for r in runs for n in r[3]]
    title = args.title if args.title is not None else title
    figure.draw(traj, out, layout=args.layout, title=title, names=names)
    print(f"{', '.join(stems)}: {len(times)} instants, {times[0]:g}..{times[-1]:g} s -> {out}")
    return 0


def _open_source(src: str, args: argparse.Namespace) -> Any:
    """A recorded .npz as a Trajectory, or a validated Scene."""
    from slinky3d.output import trajectory
    from slinky3d.scene import loader

    path = Path(src)
    if path.suffix == ".npz":
        if args.set:
            raise SlinkyError("--set applies to scenes, not to a recorded .npz")
        traj = trajectory.load(path)
        return traj, path.stem
    return loader.load(src, args.set)


def _run_source(src: Any, args: argparse.Namespace, times: list[float]) -> tuple:
    """(trajectory, title, stem, Slinky names); a scene is simulated up to the last time."""
    from slinky3d.output import figure, trajectory

    if isinstance(src, tuple):
        traj, stem = src
        names = traj.meta.get("names") or [""] * len(traj.tracks)
        return traj, traj.meta.get("title", stem), stem, names
    fps = figure.grid_fps(times)
    data, stats = _record(src, times[-1], fps, args.solver)
    traj = trajectory.from_data(data, _meta(src, args, stats, fps))
    return traj, src.title, Path(src.path).stem, [s.name for s in src.slinkies]


def cmd_scenes(args: argparse.Namespace) -> int:
    from slinky3d.scene import loader

    for path in loader.shipped():
        # Titles only: validating every scene would solve every static shape.
        try:
            title = tomllib.loads(path.read_text(encoding="utf-8")).get("title", "")
        except (OSError, tomllib.TOMLDecodeError):
            title = "(unreadable)"
        print(f"{path.stem:18s} {title}")
    return 0


def cmd_screenshot(args: argparse.Namespace) -> int:
    from slinky3d.viewer import jobs

    return jobs.screenshot(args)


def cmd_run(args: argparse.Namespace) -> int:
    from slinky3d.viewer.app import play  # pyglet: only for the commands with a window

    return play.run(args)


def cmd_replay(args: argparse.Namespace) -> int:
    from slinky3d.viewer.app import play  # pyglet: only for the commands with a window

    return play.replay(args)


def cmd_kiosk(args: argparse.Namespace) -> int:
    from slinky3d.viewer.kiosk import exhibit

    return exhibit.run(args)


def cmd_record(args: argparse.Namespace) -> int:
    from slinky3d.viewer.film import filming

    return filming.run(args)


def cmd_sweep(args: argparse.Namespace) -> int:
    import os
    import time

    from slinky3d.output import sweep

    if args.cluster is not None and args.jobs is not None:
        raise SlinkyError("--jobs sets the local pool; with --cluster the cluster's "
                          "workers run the points")
    spec = sweep.read_spec(args.spec, args.duration)
    sweep.outputs(args.out or spec.out, "--out" if args.out else f"{spec.stem}: out")
    jobs = min(args.jobs or os.cpu_count() or 1, len(spec.points()))
    t0 = time.perf_counter()
    outcomes = sweep.run(spec, jobs=jobs, cluster=args.cluster, progress=not args.quiet)
    where = (f"on the Dask cluster at {args.cluster}" if args.cluster is not None
             else "in this process" if jobs == 1 else f"on {jobs} local processes")
    table, picture = sweep.write(spec, outcomes, args.out or spec.out)
    print(sweep.summary(spec, outcomes, time.perf_counter() - t0, where))
    print(f"table: {table}")
    print(f"map: {picture}")
    if all(o.status.startswith(sweep.INVALID) for o in outcomes):
        raise SlinkyError("every grid point is invalid, the first: "
                          + outcomes[0].status.partition(": ")[2])
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script and of `python -m slinky3d`."""
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:  # `slinky3d` alone: the app on the default scene
            args = parser.parse_args(["run", *argv])
        if args.command not in ("simulate", "figure"):  # those pass it to `record`
            engine_overrides(args)
        return int(args.func(args) or 0)
    except SlinkyError as e:
        print(f"slinky3d: error: {one_line(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except SystemExit as e:  # --help and --version
        return e.code if isinstance(e.code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
