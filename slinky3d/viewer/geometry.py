"""Snapshot -> drawable arrays (numpy only, no GL): helix instances, meshes, bounds.

Half hoop k (0-based) spans ends[k] -> ends[k+1] (midpoint C_k, unit bar direction
u_k) and is the half turn of flat wire whose centre line is

    P_k(s) = C_k - R cos(s) u_k + sign_k R sin(s) z,   s in [0, pi],  sign_k = (-1)^k

so its side view (drop z) is exactly the bar. The cross-section is a rectangle:
`width` along the radial direction r(s) = (P - C_k) / R, `thickness` along the in-plane
normal of the bar. With thickness = 2 R sin(theta_min), two half hoops on the same side
(k and k+2) whose joints both sit at theta_min are parallel and exactly touch.

The GPU path (shaders/helix.glsl) evaluates the same formula per vertex from the
per-hoop `instances` and the shared `template`; `extrude` is its numpy twin (used by
the tests and by the numpy-vs-GPU benchmark).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from slinky3d.runtime.snapshot import SlinkySnapshot, Snapshot

# Cross-section faces of the flat wire, counter-clockwise in the (radial a, thickness b)
# plane: (corner 0, corner 1, outward normal).
FACES = (
    ((1, -1), (1, 1), (1, 0)),  # outer edge
    ((1, 1), (-1, 1), (0, 1)),  # broad face (+thickness side)
    ((-1, 1), (-1, -1), (-1, 0)),  # inner edge
    ((-1, -1), (1, -1), (0, -1)),  # broad face (-thickness side)
)


def wire_thickness(sl: SlinkySnapshot) -> float:
    """Thickness that makes coils at theta_min touch: 2R sin(theta_min) = pitch cos(theta_min)."""
    return 2.0 * sl.R * float(np.sin(sl.theta_min))


def hoop_frames(ends: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per half hoop: midpoints C (N, 2), unit bar directions u (N, 2), bulge signs (N,)."""
    ends = np.asarray(ends, float)
    d = ends[1:] - ends[:-1]
    length = np.linalg.norm(d, axis=1, keepdims=True)
    u = d / np.where(length > 0, length, 1.0)
    sign = np.where(np.arange(len(d)) % 2 == 0, 1.0, -1.0)
    return 0.5 * (ends[1:] + ends[:-1]), u, sign


def instances(sl: SlinkySnapshot) -> np.ndarray:
    """(N, 6) float32 per-hoop data for the GPU: Cx, Cy, ux, uy, sign, along (0..1)."""
    C, u, sign = hoop_frames(sl.ends)
    n = len(sign)
    along = np.arange(n) / max(n - 1, 1)
    return np.c_[C, u, sign, along].astype("f4")


@dataclass(frozen=True)
class Template:
    """One half hoop's mesh in parameter space, shared by every instance.

    vertices (V, 5) float32: s, a (radial -1..1), b (thickness -1..1), na, nb (the face's
    outward normal in the (r, n) basis); indices (T, 3) uint32, counter-clockwise seen
    from outside for both bulge signs (the shader flips the thickness axis with the sign).
    """

    vertices: np.ndarray
    indices: np.ndarray
    segments: int

    @property
    def triangles(self) -> int:
        return len(self.indices)


def template(segments: int, ribbon: bool = False) -> Template:
    """Flat-wire half-turn: `segments` steps along s, 4 flat faces, 8 vertices per ring.

    ribbon: one zero-thickness strip across the width instead (2 vertices per ring), for
    the shadow pass, where thickness is far below a shadow-map texel.
    """
    s = np.linspace(0.0, np.pi, segments + 1)
    faces = (((1, 0), (-1, 0), (0, 1)),) if ribbon else FACES
    per = 2 * len(faces)
    ring = np.array([(*c, *nrm) for c0, c1, nrm in faces for c in (c0, c1)], float)
    verts = np.concatenate([np.c_[np.full(per, si), ring] for si in s]).astype("f4")
    tris = []
    for i in range(segments):
        a, b = per * i, per * (i + 1)
        for f in range(len(faces)):
            v0, v1, v2, v3 = a + 2 * f, a + 2 * f + 1, b + 2 * f, b + 2 * f + 1
            # Corners run counter-clockwise about the tangent, so (v0, v2, v1) faces out.
            tris += [(v0, v2, v1), (v1, v2, v3)]
    return Template(verts, np.array(tris, "u4"), segments)


