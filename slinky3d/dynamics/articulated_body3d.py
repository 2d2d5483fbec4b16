"""O(N) dynamics of the 3D chain: Featherstone's articulated-body algorithm with
spherical joints, compiled (docs/solver.md, "The 3D solver").

The model is chain3d's (docs/model.md section 12). Coordinates, flat so that the
stepper treats them as one vector each:

* q = (x, phi_1..phi_N), 3 + 3N: E_1 and the joints' rotation vectors, phi_k in half
  hoop k's (d, b, a). Half hoop k's frame is R_k = R_{k-1} FLIP exp(phi_k), R_0 the
  holder H (for a clamped end, the holder's fixed frame; otherwise a chart that the
  stepper moves with half hoop 1, so that phi_1 stays small);
* u = (v, w_1..w_N): E_1's velocity (world) and each joint's relative angular velocity
  R_k^T (omega_k - omega_{k-1}), in half hoop k's frame; phi_dot = J_r^-1(phi) w.

Spatial algebra in world coordinates referred to the origin, as the planar kernels'
(articulated_body.py): a motion vector is (omega, v_O), a force (moment about O, f).
Joint k is a ball joint at E_k with motion subspace S = [I; [E_k]x] for the world
components of its rate; the base is fixed, or (free) three massless prismatic joints.
All spatial quantities share one point, so a child's articulated inertia adds to its
parent's without a transform. Gravity enters as the base's upward acceleration.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from slinky3d.dynamics.articulated_body import JIT

CLAMPED, PIVOT, FREE = 0, 1, 2  # anchor modes, in chain3d.ANCHORS' order

# Parameter vector (float64), by index
P_M, P_R, P_G, P_CD, P_S = 0, 1, 2, 3, 4  # m, R, g, C_D, centroid offset along b
P_K = 5  # 3: joint stiffness about (d, b, a)
P_IC = 8  # 9: inertia about the centroid in (d, b, a), row-major
NPAR = 17

# Workspace columns, one row per half hoop
EP = 0  # 3: E_k
EV = 3  # 3: E_k's velocity
OM = 6  # 3: omega_k
WW = 9  # 3: R_k w_k, the joint's rate in world components
CC = 12  # 6: velocity-product acceleration c_k
PB = 18  # 6: bias force of the body
UM = 24  # 18: U = I^A S, (6, 3) row-major
DI = 42  # 9: D^-1, D = S^T I^A S + armature
UU = 51  # 3: tau - S^T p^A
TW = 54  # 3: joint force (world)
NCOL = 57
# Scratch rows: the child's articulated inertia (36) and bias (6), carried tip to base
SC_IA, SC_PA, SC_A = 0, 36, 42  # SC_A: 9 (a 3 x 3 inverse, or 6)
NSCR = 51


def workspace(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(per-half-hoop rows, scratch) for `aba` with n half hoops."""
    return np.zeros((n, NCOL)), np.zeros(NSCR)


def parameters(m: float, R: float, g: float, C_D: float, s: float, K: np.ndarray,
               Ic: np.ndarray) -> np.ndarray:
    """The kernels' parameter vector (indices P_*)."""
    par = np.zeros(NPAR)
    par[P_M], par[P_R], par[P_G], par[P_CD], par[P_S] = m, R, g, C_D, s
    par[P_K:P_K + 3] = K
    par[P_IC:P_IC + 9] = np.asarray(Ic, float).reshape(9)
    return par


@njit(**JIT, inline="always")
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(**JIT)
def exp_rot(p0, p1, p2, out):
    """Rotation matrix exp([phi]x) (Rodrigues) into out (3, 3)."""
    t2 = p0 * p0 + p1 * p1 + p2 * p2
    if t2 < 1e-12:
        a = 1.0 - t2 / 6.0
        b = 0.5 - t2 / 24.0
    else:
        th = math.sqrt(t2)
        a = math.sin(th) / th
        b = (1.0 - math.cos(th)) / t2
    out[0, 0] = 1.0 - b * (p1 * p1 + p2 * p2)
    out[1, 1] = 1.0 - b * (p0 * p0 + p2 * p2)
    out[2, 2] = 1.0 - b * (p0 * p0 + p1 * p1)
    out[0, 1] = -a * p2 + b * p0 * p1
    out[1, 0] = a * p2 + b * p0 * p1
    out[0, 2] = a * p1 + b * p0 * p2
    out[2, 0] = -a * p1 + b * p0 * p2
    out[1, 2] = -a * p0 + b * p1 * p2
    out[2, 1] = a * p0 + b * p1 * p2


