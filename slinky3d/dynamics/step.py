"""Compiled event-aware fixed step (see rt.py): coil impacts and separations are
located inside each step, the contact solves (rtlcp.py) applied there, and the
step finished, so the output stays on the grid."""

from __future__ import annotations

import math

from numba import njit

from slinky3d.dynamics.articulated_body import JIT
from slinky3d.dynamics.contacts import VEL_TOL, _first_joint, impact, paper_impact, resting
from slinky3d.dynamics.rt import (
    C_EVALS,
    C_EVENTS,
    C_SEPARATIONS,
    C_STUCK,
    ERR_TOL,
    I_LAW,
    LAW_PAPER,
    LAW_RIGID,
    MAX_EVENTS,
    P_TMIN,
    POS_TOL,
    _set_base,
    deriv,
    flow,
)

SEP_MIN = 0.02  # fraction of a sub-step below which a separation is not split off
DT_STUCK = 1e-4  # fraction of h: hits closer than this in time are one contact event
GAP_STUCK = 1e-7  # rad, and
V_STUCK = 1e-3  # rad/s: a coil this close and slow is held with its neighbours then
SEP_ITER = 3  # evaluations to refine a separation's time
# Events in the first S_DENSE of a sub-step take their state from its quintic
# Hermite (the end state's weight there, ~10 s^3, is ~1e-3); later ones integrate
# again to the event: right after an impact the stiff damping relaxes the coils'
# relative rates within ~0.1 ms, which no polynomial over the sub-step follows.
S_DENSE = 0.05
PROJ_TOL = 1e-9  # rad: overlap left to the position projection after locating a hit


@njit(**JIT)
def _quintic(s, p0, v0, a0, p1, v1, a1):
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
def _root(p0, v0, a0, p1, v1, a1, before):
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
        if _quintic(s, p0, v0, a0, p1, v1, a1)[0] <= 0.0:
            hi = s
            break
        lo = s
    for _ in range(60):
        if hi - lo <= 1e-14:
            break
        m = 0.5 * (lo + hi)
        f, df = _quintic(m, p0, v0, a0, p1, v1, a1)
        if f > 0.0:
            lo = m
        else:
            hi = m
        if df != 0.0:
            x = m - f / df
            if lo < x < hi:
                if _quintic(x, p0, v0, a0, p1, v1, a1)[0] > 0.0:
                    lo = x
                else:
                    hi = x
    return hi


@njit(**JIT)
def _earliest_hit(q, qd, q0, v0, a0, a1, dt, locked, j0, tmin, quintic=True):
    """Fraction of the interval dt at which the first free coil reaches theta_min,
    on the quintic Hermite through the states and accelerations at both ends (or,
    quintic=False, the cubic through the states alone); 2.0 if none does."""
    best = 2.0
    dt2 = dt * dt
    for j in range(j0, q.shape[0]):
        if not locked[j] and q[j] < tmin - 1e-12:
            g0 = q0[j] - tmin
            if g0 <= POS_TOL and v0[j] <= VEL_TOL:
                s = 0.0  # touching and not separating: it presses in at once
            else:
                p0 = max(g0, 0.0)
                p1 = q[j] - tmin
                m0 = v0[j] * dt
                m1 = qd[j] * dt
                if quintic:
                    c0 = a0[j] * dt2
                    c1 = a1[j] * dt2
                else:  # the cubic's own curvatures: the quintic is then that cubic
                    c0 = 2.0 * (3.0 * (p1 - p0) - 2.0 * m0 - m1)
                    c1 = c0 + 6.0 * (2.0 * (p0 - p1) + m0 + m1)
                s = _root(p0, m0, c0, p1, m1, c1, best)
            if s < best:
                best = s
    return best


@njit(**JIT)
def _taylor_hit(q, qd, acc, locked, j0, tmin, tmax):
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
        if g <= POS_TOL and v <= VEL_TOL:
            # touching, at rest: it presses in at once if it would soon move inward
            t = 0.0 if v + a * tmax < -VEL_TOL else 2.0 * tmax
        elif g <= POS_TOL:
            t = -2.0 * v / a if a < 0.0 else 2.0 * tmax  # leaving, pulled back
        else:
            disc = v * v - 2.0 * a * g
            den = -v + math.sqrt(disc) if disc >= 0.0 else 0.0
            t = 2.0 * g / den if den > 0.0 else 2.0 * tmax  # the first root, stably
        if t < best:
            best = t
    return best


