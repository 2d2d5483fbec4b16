"""Compiled core of the real-time solver: fixed steps with events inside them.

One step of size h is the Strang splitting  D(h/2) . R(h) . D(h/2):

* R: classical RK4 on the undamped dynamics (springs, gravity, drives, grab,
  soft contact), with the current set of *locked* joints (coils in resting
  contact) prescribed at zero acceleration, so they stay exactly at theta_min.
* D: the joint damping -C_D theta_dot on its own, by implicit Euler with q
  frozen: (M + tau C) dv = -tau C v, solved in O(N) by adding tau C_D to the
  articulated-body algorithm's joint "armature". The damping is the stiff part
  (C_D / I ~ 8e3 1/s); explicit RK4 would need h < 0.35 ms, this takes 1-2 ms.

Events inside a step (rigid and paper laws) are located and the step is split:
a free joint reaching theta_min (cubic Hermite interpolant of the step, then
bisection) triggers the impact law; a locked joint whose contact torque would
turn tensile (linear interpolation of the torque) is unlocked there. The output
stays on the fixed grid. All contacts at an instant are solved together: impact
and resting contact are linear complementarity problems over the joints at
theta_min, solved by block principal pivoting where every pivot is one O(N)
hybrid articulated-body solve (the Delassus matrix is never formed).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .aba import BASE, aba, kinematics, point_force

# par: float parameters
P_M, P_I, P_R, P_G, P_K, P_CD, P_TMIN, P_KC, P_DC = range(9)
P_GK, P_GK2, P_GD, P_GCAP = 9, 10, 11, 12
P_X0, P_Y0, P_PHI0, P_AX, P_AY, P_AR, P_FREQ, P_PHASE, P_START = range(13, 22)
NPAR = 22
# ipar: integer flags
I_FREE, I_LAW, I_GRAB, I_GRABK, I_NSUB = range(5)
NIPAR = 5
LAW_OFF, LAW_RIGID, LAW_PAPER, LAW_SOFT = 0, 1, 2, 3
# counters
C_IMPACTS, C_EVENTS, C_EVALS, C_LCPFAIL = range(4)

POS_TOL = 1e-10  # rad: a joint this close to theta_min counts as touching
MAX_EVENTS = 400  # per step; a bound, never reached in practice


@njit(cache=True, error_model="numpy")
def _motion(par, t, pose, vel, acc):
    """Anchor pose, velocity and acceleration (x, y, phi) for a held/scripted anchor."""
    pose[0] = par[P_X0]
    pose[1] = par[P_Y0]
    pose[2] = par[P_PHI0]
    for i in range(3):
        vel[i] = 0.0
        acc[i] = 0.0
    if t <= par[P_START] or par[P_FREQ] <= 0.0:
        return
    w = 2.0 * math.pi * par[P_FREQ]
    a = w * (t - par[P_START]) + par[P_PHASE]
    s0 = math.sin(par[P_PHASE])
    amps = (par[P_AX], par[P_AY], par[P_AR])
    for i in range(3):
        pose[i] += amps[i] * (math.sin(a) - s0)
        vel[i] = amps[i] * w * math.cos(a)
        acc[i] = -amps[i] * w * w * math.sin(a)


class Work:
    """Python-side holder of the scratch arrays one Slinky's solver needs."""

    def __init__(self, n: int):
        nj = n + BASE
        self.ws = np.zeros((nj, 29))
        self.E = np.zeros((n + 1, 2))
        self.U = np.zeros((n, 2))
        self.tau = np.zeros(nj)
        self.fext = np.zeros((n, 3))
        self.presc = np.zeros(nj, dtype=np.bool_)
        self.qdd_p = np.zeros(nj)
        self.arm = np.zeros(nj)
        self.qdd = np.zeros(nj)
        self.freq = np.zeros(nj)
        # RK stages and saved state: rows of (nj) for q, qd; (2) for sd
        self.kq = np.zeros((5, nj))
        self.kv = np.zeros((5, nj))
        self.ks = np.zeros((5, 2))
        self.save = np.zeros((3, nj))
        self.lam0 = np.zeros(nj)
        self.lam1 = np.zeros(nj)
        self.vec = np.zeros((4, 3))
        self.scratch = np.zeros((6, nj))  # 0 zeros/tmp, 1-2 RK sums, 3 v+, 4-5 step start
        self.bscratch = np.zeros((4, nj), dtype=np.bool_)  # cand, act, viol, sticky

    def arrays(self):
        return (self.ws, self.E, self.U, self.tau, self.fext, self.presc, self.qdd_p,
                self.arm, self.qdd, self.freq, self.kq, self.kv, self.ks, self.save,
                self.lam0, self.lam1, self.vec, self.scratch, self.bscratch)


