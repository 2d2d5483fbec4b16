"""The app's floor drag that fell behind, replayed through the API: a yardstick for the
world contact's worst case (issue 23).

`bench_app.py --floor` drags the steel Slinky's end along its floor with the mouse, in
wall time. When the solver lags, the grab's target jumps in simulated time and stretches
the Slinky along the floor, which costs more still. `data/app_floor_drag.csv` is the
grab target's path, in simulated time, of one such run; this script lets the
`hanging-steel` Slinky go at 0.4 s, lands it, grabs its far end where the path starts
and moves the target along it, and prints the real-time factor of each 0.4 s of
simulated time: single-threaded, no window, so the solve's own cost.

    python benchmarks/bench_drag_replay.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

from slinky3d.dynamics.solver import warm_up
from slinky3d.runtime.simulation import Simulation
from slinky3d.scene.loader import load

PATH = Path(__file__).with_name("data") / "app_floor_drag.csv"
RELEASE_S = 0.4  # simulated s: the app's L
WINDOW_S = 0.4  # simulated s a real-time factor is measured over


def main() -> None:
    path = np.loadtxt(PATH, delimiter=",")
    warm_up()
    sim = Simulation(load("hanging-steel"))
    sim.advance_to(RELEASE_S)
    sim.let_go(0)
    t0 = float(path[0, 0])
    sim.advance_to(t0)  # landed, asleep
    n = sim.snapshot().slinkies[0].N
    sim.grab(0, n, (float(path[0, 1]), float(path[0, 2])))
    rates = []
    wall, start = time.perf_counter(), sim.t
    for t, x, y in path[1:]:
        sim.move_grab(0, (float(x), float(y)))
        if t > sim.t:
            sim.advance_to(float(t))
        if sim.t - start >= WINDOW_S - 1e-12:
            now = time.perf_counter()
            rates.append((start - t0, (sim.t - start) / (now - wall)))
            wall, start = now, sim.t
    for t, r in rates:
        print(f"  {t:4.1f} s: {r:6.2f}x real time")
    rs = np.array([r for _, r in rates])
    print(f"the app's floor drag replayed, {sim.t - t0:.1f} s: worst window {rs.min():.2f}x, "
          f"median {np.median(rs):.2f}x, whole "
          f"{(sim.t - t0) / np.sum(WINDOW_S / rs):.2f}x real time")


if __name__ == "__main__":
    main()