@njit(**JIT)
def _taylor(q, qd, sd, acc, rate, dt):
    """Advance the state dt on its quadratic Taylor polynomial, in place."""
    for j in range(q.shape[0]):
        q[j] += dt * (qd[j] + 0.5 * dt * acc[j])
        qd[j] += dt * acc[j]
    sd[0] += dt * rate[0]
    sd[1] += dt * rate[1]


@njit(**JIT)
def _dense(q, qd, sd, q0, v0, a0, a1, sr, s, dt):
    """State at fraction s of a sub-step of length dt from its quintic Hermite (in
    place: q, qd, sd hold the sub-step's end on entry). sr: rows 0-1 the start's
    and end's grab-damper rates, row 2 the damper state at the start."""
    dt2 = dt * dt
    for j in range(q.shape[0]):
        p, dp = _quintic(s, q0[j], v0[j] * dt, a0[j] * dt2, q[j], qd[j] * dt, a1[j] * dt2)
        q[j] = p
        qd[j] = dp / dt
    for i in range(2):  # the damper state has no second derivative: cubic Hermite
        x0 = sr[2, i]
        x1 = sd[i]
        m0 = sr[0, i] * dt
        m1 = sr[1, i] * dt
        s2 = s * s
        s3 = s2 * s
        sd[i] = ((2 * s3 - 3 * s2 + 1) * x0 + (s3 - 2 * s2 + s) * m0 + (-2 * s3 + 3 * s2) * x1
                 + (s3 - s2) * m1)


@njit(**JIT)
def _deepest(q, locked, j0, tmin):
    """Smallest gap theta - theta_min among the free joints."""
    g = 1.0
    for j in range(j0, q.shape[0]):
        if not locked[j] and q[j] - tmin < g:
            g = q[j] - tmin
    return g


@njit(**JIT)
def _restore(q, qd, sd, q0, v0, s0):
    """Back to the sub-step's start (q0, v0; the grab damper's state in s0)."""
    for j in range(q.shape[0]):
        q[j] = q0[j]
        qd[j] = v0[j]
    sd[0] = s0[0]
    sd[1] = s0[1]


@njit(**JIT)
def _accel(q, qd, sd, t, locked, target, par, ipar, w, cnt, acc, rate):
    """True accelerations (no armature) and grab-damper rate of a state, into acc and
    rate, and into w's qdd (which the next contact solve may reuse)."""
    qdd = w[8]
    sdd = w[12][12]
    deriv(q, qd, sd, t, locked, target, par, ipar, w, qdd, sdd, qd, w[17][7], 0.0)
    cnt[C_EVALS] += 1
    for j in range(q.shape[0]):
        acc[j] = qdd[j]
    rate[0] = sdd[0]
    rate[1] = sdd[1]


@njit(**JIT)
def _separation(q, qd, sd, q0, v0, a0, a1, sr, t, dt, s, locked, target, par, ipar, w,
                cnt):
    """Refine the time (fraction of dt) at which the first contact torque turns
    tensile, from the linear estimate s: regula falsi on the smallest torque of
    the contacts that start compressive, evaluated on states of the sub-step's
    quintic (one evaluation each). Right after impacts the torques change fast
    and the linear estimate often falls early, which would cost a sub-step.
    q, qd, sd (the sub-step's end) are left as they were; w's dynamics are not."""
    nj = q.shape[0]
    lam0 = w[14]
    freq = w[9]
    qe = w[17][8]
    ve = w[17][9]
    for j in range(nj):
        qe[j] = q[j]
        ve[j] = qd[j]
    se0 = sd[0]
    se1 = sd[1]
    tmin = par[P_TMIN]
    lo, glo = 0.0, 1e300
    hi, ghi = 1.0, 1e300
    for j in range(nj):
        if locked[j] and lam0[j] > 0.0:
            glo = min(glo, lam0[j])
            ghi = min(ghi, w[15][j])  # < 0: some contact ends tensile
    for _ in range(SEP_ITER):
        _dense(q, qd, sd, q0, v0, a0, a1, sr, s, dt)
        _set_base(q, qd, t + s * dt, par, ipar, w[16])
        for j in range(nj):
            if locked[j]:
                q[j] = tmin
                qd[j] = 0.0
        deriv(q, qd, sd, t + s * dt, locked, target, par, ipar, w, w[8], w[12][12], qd,
              w[17][7], 0.0)
        cnt[C_EVALS] += 1
        g = 1e300
        for j in range(nj):
            if locked[j] and lam0[j] > 0.0 and freq[j] < g:
                g = freq[j]
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


