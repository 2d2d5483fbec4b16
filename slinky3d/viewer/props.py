"""The props around the Slinky as boxes of triangles (numpy only, no GL): holders, the
hand and the stairs (the grab coupling: `coupling`). A holder that let go of an end
stays where it let go, drawn open (`left_grips`).

Every prop is a list of (36, 10) float32 triangle arrays (position, normal, rgba) that
the renderer draws with mesh.glsl.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from slinky3d.model.chain3d import in_space, turn_about_vertical
from slinky3d.runtime.snapshot import SlinkySnapshot
from slinky3d.viewer.helix import bulges, ends3, wire_thickness


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


@dataclass(frozen=True)
class Grip:
    """Where a holder grips one end of a Slinky: the end half hoop's midpoint `C` and
    unit bar `u`, `perp` (the normal of its plane, away from its neighbour: the side the
    holder sits on), `along` (along the bar, away from the rest of the Slinky), `bulge`
    (its unit bulge), the Slinky's radius and wire thickness (all world metres, 3D)."""

    C: np.ndarray
    u: np.ndarray
    perp: np.ndarray
    along: np.ndarray
    bulge: np.ndarray
    R: float
    thickness: float


# Where a post stands off the Slinky: behind the plane z = 0 (a planar Slinky's, and the
# one the default camera looks at from +z)
BACK = np.array([0.0, 0.0, -1.0])


def grip(end: np.ndarray, neighbour: np.ndarray, next_: np.ndarray, middle: np.ndarray,
         bulge: np.ndarray, R: float, thickness: float) -> Grip:
    """The grip on the half hoop from `end` to `neighbour` (the end point and the next
    one, (x, y) or (x, y, z)), whose neighbouring half hoop goes on to `next_`; `middle`:
    the Slinky's; `bulge`: the end half hoop's unit bulge (3D)."""
    end, neighbour, next_, middle = (in_space(a) for a in (end, neighbour, next_, middle))
    C, Cn = 0.5 * (end + neighbour), 0.5 * (neighbour + next_)
    d = end - neighbour
    u = d / max(float(np.linalg.norm(d)), 1e-12)
    b = np.asarray(bulge, float)
    perp = np.cross(b, u)  # the half hoop's plane's normal (a planar one's: in the plane)
    perp /= max(float(np.linalg.norm(perp)), 1e-12)
    if perp @ (C - Cn) < 0:
        perp = -perp
    along = u if u @ (C - middle) >= 0 else -u
    return Grip(C, u, perp, along, b, float(R), float(thickness))


def grips(sl: SlinkySnapshot) -> list[Grip]:
    """The grips on a Slinky's held ends (a 3D snapshot's from its half hoops' own
    planes; the posts stand off toward -z, behind the plane z = 0 that the default
    camera looks at, as a planar Slinky's)."""
    e = ends3(sl)
    if len(e) < 3:
        return []
    middle = (0.5 * (e[1:] + e[:-1])).mean(axis=0)
    t = wire_thickness(sl)
    b = bulges(sl)
    out = []
    if sl.anchor_held:
        out.append(grip(e[0], e[1], e[2], middle, b[0], sl.R, t))
    if sl.far_held:
        out.append(grip(e[-1], e[-2], e[-3], middle, b[-1], sl.R, t))
    return out


def left_grips(sl: SlinkySnapshot) -> list[Grip]:
    """The grips of the holders that let go of the Slinky's ends, where they let go."""
    t = wire_thickness(sl)
    return [grip(x.points[0], x.points[1], x.points[2], x.middle,
                 np.array([0.0, 0.0, x.sign]) if x.bulge is None else x.bulge, sl.R, t)
            for x in sl.left]


OPEN_GAP = 0.012  # m: an open clamp's plate stands this far off the coil
OPEN_S = 0.05  # simulated s a holder takes to open after it lets go


def opening(sl: SlinkySnapshot, t: float) -> list[float]:
    """How far open (0..1) each of the Slinky's let-go holders is at time t."""
    return [float(np.clip((t - x.t) / OPEN_S, 0.0, 1.0)) for x in sl.left]


