"""O(N) dynamics of the chain: Featherstone's articulated-body algorithm, compiled.

Planar spatial algebra in world coordinates referred to the origin: a motion
vector is (omega, v_x, v_y), a force vector (moment about O, f_x, f_y). The chain
has N + 3 joints, one per coordinate of q = (x_A, y_A, phi_A, theta_1..theta_N):
two massless prismatic joints, a massless revolute joint at E_1 (phi_A), then one
revolute joint per half hoop (theta_k, axis sign (-1)^(k+1)) carrying bar k.

"Hybrid" dynamics: any joint can be *prescribed* (its acceleration is given and
the force it needs comes out). That one mechanism covers a clamped or scripted
anchor (the first three joints), a free Slinky (theta_1 frozen, no spring), and
coils in resting contact (joint locked at theta_min: the force that holds it is
the contact torque). With zero velocities and gravity the same routine maps joint
impulses to velocity jumps, which is what the impact law needs.

A dense mass matrix with Cholesky (chain.py) costs O(N^2)-O(N^3); this is O(N).
Compiled with numba: a per-hoop Python loop would be ~1000x slower, and numba
releases the GIL so the solver thread does not stall the UI.
"""

from __future__ import annotations

import numpy as np
from numba import njit

BASE = 3


@njit(cache=True, error_model="numpy")
def kinematics(q, R, E, U):
    """End points E (N+1, 2) and bar unit vectors U (N, 2) from q."""
    n = q.shape[0] - BASE
    E[0, 0] = q[0]
    E[0, 1] = q[1]
    th = q[2]
    for k in range(n):
        s = 1.0 if k % 2 == 0 else -1.0  # (-1)^(k+1), k 1-based
        th += s * q[BASE + k]
        d = -s  # (-1)^k
        U[k, 0] = d * np.cos(th)
        U[k, 1] = d * np.sin(th)
        E[k + 1, 0] = E[k, 0] + 2.0 * R * U[k, 0]
        E[k + 1, 1] = E[k, 1] + 2.0 * R * U[k, 1]


@njit(cache=True, error_model="numpy")
def _axes(E, S):
    """Joint motion subspaces S (N+3, 3) in world coordinates."""
    n = E.shape[0] - 1
    S[0, 0], S[0, 1], S[0, 2] = 0.0, 1.0, 0.0
    S[1, 0], S[1, 1], S[1, 2] = 0.0, 0.0, 1.0
    S[2, 0], S[2, 1], S[2, 2] = 1.0, E[0, 1], -E[0, 0]
    for k in range(n):
        s = 1.0 if k % 2 == 0 else -1.0
        S[BASE + k, 0] = s
        S[BASE + k, 1] = s * E[k, 1]
        S[BASE + k, 2] = -s * E[k, 0]


