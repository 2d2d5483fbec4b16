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

from slinky3d.dynamics.articulated_body import JIT, aba, energy
from slinky3d.dynamics.forces import derivatives
from slinky3d.dynamics.workspace import first_joint
from slinky3d.model.chain import BASE, RESTING_RATE, TOUCHING

MAX_PIVOTS = 60


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
def impact(q, qd, locked, par, modes, w, cnt, t=0.0):
    """Rigid e = 0 impact of all joints at theta_min together, at time t; qd, locked
    in place.

    Solves  dv = M^-1 G^T lam,  v+_j = 0 where lam_j > 0,  v+_j >= 0 where lam_j = 0
    over the touching joints. Afterwards `locked` is the set with v+ = 0. Joints
    marked w.sticky are stopped whatever the sign of their impulse.

    The kinetic energy it takes, T- - T+ = -1/2 (v+ + v-)^T M dv = -1/2 sum_j lam_j
    (v+_j + v-_j) over the contact joints (M dv is the impulse, zero on the other free
    joints), goes to w.small's impact_loss: exact, at no cost. (A moving held anchor's
    reaction impulse does work too: that is the hand's.)
    """
    f = w.forces
    tau = f.applied
    fext = f.bar_force
    presc = f.prescribed
    qdd_p = f.prescribed_acc
    arm = f.armature
    qdd = w.qdd
    impulse = f.joint_force
    nj = q.shape[0]
    n = nj - BASE
    tmin = par.theta_min
    j0 = first_joint(modes)
    cand = w.candidate
    act = w.active
    viol = w.violation
    sticky = w.sticky
    vplus = w.velocity_after
    for j in range(nj):
        cand[j] = j >= j0 and q[j] <= tmin + TOUCHING
        act[j] = cand[j] and (qd[j] < 0.0 or locked[j] or sticky[j])
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
        if modes.anchor_free != 0:
            presc[BASE] = True
            qdd_p[BASE] = 0.0
        else:
            for i in range(BASE):
                presc[i] = True
                qdd_p[i] = 0.0
        aba(q, w.zeros, tau, presc, qdd_p, fext, arm, par.mass, par.inertia, par.radius, 0.0,
            qdd, impulse, f.ends, f.bar_axes, f.aba_rows)
        cnt.evaluations += 1
        lmax = 0.0
        for j in range(nj):
            vplus[j] = qd[j] + qdd[j]
            if act[j] and abs(impulse[j]) > lmax:
                lmax = abs(impulse[j])
        nv, worst = _violations(act, sticky, impulse, 1e-12 * lmax, cand, vplus, RESTING_RATE,
                                viol)
        if nv == 0:
            done = True
            break
        _pivot(act, viol, worst, it)
    if not done:
        cnt.lcp_failures += 1
    loss = 0.0
    for j in range(j0, nj):
        if act[j]:
            loss -= 0.5 * impulse[j] * (vplus[j] + qd[j])
            if qd[j] < -RESTING_RATE:
                w.impact_time[j] = t
    w.small[0].impact_loss += loss
    for j in range(nj):
        qd[j] = vplus[j]
    for j in range(j0, nj):
        locked[j] = act[j]
        if act[j]:
            qd[j] = 0.0
            q[j] = tmin
    cnt.impacts += 1


@njit(**JIT)
def paper_impact(q, qd, locked, par, modes, w, cnt, t=0.0):
    """The paper's pairwise rule, joint by joint until none is closing, at time t.

    At joint k the two neighbouring composite rates are replaced by their mean
    (k = 1: Theta_1' is set to the holder's rate); the rest of the chain is
    ignored, which is why it cannot treat several contacts consistently. The
    energy it takes (two O(N) evaluations) goes to w.small's impact_loss.
    """
    f = w.forces
    before = energy(q, qd, par.mass, par.inertia, par.radius, par.gravity, par.stiffness,
                    first_joint(modes), f.ends, f.bar_axes, f.aba_rows)
    nj = q.shape[0]
    n = nj - BASE
    tmin = par.theta_min
    j0 = first_joint(modes)
    free = modes.anchor_free != 0
    Th = w.composite_rate
    for _ in range(200):
        hit = -1
        for j in range(j0, nj):
            if q[j] <= tmin + TOUCHING and qd[j] < 0.0:
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
        w.impact_time[hit] = t
        cnt.impacts += 1
    for j in range(j0, nj):
        locked[j] = q[j] <= tmin + TOUCHING and abs(qd[j]) <= RESTING_RATE
    w.small[0].impact_loss += before - energy(
        q, qd, par.mass, par.inertia, par.radius, par.gravity, par.stiffness, j0, f.ends,
        f.bar_axes, f.aba_rows)


@njit(**JIT)
def resting(q, qd, sd, t, locked, target, par, modes, w, cnt, fresh=False):
    """Acceleration-level contact LCP: which touching, resting joints stay locked.

    Locked joints need a compressive torque (>= 0); free touching joints at rest
    need theta'' >= 0. On return w.forces.joint_force holds the contact torques of
    the locked joints (also in w.torque_start) and w.qdd the accelerations. `fresh`: w
    already holds the dynamics of this state and contact set. Returns whether qdd
    holds them on return (not when nothing touches).
    """
    nj = q.shape[0]
    tmin = par.theta_min
    j0 = first_joint(modes)
    qdd = w.qdd
    torque = w.forces.joint_force
    lam0 = w.torque_start
    cand = w.candidate
    viol = w.violation
    sticky = w.sticky
    any_c = False
    for j in range(nj):
        cand[j] = locked[j] or (j >= j0 and q[j] <= tmin + TOUCHING
                                and abs(qd[j]) <= RESTING_RATE)
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
            derivatives(q, qd, sd, t, locked, target, par, modes, w.forces, qdd,
                        w.small[0].damper_rate, qd, w.zeros, 0.0, True)
            cnt.evaluations += 1
        if scale == 0.0:
            for j in range(j0, nj):
                if locked[j] and abs(torque[j]) > scale:
                    scale = abs(torque[j])
            scale = max(scale, 1e-300)
        nv, worst = _violations(locked, sticky, torque, 1e-12 * scale, cand, qdd, 1e-9, viol)
        if nv == 0:
            done = True
            break
        _pivot(locked, viol, worst, it)
        for j in range(nj):
            if viol[j] and locked[j]:  # newly locked: onto the bound, at rest
                q[j] = tmin
                qd[j] = 0.0
    if not done:
        cnt.lcp_failures += 1
    for j in range(nj):
        lam0[j] = torque[j] if locked[j] else 0.0
    return True
