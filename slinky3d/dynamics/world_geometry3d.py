"""The world's geometry for the 3D solver's contact (world_contact3d.py solves it): the
floor, the table and the stairs as planes and convex edges, turned with the scene and
each block by its own `rotate`; and the contact points of a 3D Slinky with them: per
half hoop and surface, the arc's closest point (its lowest point toward a plane, in
closed form; its nearest point to a block's edge), and every end point (docs/solver.md,
"World contact in 3D"; docs/model.md section 12).

The world is given in the scene's planar coordinates and turned with the scene
(`turn`); a block reaches along the turned z without end, as in the model's plane.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from slinky3d.dynamics import articulated_body3d as ab
from slinky3d.dynamics.articulated_body import JIT
from slinky3d.model import chain3d
from slinky3d.scene.world import World

INTERIOR = 1e-7  # m: an arc's inner point enters only this far below its ends


# surfaces, one row each: a plane with n . p - off = gap, its tangents and its region
# (lo <= u . p <= hi and lo2 <= v . p <= hi2, gap > -depth: a point inside a block is
# held by the faces it is near)
NCOLS_PLANE = 21
# edges, one row each: a convex edge through c along e, outside where
# (p - c) . na > 0 and (p - c) . nb > 0
NCOLS_EDGE = 12
# contacts, one row each: hoop, point (3), n (3), t1 (3), t2 (3), gap, surface
NCOLS_CONTACT = 15
EDGE = 1000  # a contact's surface number: planes from 0, edges from EDGE

INF = 1e30
SAME_PLACE = 1e-4  # m: two contacts of one half hoop this close ...
SAME_NORMAL = 0.99  # ... with normals this near (cosine) are one
BLOCK_DEPTH = 0.01  # m: a block's face holds points at most this far inside


def _plane(n, off, t1, t2, u=(0.0, 0.0, 0.0), lo=-INF, hi=INF, v=(0.0, 0.0, 0.0),
           lo2=-INF, hi2=INF, depth=INF) -> np.ndarray:
    return np.concatenate([n, [off], t1, t2, u, [lo, hi], v, [lo2, hi2, depth]])


def surfaces(world: World, turn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(planes, edges) of the world turned by `turn` (3 x 3 about the vertical): the
    floor, and each block's exposed faces and convex top edges (world.py's blocks: the
    stairs' steps reach back to the landing's back, so a riser shows only above the
    next step). A block turned by its own `rotate` (world.turns: about the vertical
    through its pivot, before the scene's turn) has its planes, tangents, regions and
    edges turned with it."""
    planes: list[np.ndarray] = []
    edges: list[np.ndarray] = []
    if world.floor is None:
        return np.zeros((0, NCOLS_PLANE)), np.zeros((0, NCOLS_EDGE))
    y = np.array([0.0, 1.0, 0.0])
    floor = float(world.floor)
    planes.append(_plane(y, floor, turn @ [1.0, 0.0, 0.0], turn @ [0.0, 0.0, 1.0]))
    tops = []  # (x0, x1, top) exposed top faces, and each block's front face's foot
    if world.stairs is not None:
        pieces = world.stairs.pieces()
        blocks = world.stairs.blocks()
        for k, (p, b) in enumerate(zip(pieces, blocks, strict=True)):
            below = blocks[k + 1][2] if k + 1 < len(blocks) else floor
            tops.append((p[0], p[1], p[2], below, b[0], k == 0))
    if world.table is not None:
        ex, ey, width = world.table
        tops.append((ex - width, ex, ey, floor, ex - width, True))
    for (x0, x1, top, below, back, has_back), (angle, pivot) in zip(
            tops, world.turns(), strict=True):
        # the block's frame: its x and z turned by its own turn and the scene's, and
        # where its pivot's turn moves the origin: p_world = T B p + T (I - B) (pivot x)
        TB = turn @ chain3d.turn_about_vertical(angle)
        x, z = TB[:, 0], TB[:, 2]
        c = pivot * (turn[:, 0] - x)
        s = float(x @ c)  # the block's own x of the world's origin, less
        # a face holds the points inside within half the block's extent across it
        deep = min(0.5 * (top - floor), BLOCK_DEPTH)
        wide = min(0.5 * (x1 - back), BLOCK_DEPTH)
        planes.append(_plane(y, top, x, z, x, x0 + s, x1 + s, depth=deep))  # the top
        planes.append(_plane(x, x1 + s, y, z, y, below, top, depth=wide))  # the front face
        edges.append(np.concatenate([x1 * x + top * y + c, z, y, x]))
        if has_back:
            planes.append(_plane(-x, -back - s, y, z, y, floor, top, depth=wide))
            edges.append(np.concatenate([back * x + top * y + c, z, y, -x]))
    return np.array(planes), np.array(edges).reshape(-1, NCOLS_EDGE)


