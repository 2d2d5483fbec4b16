"""The viewer's headless job `screenshot` (one frame to a PNG), and what every job of the
viewer shares: its options (--size, --camera, --at) and the check for a display.
slinky3d.cli declares the options and calls the jobs; the window's jobs are
app/play.py's."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from slinky3d.dynamics.engine3d import warm_up as warm_up3d
from slinky3d.dynamics.solver import warm_up
from slinky3d.engines import THREE_D
from slinky3d.errors import SceneError, SlinkyError, note
from slinky3d.output.paths import cannot_write, check_output
from slinky3d.runtime.simulation import Simulation
from slinky3d.runtime.snapshot import Snapshot
from slinky3d.scene.loader import load
from slinky3d.scene.look import CAMERA_MODES, CameraHint, Look, merge_camera, parse_camera
from slinky3d.scene.reach import lowest, reach_of
from slinky3d.scene.spec import Scene
from slinky3d.viewer.camera import frame_snapshots
from slinky3d.viewer.director import FIXED, Director
from slinky3d.viewer.gl.context import headless_context
from slinky3d.viewer.gl.quality import AUTO
from slinky3d.viewer.gl.renderer import Renderer
from slinky3d.viewer.stage import stage_for

# Short spellings accepted on the command line for the [camera] keys.
CAMERA_ALIASES = {"yaw": "yaw_deg", "pitch": "pitch_deg", "fov": "fov_deg"}
PNG = ".png"  # what `screenshot` writes


def parse_size(text: str) -> tuple[int, int]:
    """'1280x720' -> (1280, 720); anything else is a one-line error."""
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not m:
        raise SlinkyError(f"--size: expected WIDTHxHEIGHT such as 1280x720, got {text!r}")
    w, h = int(m.group(1)), int(m.group(2))
    if not (16 <= w <= 8192 and 16 <= h <= 8192):
        raise SlinkyError(f"--size: width and height must be 16 to 8192 pixels, got {w}x{h}")
    return w, h


def parse_camera_option(text: str) -> CameraHint:
    """'follow,yaw=30,distance=1.5,target=0:-0.4:0' -> CameraHint, validated like
    [camera]; a mode (CAMERA_MODES) may be given alone, as `mode=` needs not be."""
    table: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        key = CAMERA_ALIASES.get(key.strip(), key.strip())
        if not eq and key in CAMERA_MODES:
            key, eq, value = "mode", "=", key
        if key == "mode" and eq:
            table[key] = value.strip()
            continue
        if not eq or not key:
            raise SlinkyError(f"--camera: expected {'|'.join(CAMERA_MODES)} or KEY=VALUE, "
                              f"got {part!r}")
        try:
            nums = [float(v) for v in value.split(":")]
        except ValueError:
            raise SlinkyError(f"--camera: {key}: expected a number, got {value!r}") from None
        table[key] = nums if key == "target" else (nums[0] if len(nums) == 1 else nums)
    try:
        return parse_camera(table, "--camera")
    except SceneError as e:
        raise SlinkyError(str(e)) from None


def parse_time(text: str) -> float:
    try:
        t = float(text)
    except ValueError:
        raise SlinkyError(f"--time: expected seconds, got {text!r}") from None
    if not math.isfinite(t) or t < 0:
        raise SlinkyError(f"--time: must be a finite time >= 0 s, got {text!r}")
    return t


def look_and_hint(sc: Scene, args: argparse.Namespace) -> tuple[Look, CameraHint]:
    """The scene's look, and its camera hint with --camera's keys over it."""
    return sc.look, merge_camera(sc.camera, parse_camera_option(args.camera))


def screenshot(args: argparse.Namespace) -> int:
    """`slinky3d screenshot`: simulate up to --time, render one frame, write the PNG."""
    size = parse_size(args.size)
    t = parse_time(args.time)
    parse_camera_option(args.camera)  # fail fast, before simulating
    sc = load(args.scene, args.set)
    out = args.out or Path(Path(sc.path or args.scene).stem + PNG)
    check_output(out, "--out", (PNG,), "image")  # before the simulation
    warm_up(note)
    if sc.solver == THREE_D:
        warm_up3d(note)
    sim = Simulation(sc)
    first = sim.snapshot()
    if t > 0:
        sim.advance_to(t)
    snap = sim.snapshot()
    look, hint = look_and_hint(sc, args)
    img, info = render_image(snap, look, hint, size, args.quality, first=first,
                             reach=reach_of(sc))
    try:
        Image.fromarray(img).save(out)
    except OSError as e:
        raise cannot_write("--out", out, e) from None
    print(f"wrote {out} ({size[0]}x{size[1]}, t = {snap.t:.3f} s, {info})")
    return 0


def render_image(snap: Snapshot, look: Look, hint: CameraHint, size: tuple[int, int],
                 quality: str = AUTO, first: Snapshot | None = None,
                 reach: tuple[float | None, float | None] = (None, None)
                 ) -> tuple[np.ndarray, str]:
    """One headless frame as (h, w, 3) uint8, and a short description of the renderer.

    The floor comes from `first` (the run's first snapshot). The fixed camera (the
    hint's mode, by default) is framed on `first` and keeps `snap` in view, so shots at
    different times of one scene line up; following (viewer/director.py), it frames
    `snap` as the follow camera settles on it, at the fixed camera's angles.
    """
    first = first or snap
    ctx = headless_context()
    try:
        r = Renderer(ctx, size, quality=quality)
        stage = stage_for(look, first, lowest(*reach))
        cam = frame_snapshots((first, snap), size, hint, stage)
        if (hint.mode or FIXED) != FIXED:
            cam = Director(hint.mode or FIXED, cam, size,
                           stage.floor_y if look.floor else None).start(snap)
        r.render(snap, look, cam, stage)
        img = r.read()
        return img, f"{ctx.info['GL_RENDERER']}, quality {r.quality.name}"
    finally:
        ctx.release()


def has_display() -> bool:
    """Whether a window can open at all (X11 or Wayland on Linux; always elsewhere)."""
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def need_display() -> None:
    """A clear line when no window can open (before anything is loaded)."""
    if not has_display():
        raise SlinkyError(f"cannot open a window (no display); {HEADLESS_HINT}")


HEADLESS_HINT = ("without a display use the headless jobs: `slinky3d screenshot SCENE` "
                 "(a PNG), `slinky3d record SCENE --out FILM.mp4` (a film), "
                 "`slinky3d simulate SCENE` (a recording), `slinky3d figure SCENE`")
