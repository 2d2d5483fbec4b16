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

import math
from typing import Any

import numpy as np
from numba import njit  # nogil: the solver thread does not hold the UI thread back

from slinky3d.model.chain import BASE

FM: set[str] = {"contract"}  # fused multiply-add only: results stay IEEE otherwise
# Options of every kernel. _nrt=False: no reference counting, since no kernel
# allocates; with it, each array taken from the solver's work arrays costs an
# atomic incref/decref pair, ~0.2 us a call (17 % of test 4S's run time). Typed
# Any: numba's stubs do not list _nrt, and njit's overloads accept Any values.
JIT: dict[str, Any] = {"cache": True, "error_model": "numpy", "nogil": True, "_nrt": False}


@njit(**JIT, fastmath=FM, inline="always")
def _sincos(x):
    """cos x, sin x without branches, so that a loop over joints vectorizes (libm's
    cos and sin are opaque calls, ~3x slower here): reduction by pi/2 in three
    parts (Cody-Waite), Taylor polynomials on |r| <= pi/4; error ~2e-16."""
    kf = np.floor(x * 0.63661977236758134 + 0.5)
    r = x - kf * 1.5707963267341256
    r = r - kf * 6.077100506506192e-11
    r = r - kf * 2.0222662487959506e-21
    r2 = r * r
    sr = r + r * r2 * (-1.0 / 6 + r2 * (1.0 / 120 + r2 * (-1.0 / 5040 + r2 * (
        1.0 / 362880 + r2 * (-1.0 / 39916800 + r2 * (1.0 / 6227020800
                                                   + r2 * (-1.0 / 1307674368000)))))))
    cr = 1.0 + r2 * (-0.5 + r2 * (1.0 / 24 + r2 * (-1.0 / 720 + r2 * (1.0 / 40320 + r2 * (
        -1.0 / 3628800 + r2 * (1.0 / 479001600 + r2 * (-1.0 / 87178291200
                                                      + r2 * (1.0 / 20922789888000))))))))
    quad = kf - 4.0 * np.floor(kf * 0.25)  # quadrant 0..3
    odd = quad - 2.0 * np.floor(quad * 0.5)
    sign = 1.0 - 2.0 * np.floor(quad * 0.5)
    # quadrants 0..3: (cos, sin) = (cr, sr), (-sr, cr), (-cr, -sr), (sr, -cr)
    return sign * (cr - odd * (sr + cr)), sign * (sr + odd * (cr - sr))


@njit(cache=True, error_model="numpy", nogil=True, fastmath=FM)  # allocates
def _sincos_many(x):
    """Arrays cos x, sin x (for tests)."""
    c = np.empty_like(x)
    s = np.empty_like(x)
    for i in range(x.shape[0]):
        c[i], s[i] = _sincos(x[i])
    return c, s


# Workspace rows, one column per joint (row j of the (NROW, N + 3) array is one
# contiguous quantity, so the loops without a recurrence vectorize).
S0, S1, S2 = 0, 1, 2  # motion subspace
C1, C2 = 3, 4  # velocity-product acceleration (its angular part is 0 in the plane)
P0, P1, P2 = 5, 6, 7  # bias force of the body; of the subtree at prescribed joints
I00, I01, I02, I11, I12, I22 = 8, 9, 10, 11, 12, 13  # articulated inertia (prescribed only)
Y0, Y1, Y2 = 14, 15, 16  # free joints: I^A S / D  (D = S^T I^A S + armature)
UD = 17  # free joints: (tau - S^T p) / D - Y . c, pass 3's constant part
TH, CO, SN = 19, 20, 21  # bar angle and its cosine, sine (bar k in column k)
EX, EY, WW, VX, VY = 22, 23, 24, 25, 26  # bar start point; body velocity (omega, v at O)
NROW = 27


