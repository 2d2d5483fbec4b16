"""The 3D chain's mechanical energy and its fastest rate in one compiled pass: what the
divergence guard reads after every step (engine3d) and what the world's scheme checks
a step against (world_contact3d), apart from both so that neither imports the other."""

from __future__ import annotations

import math

from numba import njit

from slinky3d.dynamics import articulated_body3d as ab
from slinky3d.dynamics.articulated_body import JIT


@njit(**JIT)
def guard_figures(q, u, H, par, sprung_first, frames, ws, tmp):
    """(T + V, the largest |u|, inf when any is not finite) in one compiled pass: what
    the divergence guard reads after every step (chain3d's energy, with the solver's
    mass model and stiffness in `par`; joint 1's spring only when sprung_first)."""
    fastest = 0.0
    for j in range(u.shape[0]):
        a = abs(u[j])
        if not a <= 1e300:  # NaN or inf
            return math.inf, math.inf
        fastest = max(fastest, a)
    R, m, g, s = par[ab.P_R], par[ab.P_M], par[ab.P_G], par[ab.P_S]
    ab.kinematics(q, u, H, R, frames, ws, tmp)
    e = 0.0
    for k in range(frames.shape[0]):
        F, r = frames[k], ws[k]
        # the centroid from E_k: R d + s b; its velocity v_k + omega_k x that
        x0 = R * F[0, 0] + s * F[0, 1]
        x1 = R * F[1, 0] + s * F[1, 1]
        x2 = R * F[2, 0] + s * F[2, 1]
        o0, o1, o2 = r[ab.OM], r[ab.OM + 1], r[ab.OM + 2]
        v0 = r[ab.EV] + o1 * x2 - o2 * x1
        v1 = r[ab.EV + 1] + o2 * x0 - o0 * x2
        v2 = r[ab.EV + 2] + o0 * x1 - o1 * x0
        e += 0.5 * m * (v0 * v0 + v1 * v1 + v2 * v2) + m * g * (r[ab.EP + 1] + x1)
        for a in range(3):  # rotation about the centroid, in (d, b, a)
            w = F[0, a] * o0 + F[1, a] * o1 + F[2, a] * o2
            e += 0.5 * par[ab.P_IC + a] * w * w
        if k > 0 or sprung_first:
            j = 3 + 3 * k
            for a in range(3):
                e += 0.5 * par[ab.P_K + a] * q[j + a] * q[j + a]
    return e, fastest
