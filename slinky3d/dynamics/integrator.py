"""The compiled integrator: a flow of fixed contact state over one step (events are
step.py's business).

With damping, one step of size h is the Rosenbrock-W method ROS34PW2 (four O(N)
dynamics evaluations) whose Jacobian holds the joint springs and damping, the stiff
linear part (C_D / I ~ 8e3 1/s: explicit RK4 would need h < 0.35 ms). Its linear
solves (M + gamma h C + gamma^2 h^2 K) x = f cost nothing extra: the diagonal goes
on each joint's "armature" in the articulated-body algorithm. Splitting the damping
off instead (Strang) fell to first order at h ~ 1 ms (order reduction). A flow whose
embedded error estimate is too large is redone in 2, 4 or 8 sub-steps.

Without damping the step is Dormand and Prince's explicit 8th-order tableau at a
fixed step: RK4 lost 3 % of a free steel Slinky's energy in 10 s at 1 ms (it
dissipates the fast modes as (omega h)^6); this keeps energy to ~1e-6 for 3x the
evaluations.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from scipy.integrate._ivp import dop853_coefficients

from slinky3d.dynamics.articulated_body import JIT
from slinky3d.dynamics.forces import derivatives, set_base
from slinky3d.dynamics.workspace import MAX_STAGES
from slinky3d.model.chain import BASE

# Both tableaus in one Rosenbrock-W form, W = [[0, I], [-M^-1 K, -M^-1 C]] for
# y = (q, v):  with vd = v_i + sum_j c_ij k_j^v,
#   (M + g h C + g^2 h^2 K) k_i^v / h = F(y_i) - C vd - K (sum_j c_ij k_j^q + g h vd)
#   k_i^q = h vd + g h k_i^v
# ROS34PW2 (Rang & Angermann) is a W-method: order 3 whatever the Jacobian. The
# explicit tableau is the case c = g = 0.
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
EXP_A = np.ascontiguousarray(dop853_coefficients.A[:12, :12])
EXP_B = np.ascontiguousarray(dop853_coefficients.B)
EXP_C = np.zeros((12, 12))
EXP_E = np.zeros(12)  # no estimate: the undamped step is not sub-stepped
assert max(ROSW_B.shape[0], EXP_B.shape[0]) <= MAX_STAGES
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


@njit(**JIT, inline="always")
def sum_of_squares(x, start):
    """sum x[start:]^2 in four interleaved sums: one chain of dependent additions would
    cost 4 cycles an element (this runs at every stage)."""
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    n = x.shape[0]
    j = start
    while j + 3 < n:
        s0 += x[j] * x[j]
        s1 += x[j + 1] * x[j + 1]
        s2 += x[j + 2] * x[j + 2]
        s3 += x[j + 3] * x[j + 3]
        j += 4
    while j < n:
        s0 += x[j] * x[j]
        j += 1
    return (s0 + s1) + (s2 + s3)


@njit(**JIT)
def stages(q, qd, sd, t, h, locked, target, par, modes, w, cnt):
    """One step of the stage scheme above, in place (4 or 12 dynamics evaluations);
    returns its error estimate (0 for the explicit tableau)."""
    kq = w.stage_q
    kv = w.stage_v
    ks = w.stage_damper
    nj = q.shape[0]
    q0 = w.stage_start_q
    v0 = w.stage_start_v
    vd = w.damping_velocity
    for j in range(nj):
        q0[j] = q[j]
        v0[j] = qd[j]
    s00 = sd[0]
    s01 = sd[1]
    if par.damping > 0.0:
        A, B, Cg, g, Ee = ROSW_A, ROSW_B, ROSW_C, ROSW_G, ROSW_E
    else:
        A, B, Cg, g, Ee = EXP_A, EXP_B, EXP_C, 0.0, EXP_E
    ns = B.shape[0]
    qx = w.spring_offset
    cd = par.damping
    armh = g * h * cd + g * g * h * h * par.stiffness
    dissipated = 0.0
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
        derivatives(q, qd, sd, tst, locked, target, par, modes, w.forces, kv[st], ks[st], vd,
                    qx, armh, True)
        cnt.evaluations += 1
        if g > 0.0:
            # The dampers' dissipation C_D sum(theta'^2) as one more component of the
            # ODE, integrated by the same W-method (its Jacobian row zero): order 3 at
            # the stage states (docs/solver.md, "The energy account")
            dissipated += B[st] * sum_of_squares(qd, BASE)
        for j in range(nj):
            kq[st, j] = h * (vd[j] + g * h * kv[st, j])
            kv[st, j] = h * kv[st, j]
        ks[st, 0] *= h
        ks[st, 1] *= h
    _combine(q, qd, sd, q0, v0, s00, s01, B, ns, kq, kv, ks)
    w.small[0].damping_trial += h * cd * dissipated
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
def flow(q, qd, sd, t, h, locked, target, par, modes, w, cnt, control=True):
    """Advance h with a fixed contact state, in place; returns the largest error
    estimate of its sub-steps. control: in 2^d equal sub-steps, d the least
    (<= MAX_HALVINGS) whose every sub-step's estimate is within ERR_TOL (rad; rad/s
    times the sub-step); else one try (times the soft law's sub-steps), for a
    trial flow that an event may cut short."""
    nj = q.shape[0]
    start_q = w.kept_q
    start_v = w.kept_v
    start_s = w.small[0].flow_start_damper
    nsub = max(modes.substeps, 1)
    dmax = MAX_HALVINGS if control else 0
    if dmax > 0:  # kept for a retry
        for j in range(nj):
            start_q[j] = q[j]
            start_v[j] = qd[j]
        start_s[0] = sd[0]
        start_s[1] = sd[1]
    worst = 0.0
    sm = w.small[0]
    for d in range(dmax + 1):
        sm.damping_trial = 0.0  # counted if this flow is kept (step.py)
        if d > 0:
            for j in range(nj):
                q[j] = start_q[j]
                qd[j] = start_v[j]
            sd[0] = start_s[0]
            sd[1] = start_s[1]
        pieces = nsub << d
        hs = h / pieces
        worst = 0.0
        for i in range(pieces):
            ts = t + i * hs
            err = stages(q, qd, sd, ts, hs, locked, target, par, modes, w, cnt)
            set_base(q, qd, ts + hs, par, modes, w.forces)
            worst = max(worst, err)
            if err > ERR_TOL and d < dmax:
                break
        if worst <= ERR_TOL:
            break
    tmin = par.theta_min
    for j in range(BASE, nj):
        if locked[j]:
            q[j] = tmin
            qd[j] = 0.0
    return worst