@njit(cache=True, error_model="numpy")
def deriv(q, qd, sd, t, locked, target, par, ipar, w, out_qdd, out_sd, damped=False):
    """Accelerations of the undamped system with `locked` joints held; returns nothing.

    Fills out_qdd and out_sd (grab damper rate); w.freq holds, for locked joints,
    the contact torque, for prescribed base joints the anchor reaction. With
    `damped` the joint damping is included explicitly: the contact decisions
    must see the damping that the D sub-steps apply.
    """
    (ws, E, U, tau, fext, presc, qdd_p, arm, qdd, freq, kq, kv, ks, save,
     lam0, lam1, vec, scratch, bscratch) = w
    nj = q.shape[0]
    n = nj - BASE
    free = ipar[I_FREE] != 0
    k = par[P_K]
    tmin = par[P_TMIN]
    law = ipar[I_LAW]
    for j in range(nj):
        tau[j] = 0.0
        arm[j] = 0.0
        qdd_p[j] = 0.0
        presc[j] = locked[j]
    cd = par[P_CD] if damped else 0.0
    for j in range(BASE, nj):
        tau[j] = -k * q[j] - cd * qd[j]
    if free:
        tau[BASE] = 0.0  # a free Slinky has no holder: no spring at joint 1
        presc[BASE] = True
    else:
        pose = vec[0]
        vel = vec[1]
        acc = vec[2]
        _motion(par, t, pose, vel, acc)
        for i in range(BASE):
            presc[i] = True
            qdd_p[i] = acc[i]
    if law == LAW_SOFT:
        kc = par[P_KC]
        dc = par[P_DC]
        for j in range(BASE, nj):
            pen = tmin - q[j]
            if pen > 0.0:
                f = kc * pen - dc * qd[j]
                if f > 0.0:
                    tau[j] += f
    for i in range(n):
        fext[i, 0] = 0.0
        fext[i, 1] = 0.0
        fext[i, 2] = 0.0
    out_sd[0] = 0.0
    out_sd[1] = 0.0
    if ipar[I_GRAB] != 0:
        kinematics(q, par[P_R], E, U)
        kp = ipar[I_GRABK]
        ex = target[0] - E[kp, 0]
        ey = target[1] - E[kp, 1]
        # holding spring in parallel with a Maxwell element (spring k2 + damper d)
        mx = par[P_GK2] * (ex - sd[0])
        my = par[P_GK2] * (ey - sd[1])
        fx = par[P_GK] * ex + mx
        fy = par[P_GK] * ey + my
        fn = math.sqrt(fx * fx + fy * fy)
        if fn > par[P_GCAP]:
            fx *= par[P_GCAP] / fn
            fy *= par[P_GCAP] / fn
        out_sd[0] = mx / par[P_GD]
        out_sd[1] = my / par[P_GD]
        point_force(E, kp, fx, fy, fext)
    aba(q, qd, tau, presc, qdd_p, fext, arm, par[P_M], par[P_I], par[P_R], par[P_G],
        out_qdd, freq, E, U, ws)
    # contact torque of locked joints = needed torque minus the spring's
    for j in range(BASE, nj):
        if locked[j]:
            freq[j] -= tau[j]


@njit(cache=True, error_model="numpy")
def _set_base(q, qd, t, par, ipar, vec):
    """Put a held/scripted anchor exactly on its motion (no drift from RK sums)."""
    if ipar[I_FREE] == 0:
        _motion(par, t, vec[0], vec[1], vec[2])
        for i in range(BASE):
            q[i] = vec[0][i]
            qd[i] = vec[1][i]
    else:
        qd[BASE] = 0.0