@dataclass(frozen=True)
class Mesh:
    """Plain triangles: positions, normals (V, 3), tangents (V, 3), along (V,), indices."""

    positions: np.ndarray
    normals: np.ndarray
    tangents: np.ndarray
    along: np.ndarray
    indices: np.ndarray


def extrude(sl: SlinkySnapshot, width: float, tpl: Template) -> Mesh:
    """The whole Slinky as one mesh, vectorized: the numpy twin of helix.glsl."""
    C, u, sign = hoop_frames(sl.ends)
    n = len(sign)
    t = wire_thickness(sl)
    s, a, b, na, nb = (tpl.vertices[:, i].astype(float)[None, :] for i in range(5))
    cs, sn = np.cos(s), np.sin(s)
    z3 = np.array([0.0, 0.0, 1.0])
    u3 = np.c_[u, np.zeros(n)][:, None, :]  # (N, 1, 3)
    # Thickness axis flipped with the bulge sign: two mirror images, so windings agree.
    n3 = (sign[:, None] * np.c_[-u[:, 1], u[:, 0], np.zeros(n)])[:, None, :]
    sg = sign[:, None, None]
    radial = -cs[..., None] * u3 + sg * sn[..., None] * z3  # (N, V, 3)
    tangent = sn[..., None] * u3 + sg * cs[..., None] * z3
    centre = np.c_[C, np.zeros(n)][:, None, :] + sl.R * radial
    pos = centre + (0.5 * width) * a[..., None] * radial + (0.5 * t) * b[..., None] * n3
    nrm = na[..., None] * radial + nb[..., None] * n3
    nv = len(tpl.vertices)
    idx = (tpl.indices[None, :, :] + (nv * np.arange(n))[:, None, None]).reshape(-1, 3)
    along = np.repeat(np.arange(n) / max(n - 1, 1), nv)
    return Mesh(
        pos.reshape(-1, 3), nrm.reshape(-1, 3), tangent.reshape(-1, 3), along, idx.astype("u4")
    )


def centre_line(sl: SlinkySnapshot, samples: int = 17) -> np.ndarray:
    """(N, samples, 3) points on each half hoop's centre line."""
    C, u, sign = hoop_frames(sl.ends)
    s = np.linspace(0.0, np.pi, samples)[None, :, None]
    C3 = np.c_[C, np.zeros(len(C))][:, None, :]
    u3 = np.c_[u, np.zeros(len(C))][:, None, :]
    z = np.array([0.0, 0.0, 1.0])
    return C3 + sl.R * (-np.cos(s) * u3 + sign[:, None, None] * np.sin(s) * z)


def bounds(snapshot: Snapshot, pad: float = 0.01) -> tuple[np.ndarray, np.ndarray]:
    """Axis-aligned box around every Slinky's helices (plus `pad`)."""
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    for sl in snapshot.slinkies:
        e = np.asarray(sl.ends, float)
        lo = np.minimum(lo, [*e.min(axis=0), -sl.R])
        hi = np.maximum(hi, [*e.max(axis=0), sl.R])
    if not np.all(np.isfinite(lo)):
        return np.full(3, -0.5), np.full(3, 0.5)
    return lo - pad, hi + pad