@njit(**JIT)
def _in_region(P, p0, p1, p2, tol):
    a = P[10] * p0 + P[11] * p1 + P[12] * p2
    if a < P[13] - tol or a > P[14] + tol:
        return False
    b = P[15] * p0 + P[16] * p1 + P[17] * p2
    return P[18] - tol <= b <= P[19] + tol


@njit(**JIT)
def _put(out, m, k, p0, p1, p2, n0, n1, n2, t, gap, surf):
    """Add a contact (a full list keeps the nearest)."""
    at = m
    if m >= out.shape[0]:
        at = 0
        for i in range(out.shape[0]):
            if out[i, 13] > out[at, 13]:
                at = i
        if out[at, 13] <= gap:
            return m
    else:
        m += 1
    r = out[at]
    r[0] = k
    r[1], r[2], r[3] = p0, p1, p2
    r[4], r[5], r[6] = n0, n1, n2
    for i in range(6):
        r[7 + i] = t[i]
    r[13] = gap
    r[14] = surf
    return m


@njit(**JIT)
def _edge_tangents(e0, e1, e2, n0, n1, n2, t):
    """t = (e, n x e): an edge contact's tangents."""
    t[0], t[1], t[2] = e0, e1, e2
    t[3] = n1 * e2 - n2 * e1
    t[4] = n2 * e0 - n0 * e2
    t[5] = n0 * e1 - n1 * e0


@njit(**JIT)
def _edge_gap(E, p0, p1, p2, out3):
    """Distance of a point from an edge's line where it lies outside both faces (else
    INF); out3 the unit normal."""
    r0, r1, r2 = p0 - E[0], p1 - E[1], p2 - E[2]
    if r0 * E[6] + r1 * E[7] + r2 * E[8] <= 0.0 or r0 * E[9] + r1 * E[10] + r2 * E[11] <= 0.0:
        return INF
    s = r0 * E[3] + r1 * E[4] + r2 * E[5]
    r0 -= s * E[3]
    r1 -= s * E[4]
    r2 -= s * E[5]
    d = math.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
    if d == 0.0:
        return INF
    out3[0], out3[1], out3[2] = r0 / d, r1 / d, r2 / d
    return d


