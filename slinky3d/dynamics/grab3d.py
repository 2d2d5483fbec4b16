"""The grab on the 3D chain: a point force at an end point, as generalised forces
(docs/solver.md, "Scenes on the 3D solver").

The law is the planar grab's (forces.py, docs/model.md section 6): a holding spring k
in parallel with a Maxwell element (spring k2 in series with a damper d), the force
capped: with e = target - E_p,

    F = k e + k2 (e - s),     |F| <= F_max,     ds/dt = k2 (e - s) / d

Here the Maxwell element's state s is held through each (sub-)step and advanced
between them by the caller (`advance_maxwell`: half a sub-step before, half after);
the springs act at every stage of the step. A point force F at E_p does the power
F . v_p, v_p = v_1 + sum_{j<p} (R_j w_j) x (E_p - E_j) = J_p u, so its generalised
forces are J_p^T F: F on a free base and R_j^T ((E_p - E_j) x F) on each joint j < p.

In the damped step the springs are linearly implicit, as the joints' are
(`implicit_forces`; docs/solver.md, "The grab"): their stiffness kappa = k + k2
enters the stage's matrix as gamma^2 h^2 kappa J_p^T J_p, which is a point mass
gamma^2 h^2 kappa at E_p (articulated_body3d's PM columns: the O(N) solve unchanged),
and the force its offset, F - kappa J_p J_r(phi0) qx. The undamped (explicit) step
takes them explicitly (`add_forces`).

`grab` (GRAB floats, all 0: no grab): on, the point p, the target (3), k, k2, s (3),
F_max.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from slinky3d.dynamics import articulated_body3d as ab
from slinky3d.dynamics.articulated_body import JIT

G_ON, G_POINT, G_TARGET, G_K, G_K2, G_S, G_MAX = 0, 1, 2, 5, 6, 7, 10
GRAB = 11


def new_grab() -> np.ndarray:
    return np.zeros(GRAB)


@njit(**JIT)
def _point(q, H, R, p, frames, ends, tmp):
    """frames[k] (k < p) and ends[k] = E_k (k <= p) from q and H: E_p."""
    ex, ey, ez = q[0], q[1], q[2]
    ends[0, 0], ends[0, 1], ends[0, 2] = ex, ey, ez
    for k in range(p):
        j = 3 + 3 * k
        ab.exp_rot(q[j], q[j + 1], q[j + 2], tmp)
        P = H if k == 0 else frames[k - 1]
        F = frames[k]
        for i in range(3):  # R_k = R_{k-1} FLIP exp(phi_k)
            p0 = -P[i, 0]
            p1 = -P[i, 1]
            p2 = P[i, 2]
            for c in range(3):
                F[i, c] = p0 * tmp[0, c] + p1 * tmp[1, c] + p2 * tmp[2, c]
        ex += 2.0 * R * F[0, 0]
        ey += 2.0 * R * F[1, 0]
        ez += 2.0 * R * F[2, 0]
        ends[k + 1, 0], ends[k + 1, 1], ends[k + 1, 2] = ex, ey, ez


@njit(**JIT)
def force(q, H, par, grab, frames, ends, tmp, out):
    """The grab's force now (out, 3), with frames and ends filled up to the point; returns
    the cap's scale (1: not capped)."""
    p = int(grab[G_POINT])
    _point(q, H, par[ab.P_R], p, frames, ends, tmp)
    k, k2, fmax = grab[G_K], grab[G_K2], grab[G_MAX]
    n2 = 0.0
    for i in range(3):
        e = grab[G_TARGET + i] - ends[p, i]
        out[i] = k * e + k2 * (e - grab[G_S + i])
        n2 += out[i] * out[i]
    fn = math.sqrt(n2)
    if fn > fmax:
        for i in range(3):
            out[i] *= fmax / fn
        return fmax / fn
    return 1.0


@njit(**JIT)
def add_forces(mode, q, H, par, grab, tau, frames, ends, tmp, f):
    """tau += the grab's generalised forces (module docstring); frames and ends are
    scratch here (the articulated-body pass fills them again), f (3,) too."""
    p = int(grab[G_POINT])
    force(q, H, par, grab, frames, ends, tmp, f)
    point_forces(mode, p - 1, ends[p, 0], ends[p, 1], ends[p, 2], f[0], f[1], f[2], frames,
                 ends, tau)


