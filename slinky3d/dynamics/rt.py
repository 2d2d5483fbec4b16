"""Compiled core of the real-time solver: fixed steps with events inside them.

With damping, one step of size h is the Rosenbrock-W method ROS34PW2 (four O(N)
dynamics evaluations) whose Jacobian holds the joint springs and damping, the stiff
linear part (C_D / I ~ 8e3 1/s: explicit RK4 would need h < 0.35 ms). Its linear
solves (M + gamma h C + gamma^2 h^2 K) x = f cost nothing extra: the diagonal goes
on each joint's "armature" in the articulated-body algorithm. A flow whose embedded
error estimate is too large is redone in 2, 4 or 8 sub-steps. Without damping the
step is an explicit 8th-order tableau. Coils in resting contact are *locked*
joints, prescribed at zero acceleration, so they stay exactly at theta_min.

Events inside a step (rigid and paper laws, rtcontact.py) are located and the step
is split; the output stays on the fixed grid. All contacts at an instant are solved
together: impact and resting contact are linear complementarity problems over the
joints at theta_min, solved by block principal pivoting where every pivot is one
O(N) hybrid articulated-body solve (the Delassus matrix is never formed).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy.integrate._ivp import dop853_coefficients

from slinky3d.dynamics.articulated_body import BASE, JIT, aba, kinematics, point_force, workspace

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
C_IMPACTS, C_EVENTS, C_EVALS, C_LCPFAIL, C_SEPARATIONS, C_STUCK = range(6)

POS_TOL = 1e-10  # rad: a joint this close to theta_min counts as touching
MAX_EVENTS = 400  # per step; a bound, never reached in practice


@njit(**JIT)
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
        self.ws = workspace(n)
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
        # stage rows; the last row of ks is scratch for single evaluations
        self.kq = np.zeros((NSTAGE_MAX + 1, nj))
        self.kv = np.zeros((NSTAGE_MAX + 1, nj))
        self.ks = np.zeros((NSTAGE_MAX + 1, 2))
        self.save = np.zeros((5, nj))  # step start q, qd; damping velocities; flow start
        self.lam0 = np.zeros(nj)
        self.lam1 = np.zeros(nj)
        # 0-2 anchor motion; 3 a flow's starting grab damper; 4-6 the grab damper at a
        # sub-step's ends
        self.vec = np.zeros((7, 3))
        # 0 zeros/tmp, 1 v+, 2-3 state at a sub-step start, 4-5 accelerations at its
        # ends, 6 a stage's spring offset, 7 zeros (never written), 8-9 its end state
        self.scratch = np.zeros((10, nj))
        self.bscratch = np.zeros((4, nj), dtype=np.bool_)  # cand, act, viol, sticky
        # flags[0] = 1: qdd/freq hold the dynamics of the current state and contacts
        # (the end of the last step), so the next contact solve need not redo it;
        # flags[1] = 1: fext holds a force (zeroed lazily: it is zero without a grab)
        self.flags = np.zeros(2, dtype=np.int64)

    def arrays(self):
        return (self.ws, self.E, self.U, self.tau, self.fext, self.presc, self.qdd_p,
                self.arm, self.qdd, self.freq, self.kq, self.kv, self.ks, self.save,
                self.lam0, self.lam1, self.vec, self.scratch, self.bscratch, self.flags)


@njit(**JIT)
def deriv(q, qd, sd, t, locked, target, par, ipar, w, out_qdd, out_sd, vdamp, qx, armh):
    """Accelerations of the system with `locked` joints held; returns nothing.

    Fills out_qdd and out_sd (grab damper rate); w.freq holds, for locked joints,
    the contact torque, for prescribed base joints the anchor reaction. The
    joint damping acts with the velocities `vdamp` and the springs with the
    angles q + qx (qd and 0 for the true dynamics; a Rosenbrock stage's
    combinations otherwise), implicit through the armature armh (see _stages).
    """
    (ws, E, U, tau, fext, presc, qdd_p, arm, qdd, freq, kq, kv, ks, save,
     lam0, lam1, vec, scratch, bscratch, flags) = w
    nj = q.shape[0]
    n = nj - BASE
    free = ipar[I_FREE] != 0
    k = par[P_K]
    tmin = par[P_TMIN]
    law = ipar[I_LAW]
    cd = par[P_CD]
    # Loops from 0, with no branches, vectorize; a loop from BASE became gathers
    # (numba's negative-index wraparound hides that the indices are contiguous).
    for j in range(nj):
        presc[j] = locked[j]
        qdd_p[j] = 0.0
        tau[j] = -k * (q[j] + qx[j]) - cd * vdamp[j]
        arm[j] = armh
    for j in range(BASE):
        tau[j] = 0.0
        arm[j] = 0.0
    if free:
        tau[BASE] = 0.0  # a free Slinky has no holder: no spring at joint 1
        arm[BASE] = 0.0
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
    if flags[1] != 0:  # a grab force was applied last time
        for i in range(n):
            fext[i, 0] = 0.0
            fext[i, 1] = 0.0
            fext[i, 2] = 0.0
        flags[1] = 0
    out_sd[0] = 0.0
    out_sd[1] = 0.0
    if ipar[I_GRAB] != 0:
        kinematics(q, par[P_R], E, U, ws)
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
        flags[1] = 1
    aba(q, qd, tau, presc, qdd_p, fext, arm, par[P_M], par[P_I], par[P_R], par[P_G],
        out_qdd, freq, E, U, ws)
    # contact torque of locked joints = needed torque minus the spring's
    for j in range(nj):  # base joints are never locked
        freq[j] = freq[j] - tau[j] if locked[j] else freq[j]


@njit(**JIT)
def _set_base(q, qd, t, par, ipar, vec):
    """Put a held/scripted anchor exactly on its motion (no drift from RK sums)."""
    if ipar[I_FREE] == 0:
        _motion(par, t, vec[0], vec[1], vec[2])
        for i in range(BASE):
            q[i] = vec[0][i]
            qd[i] = vec[1][i]
    else:
        qd[BASE] = 0.0


# Step tableaus, one routine for both (Rosenbrock-W form, W = [[0, I], [-M^-1 K,
# -M^-1 C]] for y = (q, v)):  with vd = v_i + sum_j c_ij k_j^v,
#   (M + g h C + g^2 h^2 K) k_i^v / h = F(y_i) - C vd - K (sum_j c_ij k_j^q + g h vd)
#   k_i^q = h vd + g h k_i^v
# With damping ROS34PW2 (Rang & Angermann), a W-method: order 3 whatever the
# Jacobian. Without, an explicit tableau (c = g = 0). Splitting the damping off
# instead (Strang) fell to first order at h ~ 1 ms (order reduction).
ROSW_G = 0.43586652150845900
ROSW_A = np.array([[0.0, 0.0, 0.0, 0.0], [0.87173304301691801, 0.0, 0.0, 0.0],
                   [0.84457060015369423, -0.11299064236484185, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
ROSW_C = np.array([[0.0, 0.0, 0.0, 0.0], [-0.87173304301691801, 0.0, 0.0, 0.0],
                   [-0.90338057013044082, 0.054180672388095326, 0.0, 0.0],
                   [0.24212380706095346, -1.2232505839045147, 0.54526025533510214, 0.0]])
ROSW_B = np.array([0.24212380706095346, -1.2232505839045147, 1.5452602553351020,
                   0.43586652150845900])
# b - bhat: the embedded 2nd-order solution's difference, the local error estimate
ROSW_E = ROSW_B - np.array([0.37810903145819369, -0.096042292212423178, 0.5,
                            0.21793326075422950])
# Undamped: Dormand and Prince's 8th-order tableau (scipy's DOP853), used at a fixed
# step. RK4 lost 3% of a free steel Slinky's energy in 10 s at 1 ms (it dissipates
# the fast modes as (omega h)^6); this keeps energy to ~1e-6 for 3x the evaluations.
EXP_A = np.ascontiguousarray(dop853_coefficients.A[:12, :12])
EXP_B = np.ascontiguousarray(dop853_coefficients.B)
EXP_C = np.zeros((12, 12))
EXP_E = np.zeros(12)  # no estimate: the undamped step is not sub-stepped
NSTAGE_MAX = 12
ERR_TOL = 2e-3  # rad: a violent state (flung coils at ~30 rad/s) is sub-stepped
MAX_HALVINGS = 3


@njit(**JIT)
def _combine(q, qd, sd, q0, v0, s00, s01, coef, count, kq, kv, ks):
    """(q, qd, sd) = start + sum_{m < count} coef[m] k_m: a stage's state or the step's end."""
    for j in range(q.shape[0]):
        q[j] = q0[j]
        qd[j] = v0[j]
    sd[0] = s00
    sd[1] = s01
    for m in range(count):
        a = coef[m]
        if a != 0.0:
            for j in range(q.shape[0]):
                q[j] += a * kq[m, j]
                qd[j] += a * kv[m, j]
            sd[0] += a * ks[m, 0]
            sd[1] += a * ks[m, 1]


@njit(**JIT)
def _stages(q, qd, sd, t, h, locked, target, par, ipar, w, cnt):
    """One step of the stage scheme above, in place (4 or 12 dynamics evaluations)."""
    kq, kv, ks, save = w[10], w[11], w[12], w[13]
    nj = q.shape[0]
    q0 = save[0]
    v0 = save[1]
    vd = save[2]
    for j in range(nj):
        q0[j] = q[j]
        v0[j] = qd[j]
    s00 = sd[0]
    s01 = sd[1]
    if par[P_CD] > 0.0:
        A, B, Cg, g, Ee = ROSW_A, ROSW_B, ROSW_C, ROSW_G, ROSW_E
    else:
        A, B, Cg, g, Ee = EXP_A, EXP_B, EXP_C, 0.0, EXP_E
    ns = B.shape[0]
    qx = w[17][6]
    armh = g * h * par[P_CD] + g * g * h * h * par[P_K]
    for st in range(ns):
        _combine(q, qd, sd, q0, v0, s00, s01, A[st], st, kq, kv, ks)
        tst = t
        for m in range(st):
            tst += A[st, m] * h
        for j in range(nj):
            vd[j] = qd[j]
            qx[j] = 0.0
        for m in range(st):
            c = Cg[st, m]
            if c != 0.0:
                for j in range(nj):
                    vd[j] += c * kv[m, j]
                    qx[j] += c * kq[m, j]
        for j in range(nj):
            qx[j] += g * h * vd[j]
        deriv(q, qd, sd, tst, locked, target, par, ipar, w, kv[st], ks[st], vd, qx, armh)
        cnt[C_EVALS] += 1
        for j in range(nj):
            kq[st, j] = h * (vd[j] + g * h * kv[st, j])
            kv[st, j] = h * kv[st, j]
        ks[st, 0] *= h
        ks[st, 1] *= h
    _combine(q, qd, sd, q0, v0, s00, s01, B, ns, kq, kv, ks)
    err = 0.0
    for j in range(BASE, nj if g > 0.0 else 0):  # the explicit tableau has no estimate
        eq = 0.0
        ev = 0.0
        for m in range(ns):
            eq += Ee[m] * kq[m, j]
            ev += Ee[m] * kv[m, j]
        err = max(err, abs(eq), abs(ev) * h)
    return err


@njit(**JIT)
def flow(q, qd, sd, t, h, locked, target, par, ipar, w, cnt, control=True):
    """Advance h with a fixed contact state, in place; returns the largest error
    estimate of its sub-steps. control: in 2^d equal sub-steps, d the least
    (<= MAX_HALVINGS) whose every sub-step's estimate is within ERR_TOL (rad; rad/s
    times the sub-step); else one try (times the soft law's sub-steps), for a
    trial flow that an event may cut short."""
    nj = q.shape[0]
    start = w[13]
    vec = w[16]
    nsub = max(ipar[I_NSUB], 1)
    dmax = MAX_HALVINGS if control else 0
    if dmax > 0:  # kept for a retry
        for j in range(nj):
            start[3, j] = q[j]
            start[4, j] = qd[j]
        vec[3, 0] = sd[0]
        vec[3, 1] = sd[1]
    worst = 0.0
    for d in range(dmax + 1):
        if d > 0:
            for j in range(nj):
                q[j] = start[3, j]
                qd[j] = start[4, j]
            sd[0] = vec[3, 0]
            sd[1] = vec[3, 1]
        pieces = nsub << d
        hs = h / pieces
        worst = 0.0
        for i in range(pieces):
            ts = t + i * hs
            err = _stages(q, qd, sd, ts, hs, locked, target, par, ipar, w, cnt)
            _set_base(q, qd, ts + hs, par, ipar, vec)
            worst = max(worst, err)
            if err > ERR_TOL and d < dmax:
                break
        if worst <= ERR_TOL:
            break
    tmin = par[P_TMIN]
    for j in range(BASE, nj):
        if locked[j]:
            q[j] = tmin
            qd[j] = 0.0
    return worst
