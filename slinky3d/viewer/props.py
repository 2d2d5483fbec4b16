"""The props around the Slinky as boxes of triangles (numpy only, no GL): holders, the
hand and the stairs (the grab coupling: `coupling`).

Every prop is a list of (36, 10) float32 triangle arrays (position, normal, rgba) that
the renderer draws with mesh.glsl.
"""

from __future__ import annotations

import numpy as np

from slinky3d.runtime.snapshot import SlinkySnapshot
from slinky3d.viewer.helix import hoop_frames, wire_thickness


def box(
    centre, half: tuple[float, float, float], colour: tuple[float, ...], axes=None
) -> np.ndarray:
    """(36, 10) float32 triangles of a box: position, normal, rgba.

    `axes` (3, 3) holds the box's unit edge directions as rows (right-handed); None is
    the world axes.
    """
    axes = np.eye(3) if axes is None else np.asarray(axes, float)
    centre = np.asarray(centre, float)
    h = np.asarray(half, float)
    # Per corner (see _BOX): the face's axis i and side, the corner's signs along the
    # face's other two axes j, k; the sums in the order of a corner built by hand.
    i, j, k, side, sj, sk = _BOX
    pos = (centre + (side * h[i])[:, None] * axes[i] + (sj * h[j])[:, None] * axes[j]
           + (sk * h[k])[:, None] * axes[k])
    out = np.empty((36, 10), "f4")
    out[:, :3], out[:, 3:6], out[:, 6:] = pos, side[:, None] * axes[i], colour
    return out


def _box_corners() -> tuple[np.ndarray, ...]:
    """The 36 corners of a box's 12 triangles, two per face, wound outward."""
    rows = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        for side in (-1.0, 1.0):
            quad = ((-1, -1), (1, -1), (1, 1), (-1, 1))
            order = (0, 1, 2, 0, 2, 3) if side > 0 else (0, 2, 1, 0, 3, 2)
            rows += [(i, j, k, side, *quad[m]) for m in order]
    table = np.array(rows, float)
    axis = table[:, :3].astype(int)
    return axis[:, 0], axis[:, 1], axis[:, 2], table[:, 3], table[:, 4], table[:, 5]


_BOX = _box_corners()


def span_box(lo, hi, colour: tuple[float, ...]) -> np.ndarray:
    """An axis-aligned box from corner `lo` to corner `hi`."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    return box(0.5 * (lo + hi), tuple(0.5 * (hi - lo)), colour)


def holder_boxes(
    sl: SlinkySnapshot, floor_y: float, colour: tuple[float, ...]
) -> list[np.ndarray]:
    """A clamp plate on each held end's half hoop, an arm and a post down to the floor.

    The plate lies against the end half hoop on the side away from its neighbour (where
    the model's holder bar 0 is), so it never cuts into the coils. The arm runs along
    the end bar, away from the rest of the Slinky, and back to a post that stands
    beside the end and behind the plane the Slinky moves in, so it never cuts it.
    """
    out: list[np.ndarray] = []
    e = np.asarray(sl.ends, float)
    C, u, _ = hoop_frames(e)
    if len(C) < 2:
        return out
    t = wire_thickness(sl)
    middle = C.mean(axis=0)
    for held, k, nb in ((sl.anchor_held, 0, 1), (sl.far_held, len(C) - 1, len(C) - 2)):
        if not held:
            continue
        perp = np.array([-u[k, 1], u[k, 0]])
        if perp @ (C[k] - C[nb]) < 0:
            perp = -perp
        along = u[k] if u[k] @ (C[k] - middle) >= 0 else -u[k]
        plate_t, arm_t, post_t = 0.004, 0.010, 0.016
        axes = np.array([[*along, 0.0], [*perp, 0.0], [0.0, 0.0, 1.0]])
        if np.linalg.det(axes) < 0:
            axes[2] = -axes[2]
        c = C[k] + perp * (0.5 * t + 0.5 * plate_t)
        out.append(box([*c, 0.0], (1.1 * sl.R, 0.5 * plate_t, 1.1 * sl.R), colour, axes))
        # The post stands beside the end and behind the plane the Slinky swings in.
        reach, z_post = 1.1 * sl.R + 0.03, -(1.1 * sl.R + 0.02)
        start = np.r_[C[k] + perp * (0.5 * t + plate_t + 0.5 * arm_t), 0.0]
        foot = start + np.r_[along * reach, z_post]
        d = (foot - start) / np.linalg.norm(foot - start)
        p3 = np.r_[perp, 0.0]
        arm_axes = np.array([d, p3, np.cross(d, p3)])
        arm = float(np.linalg.norm(foot - start))
        out.append(box(0.5 * (start + foot), (0.5 * arm, 0.5 * arm_t, 0.5 * arm_t), colour,
                       arm_axes))
        hp = 0.5 * post_t
        top, bottom = foot[1] + 0.5 * arm_t, min(floor_y, foot[1] - 0.05)
        out.append(span_box([foot[0] - hp, bottom, foot[2] - hp],
                            [foot[0] + hp, top, foot[2] + hp], colour))
    return out


def hand_boxes(sl: SlinkySnapshot, colour: tuple[float, ...]) -> list[np.ndarray]:
    """A stylised hand holding each held end from outside: the palm on the end half hoop
    (on the side away from its neighbour), fingers and thumb reaching past its rim, and
    the forearm going away from the Slinky. Boxes only; nothing enters the coils."""
    out: list[np.ndarray] = []
    e = np.asarray(sl.ends, float)
    C, u, sign = hoop_frames(e)
    if len(C) < 2:
        return out
    t = wire_thickness(sl)
    for held, k, nb in ((sl.anchor_held, 0, 1), (sl.far_held, len(C) - 1, len(C) - 2)):
        if not held:
            continue
        perp = np.array([-u[k, 1], u[k, 0]])
        if perp @ (C[k] - C[nb]) < 0:
            perp = -perp
        axes = np.array([[*u[k], 0.0], [*perp, 0.0], [0.0, 0.0, 1.0]])
        if np.linalg.det(axes) < 0:
            axes[2] = -axes[2]
        origin = np.r_[C[k], 0.0]
        # (offset along the bar, out from the coil, across in z), half extents
        parts = [((0.0, 0.011, 0.0), (0.042, 0.011, 0.038))]  # palm on the end half hoop
        bulge = sign[k] * (sl.R + 0.008)  # fingers outside the half hoop's bulge
        parts += [((x, -0.007, bulge), (0.0075, 0.026, 0.0075))
                  for x in (-0.027, -0.009, 0.009, 0.027)]
        parts += [((0.0, -0.001, -bulge), (0.009, 0.02, 0.008)),  # thumb
                  ((0.0, 0.101, 0.0), (0.03, 0.085, 0.028))]  # forearm
        for (x, y, w), half in parts:
            centre = origin + x * axes[0] + (0.5 * t + y) * axes[1] + [0.0, 0.0, w]
            out.append(box(centre, half, colour, axes))
    return out


def stair_boxes(
    steps, depth: float, floor_y: float, colour: tuple[float, ...]
) -> list[np.ndarray]:
    """One block per step (x0, x1, top_y), from the floor up, centred on z = 0."""
    return [span_box([x0, min(floor_y, top - 0.01), -0.5 * depth], [x1, top, 0.5 * depth],
                     colour) for x0, x1, top in steps]
