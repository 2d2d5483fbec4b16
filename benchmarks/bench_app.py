"""The app under a scripted 10 s mouse drag: a real 1280x720 window (Xvfb and llvmpipe when
there is no display), the steel Slinky, the software preset, HUD and panel shown.

The cursor grabs the steel Slinky's bottom end and swings it on a Lissajous path for
10 s through the window's own mouse handlers (the events pyglet would deliver), then
lets go. Printed: frames per second, frame-to-frame time p50/p95/p99, the time one
frame's drawing takes, split into the 3D picture, the 2D layer (HUD and panel) and the
rest of the frame (Python, the buffer swap, waiting for the next frame), the scale the
3D picture was drawn at (dynamic resolution), the real-time factor (simulated over
wall seconds during the drag) and the CPU share of a core of the solver thread and of
the UI thread (from /proc). Target: 60 FPS sustained (p95 under 20 ms) at real-time
factor 1.00.

--floor lets the steel Slinky go onto its floor first (L), and after 3 s, landed and
asleep, grabs the end under the cursor and drags it along the floor: the target is
issue 23's, real-time factor 1.00 and no frame "behind real time" (written to
bench_app-floor.json).

--three-d runs the steel Slinky on the 3D solver (`solver = "3d"`) and swings it in 3D:
the camera orbited 45 degrees about the vertical before the grab, so the drag across
the screen moves the end along x and z, and the mouse wheel, turned while holding,
pushes it towards and away from the camera (issue 25's target: real-time factor 1.00
and the frame targets above; written to bench_app-3d.json).

--compare also times bench_render.py's software still frame (1280x720, the steel
Slinky, in a process of its own) just before and just after the drag, and prints the
ratios of the app's frame interval to it: p50 at most 1.25x, p95 at most 1.6x the still
frame's median (a frame that costs what its picture costs). The reference is never
taken below the app's frame pace, 1/60 s: a machine that draws the still frame faster
than that is held to the pace. --runs N repeats the whole measurement N times, each
in a fresh process, one row each. Figures go to benchmarks/results/bench_app.json, or
bench_app-full-scale.json with --no-dynamic-resolution.

--no-partial-redraw draws every frame whole, as on a driver whose back buffer is not
kept after the swap (viewer/app/redraw.py; the figures say whether the window's probe
found it kept): the same frames, for comparison (bench_app-whole-frames.json).

    python benchmarks/bench_app.py [--seconds 10] [--size 1280x720] [--quality software]
                                   [--compare] [--runs 3] [--no-dynamic-resolution]
                                   [--no-partial-redraw]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import select
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

import report  # benchmarks/report.py, beside this file

SCENE = "hanging-steel"
WARM_S = 1.0  # wall s of play before the drag: the first frames build the GL state
LANDING_S = 3.0  # wall s after L before the --floor drag: the fall, the landing, sleep
ORBIT_3D = math.radians(45.0)  # --three-d: the camera turned about the vertical
WHEEL_NOTCHES, WHEEL_HZ = 4, 0.25  # --three-d: the wheel's swing in depth, notches and Hz


def start_xvfb(size: tuple[int, int]) -> subprocess.Popen | None:
    """An X server for the window when there is no display (None: there is one)."""
    if os.environ.get("DISPLAY"):
        return None
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        sys.exit("bench_app: no DISPLAY and no Xvfb (apt-get install xvfb)")
    read, write = os.pipe()
    proc = subprocess.Popen([xvfb, "-displayfd", str(write), "-screen", "0",
                             f"{size[0] + 64}x{size[1] + 64}x24", "-nolisten", "tcp"],
                            pass_fds=(write,), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    os.close(write)
    text, deadline = b"", time.time() + 15
    while not text.endswith(b"\n"):
        if proc.poll() is not None or time.time() > deadline:
            sys.exit("bench_app: Xvfb did not start")
        if select.select([read], [], [], 0.2)[0]:
            text += os.read(read, 16)
    os.close(read)
    os.environ["DISPLAY"] = f":{int(text)}"
    return proc


def cpu_seconds(stat: str) -> float:
    """CPU seconds (user + system) of a thread or process, from its /proc stat file."""
    with open(stat, encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentiles(xs) -> dict[str, float]:
    a = np.asarray(xs, float) * 1e3
    return {"p50_ms": float(np.percentile(a, 50)), "p95_ms": float(np.percentile(a, 95)),
            "p99_ms": float(np.percentile(a, 99)), "max_ms": float(a.max()),
            "mean_ms": float(a.mean())}


def still_frame(size: tuple[int, int], frames: int) -> list[float]:
    """bench_render.py's software still frame, wall ms per frame, in a process of its
    own (a headless EGL context, nothing else drawing)."""
    code = ("import json, sys, bench_render; "
            f"print(json.dumps(bench_render.still_frame_times({frames}, {tuple(size)!r})))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(HERE), str(HERE.parent), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.run([sys.executable, "-c", code], cwd=HERE, env=env, capture_output=True,
                       text=True, check=False)
    if p.returncode != 0:
        sys.exit(f"bench_app: the still frame failed: {p.stderr.strip().splitlines()[-1:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="length of the drag, s")
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--quality", default="software")
    ap.add_argument("--compare", action="store_true",
                    help="also time bench_render's still frame; print the ratios")
    ap.add_argument("--still-frames", type=int, default=60,
                    help="still frames timed before and after the drag (--compare)")
    ap.add_argument("--runs", type=int, default=1, help="repeat, each in a fresh process")
    ap.add_argument("--no-dynamic-resolution", action="store_true",
                    help="the 3D picture always at full scale")
    ap.add_argument("--no-partial-redraw", action="store_true",
                    help="every frame drawn whole (the back buffer taken as not kept)")
    ap.add_argument("--floor", action="store_true",
                    help="the steel Slinky let go onto its floor, then dragged along it "
                         "(contact at game speed: the real-time factor, frames behind)")
    ap.add_argument("--three-d", action="store_true",
                    help="the 3D solver, the camera orbited, the end swung in depth too")
    ap.add_argument("--thread", action="store_true",
                    help="the solver in a thread of the app's process (run --solver-thread), "
                         "not its own process")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    from slinky3d.viewer.jobs import parse_size

    size = parse_size(args.size)
    if args.runs > 1:
        return repeat(args)
    xvfb = start_xvfb(size)
    try:
        figures = measure(args, size)
    finally:
        if xvfb is not None:
            xvfb.terminate()
            xvfb.wait(timeout=5)
    if figures is None:
        return 1
    if args.child:
        print(json.dumps(figures))
    elif not args.no_write:
        report.write(result_name(args), figures)
    return 0


def result_name(args: argparse.Namespace) -> str:
    if args.three_d:
        return "bench_app-3d"
    if args.thread:
        return "bench_app-thread" + "-floor" * args.floor
    if args.floor:
        return "bench_app-floor"
    if args.no_partial_redraw:
        return "bench_app-whole-frames"
    return "bench_app-full-scale" if args.no_dynamic_resolution else "bench_app"


def repeat(args: argparse.Namespace) -> int:
    """--runs N: the measurement N times, each in a fresh process; one row per run and
    the median of the rows."""
    argv = ["--seconds", str(args.seconds), "--size", args.size, "--quality", args.quality,
            "--still-frames", str(args.still_frames)]
    argv += ["--compare"] * args.compare + ["--no-dynamic-resolution"] * \
        args.no_dynamic_resolution + ["--floor"] * args.floor + \
        ["--no-partial-redraw"] * args.no_partial_redraw + ["--thread"] * args.thread + \
        ["--three-d"] * args.three_d
    rows, load_start = [], os.getloadavg()[0]
    for k in range(args.runs):
        print(f"run {k + 1} of {args.runs}", flush=True)
        p = subprocess.run([sys.executable, __file__, *argv, "--child"], capture_output=True,
                           text=True, check=False)
        print("\n".join(p.stdout.strip().splitlines()[:-1]))
        if p.returncode != 0:
            print(p.stderr[-2000:], file=sys.stderr)
            return 1
        rows.append(json.loads(p.stdout.strip().splitlines()[-1]))
    runs = [row_of(k + 1, f) for k, f in enumerate(rows)]
    keys = [k for k in runs[0] if k != "run" and isinstance(runs[0][k], float)]
    median = {k: float(np.median([r[k] for r in runs])) for k in keys}
    first = rows[0]
    figures = {k: first[k] for k in ("scene", "size", "quality", "renderer",
                                     "dynamic_resolution", "partial_redraw")}
    # The 1-minute load average before and after: how busy the machine's cores were.
    figures.update(runs=runs, median_of_runs=median, load_average_start=load_start,
                   load_average_end=os.getloadavg()[0])
    print(f"median of {args.runs} runs: " + ", ".join(f"{k} {v:.3g}" for k, v in median.items()))
    if not args.no_write:
        report.write(result_name(args), figures)
    return 0


def row_of(k: int, f: dict) -> dict:
    """One run's figures as a table row."""
    row = {"run": k, "fps": f["fps"], "interval_p50_ms": f["frame_interval"]["p50_ms"],
           "interval_p95_ms": f["frame_interval"]["p95_ms"]}
    if "still_frame" in f:
        row.update(still_p50_ms=f["still_frame"]["p50_ms"],
                   still_p95_ms=f["still_frame"]["p95_ms"],
                   ratio_p50=f["ratios"]["p50"], ratio_p95=f["ratios"]["p95"])
    row.update({f"{k}_p50_ms": v["p50_ms"] for k, v in f["split"].items()})
    row.update(scale_median=f["scale"]["median"], scale_min=f["scale"]["min"],
               real_time_factor=f["real_time_factor"])
    if "behind_frames" in f:
        row.update(behind_frames=float(f["behind_frames"]), awake=f["awake_share"])
    return row


