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

Hybrid dynamics, as the planar kernels': any joint can be *prescribed* (its relative
acceleration w_dot given in all three components, the 3-vector force it needs
returned), and a clamped or pivoted base may be given an acceleration (a moved anchor),
the force that moves it returned. A prescribed joint passes its whole articulated
inertia to its parent and its known acceleration acts as a velocity product: locked
coils, a scripted anchor and the grab use this.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numba import njit

from slinky3d.dynamics.articulated_body import FM, JIT, _sincos

CLAMPED, PIVOT, FREE = 0, 1, 2  # anchor modes, in chain3d.ANCHORS' order

# Parameter vector (float64), by index
P_M, P_R, P_G, P_CD, P_S = 0, 1, 2, 3, 4  # m, R, g, C_D, centroid offset along b
P_K = 5  # 3: joint stiffness about (d, b, a)
P_IC = 8  # 3: inertia about the centroid about (d, b, a) (no products of inertia)
NPAR = 11

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
IA = 57  # 21: a prescribed joint's articulated inertia, blocks A (6), B (9), C (6)
PA = 78  # 6: a prescribed joint's articulated bias force
PM = 84  # 7: a point mass added to the half hoop for a solve, where (world), and an
# axis v (world; 0: none) along which it has none (its mass tensor m (I - v v^T), v a
# unit vector or 0): a linearly implicit coupling's stiffness (the grab, whose capped
# force has none along itself: grab3d.implicit_forces); m = 0: none
NCOL = 91
NSCR = 9  # scratch: a free base's 3 x 3 inverse


