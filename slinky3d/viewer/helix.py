"""The Slinky as helices (numpy only, no GL): per-hoop instances, meshes, bounds.

Half hoop k (0-based) spans ends[k] -> ends[k+1] (midpoint C_k, unit bar direction
u_k, unit bulge b_k, across the bar toward the apex) and is the half turn of flat
wire whose centre line is

    P_k(s) = C_k - R cos(s) u_k + R sin(s) b_k,   s in [0, pi].

A planar snapshot's half hoops bulge to b_k = (-1)^k z, so its side view (drop z) is
exactly the bar; a 3D snapshot gives each half hoop's b (chain3d's frame: d = u, b, and
the coil's axis a = u x b). The cross-section is a rectangle: `width` along the radial
direction r(s) = (P - C_k) / R, `thickness` along n_k = b_k x u_k, the normal of the
half hoop's plane. With thickness = 2 R sin(theta_min), two half hoops on the same side
(k and k+2) whose joints both sit at theta_min are parallel and exactly touch.

The GPU path (shaders/helix.glsl) evaluates the same formula per vertex from the
per-hoop `instances` and the shared `template`; `extrude` is its numpy twin (used by
the tests and by the numpy-vs-GPU benchmark).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from slinky3d.model.chain3d import in_space
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


def ends3(sl: SlinkySnapshot) -> np.ndarray:
    """(N+1, 3) end points: a planar snapshot's at z = 0."""
    return in_space(sl.ends)


def bulges(sl: SlinkySnapshot) -> np.ndarray:
    """(N, 3) unit bulges: a 3D snapshot's own; a planar one's (-1)^k z."""
    if sl.bulge is not None:
        return np.asarray(sl.bulge, float)
    b = np.zeros((sl.N, 3))
    b[:, 2] = np.where(np.arange(sl.N) % 2 == 0, 1.0, -1.0)
    return b


def hoop_frames(sl: SlinkySnapshot) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per half hoop: midpoints C (N, 3), unit bar directions u (N, 3), unit bulges b
    (N, 3)."""
    ends = ends3(sl)
    d = ends[1:] - ends[:-1]
    length = np.linalg.norm(d, axis=1, keepdims=True)
    u = d / np.where(length > 0, length, 1.0)
    return 0.5 * (ends[1:] + ends[:-1]), u, bulges(sl)


def instances(sl: SlinkySnapshot) -> np.ndarray:
    """(N, 10) float32 per-hoop data for the GPU: C, u, b (3 each), along (0..1)."""
    C, u, b = hoop_frames(sl)
    n = len(C)
    along = np.arange(n) / max(n - 1, 1)
    return np.c_[C, u, b, along].astype("f4")


# Seconds of the picture (film or screen, not simulated) a coil impact lights its half
# hoops up for: short, so that only the coils hitting now stand out, however slow the
# motion (a collapse's impacts follow each other within milliseconds of simulated time).
FLASH_S = 0.08


def impact_flash(sl: SlinkySnapshot, slowmo: float = 1.0) -> np.ndarray:
    """(N,) per half hoop, 1 at a coil impact fading to 0 after FLASH_S seconds of the
    picture, which at `slowmo` (picture seconds per simulated second) is FLASH_S / slowmo
    simulated seconds: the larger of its two joints' (zeros when the snapshot has no
    impact ages)."""
    if sl.impact_age is None:
        return np.zeros(sl.N)
    duration = FLASH_S / max(slowmo, 1e-9)
    age = np.asarray(sl.impact_age, float)
    f = np.clip(1.0 - np.fmin(age, 1e6) / duration, 0.0, 1.0)  # fmin: NaN counts as never
    return np.maximum(f, np.r_[f[1:], 0.0])


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
    C, u, bg = hoop_frames(sl)
    n = len(C)
    t = wire_thickness(sl)
    s, a, b, na, nb = (tpl.vertices[:, i].astype(float)[None, :] for i in range(5))
    cs, sn = np.cos(s), np.sin(s)
    u3, b3 = u[:, None, :], bg[:, None, :]  # (N, 1, 3)
    # The thickness axis, the half hoop's plane's normal b x u: mirror images (a planar
    # Slinky's alternate bulges) get mirrored axes, so windings agree.
    n3 = np.cross(bg, u)[:, None, :]
    radial = -cs[..., None] * u3 + sn[..., None] * b3  # (N, V, 3)
    tangent = sn[..., None] * u3 + cs[..., None] * b3
    centre = C[:, None, :] + sl.R * radial
    pos = centre + (0.5 * width) * a[..., None] * radial + (0.5 * t) * b[..., None] * n3
    nrm = na[..., None] * radial + nb[..., None] * n3
    nv = len(tpl.vertices)
    idx = (tpl.indices[None, :, :] + (nv * np.arange(n))[:, None, None]).reshape(-1, 3)
    along = np.repeat(np.arange(n) / max(n - 1, 1), nv)
    return Mesh(
        pos.reshape(-1, 3), nrm.reshape(-1, 3), tangent.reshape(-1, 3), along, idx.astype("u4")
    )


_CENTRE_LINES: list[tuple[SlinkySnapshot, int, np.ndarray]] = []  # the last few
CENTRE_LINES_KEPT = 4  # a frame asks for one Slinky's 3 times (its box, the director's,
# the overlay's placement), 0.45 ms each for the steel Slinky


def centre_line(sl: SlinkySnapshot, samples: int = 17) -> np.ndarray:
    """(N, samples, 3) points on each half hoop's centre line (read-only: the last few
    are kept for the same snapshot object, which does not change)."""
    for kept, n, pts in _CENTRE_LINES:
        if kept is sl and n == samples:
            return pts
    C, u, b = hoop_frames(sl)
    s = np.linspace(0.0, np.pi, samples)[None, :, None]
    pts = C[:, None, :] + sl.R * (-np.cos(s) * u[:, None, :] + np.sin(s) * b[:, None, :])
    pts.flags.writeable = False
    _CENTRE_LINES.insert(0, (sl, samples, pts))
    del _CENTRE_LINES[CENTRE_LINES_KEPT:]
    return pts


def bounds(snapshot: Snapshot, pad: float = 0.01) -> tuple[np.ndarray, np.ndarray]:
    """Axis-aligned box around every Slinky's helices (plus `pad`)."""
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    for sl in snapshot.slinkies:
        if sl.bulge is None:  # planar: the bars, and the bulges' +-R along z
            e = np.asarray(sl.ends, float)
            lo = np.minimum(lo, [*e.min(axis=0), -sl.R])
            hi = np.maximum(hi, [*e.max(axis=0), sl.R])
        else:  # the arcs, sampled finely enough for the pad to cover the rest
            pts = centre_line(sl, 9).reshape(-1, 3)
            lo = np.minimum(lo, pts.min(axis=0))
            hi = np.maximum(hi, pts.max(axis=0))
    if not np.all(np.isfinite(lo)):
        return np.full(3, -0.5), np.full(3, 0.5)
    return lo - pad, hi + pad
