"""Contact with the world at pieces of h, h/2 and h/4: the landing and the walk.

The world step's pieces are at most H_WORLD (2 ms) long, and a step of h is cut into
ceil(h / H_WORLD) of them, so running a scene at h, h/2 and h/4 runs its contacts at
pieces of h_w, h_w/2 and h_w/4 (docs/solver.md, "Contact with the world").

* The landing: the hanging steel and plastic Slinkies let go of at t = 0 and dropped
  onto their floor; the end points' largest difference from the h/4 run at 0.25 s
  (just after the first touch), 0.5 s and 1 s, the mechanical energy at 1 s, and the
  deepest point of any bar under the floor.
* The walk: `stairs` over its 3 s; steps walked, flips, the deepest point of any bar
  in a step, and where its ends are at 1 s and 3 s. A walk is a chain of tumbles, so
  its state at 3 s is not expected to converge pointwise; its steps and flips are
  what must not depend on the piece.

    python benchmarks/convergence_contact.py [--quick]

Prints the table of docs/solver.md ("Convergence") and writes
benchmarks/results/convergence_contact.json.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

import report  # noqa: E402  (benchmarks/report.py, beside this file)

from slinky3d.model import chain  # noqa: E402
from slinky3d.output.walk import measure  # noqa: E402
from slinky3d.runtime.simulation import Simulation  # noqa: E402
from slinky3d.scene.loader import load  # noqa: E402
from slinky3d.scene.spec import Scene  # noqa: E402
from slinky3d.scene.world import distance  # noqa: E402

DIVISORS = (1, 2, 4)


def deepest(scene: Scene, sim: Simulation) -> float:
    """The deepest point (m, < 0 inside) of any bar of the first Slinky in the world."""
    s = sim.slinkies[0]
    E = chain.end_points(s.q, s.p.R)
    f = np.linspace(0.0, 1.0, 6)[:, None, None]
    bars = (E[:-1][None] * (1 - f) + E[1:][None] * f).reshape(-1, 2)
    return float(min(distance(scene.world, bars).min(), 0.0))


def landing(name: str, h: float, times: tuple[float, ...]) -> dict[str, Any]:
    scene = load(name)
    sim = Simulation(scene, h)
    sim.let_go(0)
    s = sim.slinkies[0]
    ends, deep = {}, 0.0
    for t in times:
        while sim.t < t - 1e-9:
            sim.step(1)
            deep = min(deep, deepest(scene, sim))
        ends[t] = chain.end_points(s.q, s.p.R)
    return {"ends": ends, "energy": s.energy(), "deepest": deep, "rollbacks": sim.rollbacks}


def walk(name: str, h: float, seconds: float) -> dict[str, Any]:
    scene = load(name)
    sim = Simulation(scene, h)
    s = sim.slinkies[0]
    per = max(1, round(0.01 / h))
    t, a, b, deep, at = [], [], [], 0.0, {}
    while sim.t < seconds - 1e-9:
        sim.step(per)
        E = chain.end_points(s.q, s.p.R)
        deep = min(deep, deepest(scene, sim))
        t.append(sim.t)
        a.append(E[0])
        b.append(E[-1])
        for mark in (1.0, seconds):
            if abs(sim.t - mark) < 0.5 * per * h:
                at[mark] = np.array([E[0], E[-1]])
    w = measure(scene.world.stairs, np.array(t), np.array(a), np.array(b), margin=s.p.R)
    return {"steps": w.steps, "flips": w.flips, "deepest": deep, "ends": at,
            "rollbacks": sim.rollbacks}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the plastic landing only")
    args = ap.parse_args()
    figures: dict[str, Any] = {}
    times = (0.25, 0.5, 1.0)
    names = ["hanging-plastic"] if args.quick else ["hanging-steel", "hanging-plastic"]
    for name in names:
        h0 = load(name).dt
        runs = {k: landing(name, h0 / k, times) for k in DIVISORS}
        ref = runs[DIVISORS[-1]]
        rows = []
        print(f"\nlanding, {name} (h = {h0 * 1e3:g} ms; pieces of at most 2 ms, halved with h)")
        print("  h        |dE| 0.25 s   0.5 s      1 s        energy 1 s (J)   deepest (mm)")
        for k in DIVISORS:
            r = runs[k]
            diff = [float(np.abs(r["ends"][t] - ref["ends"][t]).max()) for t in times]
            rows.append({"h": h0 / k, "diff_to_finest_m": dict(zip(map(str, times), diff,
                                                                     strict=True)),
                         "energy_J": r["energy"], "deepest_m": r["deepest"],
                         "rollbacks": r["rollbacks"]})
            print(f"  h/{k:<6} {diff[0]:10.2e} {diff[1]:10.2e} {diff[2]:10.2e}   "
                  f"{r['energy']:14.6f}   {r['deepest'] * 1e3:8.4f}")
        figures[f"landing {name}"] = rows
    if not args.quick:
        name, seconds = "stairs", 3.0
        h0 = load(name).dt
        runs = {k: walk(name, h0 / k, seconds) for k in DIVISORS}
        ref = runs[DIVISORS[-1]]
        rows = []
        print(f"\nwalk, {name} over {seconds:g} s (h = {h0 * 1e3:g} ms)")
        print("  h        steps  flips  deepest (mm)  |dE| 1 s   |dE| 3 s")
        for k in DIVISORS:
            r = runs[k]
            diff = [float(np.abs(r["ends"][t] - ref["ends"][t]).max()) for t in (1.0, seconds)]
            rows.append({"h": h0 / k, "steps": r["steps"], "flips": r["flips"],
                         "deepest_m": r["deepest"], "diff_to_finest_m": diff,
                         "rollbacks": r["rollbacks"]})
            print(f"  h/{k:<6} {r['steps']!s:>5}  {r['flips']:5d}  {r['deepest'] * 1e3:12.4f}"
                  f"  {diff[0]:9.2e}  {diff[1]:9.2e}")
        figures[f"walk {name}"] = rows
    report.write("convergence_contact", figures)


if __name__ == "__main__":
    main()