@njit(**JIT, inline="always")
def jr_inv_coef(p0, p1, p2):
    """c of J_r^-1(phi) = I + 1/2 [phi]x + c [phi]x^2 (SO(3)'s inverse right Jacobian)."""
    t2 = p0 * p0 + p1 * p1 + p2 * p2
    if t2 < 1e-8:
        return 1.0 / 12.0 + t2 / 720.0
    th = math.sqrt(t2)
    return 1.0 / t2 - (1.0 + math.cos(th)) / (2.0 * th * math.sin(th))


@njit(**JIT, inline="always")
def jr_inv_apply(p0, p1, p2, c, y0, y1, y2, sign):
    """J_r^-1(phi) y (sign = 1) or J_r^-T(phi) y (sign = -1):
    y + sign/2 phi x y + c phi x (phi x y)."""
    z0, z1, z2 = _cross(p0, p1, p2, y0, y1, y2)
    zz0, zz1, zz2 = _cross(p0, p1, p2, z0, z1, z2)
    h = 0.5 * sign
    return y0 + h * z0 + c * zz0, y1 + h * z1 + c * zz1, y2 + h * z2 + c * zz2


@njit(**JIT)
def kinematics(q, u, H, R, frames, ws, tmp):
    """Frames (N, 3, 3), and in ws the end points, their velocities, omega_k and the
    joints' world rates, from q, u and the holder H; tmp: (3, 3) scratch."""
    n = frames.shape[0]
    ex, ey, ez = q[0], q[1], q[2]
    vx, vy, vz = u[0], u[1], u[2]
    o0 = o1 = o2 = 0.0
    for k in range(n):
        j = 3 + 3 * k
        exp_rot(q[j], q[j + 1], q[j + 2], tmp)
        P = H if k == 0 else frames[k - 1]
        F = frames[k]
        # R_k = R_{k-1} FLIP exp(phi_k); FLIP reverses d and b
        for i in range(3):
            p0 = -P[i, 0]
            p1 = -P[i, 1]
            p2 = P[i, 2]
            for c in range(3):
                F[i, c] = p0 * tmp[0, c] + p1 * tmp[1, c] + p2 * tmp[2, c]
        r = ws[k]
        r[EP], r[EP + 1], r[EP + 2] = ex, ey, ez
        r[EV], r[EV + 1], r[EV + 2] = vx, vy, vz
        w0 = F[0, 0] * u[j] + F[0, 1] * u[j + 1] + F[0, 2] * u[j + 2]
        w1 = F[1, 0] * u[j] + F[1, 1] * u[j + 1] + F[1, 2] * u[j + 2]
        w2 = F[2, 0] * u[j] + F[2, 1] * u[j + 1] + F[2, 2] * u[j + 2]
        r[WW], r[WW + 1], r[WW + 2] = w0, w1, w2
        o0 += w0
        o1 += w1
        o2 += w2
        r[OM], r[OM + 1], r[OM + 2] = o0, o1, o2
        dx, dy, dz = 2.0 * R * F[0, 0], 2.0 * R * F[1, 0], 2.0 * R * F[2, 0]
        ex += dx
        ey += dy
        ez += dz
        c0, c1, c2 = _cross(o0, o1, o2, dx, dy, dz)
        vx += c0
        vy += c1
        vz += c2


@njit(**JIT)
def _inv3(a, out, base):
    """out[base:base+9] = the inverse of the symmetric 3 x 3 a (9, row-major)."""
    c00 = a[4] * a[8] - a[5] * a[7]
    c01 = a[5] * a[6] - a[3] * a[8]
    c02 = a[3] * a[7] - a[4] * a[6]
    det = a[0] * c00 + a[1] * c01 + a[2] * c02
    di = 1.0 / det
    out[base + 0] = c00 * di
    out[base + 1] = (a[2] * a[7] - a[1] * a[8]) * di
    out[base + 2] = (a[1] * a[5] - a[2] * a[4]) * di
    out[base + 3] = c01 * di
    out[base + 4] = (a[0] * a[8] - a[2] * a[6]) * di
    out[base + 5] = (a[2] * a[3] - a[0] * a[5]) * di
    out[base + 6] = c02 * di
    out[base + 7] = (a[1] * a[6] - a[0] * a[7]) * di
    out[base + 8] = (a[0] * a[4] - a[1] * a[3]) * di


