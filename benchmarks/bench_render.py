"""Frame time of the renderer at 1280x720 with the steel Slinky (N = 157), headless.

For each quality preset: the median frame time (shadow pass, scene, anti-aliasing,
up to ctx.finish) over many frames, with a Slinky that changes shape every frame
under a still camera (playback) and under an orbiting one (the backdrop is redrawn),
plus the numpy-extrusion path for comparison with the instanced GPU extrusion, and
each at the scales of --scales (dynamic resolution: drawn smaller, stretched back). The
machine may be shared: medians, the process CPU time beside the wall time, and a
calibration frame (a bare lit instanced helix of 60k triangles, which the issue puts
at about 7 ms on an idle machine) measured in the same run, to show how busy it is.
On a shared machine, `nice -n -10` (as root) gets closer to the idle figures.

    python benchmarks/bench_render.py [--frames 60] [--size 1280x720] [--numpy]
                                      [--presets software,gpu] [--scales 1,0.5]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import moderngl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

import report  # benchmarks/report.py, beside this file

from slinky3d.runtime.simulation import Simulation
from slinky3d.runtime.snapshot import Snapshot
from slinky3d.scene.loader import load
from slinky3d.scene.look import Look
from slinky3d.viewer.camera import OrbitCamera, frame_snapshot
from slinky3d.viewer.colour import LIGHT_DIR
from slinky3d.viewer.gl.context import headless_context
from slinky3d.viewer.gl.quality import QUALITY
from slinky3d.viewer.gl.renderer import Renderer
from slinky3d.viewer.stage import stage_for


def steel_snapshots() -> list[Snapshot]:
    """Two snapshots of the steel Slinky hanging at rest: the shipped scene's static
    shape, and a few solver steps later (a shape that changes every frame)."""
    sim = Simulation(load("hanging-steel"))
    first = sim.snapshot()
    sim.step(5)
    return [first, sim.snapshot()]


@dataclass
class Setup:
    """One (quality, extrusion, scale) set-up under measurement: its renderer, camera and
    times."""

    quality: str
    extrusion: str
    scale: float
    renderer: Renderer
    camera: OrbitCamera
    wall: list[float] = field(default_factory=list)  # ms per frame
    cpu: list[float] = field(default_factory=list)  # ms of process CPU time per frame

    def figures(self, snap: Snapshot) -> dict[str, Any]:
        q, tri = self.renderer.quality, self.renderer.triangles(snap)
        w = sorted(self.wall)
        return {
            "quality": self.quality, "extrusion": self.extrusion, "scale": self.scale,
            "median_ms": round(statistics.median(w), 2), "p10_ms": round(w[len(w) // 10], 2),
            "cpu_median_ms": round(statistics.median(self.cpu), 2),
            "antialiasing": f"MSAA {q.samples}x" if q.samples else ("FXAA" if q.fxaa else "none"),
            "shadow_map": q.shadow_size,
            "segments": tri["main"] // (snap.slinkies[0].N * 8), "max_segments": q.segments,
            "helix_triangles": tri["main"], "shadow_triangles": tri["shadow"],
        }


def measure(ctx: moderngl.Context, configs: list[tuple[str, str, float]], size: tuple[int, int],
            frames: int, orbit: bool, snaps: list[Snapshot]) -> list[Setup]:
    """Frame times of several (quality, extrusion, scale) set-ups, taken in turn frame by frame
    so that a busy spell on the machine hits them all alike."""
    look = Look()
    stage = stage_for(look, snaps[0])
    setups = [Setup(quality, extrusion, scale, Renderer(ctx, size, quality=quality,
                                                        extrusion=extrusion),
                    frame_snapshot(snaps[0], size, stage=stage))
              for quality, extrusion, scale in configs]
    for i in range(frames + 5):  # the first 5 JIT-compile the shaders, fill caches
        for run in setups:
            if orbit:
                run.camera.yaw += 0.003
            t0, c0 = time.perf_counter(), time.process_time()
            run.renderer.render(snaps[i % 2], look, run.camera, stage, scale=run.scale)
            ctx.finish()
            if i >= 5:
                run.wall.append(1e3 * (time.perf_counter() - t0))
                run.cpu.append(1e3 * (time.process_time() - c0))
    return setups


def still_frame_times(frames: int = 60, size: tuple[int, int] = (1280, 720)) -> list[float]:
    """Wall ms per frame of the software preset under a still camera, the steel Slinky
    changing shape each frame: the frame bench_app.py's --compare holds the app to."""
    ctx = headless_context()
    run = measure(ctx, [("software", "gpu", 1.0)], size, frames, False, steel_snapshots())[0]
    return run.wall


