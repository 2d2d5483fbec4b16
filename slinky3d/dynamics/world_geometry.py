"""Where a Slinky touches the world: the solid's signed distance, the contacts near it
(end points on surfaces, bars on convex edges) and their velocities, for the kernels
(docs/model.md section 11). The scheme that solves them is world_contact.py.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from slinky3d.dynamics.articulated_body import JIT
from slinky3d.model.chain import BASE

MAX_CONTACTS = 128  # world contacts of one Slinky at once (the nearest are kept)
NEAR = 0.01  # m: a point this near the world (plus two steps' travel) needs this scheme
MARGIN = 2e-3  # m: a contact enters the solve this far out (plus a step's travel)
CORNER_REACH = 5e-3  # m: a bar this far past a corner has gone by it, not into it
INSIDE = 1e-6  # m: a point this far into a block has gone in (not resting on it)


def corners_of(blocks: np.ndarray) -> np.ndarray:
    """The convex top corners of the blocks: those not on another block's face."""
    out = []
    for i, (x0, x1, top) in enumerate(blocks):
        for x, ox in ((x0, -1.0), (x1, 1.0)):
            covered = any(j != i and b[0] - 1e-9 <= x <= b[1] + 1e-9 and top <= b[2] + 1e-9
                          for j, b in enumerate(blocks))
            if not covered:
                out.append((x, top, ox / math.sqrt(2.0), 1.0 / math.sqrt(2.0)))
    return np.array(out, dtype=float).reshape(-1, 4)


@njit(**JIT)
def point_distance(x, y, floor, blocks):
    """Signed distance (m) of (x, y) to the world's solid and the outward normal of the
    nearest surface: scene.world.distance, compiled (tests compare the two)."""
    d = y - floor
    nx = 0.0
    ny = 1.0
    for i in range(blocks.shape[0]):
        dd, bx, by = _block_distance(x, y, blocks[i, 0], blocks[i, 1], blocks[i, 2])
        if dd < d:
            d, nx, ny = dd, bx, by
    return d, nx, ny


@njit(**JIT, inline="always")
def _block_distance(x, y, x0, x1, top):
    """Signed distance to the block below top between x0 and x1, and its normal."""
    dx = max(x0 - x, x - x1)
    dy = y - top
    if dx > 0.0 and dy > 0.0:  # off a corner
        cx = x0 if x < x0 else x1
        d = math.hypot(x - cx, dy)
        return d, (x - cx) / d, dy / d
    if dx > 0.0 or dx > dy:  # beside it, or inside nearer a side
        return dx, (-1.0 if x < 0.5 * (x0 + x1) else 1.0), 0.0
    return dy, 0.0, 1.0


@njit(**JIT)
def body_velocities(q, v, E, out):
    """Each bar's planar velocity (omega, v_x, v_y at O) for joint rates v: out (3, N).
    The articulated-body algorithm's first pass, on its own."""
    n = q.shape[0] - BASE
    w = v[2]
    vx = v[0] + E[0, 1] * w
    vy = v[1] - E[0, 0] * w
    for k in range(n):
        sg = 1 - 2 * (k & 1)
        r = sg * v[BASE + k]
        w += r
        vx += E[k, 1] * r
        vy -= E[k, 0] * r
        out[0, k] = w
        out[1, k] = vx
        out[2, k] = vy


@njit(**JIT, inline="always")
def contact_point(c, R, E, U, ww):
    b = ww.bar[c]
    s = 2.0 * R * ww.at[c]
    return b, E[b, 0] + s * U[b, 0], E[b, 1] + s * U[b, 1]


@njit(**JIT)
def contact_rates(c, R, E, U, body, ww):
    """(normal, tangential) velocity of contact c's material point; tangent (n_y, -n_x)."""
    b, px, py = contact_point(c, R, E, U, ww)
    vx = body[1, b] - body[0, b] * py
    vy = body[2, b] + body[0, b] * px
    nx = ww.normal[c, 0]
    ny = ww.normal[c, 1]
    return nx * vx + ny * vy, ny * vx - nx * vy


@njit(**JIT)
def _add_contact(m, b, at, nx, ny, gap, ww):
    """Contact m (or, past MAX_CONTACTS, in place of the farthest if nearer)."""
    if m >= MAX_CONTACTS:
        far = 0
        for c in range(MAX_CONTACTS):
            if ww.gap[c] > ww.gap[far]:
                far = c
        if gap >= ww.gap[far]:
            return m
        m_at = far
    else:
        m_at = m
        m += 1
    ww.bar[m_at] = b
    ww.at[m_at] = at
    ww.normal[m_at, 0] = nx
    ww.normal[m_at, 1] = ny
    ww.gap[m_at] = gap
    return m


