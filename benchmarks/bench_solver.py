"""Real-time solver throughput: wall seconds per simulated second, real-time factor,
and cost versus the number of half hoops N, and in the same run the 3D solver against
issue 24's speed targets (bench_solver3d.speed_targets: 4S under both mass models
beside the planar solver, the shaken hanging steel Slinky at N = 157, 500, 1000).
Headless, single-threaded.

    python benchmarks/bench_solver.py [--repeat 3] [--quick] [--only-3d]
                                      [--no-write | --results DIR]

Prints medians over repeats (machines are noisy) and writes the figures to
benchmarks/results/bench_solver.json (report.py); JIT compilation is excluded
(warmed up first).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

import report  # noqa: E402  (benchmarks/report.py, beside this file)

from slinky3d.dynamics.articulated_body import aba, workspace  # noqa: E402
from slinky3d.model.chain import BASE  # noqa: E402
from slinky3d.runtime.simulation import Simulation  # noqa: E402
from slinky3d.scene import loader as scene  # noqa: E402
from slinky3d.scene.spec import Scene  # noqa: E402


def run_scene(sc: Scene, seconds: float, repeat: int) -> tuple[float, dict[str, Any]]:
    """Median wall seconds per simulated second, and the counters of the last run
    (with the fastest and slowest repeat: this machine's noise)."""
    walls = []
    info: dict[str, Any] = {}
    for _ in range(repeat):
        sim = Simulation(sc)
        steps = round(seconds / sim.h)
        t0 = time.perf_counter()
        for _ in range(steps // 10):  # ten steps at a time, as the viewer's thread does
            sim.step(10)
        walls.append((time.perf_counter() - t0) / seconds)
        s = sim.slinkies[0]
        info = {"impacts": s.impacts, "evals": s.evals, "steps": steps, "h": sim.h,
                "range": (1 / max(walls), 1 / min(walls))}
    return float(np.median(walls)), info


def scaled(n: int) -> list[str]:
    """A steel Slinky of n half hoops (same mass, length and stiffness, finer hoops),
    hanging at rest with its bottom coils collapsed, its top end shaken at 2 Hz."""
    return [f"slinky.n_coils={n / 2}", "slinky.anchor.condition='scripted'",
            "slinky.anchor.motion.amplitude=[0.0, 0.02]", "slinky.anchor.motion.frequency=2.0"]


@njit
def _repeat(reps, q, qd, tau, presc, qdd_p, fext, arm, m, I, R, g, qdd, freq, E, U, ws):  # noqa: E741
    for _ in range(reps):
        aba(q, qd, tau, presc, qdd_p, fext, arm, m, I, R, g, qdd, freq, E, U, ws)


def eval_cost(n: int, reps: int = 10000) -> float:
    """Microseconds per O(N) dynamics evaluation (minimum of 7 batches), called from
    compiled code as the solver does (a call from Python adds ~3 us of dispatch)."""
    rng = np.random.default_rng(0)
    nj = n + BASE
    q = np.concatenate([np.zeros(BASE), 0.03 + rng.uniform(0, 0.1, n)])
    qd = rng.normal(size=nj)
    args = (q, qd, np.zeros(nj), np.r_[np.ones(BASE, bool), np.zeros(n, bool)],
            np.zeros(nj), np.zeros((n, 3)), np.zeros(nj), 1e-3, 1e-7, 0.03, 9.81,
            np.zeros(nj), np.zeros(nj), np.zeros((n + 1, 2)), np.zeros((n, 2)),
            workspace(n))
    _repeat(1, *args)
    best = math.inf
    for _ in range(7):
        t0 = time.perf_counter()
        _repeat(reps, *args)
        best = min(best, (time.perf_counter() - t0) / reps)
    return best * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="shorter runs (smoke test)")
    ap.add_argument("--only-3d", action="store_true",
                    help="issue 24's speed targets only (the 3D solver, 4S's planar run beside "
                         "it); prints only: the record is the whole run's")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--results", type=Path, default=None, help="write the figures here instead")
    a = ap.parse_args()
    secs = 0.3 if a.quick else 3.0
    figures: dict[str, Any] = {"simulated_s": secs, "repeats": a.repeat, "scenes": {}}
    if not a.only_3d:
        planar(figures, secs, a.repeat)
    from bench_solver3d import speed_targets  # (it imports this module's eval_cost)

    speed_targets(figures, a.repeat, a.quick)
    if not (a.no_write or a.only_3d):  # a part must not overwrite the whole record
        report.write("bench_solver", figures, a.results)


def planar(figures: dict[str, Any], secs: float, repeat: int) -> None:
    """The planar solver's figures: the paper's tests 1Pa and 4S, the cost versus N."""
    # warm the JIT (and its cache) so compilation is not timed
    Simulation(scene.load("1Pa")).step(20)
    print(f"paper tests, impacts on, {secs:g} s simulated (median of {repeat}):")
    print(f"{'scene':8} {'N':>5} {'h ms':>6} {'wall s/sim s':>13} {'x real time':>12} "
          f"{'impacts':>8} {'evals/step':>10} {'x range':>12}")
    for name in ("1Pa", "4S"):
        sc = scene.load(name, [f"duration={secs}"])
        w, info = run_scene(sc, secs, repeat)
        figures["scenes"][name] = {
            "N": sc.slinkies[0].params.N, "h_s": info["h"], "wall_per_sim_s": w,
            "real_time_factor": 1 / w, "real_time_factor_range": list(info["range"]),
            "impacts": info["impacts"], "evals_per_step": info["evals"] / info["steps"]}
        print(f"{name:8} {sc.slinkies[0].params.N:5d} {info['h'] * 1e3:6.2f} {w:13.4f} "
              f"{1 / w:12.1f} {info['impacts']:8d} {info['evals'] / info['steps']:10.2f} "
              f"{info['range'][0]:5.1f}-{info['range'][1]:<5.1f}")

    print(f"\ncost versus N: steel Slinky, n half hoops, hanging, top shaken at 2 Hz, "
          f"contacts on, {secs / 3:g} s simulated:")
    print(f"{'N':>5} {'wall s/sim s':>13} {'x real time':>12} {'us/eval':>8} {'evals/step':>10}")
    ns = (75, 150, 300, 600, 1000)
    walls, evs = [], []
    rows = []
    for n in ns:
        sc = scene.load("hanging-steel", scaled(n) + [f"duration={secs / 3}"])
        w, info = run_scene(sc, secs / 3, repeat)
        e = eval_cost(n)
        walls.append(w)
        evs.append(e)
        rows.append({"N": n, "wall_per_sim_s": w, "real_time_factor": 1 / w, "us_per_eval": e,
                     "evals_per_step": info["evals"] / info["steps"]})
        print(f"{n:5d} {w:13.4f} {1 / w:12.1f} {e:8.2f} {info['evals'] / info['steps']:10.2f}")
    k = np.polyfit(np.log(ns), np.log(walls), 1)[0]
    ke = np.polyfit(np.log(ns), np.log(evs), 1)[0]
    print(f"fitted exponent, cost ~ N^k: k = {k:.2f} (whole step), {ke:.2f} (one evaluation)")
    one = eval_cost(157)
    print(f"one evaluation at N = 157 (the steel Slinky): {one:.2f} us")
    figures["cost_versus_N"] = {"scene": "hanging-steel, top shaken at 2 Hz",
                                "simulated_s": secs / 3, "rows": rows}
    figures["exponent_step"] = float(k)
    figures["exponent_eval"] = float(ke)
    figures["eval_us_N157"] = one


if __name__ == "__main__":
    main()
