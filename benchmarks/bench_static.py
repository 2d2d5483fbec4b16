"""How long the static shapes take as the Slinky grows: N = 157, 2000 and 10000.

    python benchmarks/bench_static.py [--sizes 157,2000,10000]

The steel Slinky (N = 157) cut into N half hoops, same mass, radius, length and
stiffness (what `--set slinky.n_coils=...` does to a scene), hanging from one end and
held at both ends with the far end 5 R to the side (the 1P set-up, phi_B = pi). Each
time is the best of three runs (one for N > 2000: the machine may be shared), with
the KKT residual of the result; both should stay O(N) (docs/model.md section 10).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

import report  # benchmarks/report.py, beside this file

from slinky3d.model.params import preset
from slinky3d.model.static_shape import both_ends, hanging, residuals


def timed(f: Any, repeat: int) -> tuple[np.ndarray, float]:
    """f's result and its best wall time over `repeat` runs, s."""
    best, out = math.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t)
    assert out is not None
    return out, best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="157,2000,10000", help="half hoops N, comma-separated")
    sizes = [int(s) for s in ap.parse_args().sizes.split(",")]
    rows: list[dict[str, Any]] = []
    print("     N  hanging (s)  KKT residual  both ends (s)  KKT residual  far error (m)")
    for n in sizes:
        p = preset("steel", n_coils=n / 2)
        repeat = 3 if n <= 2000 else 1
        qh, th = timed(partial(hanging, p), repeat)
        rh = residuals(p, qh, far_held=False)
        far = np.array([-5 * p.R, 0.0])
        qb, tb = timed(partial(both_ends, p, far=far, phi_B=math.pi), repeat)
        rb = residuals(p, qb, far_held=True, far=far, phi_B=math.pi)
        print(f"{n:6d}  {th:11.3f}  {rh['stationarity']:12.1e}  {tb:13.3f}  "
              f"{rb['stationarity']:12.1e}  {rb['far_error']:13.1e}")
        rows.append({"N": n, "hanging_s": round(th, 3),
                     "hanging_kkt": float(f"{rh['stationarity']:.1e}"),
                     "both_ends_s": round(tb, 3),
                     "both_ends_kkt": float(f"{rb['stationarity']:.1e}"),
                     "far_error_m": float(f"{rb['far_error']:.1e}")})
    report.write("bench_static", {"sizes": rows})


if __name__ == "__main__":
    main()
