"""Frame time of the renderer at 1280x720 with the steel Slinky (N = 157), headless.

For each quality preset: the median frame time (shadow pass, scene, anti-aliasing,
up to ctx.finish) over many frames, with a Slinky that changes shape every frame
under a still camera (playback) and under an orbiting one (the backdrop is redrawn),
plus the numpy-extrusion path for comparison with the instanced GPU extrusion. The
machine may be shared: medians, the process CPU time beside the wall time, and a
calibration frame (a bare lit instanced helix of 60k triangles, which the issue puts
at about 7 ms on an idle machine) measured in the same run, to show how busy it is.
On a shared machine, `nice -n -10` (as root) gets closer to the idle figures.

    python benchmarks/bench_render.py [--frames 60] [--size 1280x720] [--numpy]
                                      [--presets software,gpu]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

import moderngl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

from slinky3d.scene.look import Look
from slinky3d.viewer import geometry as geo
from slinky3d.viewer.gl.quality import LIGHT_DIR, QUALITY, headless_context, stage_for
from slinky3d.viewer.gl.renderer import Renderer, frame_snapshot


def steel_snapshots():
    """Two snapshots of the steel Slinky hanging at rest (the shipped scene's static
    shape, and a few solver steps later), or a synthetic hanging shape without it."""
    try:
        from slinky3d.runtime.simulation import Simulation
        from slinky3d.scene.loader import load

        sim = Simulation(load("hanging-steel"))
        first = sim.snapshot()
        sim.step(5)
        return [first, sim.snapshot()], "hanging-steel scene"
    except Exception as e:  # noqa: BLE001 - the physics side may be missing or broken
        return ([geo.hanging_snapshot("steel", stretch=s) for s in (0.12, 0.125)],
                f"synthetic hanging shape ({type(e).__name__})")


def measure(ctx, configs, size, frames: int, orbit: bool, snaps) -> list[dict]:
    """Frame times of several (quality, extrusion) set-ups, taken in turn frame by frame
    so that a busy spell on the machine hits them all alike."""
    look = Look()
    stage = stage_for(look, snaps[0])
    runs = []
    for quality, extrusion in configs:
        r = Renderer(ctx, size, quality=quality, extrusion=extrusion)
        runs.append({"r": r, "cam": frame_snapshot(snaps[0], size, stage=stage), "wall": [],
                     "cpu": [], "name": (quality, extrusion)})
    for i in range(frames + 5):  # the first 5 JIT-compile the shaders, fill caches
        for run in runs:
            if orbit:
                run["cam"].yaw += 0.003
            t0, c0 = time.perf_counter(), time.process_time()
            run["r"].render(snaps[i % 2], look, run["cam"], stage)
            ctx.finish()
            if i >= 5:
                run["wall"].append(1e3 * (time.perf_counter() - t0))
                run["cpu"].append(1e3 * (time.process_time() - c0))
    for run in runs:
        w = sorted(run["wall"])
        run.update(median=statistics.median(w), p10=w[len(w) // 10], cpu_median=statistics.median(
            run["cpu"]), triangles=run["r"].triangles(snaps[0]), quality=run["r"].quality)
    return runs


IDLE_CALIBRATION_MS = 7.0  # the figure for the calibration frame on this machine


def calibration(ctx, size, frames: int) -> tuple[float, float]:
    """The issue's yardstick: a bare instanced lit helix of ~60k triangles, no MSAA, no
    shadow, floor or post (about 7 ms on an idle machine). Comparing it with the real
    frame tells how busy the machine is right now."""
    QUALITY["_bare"] = dataclasses.replace(QUALITY["software"], segments=48, fxaa=False)
    try:
        r = Renderer(ctx, size, quality="_bare")
    finally:
        del QUALITY["_bare"]
    snap = geo.hanging_snapshot("steel", stretch=0.12)
    cam = frame_snapshot(snap, size)
    common = {"eye": tuple(cam.eye()), "light_dir": tuple(LIGHT_DIR), "pixel_size": 0.0,
              "bg_top_lin": (0.02, 0.03, 0.05), "bg_bottom_lin": (0.25, 0.3, 0.38),
              "floor_lin": (0.38, 0.36, 0.32)}
    vp = cam.view_proj(size[0] / size[1])
    times = []
    for i in range(frames + 5):
        t0 = time.perf_counter()
        r._scene.use()
        ctx.enable_only(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        r._scene.clear(0.2, 0.3, 0.4, 1.0, depth=1.0)
        r._draw_helices(snap, Look(), vp, common, depth=False)
        ctx.finish()
        if i >= 5:
            times.append(1e3 * (time.perf_counter() - t0))
    return statistics.median(times), sorted(times)[len(times) // 10]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--numpy", action="store_true", help="also time the numpy extrusion")
    ap.add_argument("--presets", help=f"comma-separated subset of {', '.join(QUALITY)}")
    a = ap.parse_args()
    size = tuple(int(v) for v in a.size.split("x"))
    ctx = headless_context()
    print(f"GL_RENDERER: {ctx.info['GL_RENDERER']}; {size[0]}x{size[1]}, steel Slinky "
          f"N=157, {a.frames} frames each")
    cal, cal10 = calibration(ctx, size, a.frames)
    print(f"calibration (bare lit instanced helix, 60288 triangles, no MSAA): median "
          f"{cal:.1f} ms, 10th percentile {cal10:.1f} ms wall (the issue: about "
          f"{IDLE_CALIBRATION_MS:g} ms on an idle machine)")
    presets = a.presets.split(",") if a.presets else list(QUALITY)
    configs = [(q, e) for q in presets for e in (("gpu", "numpy") if a.numpy else ("gpu",))]
    snaps, where = steel_snapshots()
    print(f"shape: {where}")
    for orbit in (False, True):
        for m in measure(ctx, configs, size, a.frames, orbit, snaps):
            (quality, extrusion), q, tri = m["name"], m["quality"], m["triangles"]
            aa = f"MSAA {q.samples}x" if q.samples else ("FXAA" if q.fxaa else "none")
            cam = "orbiting" if orbit else "still   "
            print(f"{quality:8s} {extrusion:5s} extrusion, {cam} camera: median "
                  f"{m['median']:6.1f} ms, 10th percentile {m['p10']:6.1f} ms wall, "
                  f"{m['cpu_median']:6.1f} ms CPU  ({aa}, shadow {q.shadow_size}, "
                  f"{tri['main'] // (snaps[0].slinkies[0].N * 8)} of at most {q.segments} "
                  "segments here, "
                  f"{tri['main']} + {tri['shadow']} helix triangles)")


if __name__ == "__main__":
    main()
