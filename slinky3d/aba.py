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
from numba import njit  # nogil: the solver thread does not hold the UI thread back

BASE = 3


@njit(cache=True, error_model="numpy", nogil=True)
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


# Workspace columns, one row per joint (contiguous rows: plain 2D indexing is
# several times faster in numba than column views of the same array).
S0, S1, S2 = 0, 1, 2  # motion subspace
C1, C2 = 3, 4  # velocity-product acceleration (its angular part is 0 in the plane)
P0, P1, P2 = 5, 6, 7  # bias force of the body; of the subtree at prescribed joints
I00, I01, I02, I11, I12, I22 = 8, 9, 10, 11, 12, 13  # articulated inertia (prescribed only)
U0, U1, U2 = 14, 15, 16  # I^A S
DI, UU = 17, 18  # 1 / (S^T I^A S + armature), tau - S^T p
NCOL = 19


@njit(cache=True, error_model="numpy", nogil=True)
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
    # Pass 1: axes, velocity products and bias forces of the bodies, base to tip.
    # The three base joints (x, y, phi_A at E_1) are massless.
    for j in range(BASE):
        ws[j, P0] = 0.0
        ws[j, P1] = 0.0
        ws[j, P2] = 0.0
    ws[0, S0], ws[0, S1], ws[0, S2] = 0.0, 1.0, 0.0
    ws[1, S0], ws[1, S1], ws[1, S2] = 0.0, 0.0, 1.0
    ws[2, S0], ws[2, S1], ws[2, S2] = 1.0, E[0, 1], -E[0, 0]
    ws[0, C1] = ws[0, C2] = 0.0
    vx = qd[0]
    vy = qd[1]
    ws[1, C1] = ws[1, C2] = 0.0
    w = qd[2]
    # joint 2 rotates about E_1: its velocity product is v_{1} x S_2 qd_2
    ws[2, C1] = w * vy
    ws[2, C2] = -w * vx
    vx += ws[2, S1] * w
    vy += ws[2, S2] * w
    sg = 1.0
    for k in range(nj - BASE):
        j = k + BASE
        a1 = sg * E[k, 1]
        a2 = -sg * E[k, 0]
        ws[j, S0] = sg
        ws[j, S1] = a1
        ws[j, S2] = a2
        sw = sg * qd[j]
        sx = a1 * qd[j]
        sy = a2 * qd[j]
        # c_j = v_j x S_j qd_j = v_{j-1} x S_j qd_j
        ws[j, C1] = -w * sy + sw * vy
        ws[j, C2] = w * sx - sw * vx
        w += sw
        vx += sx
        vy += sy
        cx = E[k, 0] + R * U[k, 0]
        cy = E[k, 1] + R * U[k, 1]
        # p = v x* (I v) - f_ext; the angular momentum drops out in the plane
        h1 = m * (vx - cy * w)
        h2 = m * (vy + cx * w)
        ws[j, P0] = vx * h2 - vy * h1 - fext[k, 0]
        ws[j, P1] = -w * h2 - fext[k, 1]
        ws[j, P2] = w * h1 - fext[k, 2]
        sg = -sg
    # Pass 2: articulated inertias and bias forces, tip to base. In a chain the
    # child's contribution is carried in registers instead of stored per joint.
    b00 = b01 = b02 = b11 = b12 = b22 = 0.0
    r0 = r1 = r2 = 0.0
    for j in range(nj - 1, -1, -1):
        if j >= BASE:
            k = j - BASE
            cx = E[k, 0] + R * U[k, 0]
            cy = E[k, 1] + R * U[k, 1]
            a00 = b00 + I + m * (cx * cx + cy * cy)
            a01 = b01 - m * cy
            a02 = b02 + m * cx
            a11 = b11 + m
            a12 = b12
            a22 = b22 + m
        else:
            a00, a01, a02, a11, a12, a22 = b00, b01, b02, b11, b12, b22
        p0 = ws[j, P0] + r0
        p1 = ws[j, P1] + r1
        p2 = ws[j, P2] + r2
        s0 = ws[j, S0]
        s1 = ws[j, S1]
        s2 = ws[j, S2]
        c1 = ws[j, C1]
        c2 = ws[j, C2]
        if presc[j]:
            # Prescribed: the whole inertia passes to the parent; the known
            # acceleration S qdd_p acts like an extra velocity product.
            ws[j, I00] = a00
            ws[j, I01] = a01
            ws[j, I02] = a02
            ws[j, I11] = a11
            ws[j, I12] = a12
            ws[j, I22] = a22
            ws[j, P0] = p0
            ws[j, P1] = p1
            ws[j, P2] = p2
            e0 = s0 * qdd_p[j]
            e1 = c1 + s1 * qdd_p[j]
            e2 = c2 + s2 * qdd_p[j]
            b00, b01, b02, b11, b12, b22 = a00, a01, a02, a11, a12, a22
            r0 = p0 + b00 * e0 + b01 * e1 + b02 * e2
            r1 = p1 + b01 * e0 + b11 * e1 + b12 * e2
            r2 = p2 + b02 * e0 + b12 * e1 + b22 * e2
        else:
            x0 = a00 * s0 + a01 * s1 + a02 * s2
            x1 = a01 * s0 + a11 * s1 + a12 * s2
            x2 = a02 * s0 + a12 * s1 + a22 * s2
            ws[j, U0] = x0
            ws[j, U1] = x1
            ws[j, U2] = x2
            di = 1.0 / (s0 * x0 + s1 * x1 + s2 * x2 + armature[j])
            ws[j, DI] = di
            u = tau[j] - (s0 * p0 + s1 * p1 + s2 * p2)
            ws[j, UU] = u
            y0 = x0 * di
            y1 = x1 * di
            y2 = x2 * di
            b00 = a00 - x0 * y0
            b01 = a01 - x0 * y1
            b02 = a02 - x0 * y2
            b11 = a11 - x1 * y1
            b12 = a12 - x1 * y2
            b22 = a22 - x2 * y2
            rr = u * di
            r0 = p0 + b01 * c1 + b02 * c2 + x0 * rr
            r1 = p1 + b11 * c1 + b12 * c2 + x1 * rr
            r2 = p2 + b12 * c1 + b22 * c2 + x2 * rr
    # Pass 3: accelerations, base to tip. The world base accelerates at +g (gravity).
    a0 = 0.0
    a1 = 0.0
    a2 = g
    for j in range(nj):
        a1 += ws[j, C1]
        a2 += ws[j, C2]
        if presc[j]:
            x = qdd_p[j]
        else:
            x = (ws[j, UU] - (ws[j, U0] * a0 + ws[j, U1] * a1 + ws[j, U2] * a2)) * ws[j, DI]
        qdd[j] = x
        a0 += ws[j, S0] * x
        a1 += ws[j, S1] * x
        a2 += ws[j, S2] * x
        if presc[j]:
            f0 = ws[j, I00] * a0 + ws[j, I01] * a1 + ws[j, I02] * a2 + ws[j, P0]
            f1 = ws[j, I01] * a0 + ws[j, I11] * a1 + ws[j, I12] * a2 + ws[j, P1]
            f2 = ws[j, I02] * a0 + ws[j, I12] * a1 + ws[j, I22] * a2 + ws[j, P2]
            freq[j] = ws[j, S0] * f0 + ws[j, S1] * f1 + ws[j, S2] * f2
        else:
            freq[j] = 0.0


