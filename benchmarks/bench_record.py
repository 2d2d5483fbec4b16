"""Recording speed and memory of `slinky3d record` (headless, H.264 MP4).

Each case films the plastic Slinky's drop (drop-plastic) in 4x slow motion, in a fresh
process so that its peak memory is its own: frames per second of wall time, how
fast against real time (seconds of film per wall second), the share of the time the
encoder takes, the peak resident memory (RSS), the resident memory's growth over the
second half of the clip, and the peak of Python's own allocations (tracemalloc: numpy
frames included, the GL driver's buffers not). A clip twice as long shows whether
memory grows with the clip's length (it must not: frames are streamed).

    python benchmarks/bench_record.py [--seconds 2] [--quality auto]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

import report  # benchmarks/report.py, beside this file

SCENE = "drop-plastic"
SLOWMO = 4.0
CASES = [  # (width, height, fps, clip seconds as a multiple of --seconds)
    (1280, 720, 30, 1), (1280, 720, 30, 2), (1920, 1080, 60, 1), (1920, 1080, 60, 2)]


def rss_mib() -> float:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class Meter:
    """A sink around the video writer: times the encoder and samples the RSS per frame."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.encode = 0.0
        self.rss: list[float] = []

    def write(self, frame: Any) -> None:
        t = time.perf_counter()
        self.inner.write(frame)
        self.encode += time.perf_counter() - t
        self.rss.append(rss_mib())

    def close(self) -> None:
        t = time.perf_counter()
        self.inner.close()
        self.encode += time.perf_counter() - t


def one(w: int, h: int, fps: int, seconds: float, quality: str) -> dict[str, Any]:
    """One case, in this process."""
    from slinky3d.output.video import VideoWriter
    from slinky3d.scene.loader import load
    from slinky3d.viewer.filming import Shot, film

    sc = load(SCENE)
    shot = Shot(size=(w, h), fps=fps, slowmo=SLOWMO, quality=quality)
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "film.mp4"
        meter: list[Meter] = []

        def sinks() -> list[Any]:
            meter.append(Meter(VideoWriter(out, (w, h), fps)))
            return meter

        tracemalloc.start()
        cpu0 = time.process_time()
        stats = film(sc, seconds / SLOWMO, shot, sinks)
        cpu = time.process_time() - cpu0
        py_peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        size = out.stat().st_size
    m = meter[0]
    n, wall = stats["frames"], stats["wall"]
    return {
        "size": f"{w}x{h}", "fps": fps, "clip_s": n / fps, "frames": n,
        "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
        "frames_per_s": round(n / wall, 2), "x_real_time": round(n / fps / wall, 3),
        "encode_share": round(m.encode / wall, 3),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "rss_growth_mib": round(m.rss[-1] - m.rss[len(m.rss) // 2], 1),
        "python_peak_mib": round(py_peak, 1), "file_kib": round(size / 1024),
        "renderer": stats["renderer"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=2.0, help="clip length of the short "
                    "cases, s of film (the long ones are twice as long)")
    ap.add_argument("--quality", default="auto")
    ap.add_argument("--one", nargs=4, type=float, help=argparse.SUPPRESS)  # a child
    args = ap.parse_args()
    if args.one:
        w, h, fps, seconds = args.one
        print(json.dumps(one(int(w), int(h), int(fps), seconds, args.quality)))
        return
    rows = []
    for w, h, fps, mult in CASES:
        seconds = args.seconds * mult
        res = subprocess.run([sys.executable, __file__, "--quality", args.quality, "--one",
                              str(w), str(h), str(fps), str(seconds)],
                             capture_output=True, text=True, check=True)
        row = json.loads(res.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(f"{row['size']:>9} {row['fps']:3d} fps, {row['clip_s']:5.1f} s of film: "
              f"{row['frames_per_s']:6.2f} frames/s = {row['x_real_time']:5.2f}x real time "
              f"(encoder {100 * row['encode_share']:.0f} %), peak RSS "
              f"{row['peak_rss_mib']:.0f} MiB, growth {row['rss_growth_mib']:+.1f} MiB, "
              f"python peak {row['python_peak_mib']:.1f} MiB", flush=True)
    print(f"renderer: {rows[0]['renderer']}")
    report.write("bench_record", {"scene": SCENE, "slowmo": SLOWMO, "cases": rows})


if __name__ == "__main__":
    main()