def box(
    centre, half: tuple[float, float, float], colour: tuple[float, ...], axes=None
) -> np.ndarray:
    """(36, 10) float32 triangles of a box: position, normal, rgba.

    `axes` (3, 3) holds the box's unit edge directions as rows (right-handed); None is
    the world axes.
    """
    axes = np.eye(3) if axes is None else np.asarray(axes, float)
    centre = np.asarray(centre, float)
    rows = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        for side in (-1.0, 1.0):
            nrm = side * axes[i]
            c = centre + side * half[i] * axes[i]
            quad = [c + sj * half[j] * axes[j] + sk * half[k] * axes[k]
                    for sj, sk in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
            order = (0, 1, 2, 0, 2, 3) if side > 0 else (0, 2, 1, 0, 3, 2)
            rows += [(*quad[m], *nrm, *colour) for m in order]
    return np.array(rows, "f4")


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
    out = []
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
        out.append(box(0.5 * (start + foot), (0.5 * np.linalg.norm(foot - start), 0.5 * arm_t,
                                              0.5 * arm_t), colour, arm_axes))
        hp = 0.5 * post_t
        top, bottom = foot[1] + 0.5 * arm_t, min(floor_y, foot[1] - 0.05)
        out.append(span_box([foot[0] - hp, bottom, foot[2] - hp],
                            [foot[0] + hp, top, foot[2] + hp], colour))
    return out


def hand_boxes(sl: SlinkySnapshot, colour: tuple[float, ...]) -> list[np.ndarray]:
    """A stylised hand holding each held end from outside: the palm on the end half hoop
    (on the side away from its neighbour), fingers and thumb reaching past its rim, and
    the forearm going away from the Slinky. Boxes only; nothing enters the coils."""
    out = []
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


def grab_boxes(sl: SlinkySnapshot, colour: tuple[float, ...]) -> list[np.ndarray]:
    """While the Slinky is grabbed: a thin rod from the grabbed point to the target, and
    a small cube at the target (the mouse), both in the plane z = 0."""
    if sl.grab is None or sl.grab_point is None:
        return []
    a, b = np.asarray(sl.grab_point, float), np.asarray(sl.grab, float)
    out = [box([*b, 0.0], (0.004, 0.004, 0.004), colour)]
    length = float(np.linalg.norm(b - a))
    if length > 1e-6:
        d = (b - a) / length
        axes = np.array([[*d, 0.0], [-d[1], d[0], 0.0], [0.0, 0.0, 1.0]])
        out.append(box([*(0.5 * (a + b)), 0.0], (0.5 * length, 0.0012, 0.0012), colour, axes))
    return out


def stair_boxes(steps, depth: float, floor_y: float, colour: tuple[float, ...]) -> list:
    """One block per step (x0, x1, top_y), from the floor up, centred on z = 0."""
    return [span_box([x0, min(floor_y, top - 0.01), -0.5 * depth], [x1, top, 0.5 * depth],
                     colour) for x0, x1, top in steps]


def hanging_snapshot(preset_name: str = "steel", stretch: float = 0.12, t: float = 0.0,
                     anchor=(0.0, 0.0), phi_A: float | None = None) -> Snapshot:
    """A plausible hanging shape (no physics): torsion angles at theta_min in the bottom
    quarter, growing linearly toward the anchor by up to `stretch` rad. phi_A None tilts
    the anchor by -theta_1/2 so that the odd and even bars lean symmetrically.

    For tests, benchmarks and docs before (or without) the static solver.
    """
    from slinky3d.model import chain
    from slinky3d.model.params import preset

    p = preset(preset_name)
    k = np.arange(p.N)
    theta = p.theta_min + stretch * np.clip(1.0 - k / (0.75 * p.N), 0.0, None)
    q = np.r_[anchor, -0.5 * theta[0] if phi_A is None else phi_A, theta]
    sl = SlinkySnapshot(
        ends=chain.end_points(q, p.R), theta=theta, contact=theta <= p.theta_min + 1e-12,
        R=p.R, pitch=p.delta, theta_min=p.theta_min, anchor_held=True, preset=preset_name,
    )
    return Snapshot(t=t, slinkies=(sl,))