@njit(cache=True, error_model="numpy")
def _damp_solve(q, v, h, locked, par, ipar, w, out):
    """out = v + dv with (M + h C) dv = -h C v, q frozen (one implicit-Euler stage)."""
    (ws, E, U, tau, fext, presc, qdd_p, arm, qdd, freq, kq, kv, ks, save,
     lam0, lam1, vec, scratch, bscratch) = w
    nj = q.shape[0]
    n = nj - BASE
    zero = scratch[0]
    free = ipar[I_FREE] != 0
    c = par[P_CD]
    for j in range(nj):
        zero[j] = 0.0
        qdd_p[j] = 0.0
        # the drive fixes the base (clamped) or joint 1 (free); contacts stay put
        presc[j] = locked[j] or (j == BASE if free else j < BASE)
        arm[j] = 0.0
        tau[j] = 0.0
        if j >= BASE and not presc[j]:
            arm[j] = h * c
            tau[j] = -h * c * v[j]
    for i in range(n):
        fext[i, 0] = 0.0
        fext[i, 1] = 0.0
        fext[i, 2] = 0.0
    aba(q, zero, tau, presc, qdd_p, fext, arm, par[P_M], par[P_I], par[P_R], 0.0,
        qdd, freq, E, U, ws)
    for j in range(nj):
        out[j] = v[j] + (0.0 if presc[j] else qdd[j])


GAMMA = 1.0 - math.sqrt(0.5)  # Alexander's L-stable, stiffly accurate SDIRK2


@njit(cache=True, error_model="numpy")
def _damp(q, qd, h, locked, par, ipar, w):
    """The damping flow v' = -M^-1 C v over h, q frozen, by 2-stage SDIRK (order 2,
    L-stable: the overdamped fast modes are damped out, not left ringing)."""
    if par[P_CD] <= 0.0 or h <= 0.0:
        return
    nj = q.shape[0]
    scratch = w[17]
    v1 = scratch[3]
    _damp_solve(q, qd, GAMMA * h, locked, par, ipar, w, v1)
    # stage 2 starts from v0 + (1 - g)/g (V1 - v0)
    r = (1.0 - GAMMA) / GAMMA
    for j in range(nj):
        v1[j] = qd[j] + r * (v1[j] - qd[j])
    _damp_solve(q, v1, GAMMA * h, locked, par, ipar, w, qd)


@njit(cache=True, error_model="numpy")
def _rk4(q, qd, sd, t, h, locked, target, par, ipar, w, cnt):
    """One RK4 step of the undamped flow, in place."""
    kq, kv, ks, save = w[10], w[11], w[12], w[13]
    nj = q.shape[0]
    q0 = save[0]
    v0 = save[1]
    for j in range(nj):
        q0[j] = q[j]
        v0[j] = qd[j]
    s00 = sd[0]
    s01 = sd[1]
    cs = (0.0, 0.5, 0.5, 1.0)
    bs = (1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0)
    acc_q = w[17][1]
    acc_v = w[17][2]
    for j in range(nj):
        acc_q[j] = 0.0
        acc_v[j] = 0.0
    as0 = 0.0
    as1 = 0.0
    for st in range(4):
        if st > 0:
            c = cs[st] * h
            for j in range(nj):
                q[j] = q0[j] + c * kq[st - 1, j]
                qd[j] = v0[j] + c * kv[st - 1, j]
            sd[0] = s00 + c * ks[st - 1, 0]
            sd[1] = s01 + c * ks[st - 1, 1]
        for j in range(nj):
            kq[st, j] = qd[j]
        deriv(q, qd, sd, t + cs[st] * h, locked, target, par, ipar, w, kv[st], ks[st])
        cnt[C_EVALS] += 1
        b = bs[st] * h
        for j in range(nj):
            acc_q[j] += b * kq[st, j]
            acc_v[j] += b * kv[st, j]
        as0 += b * ks[st, 0]
        as1 += b * ks[st, 1]
    for j in range(nj):
        q[j] = q0[j] + acc_q[j]
        qd[j] = v0[j] + acc_v[j]
    sd[0] = s00 + as0
    sd[1] = s01 + as1


@njit(cache=True, error_model="numpy")
def flow(q, qd, sd, t, h, locked, target, par, ipar, w, cnt):
    """D(h/2) R(h) D(h/2), with soft-contact sub-steps; q, qd, sd in place."""
    nsub = max(ipar[I_NSUB], 1)
    hs = h / nsub
    for i in range(nsub):
        ts = t + i * hs
        _damp(q, qd, 0.5 * hs, locked, par, ipar, w)
        _rk4(q, qd, sd, ts, hs, locked, target, par, ipar, w, cnt)
        _set_base(q, qd, ts + hs, par, ipar, w[16])
        _damp(q, qd, 0.5 * hs, locked, par, ipar, w)
    tmin = par[P_TMIN]
    for j in range(BASE, q.shape[0]):
        if locked[j]:
            q[j] = tmin
            qd[j] = 0.0
