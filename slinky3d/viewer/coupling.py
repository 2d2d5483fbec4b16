"""The hand's props as triangles (numpy only, no GL): the grab coupling drawn as a coil
spring in series with a damper (the animation of Modelica's SpringDamperSeries), the
glowing marker on the grabbable point under the cursor, and the bars of the 2D side view.

Same triangle layout as `props` ((n, 10) float32: position, normal, rgba; mesh.glsl).
An alpha above 1 makes mesh.glsl draw the triangle as glowing (unlit, bright).
"""

from __future__ import annotations

import functools

import numpy as np

from slinky3d.model.chain3d import in_space
from slinky3d.runtime.snapshot import SlinkySnapshot
from slinky3d.viewer.helix import ends3
from slinky3d.viewer.props import box

GLOW = 2.0  # colour alpha that mesh.glsl draws unlit and bright
SPRING_TURNS = 7
SEGMENTS_PER_TURN = 12


def tube(points: np.ndarray, radius: float, colour: tuple[float, ...], sides: int = 6
         ) -> np.ndarray:
    """A polyline (m, 3) as a chain of open prisms, one per segment: (n, 10) float32."""
    p = np.asarray(points, float)
    a, b = p[:-1], p[1:]
    t = b - a
    length = np.sqrt(np.einsum("ij,ij->i", t, t))[:, None]
    keep = length[:, 0] > 1e-9
    if not np.any(keep):
        return np.zeros((0, 10), "f4")
    if not keep.all():
        a, b, t, length = a[keep], b[keep], t[keep], length[keep]
    t = t / length
    # A normal to each segment: across z where the segment lies in the plane, else across x.
    ref = np.where(np.abs(t[:, 2:3]) < 0.9, _Z, _X)
    n1 = _cross(t, ref)
    n1 /= np.sqrt(np.einsum("ij,ij->i", n1, n1))[:, None]
    n2 = _cross(t, n1)
    cos, sin, corner, ring_corner = _prism(sides)
    # (segments, sides + 1, 3) ring normals
    ring = cos[None, :, None] * n1[:, None] + sin[None, :, None] * n2[:, None]
    ends = np.concatenate([a[:, None] + radius * ring, b[:, None] + radius * ring], axis=1)
    # two triangles per side: (a_j, a_j+1, b_j+1), (a_j, b_j+1, b_j), outward winding
    return _rows(ends[:, corner].reshape(-1, 3), ring[:, ring_corner].reshape(-1, 3), colour)


