"""The kiosk run headless for a stretch of wall time (10 minutes by default): the shipped
playlist, pyglet on EGL (no display; llvmpipe without a GPU), the solver thread in real
time, a random visitor now and then (kiosk_visitor.py) and, with --lose-context-every, a
simulated GL context loss at that period.

Printed: frames per second, frame-to-frame time and drawing time p50/p95/p99/max, the
resident memory (after the first minute's warm-up, at the end, its peak), and what the
kiosk counted: entries opened, drops and replays, roll-backs, solver faults, GL
recoveries, frame errors. Figures go to benchmarks/results/bench_kiosk.json.

    python benchmarks/bench_kiosk.py [--seconds 600] [--size 1280x720] [--seed 1]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

import report  # benchmarks/report.py, beside this file
from kiosk_visitor import Visitor

from slinky3d.runtime.memory import resident_mb as rss_mb

WARM_S = 60.0  # wall s before the memory baseline: every GL cache and kernel is in


def percentiles(xs) -> dict[str, float]:
    a = np.asarray(xs, float) * 1e3
    if not len(a):
        return {}
    return {"p50_ms": float(np.percentile(a, 50)), "p95_ms": float(np.percentile(a, 95)),
            "p99_ms": float(np.percentile(a, 99)), "max_ms": float(a.max())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=600.0, help="wall time, s")
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--quality", default="auto")
    ap.add_argument("--playlist", help="playlist file (default: the shipped one)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lose-context-every", type=float, default=0.0, metavar="S",
                    help="simulate a GL context loss every S wall s (0: never)")
    ap.add_argument("--name", default="bench_kiosk", help="results name (a variant's own "
                    "table: bench_kiosk-losses for --lose-context-every)")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--verbose", action="store_true", help="print the memory samples too")
    args = ap.parse_args()

    import pyglet

    pyglet.options["headless"] = True
    from slinky3d.viewer.jobs import parse_size
    from slinky3d.viewer.kiosk.exhibit import Kiosk, setup_logging
    from slinky3d.viewer.kiosk.playlist import load_playlist
    from slinky3d.viewer.kiosk.state import first_valid

    size = parse_size(args.size)
    log_path = setup_logging(Path(tempfile.gettempdir()) / "slinky3d-bench-kiosk")
    playlist = load_playlist(args.playlist)
    first = first_valid(playlist, 0)
    assert first is not None, "no scene of the playlist loads"
    k = Kiosk(playlist, first, size, fullscreen=False, quality=args.quality)
    visitor = Visitor(k, np.random.default_rng(args.seed))
    visitor.next_change = time.perf_counter() + 20.0  # the attract loop first
    w = k.app.window
    draws: list[tuple[float, float]] = []
    inner = k.app.on_draw

    def timed_draw() -> None:
        t0 = time.perf_counter()
        inner()
        draws.append((t0, time.perf_counter()))

    w.remove_handlers(on_draw=k.app.on_draw)
    w.push_handlers(on_draw=timed_draw)
    state: dict = {"t0": None, "warm": None, "losses": 0, "rss": []}

    def script(dt: float) -> None:
        now = time.perf_counter()
        if state["t0"] is None:
            state["t0"] = state["lost"] = state["sampled"] = now
        el = now - state["t0"]
        visitor.step(now)
        if now - state["sampled"] >= 1.0:
            state["sampled"] = now
            state["rss"].append((el, *rss_mb()))
        if state["warm"] is None and el >= min(WARM_S, 0.2 * args.seconds):
            state["warm"] = (el, len(draws), *rss_mb())
        every = args.lose_context_every
        if every > 0 and now - state["lost"] >= every:
            state["lost"] = now
            state["losses"] += 1
            k.simulate_context_loss()
        if el >= args.seconds:
            state["end"] = (el, len(draws), *rss_mb())
            pyglet.clock.unschedule(script)
            k.app.quit()

    pyglet.clock.schedule(script)
    k.run()
    if "end" not in state or state["warm"] is None:
        print("bench_kiosk: the kiosk stopped before the end", file=sys.stderr)
        return 1
    el_w, n_w, rss_w, _ = state["warm"]
    el_e, n_e, rss_e, peak_e = state["end"]
    frames = draws[n_w:n_e]
    starts = [a for a, _ in frames]
    a = k.attendant
    figures = {
        "seconds": el_e, "size": list(size), "quality": k.app.renderer.quality.name,
        "renderer": k.app.ctx.info["GL_RENDERER"], "frames": len(draws),
        "fps": (len(frames) - 1) / (starts[-1] - starts[0]),
        "frame_interval": percentiles(np.diff(starts)),
        "draw": percentiles([b - a for a, b in frames]),
        "rss_after_warmup_mb": rss_w, "rss_end_mb": rss_e, "rss_peak_mb": peak_e,
        "rss_growth_mb": rss_e - rss_w, "warmup_s": el_w,
        "visits": visitor.visits, "gestures": visitor.gestures,
        "entries_opened": k.entries_opened, "drops": a.drops, "replays": a.replays,
        "rollbacks": k.rollbacks, "solver_faults": k.solver_faults,
        "context_losses": state["losses"], "gl_recoveries": k.gl_recoveries,
        "frame_errors": k.frame_errors, "exit_code": k.exit_code,
    }
    fi, dr = figures["frame_interval"], figures["draw"]
    print(f"kiosk {size[0]}x{size[1]}, {figures['quality']} on {figures['renderer']}: "
          f"{el_e:.0f} s, {figures['fps']:.1f} FPS after the {el_w:.0f} s warm-up")
    print(f"  frame interval p50/p95/p99 {fi['p50_ms']:.1f} / {fi['p95_ms']:.1f} / "
          f"{fi['p99_ms']:.1f} ms (max {fi['max_ms']:.0f}); drawing p50/p95/p99 "
          f"{dr['p50_ms']:.1f} / {dr['p95_ms']:.1f} / {dr['p99_ms']:.1f} ms")
    print(f"  memory: {rss_w:.1f} MB after the warm-up, {rss_e:.1f} MB at the end "
          f"({rss_e - rss_w:+.1f} MB), peak {peak_e:.1f} MB")
    print(f"  {visitor.visits} visits ({visitor.gestures} gestures), {k.entries_opened} "
          f"entries opened, {a.drops} drops, {a.replays} replays, {k.rollbacks} roll-backs, "
          f"{k.solver_faults} solver faults, {state['losses']} context losses -> "
          f"{k.gl_recoveries} GL recoveries, {k.frame_errors} frame errors; log {log_path}")
    if args.verbose:
        print("  (s, RSS MB, peak MB):", " ".join(f"{t:.0f}:{r:.0f}" for t, r, _ in
                                                  state["rss"][::5]))
    if not args.no_write:
        report.write(args.name, figures)
    return 0 if k.exit_code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
