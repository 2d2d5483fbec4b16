"""Compiled contact handling and the event-aware fixed step (see rt.py).

Contact at joint j: gap g_j = theta_j - theta_min >= 0; its gradient is a unit
vector in q, so the Delassus matrix W = G M^-1 G^T is a principal block of M^-1.
Rather than forming W (O(N) per column), every pivot of the complementarity
solve is one hybrid articulated-body solve in which the "active" joints are
prescribed: at velocity level (impact, e = 0) they are given the velocity jump
that stops them, at acceleration level (resting contact) zero acceleration; the
forces the prescribed joints need are the contact impulses / torques. Block
principal pivoting (all violations flipped at once) converges in a few pivots;
after 10 it falls back to Murty's least-index rule, which is finite for the
P-matrix W.
"""

from __future__ import annotations

from numba import njit

from .aba import BASE, aba
from .rt import (
    C_EVALS,
    C_EVENTS,
    C_IMPACTS,
    C_LCPFAIL,
    C_SEPARATIONS,
    C_STUCK,
    I_FREE,
    I_LAW,
    LAW_PAPER,
    LAW_RIGID,
    MAX_EVENTS,
    P_I,
    P_M,
    P_R,
    P_TMIN,
    POS_TOL,
    deriv,
    flow,
)

VEL_TOL = 1e-9  # rad/s: a touching joint this slow counts as at rest
SEP_MIN = 0.02  # fraction of a sub-step below which a separation is not split off
PROJ_TOL = 1e-9  # rad: overlap left to the position projection after locating a hit
DT_STUCK = 1e-4  # fraction of h: hits closer than this in time are one contact event
GAP_STUCK = 1e-7  # rad, and
V_STUCK = 1e-3  # rad/s: a coil this close and slow is held with its neighbours then
MAX_PIVOTS = 60


@njit(cache=True, error_model="numpy", nogil=True)
def _first_joint(ipar):
    """First joint that can touch: joint 1 has no holder in a free Slinky."""
    return BASE + 1 if ipar[I_FREE] != 0 else BASE


@njit(cache=True, error_model="numpy", nogil=True)
def _flip(viol, worst, it):
    """Block pivoting: flip all violations; after 10 pivots only the first (Murty)."""
    if it < 10:
        return viol
    for j in range(viol.shape[0]):
        viol[j] = j == worst
    return viol


@njit(cache=True, error_model="numpy", nogil=True)
def _violations(act, keep, force, tol_f, cand, rate, tol_r, viol):
    """Complementarity violations of a pivot: active joints pulling (force < 0, unless
    kept), inactive candidates closing (rate < 0). Marks viol; (count, first index)."""
    nv = 0
    worst = -1
    for j in range(act.shape[0]):
        bad = (act[j] and not keep[j] and force[j] < -tol_f) or (
            cand[j] and not act[j] and rate[j] < -tol_r)
        viol[j] = bad
        if bad:
            nv += 1
            if worst < 0:
                worst = j
    return nv, worst


@njit(cache=True, error_model="numpy", nogil=True)
def impact(q, qd, locked, par, ipar, w, cnt):
    """Rigid e = 0 impact of all joints at theta_min together; qd, locked in place.

    Solves  dv = M^-1 G^T lam,  v+_j = 0 where lam_j > 0,  v+_j >= 0 where lam_j = 0
    over the touching joints. Afterwards `locked` is the set with v+ = 0. Joints
    marked sticky (w's bscratch[3]) are stopped whatever the sign of their impulse.
    """
    (ws, E, U, tau, fext, presc, qdd_p, arm, qdd, freq, kq, kv, ks, save,
     lam0, lam1, vec, scratch, bscratch, flags) = w
    nj = q.shape[0]
    n = nj - BASE
    tmin = par[P_TMIN]
    j0 = _first_joint(ipar)
    cand = bscratch[0]
    act = bscratch[1]
    viol = bscratch[2]
    zero = scratch[0]
    vplus = scratch[1]
    for j in range(nj):
        zero[j] = 0.0
        cand[j] = j >= j0 and q[j] <= tmin + POS_TOL
        act[j] = cand[j] and (qd[j] < 0.0 or locked[j] or bscratch[3][j])
        tau[j] = 0.0
        arm[j] = 0.0
    for i in range(n):
        fext[i, 0] = 0.0
        fext[i, 1] = 0.0
        fext[i, 2] = 0.0
    done = False
    for it in range(MAX_PIVOTS):
        for j in range(nj):
            presc[j] = act[j]
            qdd_p[j] = -qd[j] if act[j] else 0.0
        if ipar[I_FREE] != 0:
            presc[BASE] = True
            qdd_p[BASE] = 0.0
        else:
            for i in range(BASE):
                presc[i] = True
                qdd_p[i] = 0.0
        aba(q, zero, tau, presc, qdd_p, fext, arm, par[P_M], par[P_I], par[P_R], 0.0,
            qdd, freq, E, U, ws)
        cnt[C_EVALS] += 1
        lmax = 0.0
        for j in range(nj):
            vplus[j] = qd[j] + qdd[j]
            if act[j] and abs(freq[j]) > lmax:
                lmax = abs(freq[j])
        nv, worst = _violations(act, bscratch[3], freq, 1e-12 * lmax, cand, vplus, VEL_TOL,
                                viol)
        if nv == 0:
            done = True
            break
        _flip(viol, worst, it)
        for j in range(nj):
            if viol[j]:
                act[j] = not act[j]
    if not done:
        cnt[C_LCPFAIL] += 1
    for j in range(nj):
        qd[j] = vplus[j]
    for j in range(j0, nj):
        locked[j] = act[j]
        if act[j]:
            qd[j] = 0.0
            q[j] = tmin
    cnt[C_IMPACTS] += 1