HERE = Path(__file__).resolve().parent
FRAME_PACE_S = 1 / 60  # the app's frame interval (viewer/app/pacing.py FRAME_INTERVAL)


def measure(args: argparse.Namespace, size: tuple[int, int]) -> dict | None:
    """One measurement: the still frame before (--compare), the drag, the still frame
    after; the figures, printed too (None: the window closed early)."""
    load_start = os.getloadavg()[0]
    before = still_frame(size, args.still_frames) if args.compare else []
    figures = drag(args, size)
    if figures is None:
        return None
    if args.compare:
        still = percentiles(np.r_[before, still_frame(size, args.still_frames)] / 1e3)
        ref = max(still["p50_ms"], 1e3 * FRAME_PACE_S)
        fi = figures["frame_interval"]
        figures["still_frame"] = still
        figures["ratios"] = {"p50": fi["p50_ms"] / ref, "p95": fi["p95_ms"] / ref,
                             "reference_ms": ref}
        r = figures["ratios"]
        print(f"  still frame (bench_render, software, {size[0]}x{size[1]}) p50/p95 "
              f"{still['p50_ms']:.1f} / {still['p95_ms']:.1f} ms; app frame interval to it: "
              f"p50 {r['p50']:.2f}x (target <= 1.25), p95 {r['p95']:.2f}x (target <= 1.6)")
    figures.update(load_average_start=load_start, load_average_end=os.getloadavg()[0])
    return figures