def workspace(n: int) -> np.ndarray:
    """Scratch memory for `aba` with n half hoops, one row per joint."""
    return np.zeros((n + BASE, NCOL))


@njit(cache=True, error_model="numpy", nogil=True)
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


@njit(cache=True, error_model="numpy", nogil=True)
def energy(q, qd, m, I, R, g, k, spring_from, E, U):  # noqa: E741
    """Total mechanical energy T + V in O(N); springs on joints >= spring_from.

    The same quantity as chain.energy (which tests compare it with), compiled
    because the divergence guard evaluates it after every chunk of steps.
    """
    kinematics(q, R, E, U)
    n = q.shape[0] - BASE
    T = 0.0
    V = 0.0
    w = qd[2]
    ex = qd[0]  # velocity of E_k
    ey = qd[1]
    for i in range(n):
        s = 1.0 if i % 2 == 0 else -1.0
        w += s * qd[BASE + i]
        dx = -w * U[i, 1]  # d u / dt
        dy = w * U[i, 0]
        cx = ex + R * dx
        cy = ey + R * dy
        T += 0.5 * (I * w * w + m * (cx * cx + cy * cy))
        ex += 2.0 * R * dx
        ey += 2.0 * R * dy
        V += m * g * (E[i, 1] + R * U[i, 1])
        if BASE + i >= spring_from:
            V += 0.5 * k * q[BASE + i] * q[BASE + i]
    return T + V
