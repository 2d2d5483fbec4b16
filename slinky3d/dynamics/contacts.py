"""Compiled contact solves: impact and resting contact, all touching joints together.

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

from slinky3d.dynamics.articulated_body import BASE, JIT, aba
from slinky3d.dynamics.rt import (
    C_EVALS,
    C_IMPACTS,
    C_LCPFAIL,
    I_FREE,
    P_I,
    P_M,
    P_R,
    P_TMIN,
    POS_TOL,
    deriv,
)

VEL_TOL = 1e-9  # rad/s: a touching joint this slow counts as at rest
MAX_PIVOTS = 60


@njit(**JIT)
def _first_joint(ipar):
    """First joint that can touch: joint 1 has no holder in a free Slinky."""
    return BASE + 1 if ipar[I_FREE] != 0 else BASE


@njit(**JIT)
def _pivot(act, viol, worst, it):
    """Block pivoting: flip the active set at all violations; after 10 pivots only at
    the first (Murty). On return viol marks the joints flipped."""
    for j in range(viol.shape[0]):
        if it >= 10:
            viol[j] = j == worst
        if viol[j]:
            act[j] = not act[j]


@njit(**JIT)
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


@njit(**JIT)
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
        _pivot(act, viol, worst, it)
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


@njit(**JIT)
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


@njit(**JIT)
def resting(q, qd, sd, t, locked, target, par, ipar, w, cnt, fresh=False):
    """Acceleration-level contact LCP: which touching, resting joints stay locked.

    Locked joints need a compressive torque (>= 0); free touching joints at rest
    need theta'' >= 0. On return w's freq - (spring) holds the contact torques
    of the locked joints (lam0) and qdd the accelerations. `fresh`: w already
    holds the dynamics of this state and contact set. Returns whether qdd holds
    them on return (not when nothing touches).
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
        return fresh
    scale = 0.0
    done = False
    for it in range(MAX_PIVOTS):
        if not (fresh and it == 0):
            deriv(q, qd, sd, t, locked, target, par, ipar, w, qdd, sdd, qd, w[17][7], 0.0)
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
        _pivot(locked, viol, worst, it)
        for j in range(nj):
            if viol[j] and locked[j]:  # newly locked: onto the bound, at rest
                q[j] = tmin
                qd[j] = 0.0
    if not done:
        cnt[C_LCPFAIL] += 1
    for j in range(nj):
        lam0[j] = freq[j] if locked[j] else 0.0
    return True
