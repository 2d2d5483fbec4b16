"""The app under a scripted 10 s mouse drag: a real 1280x720 window (Xvfb and llvmpipe when
there is no display), the steel Slinky, the software preset, HUD and panel shown.

The cursor grabs the steel Slinky's bottom end and swings it on a Lissajous path for
10 s through the window's own mouse handlers (the events pyglet would deliver), then
lets go. Printed: frames per second, frame-to-frame time p50/p95/p99, the time one
frame's drawing takes (3D and overlay), the real-time factor (simulated over wall
seconds during the drag) and the CPU share of a core of the solver thread and of the
UI thread (from /proc). Target: 60 FPS sustained (p95 under 20 ms) at real-time factor
1.00. Figures go to benchmarks/results/bench_app.json.

    python benchmarks/bench_app.py [--seconds 10] [--size 1280x720] [--quality software]
"""

from __future__ import annotations

import argparse
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


def thread_cpu(tid: int) -> float:
    """CPU seconds (user + system) of one thread of this process, from /proc."""
    with open(f"/proc/self/task/{tid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentiles(xs) -> dict[str, float]:
    a = np.asarray(xs, float) * 1e3
    return {"p50_ms": float(np.percentile(a, 50)), "p95_ms": float(np.percentile(a, 95)),
            "p99_ms": float(np.percentile(a, 99)), "max_ms": float(a.max())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="length of the drag, s")
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--quality", default="software")
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    from slinky3d.viewer.jobs import parse_size

    size = parse_size(args.size)
    xvfb = start_xvfb(size)
    try:
        return run(args, size)
    finally:
        if xvfb is not None:
            xvfb.terminate()
            xvfb.wait(timeout=5)


def run(args: argparse.Namespace, size: tuple[int, int]) -> int:
    import pyglet
    from pyglet.window import mouse

    from slinky3d.runtime.simulation import Simulation
    from slinky3d.runtime.thread import SimThread
    from slinky3d.scene.loader import load
    from slinky3d.viewer.app.window import Viewer

    sc = load(SCENE)
    Simulation(sc).step(1)  # the kernels compiled (or loaded from the cache) beforehand
    solver = SimThread(sc)
    v = Viewer(sc, sc.look, sc.camera, size, quality=args.quality, source=solver)
    v.ui.show_panel = True

    def solver_id() -> int:
        t = solver._thread
        assert t is not None and t.native_id is not None, "the solver thread runs"
        return t.native_id
  # HUD and panel, as the target asks
    w = v.window
    draws: list[tuple[float, float]] = []  # (start, end) of each on_draw, perf_counter s
    inner = v.on_draw

    def timed_draw() -> None:
        t0 = time.perf_counter()
        inner()
        draws.append((t0, time.perf_counter()))

    w.remove_handlers(on_draw=v.on_draw)
    w.push_handlers(on_draw=timed_draw)
    state: dict = {"phase": "warm", "t0": None}
    ui_tid = threading.get_native_id()

    def script(dt: float) -> None:
        now = time.perf_counter()
        if state["t0"] is None:
            state["t0"] = now
        el = now - state["t0"]
        if state["phase"] == "warm" and el >= WARM_S:
            sl = v.shown.slinkies[0]
            px = v.camera.project(np.r_[sl.ends[-1], 0.0][None], w.width, w.height)[0]
            state["xy"] = (float(px[0]), float(w.height - px[1]))
            w.dispatch_event("on_mouse_motion", *state["xy"], 0, 0)
            w.dispatch_event("on_mouse_press", *state["xy"], mouse.LEFT, 0)
            state.update(phase="drag", start=now, last=state["xy"], snap0=v.shown.t,
                         solver=thread_cpu(solver_id()),
                         ui=thread_cpu(ui_tid), n0=len(draws))
        elif state["phase"] == "drag":
            s = now - state["start"]
            if s >= args.seconds:
                w.dispatch_event("on_mouse_release", *state["last"], mouse.LEFT, 0)
                state.update(phase="done", end=now, snap1=v.shown.t,
                             solver=thread_cpu(solver_id()) - state["solver"],
                             ui=thread_cpu(ui_tid) - state["ui"], n1=len(draws))
                pyglet.clock.schedule_once(lambda dt: w.close(), 0.2)
                return
            x0, y0 = state["xy"]
            ramp = min(s / 0.5, 1.0)  # ease in from the grabbed point
            x = x0 + ramp * 0.18 * w.width * math.sin(2 * math.pi * 0.35 * s)
            y = y0 + ramp * 0.12 * w.height * math.sin(2 * math.pi * 0.55 * s)
            lx, ly = state["last"]
            w.dispatch_event("on_mouse_drag", x, y, x - lx, y - ly, mouse.LEFT, 0)
            state["last"] = (x, y)

    pyglet.clock.schedule(script)
    v.run()
    if state["phase"] != "done":
        print("bench_app: the window closed before the drag ended", file=sys.stderr)
        return 1
    wall = state["end"] - state["start"]
    frames = draws[state["n0"]:state["n1"]]
    starts = [a for a, _ in frames]
    intervals = list(np.diff(starts))
    figures = {
        "scene": SCENE, "size": list(size), "quality": v.renderer.quality.name,
        "renderer": v.ctx.info["GL_RENDERER"], "seconds": wall,
        "fps": (len(frames) - 1) / (starts[-1] - starts[0]),
        "frame_interval": percentiles(intervals),
        "draw": percentiles([b - a for a, b in frames]),
        "real_time_factor": (state["snap1"] - state["snap0"]) / wall,
        "solver_thread_core_share": state["solver"] / wall,
        "ui_thread_core_share": state["ui"] / wall,
        "rollbacks": v.shown.rollbacks,
    }
    fi, dr = figures["frame_interval"], figures["draw"]
    print(f"{SCENE} {size[0]}x{size[1]}, {figures['quality']} on {figures['renderer']}: "
          f"{figures['fps']:.1f} FPS over a {wall:.1f} s drag")
    print(f"  frame interval p50/p95/p99 {fi['p50_ms']:.1f} / {fi['p95_ms']:.1f} / "
          f"{fi['p99_ms']:.1f} ms (max {fi['max_ms']:.1f}); drawing p50/p95/p99 "
          f"{dr['p50_ms']:.1f} / {dr['p95_ms']:.1f} / {dr['p99_ms']:.1f} ms")
    print(f"  real-time factor {figures['real_time_factor']:.3f}; solver thread "
          f"{100 * figures['solver_thread_core_share']:.0f} % of a core, UI thread "
          f"{100 * figures['ui_thread_core_share']:.0f} %")
    if not args.no_write:
        report.write("bench_app", figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
