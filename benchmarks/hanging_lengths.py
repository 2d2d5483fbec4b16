"""Print the static shapes' key figures and how long each takes to compute.

    python benchmarks/hanging_lengths.py

Hanging: length from the anchor down to the lowest end point, collapsed joints (two
per coil). Both ends held: the paper's set-ups (docs/model.md section 7). Times are the best of
three runs (the machine may be shared).
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

from slinky3d.model import chain  # noqa: E402
from slinky3d.model.params import preset
from slinky3d.model.static_shape import both_ends, hanging, residuals

PAPER = {"1P": ("plastic", -5, 0), "2P": ("plastic", -10, 0), "3P": ("plastic", -2, 5),
         "4S": ("steel", -2, 5)}


def best_of(f, n: int = 3):
    times, out = [], None
    for _ in range(n):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return out, min(times)


def main() -> None:
    print("hanging       N  length (m)  collapsed joints (coils)  time (s)  KKT residual")
    for name in ("plastic", "steel"):
        p = preset(name)
        q, dt = best_of(lambda p=p: hanging(p))
        E = chain.end_points(q, p.R)
        r = residuals(p, q, far_held=False)
        n = r["n_collapsed"]
        print(f"{name:8s}  {p.N:5d}  {q[1] - E[:, 1].min():10.4f}  {n:7d} ({n / 2:4.1f})"
              f"              {dt:8.3f}  {r['stationarity']:.1e}")
    print("\nboth ends     N  far (R)   phi_B  collapsed  time (s)  far error (m)  KKT residual"
          "  winding/pi")
    cases = [(k, *v, math.pi) for k, v in PAPER.items()]
    cases += [("fan P", "plastic", -5, 0, 0.0), ("fan S", "steel", -5, 0, 0.0)]
    for label, name, dx, dy, phi_B in cases:
        p = preset(name)
        far = np.array([dx * p.R, dy * p.R])
        q, dt = best_of(lambda p=p, far=far, phi_B=phi_B: both_ends(p, far=far, phi_B=phi_B))
        r = residuals(p, q, far_held=True, far=far, phi_B=phi_B)
        print(f"{label:8s}  {p.N:5d}  ({dx:3d},{dy:2d})  {phi_B:5.2f}  {r['n_collapsed']:9d}"
              f"  {dt:8.3f}  {r['far_error']:13.1e}  {r['stationarity']:12.1e}"
              f"  {r['winding'] / math.pi:10.3f}")


if __name__ == "__main__":
    main()
