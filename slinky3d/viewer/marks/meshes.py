"""The phenomena's marks as mesh triangles (numpy only, no GL; the (n, 10) layout of
props and coupling, glowing): the centre of mass's marker, its free-fall parabola, the
collapse front's ring. app/phenomena.py decides which are drawn."""

from __future__ import annotations

import functools

import numpy as np

from slinky3d.model.chain3d import in_space
from slinky3d.viewer import coupling
from slinky3d.viewer.marks.collapse_front import FRONT_COLOUR
from slinky3d.viewer.marks.free_fall import Parabola

COM_COLOUR = (1.0, 0.25, 0.85)  # magenta: apart from every material and the stretch colours
PARABOLA_COLOUR = (1.0, 0.55, 0.95)
FRONT_RGB = FRONT_COLOUR[:3]
COM_SIZE = 0.45  # the marker's half size, in Slinky radii (x, y) ...
COM_DEPTH = 1.5  # ... and along z: it pierces the coils, so it shows through them
PARABOLA_WIDTH = 0.07  # the parabola's tube radius, in Slinky radii
PARABOLA_SECONDS = 3.0  # the parabola is drawn this long after the release at most
PARABOLA_SEGMENTS = 60
FRONT_RING = 1.35  # the front's ring radius, in Slinky radii
FRONT_WIDTH = 0.09  # its tube radius, in Slinky radii


def com_marker(com: np.ndarray, R: float) -> np.ndarray:
    """The centre of mass, (x, y) (at z = 0) or (x, y, z): a glowing octahedron, long
    along z so that it pierces the coils around it and shows on both sides."""
    m = _com_marker_at_origin(float(R)).copy()
    c = np.asarray(com, "f4")
    m[:, :c.shape[0]] += c
    return m


@functools.lru_cache(maxsize=8)
def _com_marker_at_origin(R: float) -> np.ndarray:
    m = coupling.marker(np.zeros(2), COM_SIZE * R, (*COM_COLOUR, 1.0))
    k = COM_DEPTH / COM_SIZE
    m[:, 2] *= k  # its centre is at z = 0
    n = m[:, 3:6].astype(float)
    n[:, 2] /= k  # normals of the stretched faces
    m[:, 3:6] = n / np.linalg.norm(n, axis=1, keepdims=True)
    return m


def parabola_tube(p: Parabola, R: float, floor_y: float) -> np.ndarray:
    """The parabola from its release down to the floor (PARABOLA_SECONDS at most), a
    glowing tube in the plane z = 0."""
    t1 = p.until(floor_y, p.t0 + PARABOLA_SECONDS)
    xy = p.at(np.linspace(p.t0, max(t1, p.t0 + 1e-3), PARABOLA_SEGMENTS + 1))
    pts = in_space(xy)
    return coupling.tube(pts, PARABOLA_WIDTH * R, (*PARABOLA_COLOUR, coupling.GLOW), sides=5)


def front_ring(ends: np.ndarray, f: int, R: float, bulge: np.ndarray | None = None
               ) -> np.ndarray:
    """A glowing ring around the coil at joint f (collapse_front): about half hoop f (the
    last one when f = N), in the plane of its bar and its bulge (z in a planar
    snapshot; `bulge` (N, 3), a 3D snapshot's)."""
    e = in_space(ends)
    k = min(f, len(e) - 2)
    c, d = 0.5 * (e[k] + e[k + 1]), e[k + 1] - e[k]
    u = d / max(float(np.linalg.norm(d)), 1e-12)
    b = np.array([0.0, 0.0, 1.0]) if bulge is None else np.asarray(bulge[k], float)
    b = b - (b @ u) * u  # square to the bar
    b /= max(float(np.linalg.norm(b)), 1e-12)
    # the ring's frame: x onto u, z onto b, y their normal (a planar one's: in the plane)
    turn = np.stack([u, np.cross(b, u), b], axis=1)
    ring = _ring_at_origin(float(R))  # in the plane of x and z, about the origin
    out = ring.copy()
    for col in (0, 3):  # positions, normals
        out[:, col:col + 3] = ring[:, col:col + 3] @ turn.T
    out[:, :3] += c.astype("f4")
    return out


@functools.lru_cache(maxsize=8)
def _ring_at_origin(R: float) -> np.ndarray:
    """The front's ring about the origin, in the plane of x and z."""
    phi = np.linspace(0.0, 2 * np.pi, 33)
    pts = FRONT_RING * R * np.c_[np.cos(phi), np.zeros_like(phi), np.sin(phi)]
    return coupling.tube(pts, FRONT_WIDTH * R, (*FRONT_RGB, coupling.GLOW), sides=5)