@njit(**JIT, fastmath=FM)
def kinematics(q, R, E, U, ws):
    """End points E (N+1, 2) and bar unit vectors U (N, 2) from q; ws: workspace."""
    n = q.shape[0] - BASE
    th = ws[TH]
    co = ws[CO]
    sn = ws[SN]
    a = q[2]
    for k in range(n):
        a += q[BASE + k] * (1 - 2 * (k & 1))  # axis sign (-1)^(k+1), k 1-based
        th[k] = a
    for k in range(n):  # no recurrence: vectorized
        c, s = _sincos(th[k])
        d = 2 * (k & 1) - 1  # (-1)^k
        co[k] = d * c
        sn[k] = d * s
    ex = q[0]
    ey = q[1]
    E[0, 0] = ex
    E[0, 1] = ey
    for k in range(n):
        U[k, 0] = co[k]
        U[k, 1] = sn[k]
        ws[EX, k] = ex
        ws[EY, k] = ey
        ex += 2.0 * R * co[k]
        ey += 2.0 * R * sn[k]
        E[k + 1, 0] = ex
        E[k + 1, 1] = ey


@njit(**JIT, fastmath=FM)
def aba(q, qd, tau, presc, qdd_p, fext, armature, m, I, R, g, qdd, joint_force, E, U,  # noqa: E741
        ws):
    """Hybrid articulated-body dynamics.

    tau: joint forces on free joints; presc: prescribed-joint mask; qdd_p: their
    accelerations; fext (N, 3): external spatial forces on the bars (world, at O);
    armature: added to each joint's diagonal (implicit damping). g = 0 and qd = 0
    give the impulse response. Writes qdd (all joints) and joint_force (the force
    each prescribed joint needs; 0 elsewhere). E, U are filled; ws is workspace
    from `workspace(N)`.
    """
    nj = q.shape[0]
    n = nj - BASE
    kinematics(q, R, E, U, ws)
    # Pass 1: axes, velocity products and bias forces of the bodies, base to tip.
    # The three base joints (x, y, phi_A at E_1) are massless. The recurrences
    # (body velocities) come first; the per-body products after, vectorized.
    for j in range(BASE):
        ws[P0, j] = 0.0
        ws[P1, j] = 0.0
        ws[P2, j] = 0.0
    ws[S0, 0], ws[S1, 0], ws[S2, 0] = 0.0, 1.0, 0.0
    ws[S0, 1], ws[S1, 1], ws[S2, 1] = 0.0, 0.0, 1.0
    ws[S0, 2], ws[S1, 2], ws[S2, 2] = 1.0, E[0, 1], -E[0, 0]
    ws[C1, 0] = ws[C2, 0] = ws[C1, 1] = ws[C2, 1] = 0.0
    vx = qd[0]
    vy = qd[1]
    w = qd[2]
    # joint 2 rotates about E_1: its velocity product is v_{1} x S_2 qd_2
    ws[C1, 2] = w * vy
    ws[C2, 2] = -w * vx
    vx += ws[S1, 2] * w
    vy += ws[S2, 2] * w
    for k in range(n):
        j = k + BASE
        sg = 1 - 2 * (k & 1)
        ws[WW, k] = w  # velocity of the parent body
        ws[VX, k] = vx
        ws[VY, k] = vy
        w += sg * qd[j]
        vx += sg * ws[EY, k] * qd[j]
        vy -= sg * ws[EX, k] * qd[j]
    for k in range(n):  # no recurrence: vectorized
        j = k + BASE
        sg = 1 - 2 * (k & 1)
        a1 = sg * ws[EY, k]
        a2 = -sg * ws[EX, k]
        ws[S0, j] = sg
        ws[S1, j] = a1
        ws[S2, j] = a2
        w0 = ws[WW, k]
        vx0 = ws[VX, k]
        vy0 = ws[VY, k]
        sw = sg * qd[j]
        sx = a1 * qd[j]
        sy = a2 * qd[j]
        # c_j = v_j x S_j qd_j = v_{j-1} x S_j qd_j
        ws[C1, j] = -w0 * sy + sw * vy0
        ws[C2, j] = w0 * sx - sw * vx0
        w1 = w0 + sw
        vx1 = vx0 + sx
        vy1 = vy0 + sy
        cx = ws[EX, k] + R * ws[CO, k]
        cy = ws[EY, k] + R * ws[SN, k]
        # p = v x* (I v) - f_ext; the angular momentum drops out in the plane
        h1 = m * (vx1 - cy * w1)
        h2 = m * (vy1 + cx * w1)
        ws[P0, j] = vx1 * h2 - vy1 * h1 - fext[k, 0]
        ws[P1, j] = -w1 * h2 - fext[k, 1]
        ws[P2, j] = w1 * h1 - fext[k, 2]
    # Pass 2: articulated inertias and bias forces, tip to base. In a chain the
    # child's contribution is carried in registers instead of stored per joint.
    # The free joint's pivot s^T I^A s is summed from the child's inertia directly
    # (not from I^A s), which shortens the chain of dependent operations.
    b00 = b01 = b02 = b11 = b12 = b22 = 0.0
    r0 = r1 = r2 = 0.0
    for j in range(nj - 1, -1, -1):
        s0 = ws[S0, j]
        s1 = ws[S1, j]
        s2 = ws[S2, j]
        if j >= BASE:
            k = j - BASE
            cx = ws[EX, k] + R * ws[CO, k]
            cy = ws[EY, k] + R * ws[SN, k]
            m00 = I + m * (cx * cx + cy * cy)
            m01 = -m * cy
            m02 = m * cx
            m11 = m
        else:
            m00 = m01 = m02 = m11 = 0.0
        a00 = b00 + m00
        a01 = b01 + m01
        a02 = b02 + m02
        a11 = b11 + m11
        a12 = b12
        a22 = b22 + m11
        p0 = ws[P0, j] + r0
        p1 = ws[P1, j] + r1
        p2 = ws[P2, j] + r2
        c1 = ws[C1, j]
        c2 = ws[C2, j]
        if presc[j]:
            # Prescribed: the whole inertia passes to the parent; the known
            # acceleration S qdd_p acts like an extra velocity product.
            ws[I00, j] = a00
            ws[I01, j] = a01
            ws[I02, j] = a02
            ws[I11, j] = a11
            ws[I12, j] = a12
            ws[I22, j] = a22
            ws[P0, j] = p0
            ws[P1, j] = p1
            ws[P2, j] = p2
            e0 = s0 * qdd_p[j]
            e1 = c1 + s1 * qdd_p[j]
            e2 = c2 + s2 * qdd_p[j]
            b00, b01, b02, b11, b12, b22 = a00, a01, a02, a11, a12, a22
            r0 = p0 + b00 * e0 + b01 * e1 + b02 * e2
            r1 = p1 + b01 * e0 + b11 * e1 + b12 * e2
            r2 = p2 + b02 * e0 + b12 * e1 + b22 * e2
        else:
            # the body's share of I^A s and s^T I^A s does not wait for the child
            xm0 = m00 * s0 + m01 * s1 + m02 * s2
            xm1 = m01 * s0 + m11 * s1
            xm2 = m02 * s0 + m11 * s2
            dm = s0 * xm0 + s1 * xm1 + s2 * xm2 + armature[j]
            x0 = (b00 * s0 + b01 * s1) + (b02 * s2 + xm0)
            x1 = (b01 * s0 + b11 * s1) + (b12 * s2 + xm1)
            x2 = (b02 * s0 + b12 * s1) + (b22 * s2 + xm2)
            d = ((b00 * (s0 * s0) + b11 * (s1 * s1)) + (b22 * (s2 * s2) + dm)) + 2.0 * (
                (b01 * (s0 * s1) + b02 * (s0 * s2)) + b12 * (s1 * s2))
            di = 1.0 / d
            u = tau[j] - (s0 * p0 + s1 * p1 + s2 * p2)
            y0 = x0 * di
            y1 = x1 * di
            y2 = x2 * di
            ws[Y0, j] = y0
            ws[Y1, j] = y1
            ws[Y2, j] = y2
            ws[UD, j] = u * di - (y1 * c1 + y2 * c2)
            b00 = a00 - (x0 * x0) * di
            b01 = a01 - (x0 * x1) * di
            b02 = a02 - (x0 * x2) * di
            b11 = a11 - (x1 * x1) * di
            b12 = a12 - (x1 * x2) * di
            b22 = a22 - (x2 * x2) * di
            rr = u * di
            r0 = p0 + b01 * c1 + b02 * c2 + x0 * rr
            r1 = p1 + b11 * c1 + b12 * c2 + x1 * rr
            r2 = p2 + b12 * c1 + b22 * c2 + x2 * rr
    # Pass 3: accelerations, base to tip. The world base accelerates at +g (gravity).
    a0 = 0.0
    a1 = 0.0
    a2 = g
    # A free joint's acceleration is UD - Y . a, a the parent body's: pass 2 folded
    # the velocity product and 1 / D in, which shortens this loop's recurrence.
    for j in range(nj):
        if presc[j]:
            x = qdd_p[j]
        else:
            x = (ws[UD, j] - ws[Y0, j] * a0) - (ws[Y1, j] * a1 + ws[Y2, j] * a2)
        qdd[j] = x
        a0 += ws[S0, j] * x
        a1 = (a1 + ws[C1, j]) + ws[S1, j] * x
        a2 = (a2 + ws[C2, j]) + ws[S2, j] * x
        if presc[j]:
            f0 = ws[I00, j] * a0 + ws[I01, j] * a1 + ws[I02, j] * a2 + ws[P0, j]
            f1 = ws[I01, j] * a0 + ws[I11, j] * a1 + ws[I12, j] * a2 + ws[P1, j]
            f2 = ws[I02, j] * a0 + ws[I12, j] * a1 + ws[I22, j] * a2 + ws[P2, j]
            joint_force[j] = ws[S0, j] * f0 + ws[S1, j] * f1 + ws[S2, j] * f2
        else:
            joint_force[j] = 0.0


