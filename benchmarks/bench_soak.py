"""The kiosk soaked: hours of simulated kiosk use (2 h by default) run faster than real
time, rendering headless (pyglet on EGL; llvmpipe without a GPU). The attract loop and a
random visitor's play (kiosk_visitor.py) alternate; every frame is drawn as in the
kiosk, through its window, solver thread and overlay.

The clock is simulated: the viewer's modules read a virtual clock that each frame moves
on by 1/--fps s, and the solver thread is stepped in lockstep, by that much simulated
time (times the time scale) per frame, unless paused. So 2 h of kiosk use take the time
of their frames' drawing and stepping, not 2 h. Optionally a simulated GL context loss
every --lose-context-every s.

Printed: the peak resident memory in the warm-up and after it, their difference, the
peak RSS growth (target: under 5 MB), the roll-backs, solver faults, GL recoveries,
frame errors, entries opened, visits, drops and replays. The warm-up (--warmup s of
kiosk use, 30 min) is as long as a heaptrack run found malloc's lowest heap level rising
(the kernels, shaders and libraries loading what each first needs; flat after it), and
its tour plays every entry untouched with its history full, then lets a visitor who
stays in it play for 40 s: each scene's working set.
Figures go to benchmarks/results/bench_soak.json.

    python benchmarks/bench_soak.py [--hours 2] [--fps 10] [--size 320x240] [--seed 1]
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

import report  # benchmarks/report.py, beside this file
from kiosk_visitor import STAYING, Visitor

from slinky3d.runtime.history import SECONDS
from slinky3d.runtime.memory import resident_mb as rss_mb

# The modules whose `time.perf_counter` is the kiosk's clock.
SAMPLE_S = 10.0  # s of kiosk use between two readings of the resident memory
TOUR_S = SECONDS + 2.0  # s of kiosk use each entry plays untouched in the warm-up's tour
VISIT_S = 40.0  # s of kiosk use a visitor then plays with it
CLOCKED = ("slinky3d.viewer.app.window", "slinky3d.viewer.app.instant_replay",
           "slinky3d.viewer.app.views", "slinky3d.viewer.overlay.layer",
           "slinky3d.viewer.kiosk.exhibit")


class Clock:
    """The virtual wall clock, starting at 0."""

    def __init__(self) -> None:
        self.now = 0.0

    def shim(self) -> types.SimpleNamespace:
        """A stand-in for the `time` module whose perf_counter reads this clock."""
        names = {n: getattr(time, n) for n in dir(time) if not n.startswith("_")}
        return types.SimpleNamespace(**{**names, "perf_counter": lambda: self.now})


def lockstep_source(scene, budget: bool) -> Any:
    """The kiosk's solver thread, stepped by `advance(dt)` instead of the wall clock:
    pausing and the time scale are kept here; the thread takes Step(n) commands.

    budget: each frame's steps get at most the frame's own time of wall clock, as the
    real thread's (it runs beside the renderer, on a core of its own, and drops the
    backlog it cannot catch up): where the machine cannot keep up (the steel Slinky
    lying on a floor runs at ~0.1x real time here), the soak computes what the kiosk
    would have, not every simulated second."""
    from slinky3d.runtime import commands as c
    from slinky3d.runtime.commands import SCALE_MAX, SCALE_MIN
    from slinky3d.viewer.kiosk.exhibit import KioskThread

    class Lockstep(KioskThread):
        def __init__(self, sc):
            super().__init__(sc, realtime=False)
            self.v_paused, self.v_scale, self.owed = False, 1.0, 0.0
            self.dropped = 0.0  # simulated s not computed for want of wall time
            self.per = 0.0  # wall s a step took last

        @property
        def paused(self) -> bool:
            return self.v_paused

        def send(self, cmd) -> None:
            if isinstance(cmd, c.Pause | c.Resume | c.TogglePause):
                self.v_paused = {c.Pause: True, c.Resume: False}.get(type(cmd),
                                                                    not self.v_paused)
            elif isinstance(cmd, c.TimeScale):
                self.v_scale = min(max(float(cmd.scale), SCALE_MIN), SCALE_MAX)
            else:
                if isinstance(cmd, c.Step):
                    self.v_paused = True
                super().send(cmd)

        def advance(self, dt: float) -> None:
            """The steps of dt of kiosk use; with a budget, no more than the real
            thread would get done in dt of wall time: what is left is dropped."""
            if self.v_paused:
                self.drain()
                return
            self.owed += dt * self.v_scale / self.sim.h
            n = int(self.owed)
            self.owed -= n
            end = time.perf_counter() + dt if budget else math.inf
            while n:
                per = self.per if budget else 0.0
                k = n if per == 0.0 else max(1, min(n, int((end - time.perf_counter()) / per)))
                t0, s0 = time.perf_counter(), self.steps
                super().send(c.Step(k))
                self.drain()
                n -= k
                if self.steps > s0:
                    self.per = (time.perf_counter() - t0) / (self.steps - s0)
                if n and time.perf_counter() >= end:
                    self.dropped += n * self.sim.h
                    break
            self.drain()

    return Lockstep(scene)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hours", type=float, default=2.0, help="kiosk use to simulate, h")
    ap.add_argument("--fps", type=float, default=10.0, help="frames per simulated second")
    ap.add_argument("--size", default="320x240")
    ap.add_argument("--playlist", help="playlist file (default: the shipped one)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--warmup", type=float, default=1800.0, metavar="S",
                    help="s of kiosk use before the memory baseline (default 1800)")
    ap.add_argument("--lose-context-every", type=float, default=0.0, metavar="S",
                    help="simulate a GL context loss every S s of kiosk use (0: never)")
    ap.add_argument("--compute-all", action="store_true",
                    help="compute every simulated second, however slow (default: as the "
                         "real solver thread, at most a frame's time of wall clock a frame)")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--verbose", action="store_true", help="print each minute's RSS")
    args = ap.parse_args()

    import pyglet

    pyglet.options["headless"] = True
    from slinky3d.viewer.jobs import parse_size
    from slinky3d.viewer.kiosk import exhibit as kiosk_module
    from slinky3d.viewer.kiosk.exhibit import Kiosk, setup_logging
    from slinky3d.viewer.kiosk.playlist import load_playlist
    from slinky3d.viewer.kiosk.state import first_valid

    clock = Clock()
    shim = clock.shim()
    for name in CLOCKED:
        # the module's `time`, replaced: ModuleType declares no attributes
        sys.modules[name].time = shim  # type: ignore[attr-defined]
    size = parse_size(args.size)
    log_path = setup_logging(Path(tempfile.gettempdir()) / "slinky3d-bench-soak")
    playlist = load_playlist(args.playlist)
    first = first_valid(playlist, 0)
    assert first is not None, "no scene of the playlist loads"
    source = lockstep_source(first[1], budget=not args.compute_all)
    k = Kiosk(playlist, first, size, fullscreen=False, source=source)
    # The scenes the kiosk opens run in this same thread (Load replaces its simulation).
    assert isinstance(k.app.source, kiosk_module.KioskThread)
    k.app.window._enable_event_queue = False
    k.app.views.started = 0.0
    k.app.source.start()
    a = k.attendant
    visitor = Visitor(k, np.random.default_rng(args.seed))
    visitor.next_change = 60.0  # the attract loop first
    dt = 1.0 / args.fps
    total = 3600.0 * args.hours
    warm = min(args.warmup, 0.25 * total)
    samples: list[tuple[float, float]] = []  # (s of use, RSS MB) every SAMPLE_S
    losses = 0
    next_loss = args.lose_context_every or float("inf")
    wall0 = time.perf_counter()
    frames = 0
    every = max(1, round(SAMPLE_S * args.fps))
    settled: list[tuple[float, str, float]] = []  # (s of use, entry, RSS MB) at openings
    collected = k.upkeep.collections
    # The tour, in the warm-up's measured part: every entry opened in turn, played
    # untouched for longer than the history keeps, at full speed (its history full: 8 MB
    # of the plastic Slinky's snapshots, 41 MB of three steel ones), then played with by
    # a visitor who stays in it (grabs, drops, resets, pauses, replays, the side view,
    # the panel: 5-9 MB more in the three steel Slinkies' scene), so that the baseline
    # holds each scene's working set, not only what random visits reached.
    tour_at, tour_next = warm / 3, math.inf
    tour: list[tuple[str, int]] = []  # the phases to come: (kind, entry)
    phase = ""  # the phase under way: "untouched", "visit", or "" (no tour)
    # the tour's visitor: its visits outlast VISIT_S, so it plays until the tour moves on
    guest = Visitor(k, np.random.default_rng(args.seed + 1), visit=(2 * VISIT_S, 2 * VISIT_S),
                    keys=STAYING)
    while clock.now < total and k.app.window.context is not None:
        clock.now += dt
        if tour_at <= clock.now:
            tour_at, tour_next = math.inf, clock.now
            tour = [(kind, i) for i in range(len(playlist.entries))
                    for kind in ("untouched", "visit")]
            visitor.pause()
        if clock.now >= tour_next:
            guest.pause()
            phase, i = tour.pop(0) if tour else ("", -1)
            if phase == "untouched":
                visitor.touch()  # play mode: no attract timer moves on
                k.open_entry(i, attract=False)
                k.app.set_scale(0)
                tour_next = clock.now + TOUR_S
            elif phase == "visit":
                guest.next_change = clock.now  # comes now, stays till the next phase
                tour_next = clock.now + VISIT_S
            else:
                tour_next = math.inf
                visitor.resume(clock.now)
        if phase == "visit":
            guest.step(clock.now)
        elif not phase:
            visitor.step(clock.now)
        source.advance(dt)
        k.app.window.dispatch_event("on_draw")
        frames += 1
        if k.upkeep.collections != collected:
            # The same state after every opening of an entry: its scene loaded, the
            # history cleared, the old scene's garbage collected and the allocator's
            # free pages given back by the kiosk (runtime/memory.py's Upkeep).
            collected = k.upkeep.collections
            settled.append((clock.now, a.entry.name, rss_mb()[0]))
        if clock.now >= next_loss:
            next_loss += args.lose_context_every
            losses += 1
            k.simulate_context_loss()
        if frames % every == 0:
            samples.append((clock.now, rss_mb()[0]))
            if frames % round(1800 * args.fps) == 0:
                print(f"  {clock.now / 60:5.0f} min of kiosk use in "
                      f"{time.perf_counter() - wall0:6.0f} s: RSS {samples[-1][1]:.1f} MB",
                      flush=True)
    wall = time.perf_counter() - wall0
    ended = clock.now >= total - dt / 2  # not closed before the end
    k.app.quit()
    gc.collect()
    end, peak = rss_mb()
    # The baseline: the peak of the warm-up's last two thirds (every scene opened, the
    # history ring full of the largest Slinky's snapshots: its size swings by ~10 MB
    # with the scene). The growth: the peak after it, less the baseline.
    warm_rss = [r for t, r in samples if warm / 3 <= t <= warm]
    after = [(t, r) for t, r in samples if t > warm]
    if not warm_rss or not after:
        print("bench_soak: the kiosk stopped before the warm-up ended", file=sys.stderr)
        return 1
    base = max(warm_rss)
    top = max(r for _, r in after)
    minutes: dict[int, float] = {}
    for t, r in after:  # each minute's peak, for the trend
        minutes[int(t // 60)] = max(r, minutes.get(int(t // 60), 0.0))
    ms = sorted(minutes)
    slope = float(np.polyfit(np.asarray(ms) / 60, [minutes[m] for m in ms], 1)[0]) \
        if len(ms) > 2 else 0.0
    # The leak test: each entry's settled memory at its openings after the warm-up, the
    # last less the first; their median is the process's growth whatever the scenes.
    by_entry: dict[str, list[float]] = {}
    for t, name, r in settled:
        if t > warm:
            by_entry.setdefault(name, []).append(r)
    changes = {n: rs[-1] - rs[0] for n, rs in by_entry.items() if len(rs) > 1}
    settled_growth = float(np.median(list(changes.values()))) if changes else math.nan
    figures = {
        "hours": clock.now / 3600, "fps": args.fps, "size": list(size), "frames": frames,
        "wall_s": wall, "warmup_s": warm, "rss_warmup_peak_mb": base,
        "rss_peak_after_warmup_mb": top, "rss_growth_mb": top - base, "rss_end_mb": end,
        "rss_process_peak_mb": peak, "rss_minute_peak_slope_mb_per_h": slope,
        "visits": visitor.visits, "gestures": visitor.gestures,
        "entries_opened": k.entries_opened, "skipped": k.skipped, "drops": a.drops,
        "replays": a.replays, "rollbacks": k.rollbacks, "solver_faults": k.solver_faults,
        "budget": not args.compute_all, "dropped_sim_s": source.dropped,
        "context_losses": losses, "gl_recoveries": k.gl_recoveries,
        "frame_errors": k.frame_errors, "exit_code": k.exit_code,
        "command_log": len(k.app.source.log),
        "rss_minute_peaks": [[m, round(minutes[m], 1)] for m in ms[::5]],
        "settled_readings": len(settled), "settled_growth_mb": settled_growth,
        "settled_growth_by_entry_mb": {n: round(d, 1) for n, d in sorted(changes.items())},
    }
    print(f"soak: {figures['hours']:.2f} h of kiosk use ({frames} frames at {args.fps:g} "
          f"per s, {size[0]}x{size[1]}) in {wall:.0f} s")
    print(f"  memory: peak {base:.1f} MB in the {warm / 60:.0f} min warm-up, {top:.1f} MB "
          f"after it: peak RSS growth {top - base:+.1f} MB (minute peaks' trend "
          f"{slope:+.2f} MB/h); {end:.1f} MB at the end")
    print(f"  settled memory at each entry's openings after the warm-up ({len(settled)} "
          f"readings in all), its last less its first: median {settled_growth:+.1f} MB over "
          f"{len(changes)} entries (from {min(changes.values(), default=math.nan):+.1f} to "
          f"{max(changes.values(), default=math.nan):+.1f} MB)")
    print(f"  {k.rollbacks} roll-backs, {k.solver_faults} solver faults, {losses} context "
          f"losses -> {k.gl_recoveries} GL recoveries, {k.frame_errors} frame errors")
    print(f"  {source.dropped:.0f} simulated s not computed, for want of wall time"
          + ("" if args.compute_all else " (as the real solver thread drops them)"))
    print(f"  {visitor.visits} visits ({visitor.gestures} gestures), {k.entries_opened} "
          f"entries opened ({k.skipped} skipped), {a.drops} drops, {a.replays} replays; "
          f"log {log_path}")
    if args.verbose:
        print("  (min, peak RSS MB):", " ".join(f"{m}:{minutes[m]:.1f}" for m in ms))
    if not args.no_write:
        report.write("bench_soak", figures)
    return 0 if ended and k.exit_code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