def workspace(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(per-half-hoop rows, scratch) for `aba` with n half hoops."""
    return np.zeros((n, NCOL)), np.zeros(NSCR)


def parameters(m: float, R: float, g: float, C_D: float, s: float, K: np.ndarray,
               Ic: np.ndarray) -> np.ndarray:
    """The kernels' parameter vector (indices P_*)."""
    par = np.zeros(NPAR)
    par[P_M], par[P_R], par[P_G], par[P_CD], par[P_S] = m, R, g, C_D, s
    par[P_K:P_K + 3] = K
    Ic = np.asarray(Ic, float)
    if np.any(Ic != np.diag(np.diag(Ic))):
        raise ValueError("the kernels take an inertia without products of inertia")
    par[P_IC:P_IC + 3] = np.diag(Ic)
    return par


@njit(**JIT, fastmath=FM)
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(**JIT, fastmath=FM)
def exp_rot(p0, p1, p2, out):
    """Rotation matrix exp([phi]x) (Rodrigues) into out (3, 3)."""
    (out[0, 0], out[0, 1], out[0, 2], out[1, 0], out[1, 1], out[1, 2], out[2, 0], out[2, 1],
     out[2, 2]) = _exp_rot9(p0, p1, p2)


def _series(terms) -> tuple[float, ...]:
    return tuple(float(t) for t in terms)


# Below SERIES (theta^2 < 1 rad^2: every sprung joint of a Slinky) the rotation's
# coefficients are power series in theta^2, summed by Horner: no square root, division
# or cosine and sine, so that the per-joint sweeps are a few fused multiply-adds (the
# next term omitted is below 3e-18 of the sum); above it, the closed forms.
SERIES = 1.0
# sin(theta)/theta and (1 - cos(theta))/theta^2 (entire: 1/(2n+1)!, 1/(2n+2)!, alternating)
_SINC = _series((-1) ** n / Fraction(math.factorial(2 * n + 1)) for n in range(11))
_COSC = _series((-1) ** n / Fraction(math.factorial(2 * n + 2)) for n in range(11))


def _bernoulli(n: int) -> list[Fraction]:
    """B_0..B_n (B_1 = -1/2)."""
    b = [Fraction(0)] * (n + 1)
    for m in range(n + 1):
        b[m] = Fraction(1) if m == 0 else -sum((math.comb(m + 1, k) * b[k] for k in range(m)),
                                               Fraction(0)) / (m + 1)
    return b


# J_r's (theta - sin theta)/theta^3 = sum (-1)^n theta^2n / (2n+3)!
_JRS = _series((-1) ** n / Fraction(math.factorial(2 * n + 3)) for n in range(11))

# J_r^-1's c = 1/theta^2 - cot(theta/2)/(2 theta) = sum_{n>=1} |B_2n| theta^(2n-2)/(2n)!
# (radius 2 pi: each term ~theta^2/(4 pi^2) of the last)
_BN = _bernoulli(32)
_JRC = _series(abs(_BN[2 * n]) / math.factorial(2 * n) for n in range(1, 14))


@njit(**JIT, fastmath=FM, inline="always")
def _horner(c, x):
    """sum c_i x^i: Horner's rule in x^2 over the even and the odd terms, two chains
    half as long side by side (the sweeps are bound by their latency)."""
    x2 = x * x
    n = len(c)
    top = n - 1 if (n - 1) % 2 == 0 else n - 2
    even = c[top]
    for i in range(top - 2, -1, -2):
        even = even * x2 + c[i]
    top = n - 1 if (n - 1) % 2 == 1 else n - 2
    odd = c[top]
    for i in range(top - 2, 0, -2):
        odd = odd * x2 + c[i]
    return even + x * odd


@njit(**JIT, fastmath=FM)
def rot_coefs(t2):
    """(sin theta / theta, (1 - cos theta) / theta^2) at theta^2 = t2: exp([phi]x) =
    I + a [phi]x + b [phi]x^2."""
    if t2 < SERIES:
        return _horner(_SINC, t2), _horner(_COSC, t2)
    th = math.sqrt(t2)
    co, si = _sincos(th)  # the planar kernels' branch-free cos and sin
    return si / th, (1.0 - co) / t2


@njit(**JIT, fastmath=FM)
def _exp_rot9(p0, p1, p2):
    """exp([phi]x)'s nine entries as scalars, row by row (Rodrigues)."""
    a, b = rot_coefs(p0 * p0 + p1 * p1 + p2 * p2)
    return (1.0 - b * (p1 * p1 + p2 * p2), -a * p2 + b * p0 * p1, a * p1 + b * p0 * p2,
            a * p2 + b * p0 * p1, 1.0 - b * (p0 * p0 + p2 * p2), -a * p0 + b * p1 * p2,
            -a * p1 + b * p0 * p2, a * p0 + b * p1 * p2, 1.0 - b * (p0 * p0 + p1 * p1))


@njit(**JIT, fastmath=FM)
def jr_inv_coef(p0, p1, p2):
    """c of J_r^-1(phi) = I + 1/2 [phi]x + c [phi]x^2 (SO(3)'s inverse right Jacobian)."""
    t2 = p0 * p0 + p1 * p1 + p2 * p2
    if t2 < SERIES:
        return _horner(_JRC, t2)
    th = math.sqrt(t2)
    co, si = _sincos(th)
    return 1.0 / t2 - (1.0 + co) / (2.0 * th * si)


@njit(**JIT, fastmath=FM)
def jr_apply(p0, p1, p2, y0, y1, y2):
    """J_r(phi) y = y - b phi x y + c phi x (phi x y), b = (1 - cos theta)/theta^2,
    c = (theta - sin theta)/theta^3: the inverse of jr_inv_apply(sign = 1)."""
    t2 = p0 * p0 + p1 * p1 + p2 * p2
    if t2 < SERIES:
        b, c = _horner(_COSC, t2), _horner(_JRS, t2)
    else:
        a, b = rot_coefs(t2)
        c = (1.0 - a) / t2
    z0, z1, z2 = _cross(p0, p1, p2, y0, y1, y2)
    zz0, zz1, zz2 = _cross(p0, p1, p2, z0, z1, z2)
    return y0 - b * z0 + c * zz0, y1 - b * z1 + c * zz1, y2 - b * z2 + c * zz2


@njit(**JIT, fastmath=FM)
def jr_inv_apply(p0, p1, p2, c, y0, y1, y2, sign):
    """J_r^-1(phi) y (sign = 1) or J_r^-T(phi) y (sign = -1):
    y + sign/2 phi x y + c phi x (phi x y)."""
    z0, z1, z2 = _cross(p0, p1, p2, y0, y1, y2)
    zz0, zz1, zz2 = _cross(p0, p1, p2, z0, z1, z2)
    h = 0.5 * sign
    return y0 + h * z0 + c * zz0, y1 + h * z1 + c * zz1, y2 + h * z2 + c * zz2


@njit(**JIT, fastmath=FM, inline="always")
def _bias_row(r, F00, F01, F10, F11, F20, F21, F02, F12, F22, e0, e1, e2, v0, v1, v2,
              w0, w1, w2, o0, o1, o2, R, m, sb, I0, I1, I2):
    """Pass 1 of the articulated-body algorithm for one half hoop: its joint's velocity
    product (CC) and its body's bias force (PB) into its row r, from its frame F, E_k,
    E_k's velocity v, the joint's world rate w and omega_k."""
    # c = (omega_{k-1} x w, E x (omega_{k-1} x w) + E_dot x w); omega_k x w the same
    c0, c1, c2 = _cross(o0, o1, o2, w0, w1, w2)
    b0, b1, b2 = _cross(e0, e1, e2, c0, c1, c2)
    g0, g1, g2 = _cross(v0, v1, v2, w0, w1, w2)
    r[CC], r[CC + 1], r[CC + 2] = c0, c1, c2
    r[CC + 3], r[CC + 4], r[CC + 5] = b0 + g0, b1 + g1, b2 + g2
    # centroid from E_k: R d + s b
    s0 = R * F00 + sb * F01
    s1 = R * F10 + sb * F11
    s2 = R * F20 + sb * F21
    x0, x1, x2 = _cross(o0, o1, o2, s0, s1, s2)
    f0 = m * (v0 + x0)
    f1 = m * (v1 + x1)
    f2 = m * (v2 + x2)
    # I_c omega in world: F Ic F^T omega
    j0 = I0 * (F00 * o0 + F10 * o1 + F20 * o2)
    j1 = I1 * (F01 * o0 + F11 * o1 + F21 * o2)
    j2 = I2 * (F02 * o0 + F12 * o1 + F22 * o2)
    y0, y1, y2 = _cross(e0 + s0, e1 + s1, e2 + s2, f0, f1, f2)
    n0 = F00 * j0 + F01 * j1 + F02 * j2 + y0
    n1 = F10 * j0 + F11 * j1 + F12 * j2 + y1
    n2 = F20 * j0 + F21 * j1 + F22 * j2 + y2
    # p = (omega x n_O + v_O x f, omega x f), v_O = E_dot - omega x E
    x0, x1, x2 = _cross(o0, o1, o2, e0, e1, e2)
    x0, x1, x2 = v0 - x0, v1 - x1, v2 - x2
    p0, p1, p2 = _cross(o0, o1, o2, n0, n1, n2)
    z0, z1, z2 = _cross(x0, x1, x2, f0, f1, f2)
    r[PB], r[PB + 1], r[PB + 2] = p0 + z0, p1 + z1, p2 + z2
    p3, p4, p5 = _cross(o0, o1, o2, f0, f1, f2)
    r[PB + 3], r[PB + 4], r[PB + 5] = p3, p4, p5


@njit(**JIT, fastmath=FM)
def kinematics(q, u, H, R, frames, ws, tmp):
    """Frames (N, 3, 3), and in ws the end points, their velocities, omega_k and the
    joints' world rates, from q, u and the holder H; tmp: (3, 3) scratch."""
    _sweep(q, u, H, R, 0.0, 0.0, 0.0, 0.0, 0.0, frames, ws, False)


@njit(**JIT, fastmath=FM)
def _sweep(q, u, H, R, m, sb, I0, I1, I2, frames, ws, bias):
    """`kinematics`, and where bias, pass 1 of the articulated-body algorithm in the
    same loop (each joint's velocity product and its body's bias force, ws's CC and
    PB, from the values just computed): m, sb, I0..I2 the mass, centroid offset and
    inertia (P_M, P_S, P_IC)."""
    n = frames.shape[0]
    ex, ey, ez = q[0], q[1], q[2]
    vx, vy, vz = u[0], u[1], u[2]
    o0 = o1 = o2 = 0.0
    # R_{k-1} FLIP (d and b reversed), carried in scalars
    a00, a01, a02 = -H[0, 0], -H[0, 1], H[0, 2]
    a10, a11, a12 = -H[1, 0], -H[1, 1], H[1, 2]
    a20, a21, a22 = -H[2, 0], -H[2, 1], H[2, 2]
    for k in range(n):
        j = 3 + 3 * k
        x00, x01, x02, x10, x11, x12, x20, x21, x22 = _exp_rot9(q[j], q[j + 1], q[j + 2])
        F = frames[k]
        # R_k = R_{k-1} FLIP exp(phi_k)
        F00 = a00 * x00 + a01 * x10 + a02 * x20
        F01 = a00 * x01 + a01 * x11 + a02 * x21
        F02 = a00 * x02 + a01 * x12 + a02 * x22
        F10 = a10 * x00 + a11 * x10 + a12 * x20
        F11 = a10 * x01 + a11 * x11 + a12 * x21
        F12 = a10 * x02 + a11 * x12 + a12 * x22
        F20 = a20 * x00 + a21 * x10 + a22 * x20
        F21 = a20 * x01 + a21 * x11 + a22 * x21
        F22 = a20 * x02 + a21 * x12 + a22 * x22
        F[0, 0], F[0, 1], F[0, 2] = F00, F01, F02
        F[1, 0], F[1, 1], F[1, 2] = F10, F11, F12
        F[2, 0], F[2, 1], F[2, 2] = F20, F21, F22
        a00, a01, a02 = -F00, -F01, F02
        a10, a11, a12 = -F10, -F11, F12
        a20, a21, a22 = -F20, -F21, F22
        r = ws[k]
        r[EP], r[EP + 1], r[EP + 2] = ex, ey, ez
        r[EV], r[EV + 1], r[EV + 2] = vx, vy, vz
        w0 = F00 * u[j] + F01 * u[j + 1] + F02 * u[j + 2]
        w1 = F10 * u[j] + F11 * u[j + 1] + F12 * u[j + 2]
        w2 = F20 * u[j] + F21 * u[j + 1] + F22 * u[j + 2]
        r[WW], r[WW + 1], r[WW + 2] = w0, w1, w2
        o0 += w0
        o1 += w1
        o2 += w2
        r[OM], r[OM + 1], r[OM + 2] = o0, o1, o2
        if bias:
            _bias_row(r, F00, F01, F10, F11, F20, F21, F02, F12, F22, ex, ey, ez, vx, vy, vz,
                      w0, w1, w2, o0, o1, o2, R, m, sb, I0, I1, I2)
        dx, dy, dz = 2.0 * R * F00, 2.0 * R * F10, 2.0 * R * F20
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


@njit(**JIT, fastmath=FM)
def aba(mode, q, u, H, tau, arm, par, presc, acc_p, qdd, jf, frames, ws, scr, tmp, d9):
    """Accelerations qdd = (v_dot, w_dot_1..w_dot_N) (w_dot in body components).

    tau (3 + 3N): generalised forces, the joints' in body components (the base's:
    world, used when free); arm (N, 3, 3): each joint's armature, body components (a Rosenbrock
    stage's implicit springs and damping). mode: CLAMPED, PIVOT or FREE (the base).
    presc (N,): the prescribed joints; acc_p (3 + 3N): their accelerations w_dot (body
    components), and a clamped or pivoted base's acceleration (world; unused when free).
    jf (3 + 3N): the total generalised force each prescribed joint needs (body
    components; its constraint's share is jf - tau), and the force on a clamped or
    pivoted base (world, weight included); 0 elsewhere.
    ws, scr from `workspace`; tmp (3, 3), d9 (9): scratch.
    """
    _sweep(q, u, H, par[P_R], par[P_M], par[P_S], par[P_IC], par[P_IC + 1], par[P_IC + 2],
           frames, ws, True)
    passes(mode, tau, arm, par, presc, acc_p, qdd, jf, frames, ws, scr, tmp, d9, False)


@njit(**JIT, fastmath=FM)
def passes(mode, tau, arm, par, presc, acc_p, qdd, jf, frames, ws, scr, tmp, d9, bias):
    """`aba` after its kinematics: frames and ws's kinematic columns (EP, EV, OM, WW)
    as `kinematics` left them; bias: False where ws's velocity products and bias
    forces (CC, PB) are also this state's, from the last solve. Repeated solves at
    one state (the contact's impulses and resting rounds, a step's first stage after
    them, which change only presc, acc_p, tau or the armature) call this alone."""
    n = frames.shape[0]
    m = par[P_M]
    R = par[P_R]
    sb = par[P_S]
    # Pass 1: velocity products and bias forces (where not known: `_sweep` fuses them
    # with the kinematics), and the joints' forces in world components
    for k in range(n):
        r = ws[k]
        F = frames[k]
        if bias:
            _bias_row(r, F[0, 0], F[0, 1], F[1, 0], F[1, 1], F[2, 0], F[2, 1], F[0, 2],
                      F[1, 2], F[2, 2], r[EP], r[EP + 1], r[EP + 2], r[EV], r[EV + 1],
                      r[EV + 2], r[WW], r[WW + 1], r[WW + 2], r[OM], r[OM + 1], r[OM + 2], R,
                      m, sb, par[P_IC], par[P_IC + 1], par[P_IC + 2])
        j = 3 + 3 * k
        r[TW] = F[0, 0] * tau[j] + F[0, 1] * tau[j + 1] + F[0, 2] * tau[j + 2]
        r[TW + 1] = F[1, 0] * tau[j] + F[1, 1] * tau[j + 1] + F[1, 2] * tau[j + 2]
        r[TW + 2] = F[2, 0] * tau[j] + F[2, 1] * tau[j + 1] + F[2, 2] * tau[j + 2]
    # Pass 2: articulated inertias, tip to base. The child's, at O, is carried in
    # locals (as the planar kernel's): blocks A (3 x 3 symmetric, angular), B (3 x 3,
    # angular-linear) and C (3 x 3 symmetric, linear), and its bias force (pt, pl).
    A00 = A01 = A02 = A11 = A12 = A22 = 0.0
    B00 = B01 = B02 = B10 = B11 = B12 = B20 = B21 = B22 = 0.0
    C00 = C01 = C02 = C11 = C12 = C22 = 0.0
    pt0 = pt1 = pt2 = pl0 = pl1 = pl2 = 0.0
    I0 = par[P_IC]
    I1 = par[P_IC + 1]
    I2 = par[P_IC + 2]
    for k in range(n - 1, -1, -1):
        r = ws[k]
        F = frames[k]
        e0, e1, e2 = r[EP], r[EP + 1], r[EP + 2]
        s0 = R * F[0, 0] + sb * F[0, 1]
        s1 = R * F[1, 0] + sb * F[1, 1]
        s2 = R * F[2, 0] + sb * F[2, 1]
        c0, c1, c2 = e0 + s0, e1 + s1, e2 + s2
        # the body's inertia at O: A += F Ic F^T + m (|c|^2 I - c c^T), B += m [c]x,
        # C += m I
        cc = c0 * c0 + c1 * c1 + c2 * c2
        mc0 = m * c0
        mc1 = m * c1
        A00 += I0 * F[0, 0] * F[0, 0] + I1 * F[0, 1] * F[0, 1] + I2 * F[0, 2] * F[0, 2] + m * (
            cc - c0 * c0)
        A11 += I0 * F[1, 0] * F[1, 0] + I1 * F[1, 1] * F[1, 1] + I2 * F[1, 2] * F[1, 2] + m * (
            cc - c1 * c1)
        A22 += I0 * F[2, 0] * F[2, 0] + I1 * F[2, 1] * F[2, 1] + I2 * F[2, 2] * F[2, 2] + m * (
            cc - c2 * c2)
        A01 += I0 * F[0, 0] * F[1, 0] + I1 * F[0, 1] * F[1, 1] + I2 * F[0, 2] * F[1, 2] - mc0 * c1
        A02 += I0 * F[0, 0] * F[2, 0] + I1 * F[0, 1] * F[2, 1] + I2 * F[0, 2] * F[2, 2] - mc0 * c2
        A12 += I0 * F[1, 0] * F[2, 0] + I1 * F[1, 1] * F[2, 1] + I2 * F[1, 2] * F[2, 2] - mc1 * c2
        B01 -= m * c2
        B02 += m * c1
        B10 += m * c2
        B12 -= m * c0
        B20 -= m * c1
        B21 += m * c0
        C00 += m
        C11 += m
        C22 += m
        pt0 += r[PB]
        pt1 += r[PB + 1]
        pt2 += r[PB + 2]
        pl0 += r[PB + 3]
        pl1 += r[PB + 4]
        pl2 += r[PB + 5]
        if r[PM] != 0.0:  # an added point mass (PM): inertia, no weight or bias
            mp = r[PM]
            c0, c1, c2 = r[PM + 1], r[PM + 2], r[PM + 3]
            v0, v1, v2 = r[PM + 4], r[PM + 5], r[PM + 6]
            # its mass tensor P = mp (I - v v^T) at c: C += P, B += [c]x P,
            # A += [c]x P [c]x^T
            P00, P11, P22 = mp * (1.0 - v0 * v0), mp * (1.0 - v1 * v1), mp * (1.0 - v2 * v2)
            P01, P02, P12 = -mp * v0 * v1, -mp * v0 * v2, -mp * v1 * v2
            # rows of [c]x P: c x (P's columns), P symmetric
            b00, b10, b20 = _cross(c0, c1, c2, P00, P01, P02)
            b01, b11, b21 = _cross(c0, c1, c2, P01, P11, P12)
            b02, b12, b22 = _cross(c0, c1, c2, P02, P12, P22)
            # ([c]x P) [c]x^T: rows of [c]x P crossed with c, negated: -(row x c) = c x row
            a00, a01, a02 = _cross(c0, c1, c2, b00, b01, b02)
            a10, a11, a12 = _cross(c0, c1, c2, b10, b11, b12)
            a20, a21, a22 = _cross(c0, c1, c2, b20, b21, b22)
            A00 += a00
            A01 += a01
            A02 += a02
            A11 += a11
            A12 += a12
            A22 += a22
            B00 += b00
            B01 += b01
            B02 += b02
            B10 += b10
            B11 += b11
            B12 += b12
            B20 += b20
            B21 += b21
            B22 += b22
            C00 += P00
            C01 += P01
            C02 += P02
            C11 += P11
            C12 += P12
            C22 += P22
            # its force is P times the point's acceleration from the rates' own
            # accelerations alone (J qdd): the part pass 3 adds from the velocity
            # products and the base's upward g is taken off here, as a bias force
            s0 = s1 = s2 = s3 = s5 = 0.0
            s4 = par[P_G]
            for i in range(k + 1):
                ri = ws[i]
                s0 += ri[CC]
                s1 += ri[CC + 1]
                s2 += ri[CC + 2]
                s3 += ri[CC + 3]
                s4 += ri[CC + 4]
                s5 += ri[CC + 5]
            x0, x1, x2 = _cross(s0, s1, s2, c0, c1, c2)
            x0 += s3
            x1 += s4
            x2 += s5
            f0 = P00 * x0 + P01 * x1 + P02 * x2
            f1 = P01 * x0 + P11 * x1 + P12 * x2
            f2 = P02 * x0 + P12 * x1 + P22 * x2
            x0, x1, x2 = _cross(c0, c1, c2, f0, f1, f2)
            pt0 -= x0
            pt1 -= x1
            pt2 -= x2
            pl0 -= f0
            pl1 -= f1
            pl2 -= f2
        if presc[k]:
            # the whole inertia passes to the parent; S x (x the known rate's
            # acceleration, world) joins the velocity product
            r[IA], r[IA + 1], r[IA + 2], r[IA + 3], r[IA + 4], r[IA + 5] = (
                A00, A01, A02, A11, A12, A22)
            r[IA + 6], r[IA + 7], r[IA + 8] = B00, B01, B02
            r[IA + 9], r[IA + 10], r[IA + 11] = B10, B11, B12
            r[IA + 12], r[IA + 13], r[IA + 14] = B20, B21, B22
            r[IA + 15], r[IA + 16], r[IA + 17], r[IA + 18], r[IA + 19], r[IA + 20] = (
                C00, C01, C02, C11, C12, C22)
            r[PA], r[PA + 1], r[PA + 2] = pt0, pt1, pt2
            r[PA + 3], r[PA + 4], r[PA + 5] = pl0, pl1, pl2
            j = 3 + 3 * k
            x0 = F[0, 0] * acc_p[j] + F[0, 1] * acc_p[j + 1] + F[0, 2] * acc_p[j + 2]
            x1 = F[1, 0] * acc_p[j] + F[1, 1] * acc_p[j + 1] + F[1, 2] * acc_p[j + 2]
            x2 = F[2, 0] * acc_p[j] + F[2, 1] * acc_p[j + 1] + F[2, 2] * acc_p[j + 2]
            y0, y1, y2 = _cross(e0, e1, e2, x0, x1, x2)
            ct0, ct1, ct2 = r[CC] + x0, r[CC + 1] + x1, r[CC + 2] + x2
            cl0, cl1, cl2 = r[CC + 3] + y0, r[CC + 4] + y1, r[CC + 5] + y2
            pt0 += A00 * ct0 + A01 * ct1 + A02 * ct2 + B00 * cl0 + B01 * cl1 + B02 * cl2
            pt1 += A01 * ct0 + A11 * ct1 + A12 * ct2 + B10 * cl0 + B11 * cl1 + B12 * cl2
            pt2 += A02 * ct0 + A12 * ct1 + A22 * ct2 + B20 * cl0 + B21 * cl1 + B22 * cl2
            pl0 += B00 * ct0 + B10 * ct1 + B20 * ct2 + C00 * cl0 + C01 * cl1 + C02 * cl2
            pl1 += B01 * ct0 + B11 * ct1 + B21 * ct2 + C01 * cl0 + C11 * cl1 + C12 * cl2
            pl2 += B02 * ct0 + B12 * ct1 + B22 * ct2 + C02 * cl0 + C12 * cl1 + C22 * cl2
            continue
        # U = I^A S, S = [I; [E]x]: rows of A + B [E]x and of B^T + C [E]x, each a
        # row of the first block plus (the row of the second) x E
        x0, x1, x2 = _cross(B00, B01, B02, e0, e1, e2)
        U00, U01, U02 = A00 + x0, A01 + x1, A02 + x2
        x0, x1, x2 = _cross(B10, B11, B12, e0, e1, e2)
        U10, U11, U12 = A01 + x0, A11 + x1, A12 + x2
        x0, x1, x2 = _cross(B20, B21, B22, e0, e1, e2)
        U20, U21, U22 = A02 + x0, A12 + x1, A22 + x2
        x0, x1, x2 = _cross(C00, C01, C02, e0, e1, e2)
        U30, U31, U32 = B00 + x0, B10 + x1, B20 + x2
        x0, x1, x2 = _cross(C01, C11, C12, e0, e1, e2)
        U40, U41, U42 = B01 + x0, B11 + x1, B21 + x2
        x0, x1, x2 = _cross(C02, C12, C22, e0, e1, e2)
        U50, U51, U52 = B02 + x0, B12 + x1, B22 + x2
        # D = S^T U + armature: U's top + [E]x^T U's bottom (columns: bottom x E)
        x0, x1, x2 = _cross(U30, U40, U50, e0, e1, e2)
        y0, y1, y2 = _cross(U31, U41, U51, e0, e1, e2)
        z0, z1, z2 = _cross(U32, U42, U52, e0, e1, e2)
        # the armature in world components, F A F^T (A symmetric, body components)
        Am = arm[k]
        g00 = g01 = g02 = g11 = g12 = g22 = 0.0
        if (Am[0, 0] != 0.0 or Am[1, 1] != 0.0 or Am[2, 2] != 0.0 or Am[0, 1] != 0.0
                or Am[0, 2] != 0.0 or Am[1, 2] != 0.0):  # none in a solve without a stage
            for a in range(3):  # tmp = A F^T
                for jj in range(3):
                    tmp[a, jj] = Am[a, 0] * F[jj, 0] + Am[a, 1] * F[jj, 1] + Am[a, 2] * F[jj, 2]
            g00 = F[0, 0] * tmp[0, 0] + F[0, 1] * tmp[1, 0] + F[0, 2] * tmp[2, 0]
            g01 = F[0, 0] * tmp[0, 1] + F[0, 1] * tmp[1, 1] + F[0, 2] * tmp[2, 1]
            g02 = F[0, 0] * tmp[0, 2] + F[0, 1] * tmp[1, 2] + F[0, 2] * tmp[2, 2]
            g11 = F[1, 0] * tmp[0, 1] + F[1, 1] * tmp[1, 1] + F[1, 2] * tmp[2, 1]
            g12 = F[1, 0] * tmp[0, 2] + F[1, 1] * tmp[1, 2] + F[1, 2] * tmp[2, 2]
            g22 = F[2, 0] * tmp[0, 2] + F[2, 1] * tmp[1, 2] + F[2, 2] * tmp[2, 2]
        d00 = U00 + x0 + g00
        d01 = U01 + y0 + g01
        d02 = U02 + z0 + g02
        d11 = U11 + y1 + g11
        d12 = U12 + z1 + g12
        d22 = U22 + z2 + g22
        # D^-1 (symmetric)
        k00 = d11 * d22 - d12 * d12
        k01 = d02 * d12 - d01 * d22
        k02 = d01 * d12 - d02 * d11
        det = d00 * k00 + d01 * k01 + d02 * k02
        di = 1.0 / det
        i00 = k00 * di
        i01 = k01 * di
        i02 = k02 * di
        i11 = (d00 * d22 - d02 * d02) * di
        i12 = (d01 * d02 - d00 * d12) * di
        i22 = (d00 * d11 - d01 * d01) * di
        r[DI], r[DI + 1], r[DI + 2] = i00, i01, i02
        r[DI + 3], r[DI + 4], r[DI + 5] = i01, i11, i12
        r[DI + 6], r[DI + 7], r[DI + 8] = i02, i12, i22
        # u = tau - S^T p^A
        x0, x1, x2 = _cross(pl0, pl1, pl2, e0, e1, e2)
        uu0 = r[TW] - (pt0 + x0)
        uu1 = r[TW + 1] - (pt1 + x1)
        uu2 = r[TW + 2] - (pt2 + x2)
        r[UU], r[UU + 1], r[UU + 2] = uu0, uu1, uu2
        r[UM], r[UM + 1], r[UM + 2] = U00, U01, U02
        r[UM + 3], r[UM + 4], r[UM + 5] = U10, U11, U12
        r[UM + 6], r[UM + 7], r[UM + 8] = U20, U21, U22
        r[UM + 9], r[UM + 10], r[UM + 11] = U30, U31, U32
        r[UM + 12], r[UM + 13], r[UM + 14] = U40, U41, U42
        r[UM + 15], r[UM + 16], r[UM + 17] = U50, U51, U52
        # Y = U D^-1; I^a = I^A - Y U^T; p^a = p^A + I^a c + Y u
        Y00 = U00 * i00 + U01 * i01 + U02 * i02
        Y01 = U00 * i01 + U01 * i11 + U02 * i12
        Y02 = U00 * i02 + U01 * i12 + U02 * i22
        Y10 = U10 * i00 + U11 * i01 + U12 * i02
        Y11 = U10 * i01 + U11 * i11 + U12 * i12
        Y12 = U10 * i02 + U11 * i12 + U12 * i22
        Y20 = U20 * i00 + U21 * i01 + U22 * i02
        Y21 = U20 * i01 + U21 * i11 + U22 * i12
        Y22 = U20 * i02 + U21 * i12 + U22 * i22
        Y30 = U30 * i00 + U31 * i01 + U32 * i02
        Y31 = U30 * i01 + U31 * i11 + U32 * i12
        Y32 = U30 * i02 + U31 * i12 + U32 * i22
        Y40 = U40 * i00 + U41 * i01 + U42 * i02
        Y41 = U40 * i01 + U41 * i11 + U42 * i12
        Y42 = U40 * i02 + U41 * i12 + U42 * i22
        Y50 = U50 * i00 + U51 * i01 + U52 * i02
        Y51 = U50 * i01 + U51 * i11 + U52 * i12
        Y52 = U50 * i02 + U51 * i12 + U52 * i22
        A00 -= Y00 * U00 + Y01 * U01 + Y02 * U02
        A01 -= Y00 * U10 + Y01 * U11 + Y02 * U12
        A02 -= Y00 * U20 + Y01 * U21 + Y02 * U22
        A11 -= Y10 * U10 + Y11 * U11 + Y12 * U12
        A12 -= Y10 * U20 + Y11 * U21 + Y12 * U22
        A22 -= Y20 * U20 + Y21 * U21 + Y22 * U22
        B00 -= Y00 * U30 + Y01 * U31 + Y02 * U32
        B01 -= Y00 * U40 + Y01 * U41 + Y02 * U42
        B02 -= Y00 * U50 + Y01 * U51 + Y02 * U52
        B10 -= Y10 * U30 + Y11 * U31 + Y12 * U32
        B11 -= Y10 * U40 + Y11 * U41 + Y12 * U42
        B12 -= Y10 * U50 + Y11 * U51 + Y12 * U52
        B20 -= Y20 * U30 + Y21 * U31 + Y22 * U32
        B21 -= Y20 * U40 + Y21 * U41 + Y22 * U42
        B22 -= Y20 * U50 + Y21 * U51 + Y22 * U52
        C00 -= Y30 * U30 + Y31 * U31 + Y32 * U32
        C01 -= Y30 * U40 + Y31 * U41 + Y32 * U42
        C02 -= Y30 * U50 + Y31 * U51 + Y32 * U52
        C11 -= Y40 * U40 + Y41 * U41 + Y42 * U42
        C12 -= Y40 * U50 + Y41 * U51 + Y42 * U52
        C22 -= Y50 * U50 + Y51 * U51 + Y52 * U52
        ct0, ct1, ct2 = r[CC], r[CC + 1], r[CC + 2]
        cl0, cl1, cl2 = r[CC + 3], r[CC + 4], r[CC + 5]
        pt0 += (A00 * ct0 + A01 * ct1 + A02 * ct2 + B00 * cl0 + B01 * cl1 + B02 * cl2
                + Y00 * uu0 + Y01 * uu1 + Y02 * uu2)
        pt1 += (A01 * ct0 + A11 * ct1 + A12 * ct2 + B10 * cl0 + B11 * cl1 + B12 * cl2
                + Y10 * uu0 + Y11 * uu1 + Y12 * uu2)
        pt2 += (A02 * ct0 + A12 * ct1 + A22 * ct2 + B20 * cl0 + B21 * cl1 + B22 * cl2
                + Y20 * uu0 + Y21 * uu1 + Y22 * uu2)
        pl0 += (B00 * ct0 + B10 * ct1 + B20 * ct2 + C00 * cl0 + C01 * cl1 + C02 * cl2
                + Y30 * uu0 + Y31 * uu1 + Y32 * uu2)
        pl1 += (B01 * ct0 + B11 * ct1 + B21 * ct2 + C01 * cl0 + C11 * cl1 + C12 * cl2
                + Y40 * uu0 + Y41 * uu1 + Y42 * uu2)
        pl2 += (B02 * ct0 + B12 * ct1 + B22 * ct2 + C02 * cl0 + C12 * cl1 + C22 * cl2
                + Y50 * uu0 + Y51 * uu1 + Y52 * uu2)
    # Pass 3: accelerations, base to tip; the world base accelerates at +g (gravity)
    a0 = a1 = a2 = a3 = a5 = 0.0
    a4 = par[P_G]
    if mode == FREE:
        # three massless prismatic joints at the base: S = [0; I], U = I^A[:, 3:],
        # D = C; v_dot = C^-1 (tau_base - p_l - C (0, g, 0)), tau_base the outside
        # forces' sum (a point force's generalised force on a free base)
        d9[0], d9[1], d9[2] = C00, C01, C02
        d9[3], d9[4], d9[5] = C01, C11, C12
        d9[6], d9[7], d9[8] = C02, C12, C22
        _inv3(d9, scr, 0)
        g0 = tau[0] - pl0 - C01 * a4
        g1 = tau[1] - pl1 - C11 * a4
        g2 = tau[2] - pl2 - C12 * a4
        x0 = scr[0] * g0 + scr[1] * g1 + scr[2] * g2
        x1 = scr[3] * g0 + scr[4] * g1 + scr[5] * g2
        x2 = scr[6] * g0 + scr[7] * g1 + scr[8] * g2
        qdd[0], qdd[1], qdd[2] = x0, x1, x2
        a3 += x0
        a4 += x1
        a5 += x2
        jf[0] = jf[1] = jf[2] = 0.0
    else:
        # the base moves at acc_p[:3]; the force it takes is the root's I^a a + p^a
        qdd[0], qdd[1], qdd[2] = acc_p[0], acc_p[1], acc_p[2]
        a3 += acc_p[0]
        a4 += acc_p[1]
        a5 += acc_p[2]
        jf[0] = C00 * a3 + C01 * a4 + C02 * a5 + pl0
        jf[1] = C01 * a3 + C11 * a4 + C12 * a5 + pl1
        jf[2] = C02 * a3 + C12 * a4 + C22 * a5 + pl2
    for k in range(n):
        r = ws[k]
        F = frames[k]
        j = 3 + 3 * k
        if presc[k]:
            x0 = F[0, 0] * acc_p[j] + F[0, 1] * acc_p[j + 1] + F[0, 2] * acc_p[j + 2]
            x1 = F[1, 0] * acc_p[j] + F[1, 1] * acc_p[j + 1] + F[1, 2] * acc_p[j + 2]
            x2 = F[2, 0] * acc_p[j] + F[2, 1] * acc_p[j + 1] + F[2, 2] * acc_p[j + 2]
            e0, e1, e2 = r[EP], r[EP + 1], r[EP + 2]
            y0, y1, y2 = _cross(e0, e1, e2, x0, x1, x2)
            a0 += r[CC] + x0
            a1 += r[CC + 1] + x1
            a2 += r[CC + 2] + x2
            a3 += r[CC + 3] + y0
            a4 += r[CC + 4] + y1
            a5 += r[CC + 5] + y2
            qdd[j], qdd[j + 1], qdd[j + 2] = acc_p[j], acc_p[j + 1], acc_p[j + 2]
            # f = I^A a + p^A at O; the joint's force S^T f = f_ang + f_lin x E
            f0 = (r[IA] * a0 + r[IA + 1] * a1 + r[IA + 2] * a2 + r[IA + 6] * a3
                  + r[IA + 7] * a4 + r[IA + 8] * a5 + r[PA])
            f1 = (r[IA + 1] * a0 + r[IA + 3] * a1 + r[IA + 4] * a2 + r[IA + 9] * a3
                  + r[IA + 10] * a4 + r[IA + 11] * a5 + r[PA + 1])
            f2 = (r[IA + 2] * a0 + r[IA + 4] * a1 + r[IA + 5] * a2 + r[IA + 12] * a3
                  + r[IA + 13] * a4 + r[IA + 14] * a5 + r[PA + 2])
            f3 = (r[IA + 6] * a0 + r[IA + 9] * a1 + r[IA + 12] * a2 + r[IA + 15] * a3
                  + r[IA + 16] * a4 + r[IA + 17] * a5 + r[PA + 3])
            f4 = (r[IA + 7] * a0 + r[IA + 10] * a1 + r[IA + 13] * a2 + r[IA + 16] * a3
                  + r[IA + 18] * a4 + r[IA + 19] * a5 + r[PA + 4])
            f5 = (r[IA + 8] * a0 + r[IA + 11] * a1 + r[IA + 14] * a2 + r[IA + 17] * a3
                  + r[IA + 19] * a4 + r[IA + 20] * a5 + r[PA + 5])
            g0, g1, g2 = _cross(f3, f4, f5, e0, e1, e2)
            g0 += f0
            g1 += f1
            g2 += f2
            jf[j] = F[0, 0] * g0 + F[1, 0] * g1 + F[2, 0] * g2
            jf[j + 1] = F[0, 1] * g0 + F[1, 1] * g1 + F[2, 1] * g2
            jf[j + 2] = F[0, 2] * g0 + F[1, 2] * g1 + F[2, 2] * g2
            continue
        jf[j] = jf[j + 1] = jf[j + 2] = 0.0
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
        # body components: R_k^T x
        qdd[j] = F[0, 0] * x0 + F[1, 0] * x1 + F[2, 0] * x2
        qdd[j + 1] = F[0, 1] * x0 + F[1, 1] * x1 + F[2, 1] * x2
        qdd[j + 2] = F[0, 2] * x0 + F[1, 2] * x1 + F[2, 2] * x2