@njit(**JIT)
def aba(mode, q, u, H, tau, arm, par, qdd, frames, ws, scr, tmp, d9):
    """Accelerations qdd = (v_dot, w_dot_1..w_dot_N) (w_dot in body components).

    tau (3 + 3N): generalised forces, the joints' in body components (the base's are
    unused); arm (N, 3, 3): each joint's armature, body components (a Rosenbrock
    stage's implicit springs and damping). mode: CLAMPED, PIVOT or FREE (the base).
    ws, scr from `workspace`; tmp (3, 3), d9 (9): scratch.
    """
    n = frames.shape[0]
    m = par[P_M]
    R = par[P_R]
    sb = par[P_S]
    kinematics(q, u, H, R, frames, ws, tmp)
    # Pass 1: velocity products and bias forces (no recurrence left: kinematics did it)
    for k in range(n):
        r = ws[k]
        F = frames[k]
        e0, e1, e2 = r[EP], r[EP + 1], r[EP + 2]
        w0, w1, w2 = r[WW], r[WW + 1], r[WW + 2]
        o0, o1, o2 = r[OM], r[OM + 1], r[OM + 2]
        # c = (omega_{k-1} x w, E x (omega_{k-1} x w) + E_dot x w); omega_k x w the same
        a0, a1, a2 = _cross(o0, o1, o2, w0, w1, w2)
        b0, b1, b2 = _cross(e0, e1, e2, a0, a1, a2)
        g0, g1, g2 = _cross(r[EV], r[EV + 1], r[EV + 2], w0, w1, w2)
        r[CC], r[CC + 1], r[CC + 2] = a0, a1, a2
        r[CC + 3], r[CC + 4], r[CC + 5] = b0 + g0, b1 + g1, b2 + g2
        # centroid from E_k: R d + s b
        s0 = R * F[0, 0] + sb * F[0, 1]
        s1 = R * F[1, 0] + sb * F[1, 1]
        s2 = R * F[2, 0] + sb * F[2, 1]
        c0, c1, c2 = e0 + s0, e1 + s1, e2 + s2
        x0, x1, x2 = _cross(o0, o1, o2, s0, s1, s2)
        f0 = m * (r[EV] + x0)
        f1 = m * (r[EV + 1] + x1)
        f2 = m * (r[EV + 2] + x2)
        # I_c omega in world: F Ic F^T omega
        l0 = F[0, 0] * o0 + F[1, 0] * o1 + F[2, 0] * o2
        l1 = F[0, 1] * o0 + F[1, 1] * o1 + F[2, 1] * o2
        l2 = F[0, 2] * o0 + F[1, 2] * o1 + F[2, 2] * o2
        j0 = par[P_IC] * l0 + par[P_IC + 1] * l1 + par[P_IC + 2] * l2
        j1 = par[P_IC + 3] * l0 + par[P_IC + 4] * l1 + par[P_IC + 5] * l2
        j2 = par[P_IC + 6] * l0 + par[P_IC + 7] * l1 + par[P_IC + 8] * l2
        y0, y1, y2 = _cross(c0, c1, c2, f0, f1, f2)
        n0 = F[0, 0] * j0 + F[0, 1] * j1 + F[0, 2] * j2 + y0
        n1 = F[1, 0] * j0 + F[1, 1] * j1 + F[1, 2] * j2 + y1
        n2 = F[2, 0] * j0 + F[2, 1] * j1 + F[2, 2] * j2 + y2
        # p = (omega x n_O + v_O x f, omega x f), v_O = E_dot - omega x E
        v0, v1, v2 = _cross(o0, o1, o2, e0, e1, e2)
        v0, v1, v2 = r[EV] - v0, r[EV + 1] - v1, r[EV + 2] - v2
        p0, p1, p2 = _cross(o0, o1, o2, n0, n1, n2)
        z0, z1, z2 = _cross(v0, v1, v2, f0, f1, f2)
        r[PB], r[PB + 1], r[PB + 2] = p0 + z0, p1 + z1, p2 + z2
        p3, p4, p5 = _cross(o0, o1, o2, f0, f1, f2)
        r[PB + 3], r[PB + 4], r[PB + 5] = p3, p4, p5
        # the joint's force in world components
        j = 3 + 3 * k
        r[TW] = F[0, 0] * tau[j] + F[0, 1] * tau[j + 1] + F[0, 2] * tau[j + 2]
        r[TW + 1] = F[1, 0] * tau[j] + F[1, 1] * tau[j + 1] + F[1, 2] * tau[j + 2]
        r[TW + 2] = F[2, 0] * tau[j] + F[2, 1] * tau[j + 1] + F[2, 2] * tau[j + 2]
    # Pass 2: articulated inertias, tip to base; the child's (at O) in scr
    ia = scr  # [SC_IA: SC_IA + 36], 6 x 6 row-major
    for i in range(SC_PA + 6):
        scr[i] = 0.0
    for k in range(n - 1, -1, -1):
        r = ws[k]
        F = frames[k]
        e0, e1, e2 = r[EP], r[EP + 1], r[EP + 2]
        s0 = R * F[0, 0] + sb * F[0, 1]
        s1 = R * F[1, 0] + sb * F[1, 1]
        s2 = R * F[2, 0] + sb * F[2, 1]
        c0, c1, c2 = e0 + s0, e1 + s1, e2 + s2
        # the body's inertia at O: A = F Ic F^T + m (|c|^2 I - c c^T), B = m [c]x, C = m I
        for i in range(3):
            for jj in range(3):
                acc = 0.0
                for a in range(3):
                    fa = F[i, a]
                    for b in range(3):
                        acc += fa * par[P_IC + 3 * a + b] * F[jj, b]
                tmp[i, jj] = acc
        cc = c0 * c0 + c1 * c1 + c2 * c2
        ia[0] += tmp[0, 0] + m * (cc - c0 * c0)
        ia[1] += tmp[0, 1] - m * c0 * c1
        ia[2] += tmp[0, 2] - m * c0 * c2
        ia[7] += tmp[1, 1] + m * (cc - c1 * c1)
        ia[8] += tmp[1, 2] - m * c1 * c2
        ia[14] += tmp[2, 2] + m * (cc - c2 * c2)
        ia[6] = ia[1]
        ia[12] = ia[2]
        ia[13] = ia[8]
        # B = m [c]x at rows 0-2, columns 3-5; B^T at rows 3-5, columns 0-2
        ia[4] += -m * c2
        ia[5] += m * c1
        ia[9] += m * c2
        ia[11] += -m * c0
        ia[15] += -m * c1
        ia[16] += m * c0
        for i in range(3):
            for jj in range(3):
                ia[18 + 6 * i + jj] = ia[3 + 6 * jj + i]
        ia[21] += m
        ia[28] += m
        ia[35] += m
        for i in range(6):
            scr[SC_PA + i] += r[PB + i]
        # U = I^A S, S = [I; P], P = [E]x: U[:, j] = I^A[:, j] + I^A[:, 3:] P[:, j]
        for i in range(6):
            b3 = ia[6 * i + 3]
            b4 = ia[6 * i + 4]
            b5 = ia[6 * i + 5]
            # columns of P: (0, e2, -e1), (-e2, 0, e0), (e1, -e0, 0)
            r[UM + 3 * i] = ia[6 * i] + b4 * e2 - b5 * e1
            r[UM + 3 * i + 1] = ia[6 * i + 1] - b3 * e2 + b5 * e0
            r[UM + 3 * i + 2] = ia[6 * i + 2] + b3 * e1 - b4 * e0
        # D = S^T U + armature (world): U[0:3] + P^T U[3:6]; P^T y = -E x y = y x E
        A = arm[k]
        for jj in range(3):
            y0 = r[UM + 9 + jj]
            y1 = r[UM + 12 + jj]
            y2 = r[UM + 15 + jj]
            t0, t1, t2 = _cross(y0, y1, y2, e0, e1, e2)
            # armature F A F^T, column jj
            for i in range(3):
                acc = 0.0
                for a in range(3):
                    fa = F[i, a]
                    for b in range(3):
                        acc += fa * A[a, b] * F[jj, b]
                tmp[i, jj] = acc
            d9[jj] = r[UM + jj] + t0 + tmp[0, jj]
            d9[3 + jj] = r[UM + 3 + jj] + t1 + tmp[1, jj]
            d9[6 + jj] = r[UM + 6 + jj] + t2 + tmp[2, jj]
        _inv3(d9, r, DI)
        # u = tau - S^T p^A
        pa = scr[SC_PA:SC_PA + 6]
        t0, t1, t2 = _cross(pa[3], pa[4], pa[5], e0, e1, e2)
        r[UU] = r[TW] - (pa[0] + t0)
        r[UU + 1] = r[TW + 1] - (pa[1] + t1)
        r[UU + 2] = r[TW + 2] - (pa[2] + t2)
        # Y = U D^-1 (6, 3), kept in tmp-free scalars per row
        # I^a = I^A - Y U^T; p^a = p^A + I^a c + Y u
        for i in range(6):
            u0 = r[UM + 3 * i]
            u1 = r[UM + 3 * i + 1]
            u2 = r[UM + 3 * i + 2]
            y0 = u0 * r[DI] + u1 * r[DI + 3] + u2 * r[DI + 6]
            y1 = u0 * r[DI + 1] + u1 * r[DI + 4] + u2 * r[DI + 7]
            y2 = u0 * r[DI + 2] + u1 * r[DI + 5] + u2 * r[DI + 8]
            for jj in range(i, 6):
                v = ia[6 * i + jj] - (y0 * r[UM + 3 * jj] + y1 * r[UM + 3 * jj + 1]
                                      + y2 * r[UM + 3 * jj + 2])
                ia[6 * i + jj] = v
                ia[6 * jj + i] = v
            scr[SC_A + i] = y0 * r[UU] + y1 * r[UU + 1] + y2 * r[UU + 2]
        for i in range(6):
            acc = scr[SC_A + i]
            for jj in range(6):
                acc += ia[6 * i + jj] * r[CC + jj]
            scr[SC_PA + i] += acc
    # Pass 3: accelerations, base to tip; the world base accelerates at +g (gravity)
    a0 = a1 = a2 = a3 = a5 = 0.0
    a4 = par[P_G]
    if mode == FREE:
        # three massless prismatic joints at the base: S = [0; I], U = I^A[:, 3:]
        for i in range(3):
            for jj in range(3):
                d9[3 * i + jj] = ia[6 * (3 + i) + 3 + jj]
        _inv3(d9, scr, SC_A)
        pa = scr[SC_PA:SC_PA + 6]
        g0 = -pa[3] - ia[22] * a4
        g1 = -pa[4] - ia[28] * a4
        g2 = -pa[5] - ia[34] * a4
        x0 = scr[SC_A] * g0 + scr[SC_A + 1] * g1 + scr[SC_A + 2] * g2
        x1 = scr[SC_A + 3] * g0 + scr[SC_A + 4] * g1 + scr[SC_A + 5] * g2
        x2 = scr[SC_A + 6] * g0 + scr[SC_A + 7] * g1 + scr[SC_A + 8] * g2
        qdd[0], qdd[1], qdd[2] = x0, x1, x2
        a3 += x0
        a4 += x1
        a5 += x2
    else:
        qdd[0] = qdd[1] = qdd[2] = 0.0
    for k in range(n):
        r = ws[k]
        F = frames[k]
        b0 = a0 + r[CC]
        b1 = a1 + r[CC + 1]
        b2 = a2 + r[CC + 2]
        b3 = a3 + r[CC + 3]
        b4 = a4 + r[CC + 4]
        b5 = a5 + r[CC + 5]
        t0 = r[UU] - (r[UM] * b0 + r[UM + 3] * b1 + r[UM + 6] * b2 + r[UM + 9] * b3
                      + r[UM + 12] * b4 + r[UM + 15] * b5)
        t1 = r[UU + 1] - (r[UM + 1] * b0 + r[UM + 4] * b1 + r[UM + 7] * b2
                          + r[UM + 10] * b3 + r[UM + 13] * b4 + r[UM + 16] * b5)
        t2 = r[UU + 2] - (r[UM + 2] * b0 + r[UM + 5] * b1 + r[UM + 8] * b2
                          + r[UM + 11] * b3 + r[UM + 14] * b4 + r[UM + 17] * b5)
        x0 = r[DI] * t0 + r[DI + 1] * t1 + r[DI + 2] * t2
        x1 = r[DI + 3] * t0 + r[DI + 4] * t1 + r[DI + 5] * t2
        x2 = r[DI + 6] * t0 + r[DI + 7] * t1 + r[DI + 8] * t2
        e0, e1, e2 = r[EP], r[EP + 1], r[EP + 2]
        y0, y1, y2 = _cross(e0, e1, e2, x0, x1, x2)
        a0, a1, a2 = b0 + x0, b1 + x1, b2 + x2
        a3, a4, a5 = b3 + y0, b4 + y1, b5 + y2
        j = 3 + 3 * k
        # body components: R_k^T x
        qdd[j] = F[0, 0] * x0 + F[1, 0] * x1 + F[2, 0] * x2
        qdd[j + 1] = F[0, 1] * x0 + F[1, 1] * x1 + F[2, 1] * x2
        qdd[j + 2] = F[0, 2] * x0 + F[1, 2] * x1 + F[2, 2] * x2