@njit(**JIT)
def detect(q, v, h, par, wpar, ww, E, U):
    """The world contacts within MARGIN plus a step's travel at speed v: end points on
    surfaces (floor and each block apart, so a point in a step's inside corner has
    both) and bars on convex corners. E, U: the end points and bar axes at q."""
    n = q.shape[0] - BASE
    R = par.radius
    body = ww.body
    body_velocities(q, v, E, body)
    m = 0
    blocks = ww.blocks
    for k in range(n + 1):
        b = k if k < n else n - 1
        px = E[k, 0]
        py = E[k, 1]
        vx = body[1, b] - body[0, b] * py
        vy = body[2, b] + body[0, b] * px
        reach = MARGIN + h * math.sqrt(vx * vx + vy * vy)
        at = 0.0 if k < n else 1.0
        d = py - wpar.floor
        if d < reach:
            m = _add_contact(m, b, at, 0.0, 1.0, d, ww)
        for i in range(blocks.shape[0]):
            x0 = blocks[i, 0]
            x1 = blocks[i, 1]
            top = blocks[i, 2]
            d, nx, ny = _block_distance(px, py, x0, x1, top)
            if d < reach:
                m = _add_contact(m, b, at, nx, ny, d, ww)
            if d < -INSIDE:
                # a point gone in beside an edge: held by the other face too, or, its
                # nearest face a side, it would sink through the top unopposed
                if ny == 0.0 and py - top > -CORNER_REACH:
                    m = _add_contact(m, b, at, 0.0, 1.0, py - top, ww)
                elif ny != 0.0:
                    dx = max(x0 - px, px - x1)
                    if dx > -CORNER_REACH:
                        m = _add_contact(m, b, at, -1.0 if px < 0.5 * (x0 + x1) else 1.0,
                                         0.0, dx, ww)
    corners = ww.corners
    two_r = 2.0 * R
    for i in range(corners.shape[0]):
        cx = corners[i, 0]
        cy = corners[i, 1]
        for k in range(n):
            rx = cx - E[k, 0]
            ry = cy - E[k, 1]
            s = (rx * U[k, 0] + ry * U[k, 1]) / two_r
            if s <= 0.0 or s >= 1.0:
                continue  # the end points' own contacts cover it
            nx = -U[k, 1]
            ny = U[k, 0]
            if nx * corners[i, 2] + ny * corners[i, 3] < 0.0:
                nx = -nx
                ny = -ny
            gap = -(rx * nx + ry * ny)  # the bar's point beyond the corner, along n
            w = body[0, k]
            pxx = E[k, 0] + s * two_r * U[k, 0]
            pyy = E[k, 1] + s * two_r * U[k, 1]
            vx = body[1, k] - w * pyy
            vy = body[2, k] + w * pxx
            reach = MARGIN + h * math.sqrt(vx * vx + vy * vy)
            if -CORNER_REACH < gap < reach:
                m = _add_contact(m, k, s, nx, ny, gap, ww)
    return min(m, MAX_CONTACTS)


@njit(**JIT)
def near(q, v, h, par, wpar, ww, E, U):
    """Whether any point or bar is within NEAR (plus two steps' travel) of the world."""
    n = q.shape[0] - BASE
    body = ww.body
    body_velocities(q, v, E, body)
    blocks = ww.blocks
    for k in range(n + 1):
        b = k if k < n else n - 1
        vx = body[1, b] - body[0, b] * E[k, 1]
        vy = body[2, b] + body[0, b] * E[k, 0]
        reach = NEAR + 2.0 * h * math.sqrt(vx * vx + vy * vy)
        d, _, _ = point_distance(E[k, 0], E[k, 1], wpar.floor, blocks)
        if d < reach:
            return True
    corners = ww.corners
    two_r = 2.0 * par.radius
    for i in range(corners.shape[0]):
        for k in range(n):
            rx = corners[i, 0] - E[k, 0]
            ry = corners[i, 1] - E[k, 1]
            s = (rx * U[k, 0] + ry * U[k, 1]) / two_r
            if 0.0 < s < 1.0 and abs(rx * U[k, 1] - ry * U[k, 0]) < NEAR:
                return True
    return False