@njit(**JIT)
def step(q, qd, sd, t, h, locked, target, par, ipar, w, cnt):
    """Advance exactly h with events located inside the step; returns the new time.

    Each sub-step is integrated once: an event's time is the earliest root on the
    sub-step's quintic Hermite (state and acceleration at both ends, the order of
    the scheme or better), and the state there is read off the same polynomial,
    so the hitting coil lands on theta_min exactly and nothing is integrated twice.
    """
    nj = q.shape[0]
    law = ipar[I_LAW]
    events = law == LAW_RIGID or law == LAW_PAPER
    if not events:
        flow(q, qd, sd, t, h, locked, target, par, ipar, w, cnt)
        return t + h
    tmin = par[P_TMIN]
    j0 = _first_joint(ipar)
    qdd = w[8]
    freq = w[9]
    lam0 = w[14]
    lam1 = w[15]
    scratch = w[17]
    q0 = scratch[2]  # the sub-step's start
    v0 = scratch[3]
    a0 = scratch[4]  # accelerations at its start and end
    a1 = scratch[5]
    sr = w[16][4:7]  # grab damper: rates at the start and end, state at the start
    sticky = w[18][3]
    for j in range(nj):
        sticky[j] = False
    sdd = w[12][12]
    flags = w[19]
    fresh = flags[0] == 1
    flags[0] = 0
    rem = h
    nev = 0
    control = False  # a sub-step is tried once; error control only if it is kept
    while rem > 1e-12 * h:
        have0 = resting(q, qd, sd, t, locked, target, par, ipar, w, cnt, fresh)
        fresh = False
        if have0:
            for j in range(nj):
                a0[j] = qdd[j]
            sr[0, 0] = sdd[0]
            sr[0, 1] = sdd[1]
        for j in range(nj):
            q0[j] = q[j]
            v0[j] = qd[j]
        sr[2, 0] = sd[0]
        sr[2, 1] = sd[1]
        # A hit due within DT_STUCK h (chatter at a collapse front, a coil a hair
        # away) is found and reached on the Taylor polynomial of the exact start
        # state: no sub-step is integrated only to be cut at once.
        tmax = min(DT_STUCK * h, rem)
        dt = _taylor_hit(q, qd, a0, locked, j0, tmin, tmax) if have0 else 2.0 * tmax
        if dt <= tmax and nev < MAX_EVENTS:
            _taylor(q, qd, sd, a0, sr[0], dt)
            _set_base(q, qd, t + dt, par, ipar, w[16])
            kind = 1
        else:
            err = flow(q, qd, sd, t, rem, locked, target, par, ipar, w, cnt, control)
            has_locked = False
            for j in range(j0, nj):
                if locked[j]:
                    has_locked = True
                    break
            hit = _deepest(q, locked, j0, tmin) < -1e-12  # a free coil ends inside
            if hit and not have0:
                _accel(q0, v0, sr[2], t, locked, target, par, ipar, w, cnt, a0, sr[0])
            if has_locked or hit:  # last, so that freq holds the end's contact torques
                _accel(q, qd, sd, t + rem, locked, target, par, ipar, w, cnt, a1, sr[1])
            best = 2.0
            kind = 0
            stale = False  # w's dynamics are no longer the end's
            if hit:
                best = _earliest_hit(q, qd, q0, v0, a0, a1, rem, locked, j0, tmin)
                kind = 1 if best <= 1.0 else 0
            if has_locked:
                s_sep = 2.0
                for j in range(j0, nj):
                    lam1[j] = freq[j] if locked[j] else 0.0
                    if locked[j] and lam1[j] < 0.0 and lam0[j] > 0.0:
                        s = lam0[j] / (lam0[j] - lam1[j])
                        # The contact torque goes to zero continuously, so a separation
                        # found again right at the start of the sub-step (the previous
                        # location was good) is left to the next step's contact solve:
                        # refining it further would only repeat the sub-step.
                        if s >= SEP_MIN and s < s_sep:
                            s_sep = s
                if s_sep < best:
                    # a0 is set: a locked joint made the contact solve evaluate the start
                    s_sep = _separation(q, qd, sd, q0, v0, a0, a1, sr, t, rem, s_sep, locked,
                                        target, par, ipar, w, cnt)
                    stale = True
                    if s_sep >= SEP_MIN and s_sep < best:
                        best = s_sep
                        kind = 2
            if (kind == 0 or nev >= MAX_EVENTS) and err > ERR_TOL and not control:
                # kept as it is but not accurate enough: again, in shorter pieces
                _restore(q, qd, sd, q0, v0, sr[2])
                control = True
                continue
            if kind == 0 or nev >= MAX_EVENTS:
                t += rem
                if has_locked and not stale:
                    flags[0] = 1
                break
            dt = best * rem
            if best <= S_DENSE:
                _dense(q, qd, sd, q0, v0, a0, a1, sr, best, rem)
                _set_base(q, qd, t + dt, par, ipar, w[16])
            else:
                _restore(q, qd, sd, q0, v0, sr[2])
                flow(q, qd, sd, t, dt, locked, target, par, ipar, w, cnt)
                # The root is approximate: if a coil still ends inside, locate again
                # within the shorter interval (on the cubic: no acceleration at its end)
                # rather than project a deep overlap away, which would jolt the chain.
                for _ in range(8):
                    if kind != 1 or _deepest(q, locked, j0, tmin) >= -PROJ_TOL:
                        break
                    dt *= min(_earliest_hit(q, qd, q0, v0, a0, a1, dt, locked, j0, tmin, False),
                              1.0)
                    _restore(q, qd, sd, q0, v0, sr[2])
                    if dt > 0.0:
                        flow(q, qd, sd, t, dt, locked, target, par, ipar, w, cnt)
        nev += 1
        cnt[C_EVENTS] += 1
        for j in range(j0, nj):
            if locked[j]:
                q[j] = tmin
                qd[j] = 0.0
        t += dt
        rem -= dt
        control = False
        if kind == 1:
            if dt <= DT_STUCK * h:
                # Coils pressing in again within a vanishing time (a Zeno-like
                # chatter at the collapse front): stop the touching, slow ones by
                # impulse and hold them until this step ends, so it makes progress.
                cnt[C_STUCK] += 1
                for j in range(j0, nj):
                    if not locked[j] and q[j] <= tmin + GAP_STUCK and qd[j] <= V_STUCK:
                        sticky[j] = True
                        q[j] = tmin
            # position projection onto the bound; velocities untouched
            for j in range(j0, nj):
                if not locked[j] and q[j] < tmin + POS_TOL:
                    q[j] = tmin
            if law == LAW_PAPER:
                paper_impact(q, qd, locked, par, ipar, w, cnt)
            else:
                impact(q, qd, locked, par, ipar, w, cnt)
        else:
            cnt[C_SEPARATIONS] += 1
        # kind 2: a contact torque reached zero; the resting-contact LCP at the
        # top of the loop decides, with all contacts together, which coils separate
    return t


@njit(**JIT)
def run(q, qd, sd, t, h, nsteps, locked, target, par, ipar, w, cnt):
    """nsteps fixed steps; returns the final time."""
    for _ in range(nsteps):
        t = step(q, qd, sd, t, h, locked, target, par, ipar, w, cnt)
    return t