def post_boxes(g: Grip, floor_y: float, colour: tuple[float, ...],
               opening: float = 0.0) -> list[np.ndarray]:
    """A clamp plate on the gripped half hoop, an arm and a post down to the floor.

    The plate lies against the end half hoop on the side away from its neighbour (where
    the model's holder bar 0 is), so it never cuts into the coils. The arm runs along
    the end bar, away from the rest of the Slinky, and back to a post that stands
    beside the end and behind the plane the Slinky moves in, so it never cuts it.
    `opening` 0..1: the clamp drawn open, the plate and arm OPEN_GAP off the coil.
    """
    perp, along, t, R = g.perp, g.along, g.thickness, g.R
    plate_t, arm_t, post_t = 0.004, 0.010, 0.016
    axes = np.array([along, perp, np.cross(along, perp)])
    gap = OPEN_GAP * float(np.clip(opening, 0.0, 1.0))
    c = g.C + perp * (0.5 * t + 0.5 * plate_t + gap)
    out = [box(c, (1.1 * R, 0.5 * plate_t, 1.1 * R), colour, axes)]
    # The post stands beside the end and behind the plane the Slinky swings in.
    reach, off = 1.1 * R + 0.03, 1.1 * R + 0.02
    start = g.C + perp * (0.5 * t + plate_t + 0.5 * arm_t + gap)
    foot = start + along * reach + BACK * off
    d = (foot - start) / np.linalg.norm(foot - start)
    arm_axes = np.array([d, perp, np.cross(d, perp)])
    arm = float(np.linalg.norm(foot - start))
    out.append(box(0.5 * (start + foot), (0.5 * arm, 0.5 * arm_t, 0.5 * arm_t), colour,
                   arm_axes))
    hp = 0.5 * post_t
    top, bottom = foot[1] + 0.5 * arm_t, min(floor_y, foot[1] - 0.05)
    out.append(span_box([foot[0] - hp, bottom, foot[2] - hp],
                        [foot[0] + hp, top, foot[2] + hp], colour))
    return out


def hand_part_boxes(g: Grip, colour: tuple[float, ...],
                    opening: float = 0.0) -> list[np.ndarray]:
    """A stylised hand holding the gripped end from outside: the palm on the end half
    hoop (on the side away from its neighbour), fingers and thumb reaching past its
    rim, and the forearm going away from the Slinky. Boxes only; nothing enters the
    coils. `opening` 0..1: the hand drawn open, lifted off the coil, fingers and thumb
    spread away from the rim."""
    axes = np.array([g.u, g.perp, np.cross(g.u, g.perp)])
    o = float(np.clip(opening, 0.0, 1.0))
    lift = OPEN_GAP * o
    origin = g.C
    # (offset along the bar, out from the coil, toward the bulge), half extents
    parts = [((0.0, 0.011, 0.0), (0.042, 0.011, 0.038))]  # palm on the end half hoop
    bulge = g.R + 0.008 + 0.02 * o  # fingers outside the half hoop's bulge
    parts += [((x, -0.007 + 0.025 * o, bulge), (0.0075, 0.026, 0.0075))
              for x in (-0.027, -0.009, 0.009, 0.027)]
    parts += [((0.0, -0.001 + 0.025 * o, -bulge), (0.009, 0.02, 0.008)),  # thumb
              ((0.0, 0.101, 0.0), (0.03, 0.085, 0.028))]  # forearm
    out = []
    for (x, y, w), half in parts:
        centre = origin + x * axes[0] + (0.5 * g.thickness + y + lift) * axes[1] + w * g.bulge
        out.append(box(centre, half, colour, axes))
    return out


def holder_boxes(
    sl: SlinkySnapshot, floor_y: float, colour: tuple[float, ...]
) -> list[np.ndarray]:
    """A clamp on a post at each held end (`post_boxes`)."""
    return [b for g in grips(sl) for b in post_boxes(g, floor_y, colour)]


def hand_boxes(sl: SlinkySnapshot, colour: tuple[float, ...]) -> list[np.ndarray]:
    """A hand holding each held end (`hand_part_boxes`)."""
    return [b for g in grips(sl) for b in hand_part_boxes(g, colour)]


def stair_boxes(
    steps, depth: float, floor_y: float, colour: tuple[float, ...], turn: float = 0.0,
    turns=(),
) -> list[np.ndarray]:
    """One block per step (x0, x1, top_y), from the floor up, centred on z = 0, each
    turned by its own turn about the vertical through its pivot (`turns`: (rad, pivot
    x) per block, scene.world's `turns`; none: unturned), then all by `turn` (rad) about
    the vertical through the origin (the scene's `rotate`)."""
    T = turn_about_vertical(turn)
    out = []
    for i, (x0, x1, top) in enumerate(steps):
        angle, pivot = turns[i] if i < len(turns) else (0.0, 0.0)
        TB = T @ turn_about_vertical(angle)
        shift = pivot * (T[:, 0] - TB[:, 0])  # where the block's own turn moves the origin
        lo = np.array([x0, min(floor_y, top - 0.01), -0.5 * depth])
        hi = np.array([x1, top, 0.5 * depth])
        out.append(box(TB @ (0.5 * (lo + hi)) + shift, tuple(0.5 * (hi - lo)), colour,
                       axes=TB.T))
    return out
