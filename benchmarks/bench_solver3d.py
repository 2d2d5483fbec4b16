"""The 3D solver without contact against the planar solver, in one run: the cost of one
dynamics evaluation and of one step at N = 157 (the steel Slinky), the 3D solver's
real-time factor for a hanging steel Slinky swinging in 3D, its energy drift without
damping over 10 s, and its agreement with the planar solver on the paper's tests
without impacts.

    python benchmarks/bench_solver3d.py [--repeat 3] [--quick]

Prints medians over repeats and writes benchmarks/results/bench_solver3d.json
(report.py); compilation is excluded (warmed up first).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

import report  # noqa: E402  (benchmarks/report.py, beside this file)
from bench_solver import eval_cost  # noqa: E402

from slinky3d.dynamics import articulated_body3d as ab  # noqa: E402
from slinky3d.dynamics import coil_contact3d  # noqa: E402
from slinky3d.dynamics.solver import SlinkySolver  # noqa: E402
from slinky3d.dynamics.solver3d import Solver3D  # noqa: E402
from slinky3d.model import chain, chain3d  # noqa: E402
from slinky3d.scene import loader  # noqa: E402
from slinky3d.scene.spec import ContactSpec  # noqa: E402

TILT = 0.3  # rad about x: the swing towards the viewer
SPIN = 2.0  # rad/s about the vertical


@njit
def _repeat3d(reps, mode, q, u, H, tau, arm, par, presc, acc_p, qdd, jf, frames, ws, scr,
              tmp, d9):
    for _ in range(reps):
        ab.aba(mode, q, u, H, tau, arm, par, presc, acc_p, qdd, jf, frames, ws, scr, tmp, d9)


def eval_cost_3d(s: Solver3D, reps: int = 3000) -> float:
    """Microseconds per 3D articulated-body evaluation at s's state (minimum of 7
    batches), called from compiled code as the stepper does."""
    w = s.work
    args = (s.mode, s.q, s.u, s.H, w.tau, w.arm, s.par, w.presc, w.acc_p, w.qdd, w.jf,
            w.frames, w.ws, w.scr, w.tmp, w.d9)
    _repeat3d(1, *args)
    best = math.inf
    for _ in range(7):
        t0 = time.perf_counter()
        _repeat3d(reps, *args)
        best = min(best, (time.perf_counter() - t0) / reps)
    return best * 1e6


def steel_swing(anchor: str = "pivot", mass: str = "arc", C_D: float | None = None,
                h: float | None = None, contact: bool = False) -> Solver3D:
    """The steel Slinky hanging at rest (the planar static shape, its bottom coils
    collapsed), tilted TILT towards the viewer and spun at SPIN about the vertical."""
    spec = loader.load("hanging-steel").slinkies[0]
    p = spec.params if C_D is None else spec.params.with_(C_D=C_D)
    x, frames, holder = chain3d.from_planar(np.asarray(spec.q0), p.R)
    frames = chain3d.exp_map(np.array([TILT, 0.0, 0.0])) @ frames
    return Solver3D(p, x, frames, None, np.tile([0.0, SPIN, 0.0], (p.N, 1)), anchor, holder,
                    mass, h=h, contact=contact)


def wall_per_step(advance, steps: int, repeat: int) -> tuple[float, list[float]]:
    """Median wall microseconds per step of `advance(steps)` over fresh runs."""
    walls = []
    for _ in range(repeat):
        f = advance()
        t0 = time.perf_counter()
        for _ in range(steps // 10):
            f(10)
        walls.append((time.perf_counter() - t0) / steps * 1e6)
    return float(np.median(walls)), walls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="shorter runs (smoke test)")
    a = ap.parse_args()
    secs = 0.3 if a.quick else 3.0
    drift_secs = 1.0 if a.quick else 10.0
    figures: dict[str, Any] = {"simulated_s": secs, "repeats": a.repeat}

    # -- the same calm state, both solvers: the planar shape of hanging-steel, no contact
    spec = loader.load("hanging-steel").slinkies[0]
    spec = dataclasses.replace(spec, contact=ContactSpec(enabled=False))
    p = spec.params
    h = 4e-3
    x, frames, holder = chain3d.from_planar(np.asarray(spec.q0), p.R)

    def planar():
        s = SlinkySolver(spec, h)
        s.advance(1)  # warm
        return s.advance

    def spatial():
        s = Solver3D(p, x, frames, anchor="clamped", holder=holder, mass="ring", h=h)
        s.advance(1)
        return s.advance

    steps = 10 * round(secs / h / 10)
    planar()  # compile
    spatial()
    e2 = eval_cost(p.N)
    e3 = eval_cost_3d(steel_swing())
    w2, r2 = wall_per_step(planar, steps, a.repeat)
    w3, r3 = wall_per_step(spatial, steps, a.repeat)
    print(f"steel Slinky, N = {p.N}, damped, h = {h * 1e3:g} ms, no contact "
          f"(median of {a.repeat}, one run):")
    print(f"{'':26} {'planar':>10} {'3D':>10} {'ratio':>7}")
    print(f"{'us per evaluation':26} {e2:10.2f} {e3:10.2f} {e3 / e2:7.1f}")
    print(f"{'us per step':26} {w2:10.1f} {w3:10.1f} {w3 / w2:7.1f}")
    figures["N"] = p.N
    figures["eval_us"] = {"planar": e2, "3d": e3, "ratio": e3 / e2}
    figures["step_us"] = {"planar": w2, "3d": w3, "ratio": w3 / w2, "planar_runs": r2,
                          "3d_runs": r3, "h_s": h}

    # -- a hanging steel Slinky swinging in 3D, damped, at the default step
    print(f"\nhanging steel Slinky swinging in 3D (tilted {TILT} rad, spun {SPIN} rad/s, "
          f"{secs:g} s simulated, damped C_D = {p.C_D:g}):")
    print(f"{'anchor':8} {'mass':5} {'contact':8} {'h ms':>5} {'x real time':>12} "
          f"{'evals/step':>10}")
    figures["swing"] = []
    for anchor, mass, contact in (("pivot", "arc", False), ("clamped", "arc", False),
                                  ("pivot", "ring", False), ("pivot", "arc", True),
                                  ("clamped", "arc", True)):
        walls = []
        evals = 0
        for _ in range(a.repeat):
            s = steel_swing(anchor, mass, contact=contact)
            n = 10 * round(secs / s.h / 10)
            t0 = time.perf_counter()
            for _ in range(n // 10):
                s.advance(10)
            walls.append((time.perf_counter() - t0) / (n * s.h))
            evals = s.evaluations
        rtf = 1 / float(np.median(walls))
        print(f"{anchor:8} {mass:5} {'coils' if contact else 'none':8} {s.h * 1e3:5g} "
              f"{rtf:12.1f} {evals / n:10.2f}")
        figures["swing"].append({"anchor": anchor, "mass": mass, "contact": contact, "h_s": s.h,
                                 "real_time_factor": rtf, "evals_per_step": evals / n,
                                 "range": [1 / max(walls), 1 / min(walls)]})

    # -- without damping: the energy drift over drift_secs
    print(f"\nthe same swing without damping, pivot: energy drift over {drift_secs:g} s, "
          f"relative to the initial mechanical energy (the issue: < 1e-6 over 10 s):")
    print(f"{'mass':5} {'h ms':>5} {'drift':>10} {'x real time':>12}")
    figures["drift"] = []
    for mass, hd in (("ring", 2e-3), ("ring", 1e-3), ("arc", 2e-3), ("arc", 1e-3), ("arc", 5e-4)):
        s = steel_swing("pivot", mass, C_D=0.0, h=hd)
        E0 = s.energy()
        t0 = time.perf_counter()
        s.advance(round(drift_secs / hd))
        wall = time.perf_counter() - t0
        drift = (s.energy() - E0) / abs(E0)
        print(f"{mass:5} {hd * 1e3:5g} {drift:10.2e} {drift_secs / wall:12.1f}")
        figures["drift"].append({"mass": mass, "h_s": hd, "seconds": drift_secs,
                                 "relative_drift": drift, "real_time_factor": drift_secs / wall})

    # -- the paper's tests without impacts: 3D (ring) against planar, end points
    print("\nplanar scenes, 1.4 s at 4 ms, 3D (ring mass model) against planar, end points:")
    figures["planar_agreement_m"] = {}
    for name in ("1Pb", "3Pb"):
        sc = loader.load(name)
        (sp,) = sc.slinkies
        pl = SlinkySolver(sp, sc.dt)
        xs, fr, hold = chain3d.from_planar(np.asarray(sp.q0), sp.params.R)
        s = Solver3D(sp.params, xs, fr, anchor="clamped", holder=hold, mass="ring", h=sc.dt)
        worst = 0.0
        for _ in range(round(1.4 / sc.dt)):
            pl.advance(1)
            s.advance(1)
            E = s.end_points()
            worst = max(worst, float(np.abs(E[:, :2] - chain.end_points(pl.q, sp.params.R)).max()),
                        float(np.abs(E[:, 2]).max()))
        print(f"{name}: largest distance {worst:.2e} m")
        figures["planar_agreement_m"][name] = worst
    speed_targets(figures, a.repeat, a.quick)
    report.write("bench_solver3d", figures)


SHAKE_M, SHAKE_HZ = 0.02, 2.0  # bench_solver.py's N-scaling drive: the top shaken so
SCALING_N = (157, 500, 1000)


def speed_targets(figures: dict[str, Any], repeat: int, quick: bool) -> None:
    """Issue 24's speed targets for the 3D solver, in this run: 4S (the steel J let go,
    coil impacts) at least 20x real time, under both mass models, the planar solver
    beside it; the hanging steel Slinky with coil contact, its top shaken as
    bench_solver.py's N-scaling runs (SHAKE_M at SHAKE_HZ, vertically), at N = 157, 500
    and 1000: N = 1000 at least 5x, the cost ~ N^k with k at most 1.2."""
    sc = loader.load("4S")
    (sp,) = sc.slinkies
    p = sp.params
    secs = 0.4 if quick else sc.duration
    x, fr, hold = chain3d.from_planar(np.asarray(sp.q0), p.R)

    def timed(make) -> tuple[float, int, int, int]:
        walls, evals, impulses, steps = [], 0, 0, 0
        make().advance(2)  # compiled
        for _ in range(repeat):
            s = make()
            steps = round(secs / sc.dt)
            t0 = time.perf_counter()
            s.advance(steps)
            walls.append(time.perf_counter() - t0)
            evals = getattr(s, "evaluations", 0)
            if isinstance(s, Solver3D):
                impulses = int(s.cwork[coil_contact3d.IMPULSES][0])
        return secs / float(np.median(walls)), evals, impulses, steps

    print(f"\nissue 24's speed targets (median of {repeat}):")
    out: dict[str, Any] = {}
    for mass in ("ring", "arc"):
        rtf, evals, imp, n = timed(lambda m=mass: Solver3D(p, x, fr, anchor="clamped",
                                                           holder=hold, mass=m, h=sc.dt,
                                                           contact=True))
        out[f"4S_3d_{mass}_x"] = rtf
        out[f"4S_3d_{mass}_evals_per_step"] = evals / n
        out[f"4S_3d_{mass}_impulse_solves_per_step"] = imp / n
        print(f"4S, 3D solver, {mass} mass: {rtf:.1f}x real time, {evals / n:.1f} evaluations "
              f"and {imp / n:.1f} impulse solves a step (target 20x)")
    rtf, _, _, _ = timed(lambda: SlinkySolver(sp, sc.dt))
    out["4S_planar_x"] = rtf
    print(f"4S, planar solver: {rtf:.1f}x real time")
    costs = []
    for n_half in SCALING_N:
        spec = loader.load("hanging-steel", [f"slinky.n_coils={n_half / 2}"]).slinkies[0]
        q = spec.params
        xs, frs, hs = chain3d.from_planar(np.asarray(spec.q0), q.R)
        w = 2 * math.pi * SHAKE_HZ
        walls = []
        for rep in range(repeat):
            s = Solver3D(q, xs, frs, anchor="clamped", holder=hs, contact=True)
            if rep == 0:
                s.advance(2)
            steps = round((0.2 if quick else 1.0) / s.h)
            t0 = time.perf_counter()
            for k in range(steps):
                s.drive(np.array([0.0, SHAKE_M * w * w * math.cos(w * (k + 0.5) * s.h), 0.0]))
                s.advance(1)
            walls.append((time.perf_counter() - t0) / (steps * s.h))
        rtf = 1 / float(np.median(walls))
        costs.append(1 / rtf)
        out[f"shaken_N{q.N}_x"] = rtf
        print(f"steel hanging, top shaken, coil contact, N = {q.N}: {rtf:.1f}x real time"
              + (" (target 5x)" if q.N == 1000 else ""))
    exponent = float(np.polyfit(np.log(SCALING_N), np.log(costs), 1)[0])
    out["cost_exponent_k"] = exponent
    print(f"cost ~ N^k: k = {exponent:.2f} (target <= 1.2)")
    figures["speed_targets"] = out


if __name__ == "__main__":
    main()