IDLE_CALIBRATION_MS = 7.0  # the figure for the calibration frame on this machine


def calibration(ctx: moderngl.Context, size: tuple[int, int], frames: int,
                snap: Snapshot) -> tuple[float, float]:
    """The issue's yardstick: a bare instanced lit helix of ~60k triangles, no MSAA, no
    shadow, floor or post (about 7 ms on an idle machine). Comparing it with the real
    frame tells how busy the machine is right now."""
    QUALITY["_bare"] = dataclasses.replace(QUALITY["software"], segments=48, fxaa=False)
    try:
        r = Renderer(ctx, size, quality="_bare")
    finally:
        del QUALITY["_bare"]
    cam = frame_snapshot(snap, size)
    common = {"eye": tuple(cam.eye()), "light_dir": tuple(LIGHT_DIR), "pixel_size": 0.0,
              "bg_top_lin": (0.02, 0.03, 0.05), "bg_bottom_lin": (0.25, 0.3, 0.38),
              "floor_lin": (0.38, 0.36, 0.32)}
    vp = cam.view_proj(size[0] / size[1])
    times = []
    for i in range(frames + 5):
        t0 = time.perf_counter()
        r._full.scene.use()
        ctx.enable_only(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        r._full.scene.clear(0.2, 0.3, 0.4, 1.0, depth=1.0)
        r.helices.upload(snap, common["eye"])
        r.helices.draw(snap, Look(), vp, common, depth=False)
        ctx.finish()
        if i >= 5:
            times.append(1e3 * (time.perf_counter() - t0))
    return statistics.median(times), sorted(times)[len(times) // 10]


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--numpy", action="store_true", help="also time the numpy extrusion")
    ap.add_argument("--presets", help=f"comma-separated subset of {', '.join(QUALITY)}")
    ap.add_argument("--scales", default="1,0.5",
                    help="dynamic resolution's scales to time (comma-separated, 0.5 to 1)")
    a = ap.parse_args()
    width, height = (int(v) for v in a.size.split("x"))
    size = (width, height)
    ctx = headless_context()
    snaps = steel_snapshots()
    n = snaps[0].slinkies[0].N
    print(f"GL_RENDERER: {ctx.info['GL_RENDERER']}; {width}x{height}, steel Slinky "
          f"N={n}, {a.frames} frames each")
    cal, cal10 = calibration(ctx, size, a.frames, snaps[0])
    print(f"calibration (bare lit instanced helix, 60288 triangles, no MSAA): median "
          f"{cal:.1f} ms, 10th percentile {cal10:.1f} ms wall (the issue: about "
          f"{IDLE_CALIBRATION_MS:g} ms on an idle machine)")
    presets = a.presets.split(",") if a.presets else list(QUALITY)
    scales = [float(x) for x in a.scales.split(",")]
    configs = [(q, e, s) for q in presets for e in (("gpu", "numpy") if a.numpy else ("gpu",))
               for s in scales]
    frames_out = []
    for orbit in (False, True):
        for run in measure(ctx, configs, size, a.frames, orbit, snaps):
            f = run.figures(snaps[0])
            cam = "orbiting" if orbit else "still"
            frames_out.append({"camera": cam, **f})
            print(f"{f['quality']:8s} {f['extrusion']:5s} extrusion, scale {f['scale']:4.2f}, "
                  f"{cam:8s} camera: median "
                  f"{f['median_ms']:6.1f} ms, 10th percentile {f['p10_ms']:6.1f} ms wall, "
                  f"{f['cpu_median_ms']:6.1f} ms CPU  ({f['antialiasing']}, shadow "
                  f"{f['shadow_map']}, {f['segments']} of at most {f['max_segments']} "
                  f"segments here, {f['helix_triangles']} + {f['shadow_triangles']} helix "
                  "triangles)")
    report.write("bench_render", {
        "renderer": ctx.info["GL_RENDERER"], "size": a.size, "slinky": f"steel, N = {n}",
        "frames": a.frames, "calibration_median_ms": round(cal, 2),
        "calibration_p10_ms": round(cal10, 2), "frame_times": frames_out,
    })


if __name__ == "__main__":
    main()