@njit(cache=True, error_model="numpy", nogil=True)
def paper_impact(q, qd, locked, par, ipar, w, cnt):
    """The paper's pairwise rule, joint by joint until none is closing.

    At joint k the two neighbouring composite rates are replaced by their mean
    (k = 1: Theta_1' is set to the holder's rate); the rest of the chain is
    ignored, which is why it cannot treat several contacts consistently.
    """
    nj = q.shape[0]
    n = nj - BASE
    tmin = par[P_TMIN]
    j0 = _first_joint(ipar)
    free = ipar[I_FREE] != 0
    Th = w[17][0]
    for _ in range(200):
        hit = -1
        for j in range(j0, nj):
            if q[j] <= tmin + POS_TOL and qd[j] < 0.0:
                hit = j
                break
        if hit < 0:
            break
        # composite rates
        acc = qd[2]
        for k in range(n):
            s = 1.0 if k % 2 == 0 else -1.0
            acc += s * qd[BASE + k]
            Th[k] = acc
        k = hit - BASE
        if k == 0:
            Th[0] = qd[2]
        else:
            avg = 0.5 * (Th[k - 1] + Th[k])
            Th[k - 1] = avg
            Th[k] = avg
        if free:
            qd[2] = Th[0]
            qd[BASE] = 0.0
        else:
            qd[BASE] = Th[0] - qd[2]
        for kk in range(1, n):
            s = 1.0 if kk % 2 == 0 else -1.0
            qd[BASE + kk] = s * (Th[kk] - Th[kk - 1])
        qd[hit] = 0.0
        q[hit] = tmin
        cnt[C_IMPACTS] += 1
    for j in range(j0, nj):
        locked[j] = q[j] <= tmin + POS_TOL and abs(qd[j]) <= VEL_TOL


@njit(cache=True, error_model="numpy", nogil=True)
def resting(q, qd, sd, t, locked, target, par, ipar, w, cnt, fresh=False):
    """Acceleration-level contact LCP: which touching, resting joints stay locked.

    Locked joints need a compressive torque (>= 0); free touching joints at rest
    need theta'' >= 0. On return w's freq - (spring) holds the contact torques
    of the locked joints (lam0) and qdd the accelerations. `fresh`: w already
    holds the dynamics of this state and contact set.
    """
    nj = q.shape[0]
    tmin = par[P_TMIN]
    j0 = _first_joint(ipar)
    qdd = w[8]
    freq = w[9]
    lam0 = w[14]
    cand = w[18][0]
    viol = w[18][2]
    sticky = w[18][3]
    sdd = w[12][12]
    any_c = False
    for j in range(nj):
        cand[j] = locked[j] or (j >= j0 and q[j] <= tmin + POS_TOL and abs(qd[j]) <= VEL_TOL)
        if cand[j]:
            any_c = True
    if not any_c:
        for j in range(nj):
            lam0[j] = 0.0
        return
    scale = 0.0
    done = False
    for it in range(MAX_PIVOTS):
        if not (fresh and it == 0):
            deriv(q, qd, sd, t, locked, target, par, ipar, w, qdd, sdd, qd, 0.0)
            cnt[C_EVALS] += 1
        if scale == 0.0:
            for j in range(j0, nj):
                if locked[j] and abs(freq[j]) > scale:
                    scale = abs(freq[j])
            scale = max(scale, 1e-300)
        nv, worst = _violations(locked, sticky, freq, 1e-12 * scale, cand, qdd, 1e-9, viol)
        if nv == 0:
            done = True
            break
        _flip(viol, worst, it)
        for j in range(nj):
            if viol[j]:
                locked[j] = not locked[j]
                if locked[j]:
                    q[j] = tmin
                    qd[j] = 0.0
    if not done:
        cnt[C_LCPFAIL] += 1
    for j in range(nj):
        lam0[j] = freq[j] if locked[j] else 0.0


@njit(cache=True, error_model="numpy", nogil=True)
def _hermite(s, a0, v0, a1, v1):
    s2 = s * s
    s3 = s2 * s
    return ((2 * s3 - 3 * s2 + 1) * a0 + (s3 - 2 * s2 + s) * v0 + (-2 * s3 + 3 * s2) * a1
            + (s3 - s2) * v1)