def workspace(n: int) -> np.ndarray:
    """Scratch memory for `aba` and `kinematics` with n half hoops."""
    return np.zeros((NROW, n + BASE))


@njit(**JIT)
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


@njit(**JIT)
def energy_parts(q, qd, m, I, R, g, k, spring_from, E, U, ws):  # noqa: E741
    """(kinetic, gravitational, spring) energy in O(N); springs on joints >= spring_from.

    The same quantities as chain.kinetic_energy and chain.potential_energy (which
    tests compare them with), compiled because the divergence guard evaluates them
    after every chunk of steps and every snapshot carries them.
    """
    kinematics(q, R, E, U, ws)
    n = q.shape[0] - BASE
    T = 0.0
    Vg = 0.0
    Vs = 0.0
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
        Vg += m * g * (E[i, 1] + R * U[i, 1])
        if BASE + i >= spring_from:
            Vs += 0.5 * k * q[BASE + i] * q[BASE + i]
    return T, Vg, Vs


@njit(**JIT)
def guard_figures(q, qd, m, I, R, g, k, spring_from, E, U, ws):  # noqa: E741
    """(T + V, fastest): the mechanical energy (energy_parts summed in that order) and
    the largest |qd|, inf when any coordinate or rate is not finite. What the divergence
    guard reads after every step, in one compiled call."""
    fastest = 0.0
    for j in range(q.shape[0]):
        if not (math.isfinite(q[j]) and math.isfinite(qd[j])):
            return math.nan, math.inf
        fastest = max(fastest, abs(qd[j]))
    T, Vg, Vs = energy_parts(q, qd, m, I, R, g, k, spring_from, E, U, ws)
    return T + Vg + Vs, fastest


@njit(**JIT)
def energy(q, qd, m, I, R, g, k, spring_from, E, U, ws):  # noqa: E741
    """Total mechanical energy T + V in O(N) (energy_parts summed)."""
    T, Vg, Vs = energy_parts(q, qd, m, I, R, g, k, spring_from, E, U, ws)
    return T + (Vg + Vs)