@njit(cache=True, error_model="numpy")
def aba(q, qd, tau, presc, qdd_p, fext, armature, m, I, R, g, qdd, freq, E, U, ws):  # noqa: E741
    """Hybrid articulated-body dynamics.

    tau: joint forces on free joints; presc: prescribed-joint mask; qdd_p: their
    accelerations; fext (N, 3): external spatial forces on the bars (world, at O);
    armature: added to each joint's diagonal (implicit damping). g = 0 and qd = 0
    give the impulse response. Writes qdd (all joints) and freq (the joint force
    each prescribed joint needs; 0 elsewhere). E, U are filled; ws is workspace
    from `workspace(N)`.
    """
    nj = q.shape[0]
    kinematics(q, R, E, U)
    S = ws[:, 0:3]
    V = ws[:, 3:6]
    C = ws[:, 6:9]
    P = ws[:, 9:12]
    Uv = ws[:, 12:15]
    A = ws[:, 15:18]
    IA = ws[:, 18:27]  # row-major 3x3 articulated inertia per joint
    D = ws[:, 27]
    uu = ws[:, 28]
    _axes(E, S)
    # Pass 1: velocities, velocity-product accelerations, body inertias and bias forces.
    w = 0.0
    vx = 0.0
    vy = 0.0
    for j in range(nj):
        sw = S[j, 0] * qd[j]
        sx = S[j, 1] * qd[j]
        sy = S[j, 2] * qd[j]
        # c_j = v_j x (S_j qd_j), with v_j = v_{j-1} + S_j qd_j (so v_j x S qd = v_{j-1} x S qd)
        C[j, 0] = 0.0
        C[j, 1] = -w * sy + sw * vy
        C[j, 2] = w * sx - sw * vx
        w += sw
        vx += sx
        vy += sy
        V[j, 0] = w
        V[j, 1] = vx
        V[j, 2] = vy
        for r in range(9):
            IA[j, r] = 0.0
        P[j, 0] = 0.0
        P[j, 1] = 0.0
        P[j, 2] = 0.0
        if j >= BASE:
            k = j - BASE
            cx = E[k, 0] + R * U[k, 0]
            cy = E[k, 1] + R * U[k, 1]
            i00 = I + m * (cx * cx + cy * cy)
            i01 = -m * cy
            i02 = m * cx
            IA[j, 0] = i00
            IA[j, 1] = i01
            IA[j, 2] = i02
            IA[j, 3] = i01
            IA[j, 4] = m
            IA[j, 6] = i02
            IA[j, 8] = m
            # h = I v (momentum), p = v x* h - f_ext; the angular part of h
            # drops out of v x* h in the plane
            h1 = i01 * w + m * vx
            h2 = i02 * w + m * vy
            P[j, 0] = vx * h2 - vy * h1 - fext[k, 0]
            P[j, 1] = -w * h2 - fext[k, 1]
            P[j, 2] = w * h1 - fext[k, 2]
    # Pass 2: articulated inertias, tip to base.
    for j in range(nj - 1, -1, -1):
        s0 = S[j, 0]
        s1 = S[j, 1]
        s2 = S[j, 2]
        a00 = IA[j, 0]
        a01 = IA[j, 1]
        a02 = IA[j, 2]
        a11 = IA[j, 4]
        a12 = IA[j, 5]
        a22 = IA[j, 8]
        p0 = P[j, 0]
        p1 = P[j, 1]
        p2 = P[j, 2]
        c0 = C[j, 0]
        c1 = C[j, 1]
        c2 = C[j, 2]
        if presc[j]:
            # Prescribed: the whole inertia passes to the parent; the known
            # acceleration S qdd_p acts like an extra velocity product.
            e0 = c0 + s0 * qdd_p[j]
            e1 = c1 + s1 * qdd_p[j]
            e2 = c2 + s2 * qdd_p[j]
            b00, b01, b02, b11, b12, b22 = a00, a01, a02, a11, a12, a22
            q0 = p0 + b00 * e0 + b01 * e1 + b02 * e2
            q1 = p1 + b01 * e0 + b11 * e1 + b12 * e2
            q2 = p2 + b02 * e0 + b12 * e1 + b22 * e2
            D[j] = 0.0
            uu[j] = 0.0
        else:
            x0 = a00 * s0 + a01 * s1 + a02 * s2
            x1 = a01 * s0 + a11 * s1 + a12 * s2
            x2 = a02 * s0 + a12 * s1 + a22 * s2
            Uv[j, 0] = x0
            Uv[j, 1] = x1
            Uv[j, 2] = x2
            d = s0 * x0 + s1 * x1 + s2 * x2 + armature[j]
            D[j] = d
            u = tau[j] - (s0 * p0 + s1 * p1 + s2 * p2)
            uu[j] = u
            di = 1.0 / d
            y0 = x0 * di
            y1 = x1 * di
            y2 = x2 * di
            b00 = a00 - x0 * y0
            b01 = a01 - x0 * y1
            b02 = a02 - x0 * y2
            b11 = a11 - x1 * y1
            b12 = a12 - x1 * y2
            b22 = a22 - x2 * y2
            r = u * di
            q0 = p0 + b00 * c0 + b01 * c1 + b02 * c2 + x0 * r
            q1 = p1 + b01 * c0 + b11 * c1 + b12 * c2 + x1 * r
            q2 = p2 + b02 * c0 + b12 * c1 + b22 * c2 + x2 * r
        if j > 0:
            IA[j - 1, 0] += b00
            IA[j - 1, 1] += b01
            IA[j - 1, 2] += b02
            IA[j - 1, 3] += b01
            IA[j - 1, 4] += b11
            IA[j - 1, 5] += b12
            IA[j - 1, 6] += b02
            IA[j - 1, 7] += b12
            IA[j - 1, 8] += b22
            P[j - 1, 0] += q0
            P[j - 1, 1] += q1
            P[j - 1, 2] += q2
    # Pass 3: accelerations, base to tip. The world base accelerates at +g (gravity).
    a0 = 0.0
    a1 = 0.0
    a2 = g
    for j in range(nj):
        a0 += C[j, 0]
        a1 += C[j, 1]
        a2 += C[j, 2]
        if presc[j]:
            x = qdd_p[j]
        else:
            x = (uu[j] - (Uv[j, 0] * a0 + Uv[j, 1] * a1 + Uv[j, 2] * a2)) / D[j]
        qdd[j] = x
        a0 += S[j, 0] * x
        a1 += S[j, 1] * x
        a2 += S[j, 2] * x
        A[j, 0] = a0
        A[j, 1] = a1
        A[j, 2] = a2
        if presc[j]:
            f0 = IA[j, 0] * a0 + IA[j, 1] * a1 + IA[j, 2] * a2 + P[j, 0]
            f1 = IA[j, 3] * a0 + IA[j, 4] * a1 + IA[j, 5] * a2 + P[j, 1]
            f2 = IA[j, 6] * a0 + IA[j, 7] * a1 + IA[j, 8] * a2 + P[j, 2]
            freq[j] = S[j, 0] * f0 + S[j, 1] * f1 + S[j, 2] * f2
        else:
            freq[j] = 0.0


def workspace(n: int) -> np.ndarray:
    """Scratch memory for `aba` with n half hoops, one row per joint."""
    return np.zeros((n + BASE, 29))


@njit(cache=True, error_model="numpy")
def point_force(E, k, fx, fy, fext):
    """Add a world force (fx, fy) at end point E_k (0-based k) to fext.

    E_k is joint k of bar k (or the tip of bar N-1): either body gives the same
    generalised force, since the point lies on the joint axis.
    """
    n = fext.shape[0]
    b = k if k < n else n - 1
    px = E[k, 0]
    py = E[k, 1]
    fext[b, 0] += px * fy - py * fx
    fext[b, 1] += fx
    fext[b, 2] += fy