@njit(cache=True, error_model="numpy", nogil=True)
def _hermite_root(a0, v0, a1, v1):
    """First s in (0, 1] where the cubic Hermite p (p(0)=a0 >= 0, p'(0)=v0, p(1)=a1 < 0,
    p'(1)=v1) reaches 0: a scan finds the first sign change (a gap can open and close
    again within a step), bisection refines it."""
    lo = 0.0
    hi = 1.0
    for i in range(1, 33):
        s = i / 32.0
        if _hermite(s, a0, v0, a1, v1) <= 0.0:
            hi = s
            break
        lo = s
    for _ in range(40):
        s = 0.5 * (lo + hi)
        if _hermite(s, a0, v0, a1, v1) > 0.0:
            lo = s
        else:
            hi = s
    return hi


@njit(cache=True, error_model="numpy", nogil=True)
def _earliest_hit(q, qd, q0, v0, dt, locked, j0, tmin):
    """Fraction of the interval dt at which the first free coil reaches theta_min,
    from the cubic Hermite between (q0, v0) and (q, qd); 2.0 if none does."""
    best = 2.0
    for j in range(j0, q.shape[0]):
        if not locked[j] and q[j] < tmin - 1e-12:
            a0 = q0[j] - tmin
            if a0 <= POS_TOL and v0[j] <= VEL_TOL:
                s = 0.0  # touching and not separating: it presses in at once
            else:
                s = _hermite_root(max(a0, 0.0), v0[j] * dt, q[j] - tmin, qd[j] * dt)
            if s < best:
                best = s
    return best


@njit(cache=True, error_model="numpy", nogil=True)
def _deepest(q, locked, j0, tmin):
    """Smallest gap theta - theta_min among the free joints."""
    g = 1.0
    for j in range(j0, q.shape[0]):
        if not locked[j] and q[j] - tmin < g:
            g = q[j] - tmin
    return g


@njit(cache=True, error_model="numpy", nogil=True)
def step(q, qd, sd, t, h, locked, target, par, ipar, w, cnt):
    """Advance exactly h with events located inside the step; returns the new time."""
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
    y0 = w[17]  # rows 2, 3: state at the start of the sub-step
    sticky = w[18][3]
    for j in range(nj):
        sticky[j] = False
    sdd = w[12][12]
    flags = w[19]
    fresh = flags[0] == 1
    flags[0] = 0
    rem = h
    nev = 0
    while rem > 1e-12 * h:
        resting(q, qd, sd, t, locked, target, par, ipar, w, cnt, fresh)
        fresh = False
        for j in range(nj):
            y0[2][j] = q[j]
            y0[3][j] = qd[j]
        sd0 = sd[0]
        sd1 = sd[1]
        flow(q, qd, sd, t, rem, locked, target, par, ipar, w, cnt)
        best = _earliest_hit(q, qd, y0[2], y0[3], rem, locked, j0, tmin)
        kind = 1 if best <= 1.0 else 0
        has_locked = False
        for j in range(j0, nj):
            if locked[j]:
                has_locked = True
                break
        if has_locked:
            deriv(q, qd, sd, t + rem, locked, target, par, ipar, w, qdd, sdd, qd, 0.0)
            cnt[C_EVALS] += 1
            for j in range(j0, nj):
                lam1[j] = freq[j] if locked[j] else 0.0
                if locked[j] and lam1[j] < 0.0 and lam0[j] > 0.0:
                    s = lam0[j] / (lam0[j] - lam1[j])
                    # The contact torque goes to zero continuously, so a separation
                    # found again right at the start of the sub-step (the previous
                    # location was good) is left to the next step's contact solve:
                    # refining it further would only repeat the sub-step.
                    if s >= SEP_MIN and s < best:
                        best = s
                        kind = 2
        if kind == 0 or nev >= MAX_EVENTS:
            t += rem
            if has_locked:
                flags[0] = 1
            break
        nev += 1
        cnt[C_EVENTS] += 1
        dt = best * rem
        for j in range(nj):
            q[j] = y0[2][j]
            qd[j] = y0[3][j]
        sd[0] = sd0
        sd[1] = sd1
        if dt > 0.0:
            flow(q, qd, sd, t, dt, locked, target, par, ipar, w, cnt)
            # The interpolant's root is approximate: if a coil still ends inside,
            # locate again within the shorter interval (secant-like, a few rounds)
            # rather than project a deep overlap away, which would jolt the chain.
            for _ in range(8):
                if kind != 1 or _deepest(q, locked, j0, tmin) >= -PROJ_TOL:
                    break
                dt *= min(_earliest_hit(q, qd, y0[2], y0[3], dt, locked, j0, tmin), 1.0)
                for j in range(nj):
                    q[j] = y0[2][j]
                    qd[j] = y0[3][j]
                sd[0] = sd0
                sd[1] = sd1
                if dt > 0.0:
                    flow(q, qd, sd, t, dt, locked, target, par, ipar, w, cnt)
        t += dt
        rem -= dt
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


@njit(cache=True, error_model="numpy", nogil=True)
def run(q, qd, sd, t, h, nsteps, locked, target, par, ipar, w, cnt):
    """nsteps fixed steps; returns the final time."""
    for _ in range(nsteps):
        t = step(q, qd, sd, t, h, locked, target, par, ipar, w, cnt)
    return t
