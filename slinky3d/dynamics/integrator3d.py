"""The compiled fixed step of the 3D chain without contact (docs/solver.md, "The 3D
solver").

The planar step's tableaus (integrator.py), over y = (q, u) with q_dot = f_q(q, u):
E_1's velocity, and per joint phi_dot = J_r^-1(phi) w. With damping, ROS34PW2, a
W-method (order 3 whatever the Jacobian), with the Jacobian

    W = [[0, G], [-M^-1 G^T K G ..., -M^-1 C]]:  f_q ~ G u,  springs' force ~ -G^T K phi

G = J_r^-1(phi) per joint, frozen at the step's start. Its linear solves are then

    (M + gamma h C + gamma^2 h^2 G^T K G) k^v / h
        = F(y_i) - C vd_damp - G^T K (sum_j gamma_ij k_j^q + gamma h vd)
    k^q = h vd + gamma h G k^v,   vd = f_q(y_i) + G sum_j gamma_ij k_j^v

with the symmetric 3 x 3 gamma h C_D I + gamma^2 h^2 G^T K G on each joint's
armature in the articulated-body algorithm: no extra cost, as in the plane. In a
planar state G's column along b is b, so the step's b components are the planar
step's. Without damping: Dormand and Prince's explicit 8th-order tableau.

The chart of an unsprung joint 1 (pivot, free) is moved with half hoop 1 after every
sub-step (phi_1 back to 0), so its rotation vector never nears pi however far the
Slinky turns.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from slinky3d.dynamics import articulated_body3d as ab
from slinky3d.dynamics import grab3d
from slinky3d.dynamics.articulated_body import FM, JIT
from slinky3d.dynamics.integrator import (
    ERR_TOL,
    EXP_A,
    EXP_B,
    EXP_C,
    EXP_E,
    MAX_HALVINGS,
    ROSW_A,
    ROSW_B,
    ROSW_C,
    ROSW_E,
    ROSW_G,
)
from slinky3d.dynamics.workspace import MAX_STAGES


class Work3D(NamedTuple):
    """Work arrays of one 3D chain (new_work)."""

    frames: np.ndarray  # (N, 3, 3)
    ws: np.ndarray  # articulated-body rows
    scr: np.ndarray  # articulated-body scratch
    tmp: np.ndarray  # (3, 3)
    d9: np.ndarray  # (9,)
    tau: np.ndarray  # generalised forces (3 + 3N)
    arm: np.ndarray  # (N, 3, 3) armature
    G: np.ndarray  # (N, 3, 3) J_r^-1 at the step's start
    kq: np.ndarray  # (stages, 3 + 3N)
    kv: np.ndarray
    q0: np.ndarray  # the stage's start
    v0: np.ndarray
    vd: np.ndarray  # stage's q rate
    qx: np.ndarray  # the springs' offset
    vdamp: np.ndarray  # the dampers' velocity
    qdd: np.ndarray  # accelerations
    presc: np.ndarray  # (N,) prescribed joints
    acc_p: np.ndarray  # their accelerations; a moved base's
    jf: np.ndarray  # the forces they need
    keep_q: np.ndarray  # a flow's start, for a retry in sub-steps
    keep_v: np.ndarray
    keep_H: np.ndarray
    evaluations: np.ndarray  # [dynamics evaluations so far]
    known: np.ndarray  # [the next stage's state is the last solve's (its kinematics kept)]
    grab: np.ndarray  # the grab (grab3d; all 0: none)
    gscr: np.ndarray  # (N + 2, 3) its scratch
    spin: np.ndarray  # (3,) a clamped holder's angular velocity (world; 0: still)
    soft: np.ndarray  # (3,) the soft contact law's stiffness, damping, theta_min (0: off)
    gjac: np.ndarray  # (4,) the grab's stiffness for a step's stages, its capped axis


def new_work(n: int) -> Work3D:
    ws, scr = ab.workspace(n)
    m = 3 + 3 * n
    return Work3D(np.zeros((n, 3, 3)), ws, scr, np.zeros((3, 3)), np.zeros(9), np.zeros(m),
                  np.zeros((n, 3, 3)), np.zeros((n, 3, 3)), np.zeros((MAX_STAGES, m)),
                  np.zeros((MAX_STAGES, m)), np.zeros(m), np.zeros(m), np.zeros(m),
                  np.zeros(m), np.zeros(m), np.zeros(m), np.zeros(n, np.bool_), np.zeros(m),
                  np.zeros(m), np.zeros(m), np.zeros(m), np.zeros((3, 3)),
                  np.zeros(1, np.int64), np.zeros(1, np.bool_), grab3d.new_grab(),
                  np.zeros((n + 2, 3)), np.zeros(3), np.zeros(3), np.zeros(4))


@njit(**JIT)
def soft_contact(mode, q, u, w):
    """tau += the soft contact law's moments (engine3d; docs/model.md section 5), as the
    planar law on the opening's angle: theta = asin(s_j) (s_j = -exp(phi_j)[2, 0], the
    paper's theta in a planar state), a spring-dashpot f = k (theta_min - theta) -
    d theta_dot where theta < theta_min and f > 0, acting along theta's gradient in
    w_j: theta_dot = (X22 w_b - X21 w_a) / cos(theta), X = exp(phi_j)."""
    kc, dc, tmin = w.soft[0], w.soft[1], w.soft[2]
    first = 0 if mode == ab.CLAMPED else 1
    for k in range(first, w.G.shape[0]):
        j = 3 + 3 * k
        ab.exp_rot(q[j], q[j + 1], q[j + 2], w.tmp)
        s = min(1.0, max(-1.0, -w.tmp[2, 0]))
        th = math.asin(s)
        if th >= tmin:
            continue
        c = math.sqrt(1.0 - s * s)
        g1 = w.tmp[2, 2] / c
        g2 = -w.tmp[2, 1] / c
        f = kc * (tmin - th) - dc * (g1 * u[j + 1] + g2 * u[j + 2])
        if f > 0.0:
            w.tau[j + 1] += f * g1
            w.tau[j + 2] += f * g2


@njit(**JIT)
def external_forces(mode, q, q0, u, H, gh, fresh, par, w):
    """tau += what acts from outside the chain: the grab's point force (grab3d), when on,
    linearly implicit in a stage (gh = gamma h > 0: grab3d.implicit_forces, its
    stiffness a point mass in w.ws until grab3d.clear_point_mass, taken at the step's
    first stage (fresh) and kept through its others, as W must; q0 the step's start,
    w.qx the springs' offset), else explicit;
    a turning holder's share of joint 1's damper (engine3d's twist and scripted
    rotation: the holder's frame H is set step by step, the chart still within a step,
    so joint_forces' -C_D w_1 is taken against a still holder; the damper acts on the
    rate relative to the holder, w_1 - R_1^T spin); the soft contact law's moments
    (`soft_contact`), when on."""
    if w.soft[0] != 0.0:
        soft_contact(mode, q, u, w)
    s0, s1, s2 = w.spin[0], w.spin[1], w.spin[2]
    if mode == ab.CLAMPED and (s0 != 0.0 or s1 != 0.0 or s2 != 0.0):
        # FLIP H^T spin, then exp(phi_1)^T of it: R_1^T spin, R_1 = H FLIP exp(phi_1)
        g0 = -(H[0, 0] * s0 + H[1, 0] * s1 + H[2, 0] * s2)
        g1 = -(H[0, 1] * s0 + H[1, 1] * s1 + H[2, 1] * s2)
        g2 = H[0, 2] * s0 + H[1, 2] * s1 + H[2, 2] * s2
        ab.exp_rot(q[3], q[4], q[5], w.tmp)
        cd = par[ab.P_CD]
        for a in range(3):
            w.tau[3 + a] += cd * (w.tmp[0, a] * g0 + w.tmp[1, a] * g1 + w.tmp[2, a] * g2)
    if w.grab[grab3d.G_ON] != 0.0:
        n1 = w.gscr.shape[0] - 1
        if gh > 0.0:
            grab3d.implicit_forces(mode, q, q0, H, par, w.grab, gh, fresh, w.gjac, w.qx,
                                   w.tau, w.frames, w.gscr[:n1], w.tmp, w.gscr[n1], w.ws)
        else:
            grab3d.add_forces(mode, q, H, par, w.grab, w.tau, w.frames, w.gscr[:n1], w.tmp,
                              w.gscr[n1])


@njit(**JIT, fastmath=FM)
def joint_forces(mode, q, qx, vdamp, par, G, tau):
    """tau: each joint's spring and damper, body components, -J_r^-T(phi) K phi
    - G^T K qx - C_D vdamp (qx = 0, vdamp = u: the true forces); none at an unsprung
    joint 1 (pivot, free)."""
    n = G.shape[0]
    cd = par[ab.P_CD]
    k0 = par[ab.P_K]
    k1 = par[ab.P_K + 1]
    k2 = par[ab.P_K + 2]
    tau[0] = tau[1] = tau[2] = 0.0
    for k in range(n):
        j = 3 + 3 * k
        if k == 0 and mode != ab.CLAMPED:
            tau[j] = tau[j + 1] = tau[j + 2] = 0.0
            continue
        p0, p1, p2 = q[j], q[j + 1], q[j + 2]
        c = ab.jr_inv_coef(p0, p1, p2)
        s0, s1, s2 = ab.jr_inv_apply(p0, p1, p2, c, k0 * p0, k1 * p1, k2 * p2, -1.0)
        y0 = k0 * qx[j]
        y1 = k1 * qx[j + 1]
        y2 = k2 * qx[j + 2]
        Gk = G[k]
        tau[j] = -s0 - (Gk[0, 0] * y0 + Gk[1, 0] * y1 + Gk[2, 0] * y2) - cd * vdamp[j]
        tau[j + 1] = -s1 - (Gk[0, 1] * y0 + Gk[1, 1] * y1 + Gk[2, 1] * y2) - cd * vdamp[j + 1]
        tau[j + 2] = -s2 - (Gk[0, 2] * y0 + Gk[1, 2] * y1 + Gk[2, 2] * y2) - cd * vdamp[j + 2]


@njit(**JIT)
def accelerations(mode, q, u, H, par, w):
    """The true accelerations (into w.qdd): no implicit terms."""
    n = w.G.shape[0]
    for j in range(q.shape[0]):
        w.qx[j] = 0.0
    for k in range(n):
        for a in range(3):
            for b in range(3):
                w.arm[k, a, b] = 0.0
    joint_forces(mode, q, w.qx, u, par, w.G, w.tau)
    external_forces(mode, q, q, u, H, 0.0, False, par, w)
    ab.aba(mode, q, u, H, w.tau, w.arm, par, w.presc, w.acc_p, w.qdd, w.jf, w.frames, w.ws,
           w.scr, w.tmp, w.d9)
    w.evaluations[0] += 1


@njit(**JIT, fastmath=FM)
def rates(q, u, out):
    """q_dot = f_q(q, u): E_1's velocity; J_r^-1(phi_k) w_k."""
    out[0], out[1], out[2] = u[0], u[1], u[2]
    for j in range(3, q.shape[0], 3):
        p0, p1, p2 = q[j], q[j + 1], q[j + 2]
        c = ab.jr_inv_coef(p0, p1, p2)
        out[j], out[j + 1], out[j + 2] = ab.jr_inv_apply(p0, p1, p2, c, u[j], u[j + 1],
                                                         u[j + 2], 1.0)


@njit(**JIT, fastmath=FM)
def _stage_forces(mode, q, u, gh, par, w):
    """One stage's q rate vd = f_q(q, u) + G vdamp, then qx += gh vd, vdamp += u, and
    the joints' forces (joint_forces) at them: `rates`, the W-method's terms and
    `joint_forces` in one sweep, J_r^-1's coefficient computed once a joint."""
    vd = w.vd
    qx = w.qx
    vdamp = w.vdamp
    tau = w.tau
    cd = par[ab.P_CD]
    k0 = par[ab.P_K]
    k1 = par[ab.P_K + 1]
    k2 = par[ab.P_K + 2]
    for j in range(3):
        vd[j] = u[j] + vdamp[j]
        qx[j] += gh * vd[j]
        vdamp[j] += u[j]
        tau[j] = 0.0
    for k in range(w.G.shape[0]):
        j = 3 + 3 * k
        Gk = w.G[k]
        p0, p1, p2 = q[j], q[j + 1], q[j + 2]
        c = ab.jr_inv_coef(p0, p1, p2)
        r0, r1, r2 = ab.jr_inv_apply(p0, p1, p2, c, u[j], u[j + 1], u[j + 2], 1.0)
        s0, s1, s2 = vdamp[j], vdamp[j + 1], vdamp[j + 2]
        r0 += Gk[0, 0] * s0 + Gk[0, 1] * s1 + Gk[0, 2] * s2
        r1 += Gk[1, 0] * s0 + Gk[1, 1] * s1 + Gk[1, 2] * s2
        r2 += Gk[2, 0] * s0 + Gk[2, 1] * s1 + Gk[2, 2] * s2
        vd[j], vd[j + 1], vd[j + 2] = r0, r1, r2
        x0 = qx[j] + gh * r0
        x1 = qx[j + 1] + gh * r1
        x2 = qx[j + 2] + gh * r2
        qx[j], qx[j + 1], qx[j + 2] = x0, x1, x2
        d0 = s0 + u[j]
        d1 = s1 + u[j + 1]
        d2 = s2 + u[j + 2]
        vdamp[j], vdamp[j + 1], vdamp[j + 2] = d0, d1, d2
        if k == 0 and mode != ab.CLAMPED:
            tau[j] = tau[j + 1] = tau[j + 2] = 0.0
            continue
        t0, t1, t2 = ab.jr_inv_apply(p0, p1, p2, c, k0 * p0, k1 * p1, k2 * p2, -1.0)
        y0 = k0 * x0
        y1 = k1 * x1
        y2 = k2 * x2
        tau[j] = -t0 - (Gk[0, 0] * y0 + Gk[1, 0] * y1 + Gk[2, 0] * y2) - cd * d0
        tau[j + 1] = -t1 - (Gk[0, 1] * y0 + Gk[1, 1] * y1 + Gk[2, 1] * y2) - cd * d1
        tau[j + 2] = -t2 - (Gk[0, 2] * y0 + Gk[1, 2] * y1 + Gk[2, 2] * y2) - cd * d2


@njit(**JIT, fastmath=FM)
def _stage_rates(st, h, gh, w):
    """The stage's increments: kv = h qdd, kq = h vd + gh G kv (E_1's: + gh kv)."""
    kv = w.kv
    kq = w.kq
    vd = w.vd
    qdd = w.qdd
    for j in range(3):
        kv[st, j] = h * qdd[j]
        kq[st, j] = h * vd[j] + gh * kv[st, j]
    for k in range(w.G.shape[0]):
        j = 3 + 3 * k
        Gk = w.G[k]
        s0 = h * qdd[j]
        s1 = h * qdd[j + 1]
        s2 = h * qdd[j + 2]
        kv[st, j], kv[st, j + 1], kv[st, j + 2] = s0, s1, s2
        for i in range(3):
            kq[st, j + i] = h * vd[j + i] + gh * (Gk[i, 0] * s0 + Gk[i, 1] * s1 + Gk[i, 2] * s2)


@njit(**JIT, fastmath=FM)
def _start(mode, q, gh, g2h2, par, w):
    """G = J_r^-1(phi) and the armature gamma h C_D I + gamma^2 h^2 G^T K G, per joint."""
    n = w.G.shape[0]
    cd = gh * par[ab.P_CD]
    k0 = par[ab.P_K]
    k1 = par[ab.P_K + 1]
    k2 = par[ab.P_K + 2]
    for k in range(n):
        j = 3 + 3 * k
        p0, p1, p2 = q[j], q[j + 1], q[j + 2]
        c = ab.jr_inv_coef(p0, p1, p2)
        Gk = w.G[k]
        # I + 1/2 [phi]x + c [phi]x^2, [phi]x^2 = phi phi^T - |phi|^2 I
        h0 = 0.5 * p0
        h1 = 0.5 * p1
        h2 = 0.5 * p2
        c01 = c * p0 * p1
        c02 = c * p0 * p2
        c12 = c * p1 * p2
        d = 1.0 - c * (p0 * p0 + p1 * p1 + p2 * p2)
        g00, g01, g02 = d + c * p0 * p0, c01 - h2, c02 + h1
        g10, g11, g12 = c01 + h2, d + c * p1 * p1, c12 - h0
        g20, g21, g22 = c02 - h1, c12 + h0, d + c * p2 * p2
        Gk[0, 0], Gk[0, 1], Gk[0, 2] = g00, g01, g02
        Gk[1, 0], Gk[1, 1], Gk[1, 2] = g10, g11, g12
        Gk[2, 0], Gk[2, 1], Gk[2, 2] = g20, g21, g22
        A = w.arm[k]
        if k == 0 and mode != ab.CLAMPED:  # unsprung
            for a in range(3):
                for b in range(3):
                    A[a, b] = 0.0
            continue
        # K G's rows, then (G^T K G)[a, b] = sum_i (G[i, a] K_i) G[i, b]
        h00, h01, h02 = g00 * k0, g01 * k0, g02 * k0
        h10, h11, h12 = g10 * k1, g11 * k1, g12 * k1
        h20, h21, h22 = g20 * k2, g21 * k2, g22 * k2
        A[0, 0] = g2h2 * (h00 * g00 + h10 * g10 + h20 * g20) + cd
        A[0, 1] = g2h2 * (h00 * g01 + h10 * g11 + h20 * g21) + 0.0
        A[0, 2] = g2h2 * (h00 * g02 + h10 * g12 + h20 * g22) + 0.0
        A[1, 0] = g2h2 * (h01 * g00 + h11 * g10 + h21 * g20) + 0.0
        A[1, 1] = g2h2 * (h01 * g01 + h11 * g11 + h21 * g21) + cd
        A[1, 2] = g2h2 * (h01 * g02 + h11 * g12 + h21 * g22) + 0.0
        A[2, 0] = g2h2 * (h02 * g00 + h12 * g10 + h22 * g20) + 0.0
        A[2, 1] = g2h2 * (h02 * g01 + h12 * g11 + h22 * g21) + 0.0
        A[2, 2] = g2h2 * (h02 * g02 + h12 * g12 + h22 * g22) + cd


@njit(**JIT)
def _rechart(mode, q, H, tmp, d9):
    """Move an unsprung joint 1's chart with half hoop 1: H <- H FLIP exp(phi_1) FLIP,
    phi_1 <- 0; H kept orthonormal (one Newton step of the polar decomposition)."""
    if mode == ab.CLAMPED:
        return
    ab.exp_rot(q[3], q[4], q[5], tmp)
    for i in range(3):
        # (H FLIP) exp(phi) FLIP: FLIP = diag(-1, -1, 1) on both sides
        p0 = -H[i, 0]
        p1 = -H[i, 1]
        p2 = H[i, 2]
        for c in range(3):
            s = -1.0 if c < 2 else 1.0
            d9[3 * i + c] = s * (p0 * tmp[0, c] + p1 * tmp[1, c] + p2 * tmp[2, c])
    for i in range(3):  # tmp = X^T X
        for c in range(3):
            tmp[i, c] = d9[i] * d9[c] + d9[3 + i] * d9[3 + c] + d9[6 + i] * d9[6 + c]
    for i in range(3):
        for c in range(3):
            x = 1.5 * d9[3 * i + c]
            for b in range(3):
                x -= 0.5 * d9[3 * i + b] * tmp[b, c]
            H[i, c] = x
    q[3] = q[4] = q[5] = 0.0


@njit(**JIT, fastmath=FM)
def stages(mode, q, u, H, h, par, w):
    """One step of h of the scheme above, in place; returns its error estimate (0 for
    the explicit tableau)."""
    m = q.shape[0]
    kq = w.kq
    kv = w.kv
    q0 = w.q0
    v0 = w.v0
    if par[ab.P_CD] > 0.0:
        A, B, Cg, g, Ee = ROSW_A, ROSW_B, ROSW_C, ROSW_G, ROSW_E
    else:
        A, B, Cg, g, Ee = EXP_A, EXP_B, EXP_C, 0.0, EXP_E
    ns = B.shape[0]
    _start(mode, q, g * h, g * g * h * h, par, w)
    for j in range(m):
        q0[j] = q[j]
        v0[j] = u[j]
    for st in range(ns):
        for j in range(m):
            qj = q0[j]
            uj = v0[j]
            dj = 0.0  # sum_j gamma_ij k_j^v
            xj = 0.0  # sum_j gamma_ij k_j^q
            for i in range(st):
                a = A[st, i]
                c = Cg[st, i]
                qj += a * kq[i, j]
                uj += a * kv[i, j]
                dj += c * kv[i, j]
                xj += c * kq[i, j]
            q[j] = qj
            u[j] = uj
            w.vdamp[j] = dj
            w.qx[j] = xj
        _stage_forces(mode, q, u, g * h, par, w)
        external_forces(mode, q, q0, u, H, g * h, st == 0, par, w)
        # the first stage, at the state of the caller's last solve: its kinematics kept
        # (not with a grab, whose force uses the frames as scratch)
        if w.known[0] and w.grab[grab3d.G_ON] == 0.0:
            w.known[0] = False
            ab.passes(mode, w.tau, w.arm, par, w.presc, w.acc_p, w.qdd, w.jf, w.frames,
                      w.ws, w.scr, w.tmp, w.d9, False)
        else:
            w.known[0] = False
            ab.aba(mode, q, u, H, w.tau, w.arm, par, w.presc, w.acc_p, w.qdd, w.jf,
                   w.frames, w.ws, w.scr, w.tmp, w.d9)
        w.evaluations[0] += 1
        _stage_rates(st, h, g * h, w)
    if w.grab[grab3d.G_ON] != 0.0:
        grab3d.clear_point_mass(w.ws)
    for j in range(m):
        q[j] = q0[j]
        u[j] = v0[j]
    for i in range(ns):
        b = B[i]
        for j in range(m):
            q[j] += b * kq[i, j]
            u[j] += b * kv[i, j]
    err = 0.0
    for j in range(3, m if g > 0.0 else 0):  # the explicit tableau has no estimate
        eq = 0.0
        ev = 0.0
        for i in range(ns):
            eq += Ee[i] * kq[i, j]
            ev += Ee[i] * kv[i, j]
        err = max(err, abs(eq), abs(ev) * h)
    _rechart(mode, q, H, w.tmp, w.d9)
    return err


@njit(**JIT)
def flow(mode, q, u, H, h, par, w):
    """Advance h in place: in 2^d equal sub-steps, d the least (<= MAX_HALVINGS) whose
    every sub-step's error estimate is within ERR_TOL, as the planar flow."""
    m = q.shape[0]
    for j in range(m):
        w.keep_q[j] = q[j]
        w.keep_v[j] = u[j]
    for i in range(3):
        for c in range(3):
            w.keep_H[i, c] = H[i, c]
    worst = 0.0
    for d in range(MAX_HALVINGS + 1):
        if d > 0:
            for j in range(m):
                q[j] = w.keep_q[j]
                u[j] = w.keep_v[j]
            for i in range(3):
                for c in range(3):
                    H[i, c] = w.keep_H[i, c]
        pieces = 1 << d
        hs = h / pieces
        worst = 0.0
        for _ in range(pieces):
            err = stages(mode, q, u, H, hs, par, w)
            worst = max(worst, err)
            if err > ERR_TOL and d < MAX_HALVINGS:
                break
        if worst <= ERR_TOL:
            break
    return worst


@njit(**JIT)
def run(mode, q, u, H, h, nsteps, par, w):
    """nsteps fixed steps of h, in place."""
    for _ in range(nsteps):
        flow(mode, q, u, H, h, par, w)
