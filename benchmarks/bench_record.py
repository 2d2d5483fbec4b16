"""Recording speed and memory of `slinky3d record` (headless, H.264 MP4).

Each case films the plastic Slinky's drop (drop-plastic) in 4x slow motion, in a fresh
process so that its peak memory is its own. It first films the clip bare (drawn and read
back as the recording reads it, the GL's RGBA rows, the frames dropped: the render's own cost),
then records it to an MP4 (the encoder in a process of its own, overlapping the rendering),
REPEATS times each, alternated: the median wall time per frame of both and their ratio
(the target: record at most 1.3x the bare render). Then, from one more recording: frames
per second of wall time, how fast against real time (seconds of film per wall second),
the share of the time the encoder takes, the peak resident memory (RSS) of the film's
process and of the encoder's (forked from it: most of its pages are the film's), the
most the resident memory rose over the second half of the clip (both processes), and the
peak of Python's own allocations (tracemalloc: numpy frames included, the GL driver's
buffers not). Each size
is filmed at every length of --lengths; the peak RSS at the shortest and the longest
shows whether memory grows with the clip's length (it must not: frames are streamed).

    python benchmarks/bench_record.py [--lengths 2 4] [--sizes 1280x720@30 1920x1080@60]
                                      [--quality auto] [--results DIR]

e.g. `--lengths 2 10` for a longer comparison; `--sizes 160x96@10 --lengths 0.5 1
--results /tmp/r` for a smoke run that leaves the committed figures alone.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

import report  # benchmarks/report.py, beside this file

from slinky3d.output.video import GL_ROWS

SCENE = "drop-plastic"
SLOWMO = 4.0
SIZES = ["1280x720@30", "1920x1080@60"]  # WxH@FPS: the target's and the one reported
LENGTHS = [2.0, 4.0]  # seconds of film
REPEATS = 3  # bare and recorded films of each case, alternated: their medians compared


def rss_mib() -> float:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class Drop:
    """A sink that drops the frames: the bare render's film. It takes the pixels an MP4
    takes (the GL's rows, which the MP4's writer converts), so that the bare film is
    read back as the recording is."""

    pixels = GL_ROWS

    def write(self, frame: Any) -> None:
        pass

    def close(self) -> None:
        pass


class Meter:
    """A sink around the video writer, in the encoder's process: times the encoder and
    samples that process's RSS per frame; at close it leaves its figures in `path` as
    JSON for the bench's process to read."""

    pixels = GL_ROWS  # as the writer's: the MP4 is still filmed alone, in its process

    def __init__(self, inner: Any, path: Path):
        self.inner, self.path = inner, path
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
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        self.path.write_text(json.dumps({"encode": self.encode, "rss": self.rss,
                                         "peak": peak}))


def rise(rss: list[float]) -> float:
    """The most `rss` rose over its second half above its value halfway."""
    mid = len(rss) // 2
    return max(rss[mid:]) - rss[mid] if rss else 0.0


class RssSampler:
    """This process's RSS sampled every few ms on a thread while a film is made."""

    def __init__(self) -> None:
        self.rss: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.005):
            self.rss.append(rss_mib())

    def stop(self) -> list[float]:
        self._stop.set()
        self._thread.join()
        return self.rss


def one(w: int, h: int, fps: int, seconds: float, quality: str) -> dict[str, Any]:
    """One case, in this process."""
    from slinky3d.output.video import VideoWriter
    from slinky3d.scene.loader import load
    from slinky3d.viewer.film.filming import Shot, film

    sc = load(SCENE)
    shot = Shot(size=(w, h), fps=fps, slowmo=SLOWMO, quality=quality)
    bare_ms, record_ms = [], []
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "film.mp4"
        for _ in range(REPEATS):  # alternated, so that the machine's load hits both
            b = film(sc, seconds / SLOWMO, shot, lambda: [Drop()])
            bare_ms.append(1e3 * b["wall"] / b["frames"])
            r = film(sc, seconds / SLOWMO, shot, lambda: [VideoWriter(out, (w, h), fps)])
            record_ms.append(1e3 * r["wall"] / r["frames"])
        figures = Path(d) / "encoder.json"

        def sinks() -> list[Any]:
            return [Meter(VideoWriter(out, (w, h), fps), figures)]

        tracemalloc.start()
        cpu0 = time.process_time()
        kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        sampler = RssSampler()
        stats = film(sc, seconds / SLOWMO, shot, sinks)
        rss = sampler.stop()
        kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        # the bench's process and the encoder's (a child, waited for at the film's end)
        cpu = time.process_time() - cpu0 + (kids1.ru_utime - kids0.ru_utime) + (
            kids1.ru_stime - kids0.ru_stime)
        py_peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        size = out.stat().st_size
        m = json.loads(figures.read_text())
    n, wall = stats["frames"], stats["wall"]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "size": f"{w}x{h}", "fps": fps, "clip_s": n / fps, "frames": n,
        "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
        "bare_ms_per_frame": round(statistics.median(bare_ms), 2),
        "record_ms_per_frame": round(statistics.median(record_ms), 2),
        "record_over_bare": round(statistics.median(record_ms) / statistics.median(bare_ms),
                                  3),
        "frames_per_s": round(n / wall, 2), "x_real_time": round(n / fps / wall, 3),
        "encode_share": round(m["encode"] / wall, 3),
        # the film's (drawing) process; the encoder's, forked from it, shares most of
        # its pages (counted in both), so it is given apart
        "peak_rss_mib": round(peak, 1),
        "encoder_peak_rss_mib": round(m["peak"], 1),
        # the most each process's RSS rose over the clip's second half (the film's
        # process frees the frames' shared memory as it closes: its last sample is lower)
        "rss_growth_mib": round(rise(rss) + rise(m["rss"]), 1),
        "python_peak_mib": round(py_peak, 1), "file_kib": round(size / 1024),
        "renderer": stats["renderer"],
    }


