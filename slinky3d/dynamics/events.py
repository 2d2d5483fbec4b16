"""Compiled event location inside a sub-step: when a free coil reaches theta_min (a
hit) and when a locked coil's contact torque reaches zero (a separation), and the
state there.

An event's time is the earliest root on the sub-step's quintic Hermite (state and
acceleration at both ends, the order of the scheme or better). An event early in the
sub-step takes its state from the same polynomial (`dense`), so the hitting coil lands
on theta_min exactly; a later one is integrated to again (step.py, S_DENSE says why). A hit due
within a vanishing time (chatter at a collapse front) is found instead on the
quadratic Taylor polynomial of the exact start state (`taylor_hit`): integrating a
sub-step only to cut it at once cost most of a collapse's run time. A separation's
linear estimate is refined by regula falsi on the contact torques (`separation_time`).

The sub-step's start, its accelerations and grab-damper rates at both ends live in
the work arrays (workspace.Work: substep_q, acc_start, small's damper_rate_end...).
"""

from __future__ import annotations

import math

from numba import njit

from slinky3d.dynamics.articulated_body import JIT
from slinky3d.dynamics.forces import derivatives, set_base
from slinky3d.model.chain import BASE, RESTING_RATE, TOUCHING

SEP_MIN = 0.02  # fraction of a sub-step below which a separation is not split off
SEP_ITER = 3  # evaluations to refine a separation's time


@njit(**JIT)
def quintic(s, p0, v0, a0, p1, v1, a1):
    """Quintic Hermite on [0, 1] through value, slope and curvature at both ends
    (slopes and curvatures already scaled by the interval); returns (p, p')."""
    s2 = s * s
    s3 = s2 * s
    s4 = s3 * s
    s5 = s4 * s
    h3 = 10 * s3 - 15 * s4 + 6 * s5
    p = (p0 + (p1 - p0) * h3 + v0 * (s - 6 * s3 + 8 * s4 - 3 * s5)
         + a0 * (0.5 * s2 - 1.5 * s3 + 1.5 * s4 - 0.5 * s5)
         + v1 * (-4 * s3 + 7 * s4 - 3 * s5) + a1 * (0.5 * s3 - s4 + 0.5 * s5))
    d3 = 30 * s2 - 60 * s3 + 30 * s4
    dp = ((p1 - p0) * d3 + v0 * (1 - 18 * s2 + 32 * s3 - 15 * s4)
          + a0 * (s - 4.5 * s2 + 6 * s3 - 2.5 * s4) + v1 * (-12 * s2 + 28 * s3 - 15 * s4)
          + a1 * (1.5 * s2 - 4 * s3 + 2.5 * s4))
    return p, dp


@njit(**JIT)
def first_root(p0, v0, a0, p1, v1, a1, before):
    """First s in (0, 1] where the quintic (p(0) = p0 >= 0, p(1) = p1 < 0) reaches 0,
    or 2.0 if it does not before `before`: a scan finds the first sign change (a gap
    can open and close again within a step), then Newton steps kept inside the
    bracket, which halves each round, refine it to 1e-14."""
    lo = 0.0
    hi = 2.0
    for i in range(1, 33):
        s = i / 32.0
        if s - 1.0 / 32.0 >= before:
            return 2.0  # no earlier than a root already found
        if quintic(s, p0, v0, a0, p1, v1, a1)[0] <= 0.0:
            hi = s
            break
        lo = s
    for _ in range(60):
        if hi - lo <= 1e-14:
            break
        m = 0.5 * (lo + hi)
        f, df = quintic(m, p0, v0, a0, p1, v1, a1)
        if f > 0.0:
            lo = m
        else:
            hi = m
        if df != 0.0:
            x = m - f / df
            if lo < x < hi:
                if quintic(x, p0, v0, a0, p1, v1, a1)[0] > 0.0:
                    lo = x
                else:
                    hi = x
    return hi


