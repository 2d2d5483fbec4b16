"""The stairs scenes: steps walked by themselves and how fast the solver runs them.

Runs each scene headless for its duration (or --seconds), as one point of a sweep
(`slinky3d.output.sweep.run_point`: the same measure of the walk as the walking map),
several times, and prints the steps walked, the flips, roll-backs and the real-time
factor (median and range over the repeats). The app runs the solver in a thread of its
own beside the renderer, so a factor above 1 here is what "real time in the app" needs.

    python benchmarks/bench_stairs.py [--repeat 3] [--seconds T] [--scenes stairs ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

import report  # benchmarks/report.py, beside this file

from slinky3d.output.sweep import Point, run_point
from slinky3d.resources import scene_path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=None, help="simulated time (s)")
    ap.add_argument("--scenes", nargs="+", default=["stairs", "stairs-steel"])
    args = ap.parse_args()
    figures = {}
    for name in args.scenes:
        path = scene_path(name)
        point = Point(index=0, values=(), overrides=(), scene_text=path.read_text("utf-8"),
                      scene_where=str(path), scene_stem=path.stem, duration=args.seconds,
                      fps=100.0, tol=0.01, dwell=0.05)
        runs = [run_point(point) for _ in range(args.repeat)]
        o = runs[0]
        if any(r.state_hash != o.state_hash for r in runs):
            raise SystemExit(f"{name}: repeats differ: the solver is not deterministic")
        rtf = sorted(r.real_time_factor or 0.0 for r in runs)
        row = {"steps_walked": o.steps_walked, "flips": o.flips, "rollbacks": o.rollbacks,
               "simulated_s": o.final_time, "status": o.status,
               "real_time_factor_median": statistics.median(rtf),
               "real_time_factor_min": rtf[0], "real_time_factor_max": rtf[-1]}
        figures[name] = row
        print(f"{name}: {o.steps_walked} steps walked, {o.flips} flips in "
              f"{o.final_time:.1f} s simulated ({o.status}); real-time factor "
              f"{row['real_time_factor_median']:.2f} (range {rtf[0]:.2f}-{rtf[-1]:.2f}, "
              f"{len(runs)} runs)")
    report.write("bench_stairs", {"repeats": args.repeat, "scenes": figures})


if __name__ == "__main__":
    main()
