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
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

import report  # benchmarks/report.py, beside this file

from slinky3d.model import chain
from slinky3d.model.params import preset
from slinky3d.model.static_shape import both_ends, hanging, residuals

PAPER = {"1P": ("plastic", -5, 0), "2P": ("plastic", -10, 0), "3P": ("plastic", -2, 5),
         "4S": ("steel", -2, 5)}


def best_of(f: Callable[[], np.ndarray], n: int = 3) -> tuple[np.ndarray, float]:
    """f's result and its best time over n runs, s."""
    times = []
    for _ in range(n):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return out, min(times)


def main() -> None:
    hanging_rows: list[dict[str, Any]] = []
    print("hanging       N  length (m)  collapsed joints (coils)  time (s)  KKT residual")
    for name in ("plastic", "steel"):
        p = preset(name)
        q, dt = best_of(partial(hanging, p))
        E = chain.end_points(q, p.R)
        r = residuals(p, q, far_held=False)
        n, length = r["n_collapsed"], float(q[1] - E[:, 1].min())
        print(f"{name:8s}  {p.N:5d}  {length:10.4f}  {n:7d} ({n / 2:4.1f})"
              f"              {dt:8.3f}  {r['stationarity']:.1e}")
        hanging_rows.append({"preset": name, "N": p.N, "length_m": round(length, 4),
                             "collapsed_joints": int(n), "time_s": round(dt, 3),
                             "kkt_residual": float(f"{r['stationarity']:.1e}")})
    both_rows: list[dict[str, Any]] = []
    print("\nboth ends     N  far (R)   phi_B  collapsed  time (s)  far error (m)  KKT residual"
          "  winding/pi")
    cases = [(k, *v, math.pi) for k, v in PAPER.items()]
    cases += [("fan P", "plastic", -5, 0, 0.0), ("fan S", "steel", -5, 0, 0.0)]
    for label, name, dx, dy, phi_B in cases:
        p = preset(name)
        far = np.array([dx * p.R, dy * p.R])
        q, dt = best_of(partial(both_ends, p, far=far, phi_B=phi_B))
        r = residuals(p, q, far_held=True, far=far, phi_B=phi_B)
        print(f"{label:8s}  {p.N:5d}  ({dx:3d},{dy:2d})  {phi_B:5.2f}  {r['n_collapsed']:9d}"
              f"  {dt:8.3f}  {r['far_error']:13.1e}  {r['stationarity']:12.1e}"
              f"  {r['winding'] / math.pi:10.3f}")
        both_rows.append({"case": label, "N": p.N, "far_R": f"({dx}, {dy})",
                          "phi_B": round(phi_B, 2), "collapsed_joints": int(r["n_collapsed"]),
                          "time_s": round(dt, 3),
                          "far_error_m": float(f"{r['far_error']:.1e}"),
                          "kkt_residual": float(f"{r['stationarity']:.1e}"),
                          "winding_over_pi": round(r["winding"] / math.pi, 3) + 0.0})
    report.write("hanging_lengths", {"hanging": hanging_rows, "both_ends": both_rows})


if __name__ == "__main__":
    main()
