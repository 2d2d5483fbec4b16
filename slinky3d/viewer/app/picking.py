"""Mouse picking (numpy, no GL): which end point is under the cursor, and where the cursor
is: on the plane z = 0 (the plane a Slinky moves in on the planar solver), or, on the
3D solver, on the plane through the grabbed point that faces the camera.

Pixels are window pixels, x right and y down (row 0 on top), as `OrbitCamera.project`.
"""

from __future__ import annotations

import numpy as np

from slinky3d.runtime.snapshot import Snapshot
from slinky3d.viewer.camera import OrbitCamera
from slinky3d.viewer.helix import ends3

PICK_RADIUS_PX = 14.0  # how near the cursor an end point must be to be grabbable
HOOP_REACH = 1.2  # or this many hoop radii: the middle of a coil is one radius from its ends
GRAZING = 0.05  # |direction . z| below this: the plane is seen edge-on, the hit unreliable


def on_plane(origin: np.ndarray, direction: np.ndarray, z: float = 0.0) -> np.ndarray | None:
    """(x, y) where the ray meets the plane at height z, or None if it misses (parallel,
    grazing, or behind the origin)."""
    dz = float(direction[2])
    if abs(dz) < GRAZING:
        return None
    s = (z - float(origin[2])) / dz
    if s <= 0.0:
        return None
    return np.asarray(origin[:2] + s * direction[:2], float)


def cursor_point(cam: OrbitCamera, x: float, y: float, size: tuple[int, int],
                 box: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The point on z = 0 under the cursor, clamped into `box` ((lo, hi): its x and y).

    Seen edge-on, the plane gives no good hit: the point is then taken on the plane
    through the camera's target that faces the camera, with its z dropped. Always
    finite, whatever the cursor does (off the window, huge jumps).
    """
    # far off the window the plane point is clamped anyway: keep the ray's numbers sane
    x = float(np.clip(np.nan_to_num(x, nan=0.5 * size[0]), -10 * size[0], 11 * size[0]))
    y = float(np.clip(np.nan_to_num(y, nan=0.5 * size[1]), -10 * size[1], 11 * size[1]))
    origin, d = cam.ray(x, y, *size)
    p = on_plane(origin, d)
    if p is None or not np.all(np.isfinite(p)):
        p = (origin + _to_facing(cam, origin, d, cam.target) * d)[:2]
    lo, hi = box
    return np.clip(p, lo[:2], hi[:2])


def nearest_point(snap: Snapshot, cam: OrbitCamera, x: float, y: float,
                  size: tuple[int, int], radius_px: float = PICK_RADIUS_PX
                  ) -> tuple[int, int] | None:
    """(Slinky index, end point index) of the end point nearest the cursor on screen;
    any half hoop's end point counts. A point is within reach up to radius_px, or up
    to HOOP_REACH hoop radii on screen where the hoops look bigger than that, so that a
    click anywhere on a coil takes hold of it. None when no point is in reach."""
    right = cam.basis()[0]
    best: tuple[float, int, int] | None = None
    for i, sl in enumerate(snap.slinkies):
        pts = ends3(sl)
        px = cam.project(pts, *size)
        hoop = np.linalg.norm(cam.project(pts + sl.R * right, *size) - px, axis=1)
        d2 = np.sum((px - [x, y]) ** 2, axis=1)
        d2[d2 > np.maximum(radius_px, HOOP_REACH * hoop) ** 2] = np.inf
        k = int(np.argmin(d2))
        if np.isfinite(d2[k]) and (best is None or d2[k] < best[0]):
            best = (float(d2[k]), i, k)
    return None if best is None else (best[1], best[2])


def facing_point(cam: OrbitCamera, x: float, y: float, size: tuple[int, int],
                 through: np.ndarray, box: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The point under the cursor on the plane through `through` that faces the camera
    (its normal the camera's backward axis), clamped into `box` ((lo, hi), 3D): a drag
    moves a grabbed point across the screen at the depth it has, so that after
    orbiting a quarter turn the same drag moves it along what was depth. Always finite,
    whatever the cursor does."""
    x = float(np.clip(np.nan_to_num(x, nan=0.5 * size[0]), -10 * size[0], 11 * size[0]))
    y = float(np.clip(np.nan_to_num(y, nan=0.5 * size[1]), -10 * size[1], 11 * size[1]))
    origin, d = cam.ray(x, y, *size)
    p = origin + max(_to_facing(cam, origin, d, through), 0.0) * d
    lo, hi = box
    return np.clip(p, lo, hi)


def _to_facing(cam: OrbitCamera, origin: np.ndarray, d: np.ndarray, through) -> float:
    """How far along the ray (origin, d) it meets the plane through `through` facing
    the camera (0 where it runs along it)."""
    _, _, back = cam.basis()
    denom = float(d @ back)  # < 0: the ray leaves the eye against its backward axis
    gap = float((np.asarray(through, float) - origin) @ back)
    return gap / denom if denom < -1e-9 else 0.0


def along_view(cam: OrbitCamera, point: np.ndarray, pixels: float, height: int,
               box: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """`point` moved away from the camera (pixels > 0) or towards it, a pixel of the
    drag the size of a pixel at the point's depth (the camera's target's, orthographic),
    clamped into `box`: Shift+drag and the wheel while holding."""
    right, up, back = cam.basis()
    depth = float((cam.eye() - np.asarray(point, float)) @ back)
    if cam.ortho or depth <= 0.0:
        depth = cam.distance
    per_px = 2.0 * depth * np.tan(np.radians(cam.fov_deg) / 2) / max(height, 1)
    lo, hi = box
    return np.clip(np.asarray(point, float) - back * pixels * per_px, lo, hi)


def scene_box(snap: Snapshot, margin: float) -> tuple[np.ndarray, np.ndarray]:
    """The sane region for grab targets: the Slinkies' extent grown by `margin` (m), in
    3D (a planar target keeps its x and y)."""
    pts = np.concatenate([ends3(sl) for sl in snap.slinkies])
    return pts.min(axis=0) - margin, pts.max(axis=0) + margin