def size_at_fps(text: str) -> tuple[int, int, int]:
    """"WxH@FPS" as (w, h, fps)."""
    try:
        size, fps = text.split("@")
        w, h = size.lower().split("x")
        return int(w), int(h), int(fps)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected WxH@FPS, e.g. 1280x720@30, got {text!r}") from None


def memory_growth(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One size's peak RSS at its shortest and longest clip, and the difference."""
    short, long = rows[0], rows[-1]
    growth = long["peak_rss_mib"] - short["peak_rss_mib"]
    return {"size": short["size"], "fps": short["fps"],
            "short_clip_s": short["clip_s"], "short_peak_rss_mib": short["peak_rss_mib"],
            "long_clip_s": long["clip_s"], "long_peak_rss_mib": long["peak_rss_mib"],
            "growth_mib": round(growth, 1),
            "growth_percent": round(100 * growth / short["peak_rss_mib"], 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lengths", nargs="+", type=float, default=LENGTHS, metavar="S",
                    help="clip lengths, seconds of film, each size filmed at each "
                    f"(default {' '.join(f'{x:g}' for x in LENGTHS)})")
    ap.add_argument("--sizes", nargs="+", type=size_at_fps, default=None,
                    metavar="WxH@FPS", help=f"(default {' '.join(SIZES)})")
    ap.add_argument("--quality", default="auto")
    ap.add_argument("--results", type=Path, default=None,
                    help="folder of the JSON (default benchmarks/results)")
    ap.add_argument("--one", nargs=4, type=float, help=argparse.SUPPRESS)  # a child
    args = ap.parse_args()
    if args.one:
        w, h, fps, seconds = args.one
        print(json.dumps(one(int(w), int(h), int(fps), seconds, args.quality)))
        return
    lengths = sorted(args.lengths)
    if len(lengths) < 2 or lengths[0] <= 0:
        ap.error("--lengths: give at least two positive clip lengths, to compare memory")
    sizes = args.sizes or [size_at_fps(x) for x in SIZES]
    rows, memory = [], []
    for w, h, fps in sizes:
        mine = []
        for seconds in lengths:
            res = subprocess.run([sys.executable, __file__, "--quality", args.quality,
                                  "--one", str(w), str(h), str(fps), str(seconds)],
                                 capture_output=True, text=True, check=True)
            row = json.loads(res.stdout.strip().splitlines()[-1])
            mine.append(row)
            print(f"{row['size']:>9} {row['fps']:3d} fps, {row['clip_s']:5.1f} s of film: "
                  f"bare render {row['bare_ms_per_frame']:.1f} ms/frame, record "
                  f"{row['record_ms_per_frame']:.1f} ms/frame: record/bare "
                  f"{row['record_over_bare']:.2f}x (target <= 1.3x)", flush=True)
            print(f"{row['size']:>9} {row['fps']:3d} fps, {row['clip_s']:5.1f} s of film: "
                  f"{row['frames_per_s']:6.2f} frames/s = {row['x_real_time']:5.2f}x real "
                  f"time (encoder {100 * row['encode_share']:.0f} %), peak RSS "
                  f"{row['peak_rss_mib']:.0f} MiB (the encoder's "
                  f"{row['encoder_peak_rss_mib']:.0f} MiB, shared mostly; growth over the "
                  f"clip's 2nd half "
                  f"{row['rss_growth_mib']:+.1f} MiB), python peak "
                  f"{row['python_peak_mib']:.1f} MiB", flush=True)
        m = memory_growth(mine)
        print(f"{m['size']:>9} {m['fps']:3d} fps, memory against the clip's length: peak "
              f"RSS {m['short_peak_rss_mib']:.1f} MiB at {m['short_clip_s']:g} s of film, "
              f"{m['long_peak_rss_mib']:.1f} MiB at {m['long_clip_s']:g} s: growth "
              f"{m['growth_mib']:+.1f} MiB ({m['growth_percent']:+.1f} %) for "
              f"{m['long_clip_s'] / m['short_clip_s']:.3g}x the film", flush=True)
        rows += mine
        memory.append(m)
    print(f"renderer: {rows[0]['renderer']}")
    report.write("bench_record", {"scene": SCENE, "slowmo": SLOWMO, "cases": rows,
                                  "memory_against_length": memory}, args.results)


if __name__ == "__main__":
    main()