@njit(**JIT, inline="always")
def earliest_hit(q, qd, w, dt, locked, j0, tmin, use_quintic=True):
    """Fraction of the sub-step dt at which the first free coil reaches theta_min,
    on the quintic Hermite through the states and accelerations at both ends (or,
    use_quintic=False, the cubic through the states alone); 2.0 if none does.
    q, qd: the sub-step's end; its start and accelerations are w's."""
    q0 = w.substep_q
    v0 = w.substep_v
    a0 = w.acc_start
    a1 = w.acc_end
    best = 2.0
    dt2 = dt * dt
    for j in range(j0, q.shape[0]):
        if not locked[j] and q[j] < tmin - 1e-12:
            g0 = q0[j] - tmin
            if g0 <= TOUCHING and v0[j] <= RESTING_RATE:
                s = 0.0  # touching and not separating: it presses in at once
            else:
                p0 = max(g0, 0.0)
                p1 = q[j] - tmin
                m0 = v0[j] * dt
                m1 = qd[j] * dt
                if use_quintic:
                    c0 = a0[j] * dt2
                    c1 = a1[j] * dt2
                else:  # the cubic's own curvatures: the quintic is then that cubic
                    c0 = 2.0 * (3.0 * (p1 - p0) - 2.0 * m0 - m1)
                    c1 = c0 + 6.0 * (2.0 * (p0 - p1) + m0 + m1)
                s = first_root(p0, m0, c0, p1, m1, c1, best)
            if s < best:
                best = s
    return best


@njit(**JIT)
def taylor_hit(q, qd, acc, locked, j0, tmin, tmax):
    """Earliest time in [0, tmax] at which a free coil reaches theta_min on the
    quadratic Taylor polynomial of its state and true acceleration now; 2 tmax if
    none does. Over tmax ~ 1e-4 h its error (jerk tmax^3 / 6) is < 1e-13 rad."""
    best = 2.0 * tmax
    for j in range(j0, q.shape[0]):
        if locked[j]:
            continue
        g = max(q[j] - tmin, 0.0)
        v = qd[j]
        a = acc[j]
        if g <= TOUCHING and v <= RESTING_RATE:
            # touching, at rest: it presses in at once if it would soon move inward
            t = 0.0 if v + a * tmax < -RESTING_RATE else 2.0 * tmax
        elif g <= TOUCHING:
            t = -2.0 * v / a if a < 0.0 else 2.0 * tmax  # leaving, pulled back
        else:
            disc = v * v - 2.0 * a * g
            den = -v + math.sqrt(disc) if disc >= 0.0 else 0.0
            t = 2.0 * g / den if den > 0.0 else 2.0 * tmax  # the first root, stably
        if t < best:
            best = t
    return best


@njit(**JIT, inline="always")
def advance_on_taylor(q, qd, sd, acc, rate, dt):
    """Advance the state dt on its quadratic Taylor polynomial, in place."""
    for j in range(q.shape[0]):
        q[j] += dt * (qd[j] + 0.5 * dt * acc[j])
        qd[j] += dt * acc[j]
    sd[0] += dt * rate[0]
    sd[1] += dt * rate[1]


@njit(**JIT, inline="always")
def deepest_gap(q, locked, j0, tmin):
    """Smallest gap theta - theta_min among the free joints."""
    g = 1.0
    for j in range(j0, q.shape[0]):
        if not locked[j] and q[j] - tmin < g:
            g = q[j] - tmin
    return g


@njit(**JIT, inline="always")
def dense(q, qd, sd, w, s, dt):
    """State at fraction s of a sub-step of length dt from its quintic Hermite (in
    place: q, qd, sd hold the sub-step's end on entry)."""
    q0 = w.substep_q
    v0 = w.substep_v
    a0 = w.acc_start
    a1 = w.acc_end
    dt2 = dt * dt
    for j in range(q.shape[0]):
        p, dp = quintic(s, q0[j], v0[j] * dt, a0[j] * dt2, q[j], qd[j] * dt, a1[j] * dt2)
        q[j] = p
        qd[j] = dp / dt
    sm = w.small[0]
    for i in range(2):  # the damper state has no second derivative: cubic Hermite
        x0 = sm.damper_start[i]
        x1 = sd[i]
        m0 = sm.damper_rate_start[i] * dt
        m1 = sm.damper_rate_end[i] * dt
        s2 = s * s
        s3 = s2 * s
        sd[i] = ((2 * s3 - 3 * s2 + 1) * x0 + (s3 - 2 * s2 + s) * m0 + (-2 * s3 + 3 * s2) * x1
                 + (s3 - s2) * m1)