@njit(**JIT)
def detect(frames, ends, R, planes, edges, reach, out, t, n3):
    """The world contacts within `reach` (m) into `out` (rows NCOLS_CONTACT); returns
    how many. Every end point (on the half hoop below it, E_0 on the first), and per
    half hoop the arc's inner point nearest a surface where it is nearer than both its
    ends by INTERIOR; t (6,), n3 (3,): scratch."""
    nh = frames.shape[0]
    m = 0
    for ip in range(planes.shape[0]):
        P = planes[ip]
        n0, n1, n2, off = P[0], P[1], P[2], P[3]
        for i in range(6):
            t[i] = P[4 + i]
        for j in range(nh + 1):
            e = ends[j]
            gap = n0 * e[0] + n1 * e[1] + n2 * e[2] - off
            if -P[20] < gap < reach and _in_region(P, e[0], e[1], e[2], 0.0):
                m = _put(out, m, max(j - 1, 0), e[0], e[1], e[2], n0, n1, n2, t, gap, ip)
        for k in range(nh):
            F = frames[k]
            A = R * (n0 * F[0, 0] + n1 * F[1, 0] + n2 * F[2, 0])
            B = R * (n0 * F[0, 1] + n1 * F[1, 1] + n2 * F[2, 1])
            r = math.sqrt(A * A + B * B)
            if B >= 0.0 or -B < 1e-3 * r:  # the lowest point is an end
                continue
            c, s = A / r, -B / r
            p0 = ends[k, 0] + R * F[0, 0] - R * c * F[0, 0] + R * s * F[0, 1]
            p1 = ends[k, 1] + R * F[1, 0] - R * c * F[1, 0] + R * s * F[1, 1]
            p2 = ends[k, 2] + R * F[2, 0] - R * c * F[2, 0] + R * s * F[2, 1]
            gap = n0 * p0 + n1 * p1 + n2 * p2 - off
            g0 = n0 * ends[k, 0] + n1 * ends[k, 1] + n2 * ends[k, 2] - off
            g1 = n0 * ends[k + 1, 0] + n1 * ends[k + 1, 1] + n2 * ends[k + 1, 2] - off
            if (-P[20] < gap < reach and gap < min(g0, g1) - INTERIOR
                    and _in_region(P, p0, p1, p2, 0.0)):
                m = _put(out, m, k, p0, p1, p2, n0, n1, n2, t, gap, ip)
    for ie in range(edges.shape[0]):
        E = edges[ie]
        for j in range(nh + 1):
            e = ends[j]
            d = _edge_gap(E, e[0], e[1], e[2], n3)
            if d < reach:
                _edge_tangents(E[3], E[4], E[5], n3[0], n3[1], n3[2], t)
                m = _put(out, m, max(j - 1, 0), e[0], e[1], e[2], n3[0], n3[1], n3[2], t, d,
                         EDGE + ie)
        for k in range(nh):
            F = frames[k]
            # the arc lies within R of its circle's centre: far from the line, skip it
            c0 = ends[k, 0] + R * F[0, 0] - E[0]
            c1 = ends[k, 1] + R * F[1, 0] - E[1]
            c2 = ends[k, 2] + R * F[2, 0] - E[2]
            a = c0 * E[3] + c1 * E[4] + c2 * E[5]
            if (c0 * c0 + c1 * c1 + c2 * c2 - a * a) > (R + reach) ** 2:
                continue
            # the arc's point nearest the edge's line: sampled, then golden section
            best, bphi = INF, 0.0
            for i in range(1, 16):
                phi = math.pi * i / 16.0
                d = _arc_edge(E, ends[k], F, R, phi, n3)
                if d < best:
                    best, bphi = d, phi
            if best >= reach:
                continue
            lo, hi = bphi - math.pi / 16.0, bphi + math.pi / 16.0
            for _ in range(30):
                a = hi - 0.618033988749895 * (hi - lo)
                b = lo + 0.618033988749895 * (hi - lo)
                if _arc_edge(E, ends[k], F, R, a, n3) < _arc_edge(E, ends[k], F, R, b, n3):
                    hi = b
                else:
                    lo = a
            phi = 0.5 * (lo + hi)
            if phi <= 1e-3 or phi >= math.pi - 1e-3:
                continue
            d = _arc_edge(E, ends[k], F, R, phi, n3)
            d0 = _edge_gap(E, ends[k, 0], ends[k, 1], ends[k, 2], t)
            d1 = _edge_gap(E, ends[k + 1, 0], ends[k + 1, 1], ends[k + 1, 2], t)
            if d < reach and d < min(d0, d1) - INTERIOR:
                c, s = math.cos(phi), math.sin(phi)
                p0 = ends[k, 0] + R * (1.0 - c) * F[0, 0] + R * s * F[0, 1]
                p1 = ends[k, 1] + R * (1.0 - c) * F[1, 0] + R * s * F[1, 1]
                p2 = ends[k, 2] + R * (1.0 - c) * F[2, 0] + R * s * F[2, 1]
                _edge_tangents(E[3], E[4], E[5], n3[0], n3[1], n3[2], t)
                m = _put(out, m, k, p0, p1, p2, n3[0], n3[1], n3[2], t, d, EDGE + ie)
    return min(m, out.shape[0])


@njit(**JIT)
def _arc_edge(E, e, F, R, phi, n3):
    """The edge's distance to the arc's point at phi (INF where not outside)."""
    c, s = math.cos(phi), math.sin(phi)
    p0 = e[0] + R * (1.0 - c) * F[0, 0] + R * s * F[0, 1]
    p1 = e[1] + R * (1.0 - c) * F[1, 0] + R * s * F[1, 1]
    p2 = e[2] + R * (1.0 - c) * F[2, 0] + R * s * F[2, 1]
    return _edge_gap(E, p0, p1, p2, n3)


@njit(**JIT)
def end_points(ws, frames, R, ends):
    """ends (N + 1, 3) from the kinematics' E_k and the last half hoop's d."""
    n = frames.shape[0]
    for k in range(n):
        ends[k, 0], ends[k, 1], ends[k, 2] = ws[k, ab.EP], ws[k, ab.EP + 1], ws[k, ab.EP + 2]
    F = frames[n - 1]
    for i in range(3):
        ends[n, i] = ends[n - 1, i] + 2.0 * R * F[i, 0]