def drag(args: argparse.Namespace, size: tuple[int, int]) -> dict | None:
    import pyglet
    from pyglet.window import mouse

    from slinky3d.runtime.commands import LetGo
    from slinky3d.runtime.process import SimProcess
    from slinky3d.runtime.simulation import Simulation
    from slinky3d.runtime.thread import SimThread
    from slinky3d.scene.loader import load
    from slinky3d.viewer.app.window import Viewer

    sc = load(SCENE, ["solver=3d"] if args.three_d else [])
    Simulation(sc).step(1)  # the kernels compiled (or loaded from the cache) beforehand
    solver = SimThread(sc) if args.thread else SimProcess(SimThread, sc, yield_to_solver=True)
    v = Viewer(sc, sc.look, sc.camera, size, quality=args.quality, source=solver,
               dynamic_resolution=not args.no_dynamic_resolution)
    v.ui.show_panel = True  # HUD and panel, as the target asks
    if args.no_partial_redraw:
        v.redraw.kept = False

    def solver_cpu() -> float:
        """The solver's CPU seconds: its thread's, or its whole process's."""
        if isinstance(solver, SimProcess):
            return cpu_seconds(f"/proc/{solver.pid}/stat")
        t = solver._thread
        assert t is not None and t.native_id is not None, "the solver thread runs"
        return cpu_seconds(f"/proc/self/task/{t.native_id}/stat")

    w = v.window
    # Per on_draw: (start, end, 3D picture, 2D layer, scale), perf_counter s. The parts
    # are timed to ctx.finish(): a software rasterizer draws at the next flush.
    draws: list[tuple[float, float, float, float, float]] = []
    inner, render, overlay = v.on_draw, v._render, v._overlay
    part = {"3d": 0.0, "2d": 0.0}

    def timed(name: str, fn):
        def call(*a, **k):
            t0 = time.perf_counter()
            fn(*a, **k)
            v.ctx.finish()
            part[name] += time.perf_counter() - t0
        return call

    v._render, v._overlay = timed("3d", render), timed("2d", overlay)  # type: ignore[method-assign]

    behind, asleep = [], []  # per frame: the solver behind real time; the Slinky asleep
    duty: list[float] = []  # per frame: the solver thread's duty as published

    def timed_draw() -> None:
        part["3d"] = part["2d"] = 0.0
        scale = v.render_scale
        t0 = time.perf_counter()
        inner()
        draws.append((t0, time.perf_counter(), part["3d"], part["2d"], scale))
        behind.append(bool(v.shown.behind))
        asleep.append(bool(v.shown.slinkies[0].asleep))
        duty.append(float(v.shown.extra.get("duty", 0.0)))

    w.remove_handlers(on_draw=v.on_draw)
    w.push_handlers(on_draw=timed_draw)
    state: dict = {"phase": "warm", "t0": None}
    ui_stat = f"/proc/self/task/{threading.get_native_id()}/stat"

    def script(dt: float) -> None:
        now = time.perf_counter()
        if state["t0"] is None:
            state["t0"] = now
        el = now - state["t0"]
        if args.three_d and state["phase"] == "warm" and not state.get("orbited"):
            v.camera.yaw += ORBIT_3D  # as a user's orbit: the director leaves it be
            v.camera_held = state["orbited"] = True
        if args.floor and state["phase"] == "warm" and el >= WARM_S:
            solver.send(LetGo(0))  # L: it falls, lands on its floor and lies there
            state["phase"] = "landing"
        elif state["phase"] == ("landing" if args.floor else "warm") and el >= (
                WARM_S + LANDING_S if args.floor else WARM_S):
            sl = v.shown.slinkies[0]
            end = np.r_[sl.ends[-1], 0.0][:3]  # a planar snapshot's end has no z
            px = v.camera.project(end[None], w.width, w.height)[0]
            state["xy"] = (float(px[0]), float(w.height - px[1]))
            w.dispatch_event("on_mouse_motion", *state["xy"], 0, 0)
            w.dispatch_event("on_mouse_press", *state["xy"], mouse.LEFT, 0)
            state.update(phase="drag", start=now, last=state["xy"], snap0=v.shown.t,
                         solver=solver_cpu(),
                         ui=cpu_seconds(ui_stat), n0=len(draws), notches=0)
        elif state["phase"] == "drag":
            s = now - state["start"]
            if s >= args.seconds:
                w.dispatch_event("on_mouse_release", *state["last"], mouse.LEFT, 0)
                state.update(phase="done", end=now, snap1=v.shown.t,
                             solver=solver_cpu() - state["solver"],
                             ui=cpu_seconds(ui_stat) - state["ui"], n1=len(draws))
                pyglet.clock.schedule_once(lambda dt: w.close(), 0.2)
                return
            x0, y0 = state["xy"]
            ramp = min(s / 0.5, 1.0)  # ease in from the grabbed point
            x = x0 + ramp * 0.18 * w.width * math.sin(2 * math.pi * 0.35 * s)
            # --floor: along the floor, the grabbed end lifted a little and put down
            y = y0 + ramp * (0.02 if args.floor else 0.12) * w.height * math.sin(
                2 * math.pi * 0.55 * s)
            lx, ly = state["last"]
            w.dispatch_event("on_mouse_drag", x, y, x - lx, y - ly, mouse.LEFT, 0)
            state["last"] = (x, y)
            if args.three_d:  # the wheel while holding: towards and away from the camera
                n = round(ramp * WHEEL_NOTCHES * math.sin(2 * math.pi * WHEEL_HZ * s))
                if n != state["notches"]:
                    w.dispatch_event("on_mouse_scroll", x, y, 0, n - state["notches"])
                    state["notches"] = n

    pyglet.clock.schedule(script)
    v.run()
    if state["phase"] != "done":
        print("bench_app: the window closed before the drag ended", file=sys.stderr)
        return None
    wall = state["end"] - state["start"]
    frames = np.array(draws[state["n0"]:state["n1"]])
    starts, ends, d3, d2, scales = frames.T
    intervals = np.diff(starts)
    figures = {
        "scene": SCENE, "size": list(size), "quality": v.renderer.quality.name,
        "renderer": v.ctx.info["GL_RENDERER"], "seconds": wall,
        "dynamic_resolution": not args.no_dynamic_resolution,
        "partial_redraw": v.redraw.kept,
        "fps": (len(frames) - 1) / (starts[-1] - starts[0]),
        "frame_interval": percentiles(intervals),
        "draw": percentiles(ends - starts),
        # Each frame's interval split: its 3D picture, its 2D layer, the rest of its
        # drawing (Python: the snapshot, marks, hover), and what lies between its end
        # and the next frame's start (the buffer swap, events, waiting for the pace).
        "split": {"3d": percentiles(d3), "2d": percentiles(d2),
                  "draw_rest": percentiles(ends - starts - d3 - d2),
                  "between": percentiles(starts[1:] - ends[:-1])},
        "scale": {"median": float(np.median(scales)), "min": float(scales.min()),
                  "max": float(scales.max())},
        "real_time_factor": (state["snap1"] - state["snap0"]) / wall,
        "solver_thread_core_share": state["solver"] / wall,
        "ui_thread_core_share": state["ui"] / wall,
        "rollbacks": v.shown.rollbacks,
        "solver_in": "process" if isinstance(solver, SimProcess) else "thread",
        "yielded_to_solver": isinstance(solver, SimProcess) and solver.yielded,
        "solver_duty": {f"p{q}": float(np.percentile(duty[state["n0"]:state["n1"]], q))
                        for q in (50, 95)},
    }
    if args.three_d:
        figures["scene"] = SCENE + " on the 3D solver, swung in 3D (camera orbited, wheel)"
    if args.floor:
        figures["scene"] = SCENE + ", let go onto its floor, dragged along it"
        figures["behind_frames"] = int(sum(behind[state["n0"]:state["n1"]]))
        figures["awake_share"] = 1.0 - float(np.mean(asleep[state["n0"]:state["n1"]]))
        figures["asleep_before_drag"] = bool(asleep[state["n0"] - 1])
    fi, dr, sp = figures["frame_interval"], figures["draw"], figures["split"]
    sc_ = figures["scale"]
    dyn = (f"dynamic resolution, 3D scale median {sc_['median']:.2f} (min {sc_['min']:.2f})"
           if figures["dynamic_resolution"] else "full scale")
    dyn += ", partial redraw" if figures["partial_redraw"] else ", every frame whole"
    print(f"{figures['scene']} {size[0]}x{size[1]}, {figures['quality']} on {figures['renderer']}, "
          f"{dyn}: {figures['fps']:.1f} FPS over a {wall:.1f} s drag")
    print(f"  frame interval p50/p95/p99 {fi['p50_ms']:.1f} / {fi['p95_ms']:.1f} / "
          f"{fi['p99_ms']:.1f} ms (max {fi['max_ms']:.1f}); drawing p50/p95/p99 "
          f"{dr['p50_ms']:.1f} / {dr['p95_ms']:.1f} / {dr['p99_ms']:.1f} ms")
    print("  split p50 (mean): " + ", ".join(
        f"{name} {sp[k]['p50_ms']:.1f} ({sp[k]['mean_ms']:.1f}) ms" for k, name in (
            ("3d", "3D picture"), ("2d", "2D layer"), ("draw_rest", "rest of the drawing"),
            ("between", "swap, events and wait"))))
    if args.floor:
        print(f"  on the floor: {figures['behind_frames']} frames behind real time, awake "
              f"{100 * figures['awake_share']:.0f} % of the drag, asleep before it: "
              f"{'yes' if figures['asleep_before_drag'] else 'no'} (target: real-time "
              f"factor 1.00, never behind)")
    print(f"  real-time factor {figures['real_time_factor']:.3f}; solver thread "
          f"{100 * figures['solver_thread_core_share']:.0f} % of a core, UI thread "
          f"{100 * figures['ui_thread_core_share']:.0f} %, its duty p50 "
          f"{figures['solver_duty']['p50']:.2f}, p95 {figures['solver_duty']['p95']:.2f}; "
          f"solver in a {figures['solver_in']}"
          + (", the app yielded the CPU to it" if figures["yielded_to_solver"] else ""))
    return figures


if __name__ == "__main__":
    sys.exit(main())