@njit(**JIT, inline="always")
def dense_dissipation(q, qd, w, s, dt, cd):
    """What the joint dampers dissipate over the first fraction s of a sub-step of
    length dt whose state there `dense` reads off the quintic (q, qd: its end): the
    2-point Gauss rule on the quintic's rates, as consistent as that state."""
    q0 = w.substep_q
    v0 = w.substep_v
    a0 = w.acc_start
    a1 = w.acc_end
    dt2 = dt * dt
    total = 0.0
    for node in (0.5 - 0.5 / math.sqrt(3.0), 0.5 + 0.5 / math.sqrt(3.0)):
        for j in range(BASE, q.shape[0]):
            dp = quintic(node * s, q0[j], v0[j] * dt, a0[j] * dt2, q[j], qd[j] * dt,
                         a1[j] * dt2)[1]
            total += dp * dp
    return cd * 0.5 * s * total / dt  # sum of (dp / dt)^2 times 0.5 s dt


@njit(**JIT, inline="always")
def restore_substep(q, qd, sd, w):
    """Back to the sub-step's start."""
    q0 = w.substep_q
    v0 = w.substep_v
    for j in range(q.shape[0]):
        q[j] = q0[j]
        qd[j] = v0[j]
    start = w.small[0].damper_start
    sd[0] = start[0]
    sd[1] = start[1]


@njit(**JIT, inline="always")
def accelerations(q, qd, sd, t, locked, target, par, modes, w, cnt, acc, rate):
    """True accelerations (no armature) and grab-damper rate of a state, into acc and
    rate, and into w.qdd (which the next contact solve may reuse)."""
    qdd = w.qdd
    sdd = w.small[0].damper_rate
    derivatives(q, qd, sd, t, locked, target, par, modes, w.forces, qdd, sdd, qd, w.zeros,
                0.0, True)
    cnt.evaluations += 1
    for j in range(q.shape[0]):
        acc[j] = qdd[j]
    rate[0] = sdd[0]
    rate[1] = sdd[1]


@njit(**JIT)
def separation_time(q, qd, sd, t, dt, s, locked, target, par, modes, w, cnt):
    """Refine the time (fraction of dt) at which the first contact torque turns
    tensile, from the linear estimate s: regula falsi on the smallest torque of
    the contacts that start compressive, evaluated on states of the sub-step's
    quintic (one evaluation each). Right after impacts the torques change fast
    and the linear estimate often falls early, which would cost a sub-step.
    q, qd, sd (the sub-step's end) are left as they were; w's dynamics are not."""
    nj = q.shape[0]
    lam0 = w.torque_start
    lam1 = w.torque_end
    torque = w.forces.joint_force
    qe = w.kept_q
    ve = w.kept_v
    for j in range(nj):
        qe[j] = q[j]
        ve[j] = qd[j]
    se0 = sd[0]
    se1 = sd[1]
    tmin = par.theta_min
    lo, glo = 0.0, 1e300
    hi, ghi = 1.0, 1e300
    for j in range(nj):
        if locked[j] and lam0[j] > 0.0:
            glo = min(glo, lam0[j])
            ghi = min(ghi, lam1[j])  # < 0: some contact ends tensile
    for _ in range(SEP_ITER):
        dense(q, qd, sd, w, s, dt)
        set_base(q, qd, t + s * dt, par, modes, w.forces)
        for j in range(nj):
            if locked[j]:
                q[j] = tmin
                qd[j] = 0.0
        derivatives(q, qd, sd, t + s * dt, locked, target, par, modes, w.forces, w.qdd,
                    w.small[0].damper_rate, qd, w.zeros, 0.0, True)
        cnt.evaluations += 1
        g = 1e300
        for j in range(nj):
            if locked[j] and lam0[j] > 0.0 and torque[j] < g:
                g = torque[j]
        if g > 0.0:
            lo, glo = s, g
        else:
            hi, ghi = s, g
        for j in range(nj):
            q[j] = qe[j]
            qd[j] = ve[j]
        sd[0] = se0
        sd[1] = se1
        if hi - lo < SEP_MIN:
            break
        s = lo + (hi - lo) * glo / (glo - ghi)
    return lo + (hi - lo) * glo / (glo - ghi)