@functools.lru_cache(maxsize=16)
def _prism(sides: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A prism's ring (cos, sin of its sides + 1 angles) and, per side, its two
    triangles' corners: indices into the rings at both ends (a's, then b's) and into
    one ring (the normals)."""
    phi = 2 * np.pi * np.arange(sides + 1) / sides
    j = np.arange(sides)
    k = sides + 1  # b's ring follows a's
    corner = np.stack([j, j + 1, k + j + 1, j, k + j + 1, k + j], axis=1).reshape(-1)
    return np.cos(phi), np.sin(phi), corner, corner % k


def disc(centre: np.ndarray, axis: np.ndarray, radius: float, colour: tuple[float, ...],
         sides: int = 8) -> np.ndarray:
    """A flat disc (both faces) across `axis`, to close a cylinder's end."""
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    ref = np.array([0.0, 0.0, 1.0]) if abs(axis[2]) < 0.9 else np.array([1.0, 0.0, 0.0])
    n1 = _cross(axis, ref)
    n1 /= np.linalg.norm(n1)
    n2 = _cross(axis, n1)
    phi = 2 * np.pi * np.arange(sides + 1) / sides
    rim = centre + radius * (np.cos(phi)[:, None] * n1 + np.sin(phi)[:, None] * n2)
    c = np.broadcast_to(centre, (sides, 3))
    front = np.stack([c, rim[:-1], rim[1:]], axis=1).reshape(-1, 3)
    back = np.stack([c, rim[1:], rim[:-1]], axis=1).reshape(-1, 3)
    n = len(front)
    nrm = np.concatenate([np.broadcast_to(axis, (n, 3)), np.broadcast_to(-axis, (n, 3))])
    return _rows(np.concatenate([front, back]), nrm, colour)


def spring_damper(target, point, scale: float, spring_colour: tuple[float, ...],
                  damper_colour: tuple[float, ...]) -> np.ndarray:
    """The grab coupling from the cursor's `target` to the grabbed `point` (world x, y;
    z = 0): a damper (cylinder and piston rod) at the target, in series with a coil
    spring to the point. The cylinder keeps its length; the rod slides out and the coil
    stretches as the coupling pulls. `scale` (m) sizes it (the Slinky's radius)."""
    a, b = in_space(target), in_space(point)
    cube = 0.12 * scale
    out = [_cube(a, cube, damper_colour)]
    length = float(np.linalg.norm(b - a))
    if not np.isfinite(length) or length < 1e-6:
        return np.concatenate(out)
    d = (b - a) / length
    across = np.cross(_Z[0], d)  # in a plane's: (-d_y, d_x, 0)
    if np.linalg.norm(across) < 1e-6:  # along z
        across = np.cross(_X[0], d)
    across /= np.linalg.norm(across)
    cylinder = min(0.8 * scale, 0.3 * length)
    rest = length - cylinder
    rod = 0.35 * rest
    c0, c1 = a, a + cylinder * d
    s0 = c1 + rod * d
    # cylinder (closed at both ends) and rod
    out += [tube(np.array([c0, c1]), 0.16 * scale, damper_colour, sides=10),
            disc(c0, -d, 0.16 * scale, damper_colour, 10), disc(c1, d, 0.16 * scale,
                                                                 damper_colour, 10),
            tube(np.array([c0 + 0.5 * cylinder * d, s0]), 0.05 * scale, damper_colour)]
    # the coil: a helix about the axis s0 -> b
    m = SPRING_TURNS * SEGMENTS_PER_TURN
    s = np.linspace(0.0, 1.0, m + 1)
    phi = 2 * np.pi * SPRING_TURNS * s
    r = 0.14 * scale * np.minimum(1.0, np.minimum(s, 1 - s) * 12.0)  # tapers into the ends
    coil = (s0 + np.outer(s, b - s0) + r[:, None] * (np.cos(phi)[:, None] * across
                                                     + np.sin(phi)[:, None] * [0, 0, 1.0]))
    out.append(tube(coil, 0.025 * scale, spring_colour, sides=5))
    return np.concatenate(out)


def marker(point, scale: float, colour: tuple[float, ...]) -> np.ndarray:
    """The glowing marker on the grabbable end point under the cursor: a small
    octahedron at (x, y, 0), drawn unlit and bright."""
    c = in_space(point)
    axes = np.eye(3) * scale
    rows = []
    for sx in (-1, 1):
        for sy in (-1, 1):
            for sz in (-1, 1):
                tri = [c + sx * axes[0], c + sy * axes[1], c + sz * axes[2]]
                if sx * sy * sz < 0:
                    tri = tri[::-1]
                nrm = np.array([sx, sy, sz], float) / np.sqrt(3.0)
                rows += [(*v, *nrm, *colour[:3], GLOW) for v in tri]
    return np.array(rows, "f4")


def bars(sl: SlinkySnapshot, radius: float, colour: tuple[float, ...]) -> np.ndarray:
    """The model's bars (end point to end point) as thin rods in the plane z = 0: the
    2D side view of the paper's figures."""
    pts = ends3(sl)
    return tube(pts, radius, colour, sides=4)


def _cube(c: np.ndarray, half: float, colour: tuple[float, ...]) -> np.ndarray:
    out = _unit_cube(tuple(colour)).copy()
    out[:, :3] = out[:, :3] * half + c  # = props.box(c, (half,) * 3), to the last bit
    return out


@functools.lru_cache(maxsize=8)
def _unit_cube(colour: tuple[float, ...]) -> np.ndarray:
    return box(np.zeros(3), (1.0, 1.0, 1.0), colour)


# The props are rebuilt every frame of a grab: numpy's cross and np.c_ cost more than
# their arithmetic for arrays this small.
_Z, _X = np.array([[0.0, 0.0, 1.0]]), np.array([[1.0, 0.0, 0.0]])


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.cross of (..., 3) vectors, the same operations."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0], out[..., 1], out[..., 2] = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0
    return out


def _rows(pos: np.ndarray, nrm: np.ndarray, colour: tuple[float, ...]) -> np.ndarray:
    """(n, 10) float32 triangle rows: position, normal, rgba."""
    out = np.empty((len(pos), 10), "f4")
    out[:, :3], out[:, 3:6], out[:, 6:] = pos, nrm, colour
    return out