@njit(**JIT)
def implicit_forces(mode, q, q0, H, par, grab, gh, fresh, jac, qx, tau, frames, ends, tmp,
                    f, ws):
    """tau += the grab's generalised forces in a linearly implicit stage (integrator3d's
    Rosenbrock stages, gh = gamma h; world_contact3d's pieces, gh = T h), and its
    stiffness as a point mass gh^2 kappa at the grabbed point in ws (PM) for the stage's
    solve: the force F(E_p) at q minus kappa (J_p J_r(phi0) qx), J_p the point's
    Jacobian, qx the springs' offset in q (J_r(phi0) qx its rates: the joints' G =
    J_r^-1(phi0) undone), kappa = k + k2; capped, the force's derivative: kappa scaled
    as the cap scales the force, across the force only (its size is the cap's). That
    derivative is taken where fresh (a step's first stage) into jac (kappa, the capped
    axis or 0) and kept for the step's other stages (a W-method's matrix is one a
    step). The Maxwell element's state is held (`advance_maxwell`).
    `clear_point_mass` after."""
    p = int(grab[G_POINT])
    scale = force(q, H, par, grab, frames, ends, tmp, f)
    if fresh:
        jac[0] = (grab[G_K] + grab[G_K2]) * scale
        jac[1] = jac[2] = jac[3] = 0.0  # capped: the force's direction
        if scale < 1.0:
            fn = math.sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2])
            jac[1], jac[2], jac[3] = f[0] / fn, f[1] / fn, f[2] / fn
    kappa, n0, n1, n2 = jac[0], jac[1], jac[2], jac[3]
    e0, e1, e2 = ends[p, 0], ends[p, 1], ends[p, 2]
    d0, d1, d2 = qx[0], qx[1], qx[2]  # E_1's
    for j in range(p):
        i = 3 + 3 * j
        y0, y1, y2 = ab.jr_apply(q0[i], q0[i + 1], q0[i + 2], qx[i], qx[i + 1], qx[i + 2])
        F = frames[j]
        w0 = F[0, 0] * y0 + F[0, 1] * y1 + F[0, 2] * y2
        w1 = F[1, 0] * y0 + F[1, 1] * y1 + F[1, 2] * y2
        w2 = F[2, 0] * y0 + F[2, 1] * y1 + F[2, 2] * y2
        r0, r1, r2 = e0 - ends[j, 0], e1 - ends[j, 1], e2 - ends[j, 2]
        d0 += w1 * r2 - w2 * r1
        d1 += w2 * r0 - w0 * r2
        d2 += w0 * r1 - w1 * r0
    along = n0 * d0 + n1 * d1 + n2 * d2
    d0 -= along * n0
    d1 -= along * n1
    d2 -= along * n2
    point_forces(mode, p - 1, e0, e1, e2, f[0] - kappa * d0, f[1] - kappa * d1,
                 f[2] - kappa * d2, frames, ends, tau)
    if p == 0 and mode != ab.FREE:
        return  # a held point: nothing moves it
    r = ws[max(p - 1, 0)]
    r[ab.PM] = gh * gh * kappa
    r[ab.PM + 1], r[ab.PM + 2], r[ab.PM + 3] = e0, e1, e2
    r[ab.PM + 4], r[ab.PM + 5], r[ab.PM + 6] = n0, n1, n2


@njit(**JIT)
def clear_point_mass(ws):
    """The grab's point mass (implicit_forces) off again, wherever it was (a grab moved
    to another point meanwhile leaves none behind)."""
    for k in range(ws.shape[0]):
        ws[k, ab.PM] = 0.0


@njit(**JIT)
def point_forces(mode, k, p0, p1, p2, f0, f1, f2, frames, ends, tau):
    """tau += the generalised forces of a point force f at p on half hoop k (k = -1:
    at E_1): f on a free base, R_j^T ((p - E_j) x f) on each joint j <= k. The grab's,
    and the world's contact forces (world_contact3d)."""
    if mode == ab.FREE:
        tau[0] += f0
        tau[1] += f1
        tau[2] += f2
    for j in range(k + 1):
        r0, r1, r2 = p0 - ends[j, 0], p1 - ends[j, 1], p2 - ends[j, 2]
        t0 = r1 * f2 - r2 * f1
        t1 = r2 * f0 - r0 * f2
        t2 = r0 * f1 - r1 * f0
        F = frames[j]
        i = 3 + 3 * j
        tau[i] += F[0, 0] * t0 + F[1, 0] * t1 + F[2, 0] * t2
        tau[i + 1] += F[0, 1] * t0 + F[1, 1] * t1 + F[2, 1] * t2
        tau[i + 2] += F[0, 2] * t0 + F[1, 2] * t1 + F[2, 2] * t2


@njit(**JIT)
def advance_maxwell(q, H, par, grab, damping, h, frames, ends, tmp):
    """The Maxwell element's state over h (its time constant d / k2 is the whole
    Slinky's period on the grab, far longer than a sub-step), exactly for e held."""
    p = int(grab[G_POINT])
    _point(q, H, par[ab.P_R], p, frames, ends, tmp)
    decay = math.exp(-grab[G_K2] * h / damping) if damping > 0.0 else 1.0
    for i in range(3):
        e = grab[G_TARGET + i] - ends[p, i]
        grab[G_S + i] = e + (grab[G_S + i] - e) * decay
