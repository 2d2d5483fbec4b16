"""Coil contact of the 3D chain: closed coils locked as prescribed joints
(docs/solver.md, "Coil contact in 3D"; the model: docs/model.md section 12).

Joint j closes the coil there: E_{j+1}, one turn above E_{j-1} on the same rim, comes
within the wire's thickness of the lower coil's plane. Its opening is

    s_j = -d_j . a_{j-1} = -exp(phi_j)[2, 0]      (phi = (0, theta, 0): s = sin theta)

and the contact holds s_j >= sin(theta_min), in planar states exactly the paper's
theta_j >= theta_min. A closed joint is locked in all three degrees of freedom (the
coils lie flat on each other) with zero relative velocity and acceleration; the
constraint's moment mu (world, about E_j) must be made by the normal forces of the
coil's rim (pushing the coil above along -a_{j-1}, the side the joint opens to), so
its part about b_{j-1} (the end contact's moment, the planar contact torque) may not
pull: c_j = -mu . b_{j-1} >= 0. The other parts (about d_{j-1}, made by
the rim's spread of normal forces, and about a_{j-1}, the twist held by friction) are
not bounded (docs/model.md section 12 says why).

Per step: closed joints closing, or locked, are stopped together by the impulse that
locks them (zero restitution), a pulling impulse releasing its joint; then the resting
set: a locked joint whose contact pulls is released, a closed free joint accelerating
shut is locked, until neither is left (or a joint released twice shuts again: a
cycle, ended with it locked); the step is then taken with the set locked. A free
joint that closes inside the step (a hit) is located in time: first on each
opening's quintic Hermite over the step (its value, rate and acceleration at both
ends), then refined on flows from the step's start (Newton, secants), the last few
microseconds on the state's Taylor polynomial; the Illinois method on the smallest
opening if that fails. The contacts are set there, and the rest of the step taken.
Repeated solves at one state (the impulses' releases, the resting rounds') reuse its
kinematics (articulated_body3d.passes).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from slinky3d.dynamics import articulated_body3d as ab
from slinky3d.dynamics import integrator3d
from slinky3d.dynamics.articulated_body import JIT
from slinky3d.dynamics.events import quintic

LOCATED = 1e-9  # touching: an opening within this of its bound (where a hit is located)
PULL = 1e-9  # relative to the largest contact: a contact this far below zero pulls
MAX_ROUNDS = 64  # resting-set rounds a step (each one articulated-body solve)
SLOW = 1e-3  # 1/s: at a located hit, touching joints opening slower than this are stopped too
MAX_EVENTS = 16  # hits located in one step; later ones are taken at the next step
SCAN = 8  # points a touching joint's re-closure is bracketed by
SCALES = 6  # ... at intervals down to SCAN^-SCALES of what is left of the step
FINEST = float(SCAN) ** -SCALES  # the scan's first point at its finest scale
MAX_ITER = 12  # Illinois iterations locating one hit (each one sub-step's flow)
TAYLOR = 2.5e-3  # of the step: a hit this close to a flow's end is reached on its Taylor polynomial
CYCLE = 2  # a joint released this often in one resting set and shutting again ends it
NEWTON = 6  # flows refining a hit's time from its dense estimate before the scan's fallback


@njit(**JIT)
def opening(p0, p1, p2):
    """s = -exp(phi)[2, 0] = -d_j . a_{j-1} of a joint's rotation vector phi."""
    a, b = ab.rot_coefs(p0 * p0 + p1 * p1 + p2 * p2)
    return a * p1 - b * p0 * p2


@njit(**JIT)
def opening_rate(p0, p1, p2, w0, w1, w2, tmp):
    """ds/dt = exp(phi)[2, 2] w_1 - exp(phi)[2, 1] w_2 (R_dot = R [w]x, w in body
    components)."""
    ab.exp_rot(p0, p1, p2, tmp)
    return tmp[2, 2] * w1 - tmp[2, 1] * w2


IMPULSES = 14  # new_work's entry counting the impulse solves (articulated-body solves)
ACC_OK = 15  # new_work's entry: 1 while its entry 10 holds the step's start's accelerations
END_Q, END_U, END_H = 16, 17, 18  # new_work's entries: a flow over the step's rest, its end


def new_work(n: int) -> tuple[np.ndarray, ...]:
    """(zero velocities, zero forces, zero armature, openings, contacts, impulse's
    parameters, a step's start q, u and H, hit candidates, the start's accelerations,
    each joint's releases in one resting set, a Taylor move's start q and u, the
    impulse solves so far, whether the start's accelerations are set_contacts' last,
    the end of a flow over the step's rest: q, u and H) for `run` with n half hoops."""
    m = 3 + 3 * n
    return (np.zeros(m), np.zeros(m), np.zeros((n, 3, 3)), np.zeros(n), np.zeros(n),
            np.zeros(ab.NPAR), np.zeros(m), np.zeros(m), np.zeros((3, 3)), np.zeros(n),
            np.zeros(m), np.zeros(n), np.zeros(m), np.zeros(m), np.zeros(1), np.zeros(1),
            np.zeros(m), np.zeros(m), np.zeros((3, 3)))


@njit(**JIT)
def contacts(first, q, H, lam, frames, out):
    """out[j] = c_j = -(R_j lam_j) . b_{j-1} for j >= first (lam: the joints' constraint
    forces, body components; frames current); 0 elsewhere."""
    n = frames.shape[0]
    for k in range(n):
        out[k] = 0.0
        if k < first:
            continue
        j = 3 + 3 * k
        F = frames[k]
        P = H if k == 0 else frames[k - 1]
        acc = 0.0
        for i in range(3):
            mu = F[i, 0] * lam[j] + F[i, 1] * lam[j + 1] + F[i, 2] * lam[j + 2]
            acc += mu * P[i, 1]
        out[k] = -acc


@njit(**JIT)
def _impulse(mode, q, H, u, par0, w, cw, known):
    """Lock w.presc at zero relative velocity by one impulse: u updated, the impulses'
    contacts in cw[4]. The base keeps its velocity unless free. known: the last solve
    was this one's at the same state (its kinematics, at zero velocities, kept)."""
    zu, ztau, zarm = cw[0], cw[1], cw[2]
    n = w.frames.shape[0]
    # a driven base keeps its acceleration in acc_p[:3] (Solver3D.drive): an impulse
    # leaves the base's velocity alone
    b0, b1, b2 = w.acc_p[0], w.acc_p[1], w.acc_p[2]
    w.acc_p[0] = w.acc_p[1] = w.acc_p[2] = 0.0
    for k in range(n):
        j = 3 + 3 * k
        for i in range(3):
            w.acc_p[j + i] = -u[j + i] if w.presc[k] else 0.0
    if known:
        ab.passes(mode, ztau, zarm, par0, w.presc, w.acc_p, w.qdd, w.jf, w.frames, w.ws,
                  w.scr, w.tmp, w.d9, False)
    else:
        ab.aba(mode, q, zu, H, ztau, zarm, par0, w.presc, w.acc_p, w.qdd, w.jf, w.frames,
               w.ws, w.scr, w.tmp, w.d9)
    w.acc_p[0], w.acc_p[1], w.acc_p[2] = b0, b1, b2
    for j in range(3, q.shape[0]):
        w.vd[j] = w.jf[j]  # the impulses (ztau = 0: the constraint's whole share)
    contacts(0, q, H, w.vd, w.frames, cw[4])


@njit(**JIT)
def _largest(x, n):
    big = 0.0
    for k in range(n):
        big = max(big, abs(x[k]))
    return big


@njit(**JIT)
def _most_pulling(first, n, presc, c):
    """The locked joint whose contact pulls hardest, past PULL of the largest (-1: none)."""
    worst = -PULL * _largest(c, n)
    pick = -1
    for k in range(first, n):
        if presc[k] and c[k] < worst:
            worst = c[k]
            pick = k
    return pick


@njit(**JIT)
def _lock(mode, q, H, u, par0, first, w, cw):
    """Stop w.presc's joints by one impulse (zero restitution), releasing one at a time
    those whose contact would pull; u updated. Returns the kinetic energy it took,
    1/2 du^T M du = 1/2 sum of the impulses times the jumps."""
    n = w.frames.shape[0]
    c = cw[4]
    for i in range(MAX_ROUNDS):
        _impulse(mode, q, H, u, par0, w, cw, i > 0)
        cw[IMPULSES][0] += 1
        pick = _most_pulling(first, n, w.presc, c)
        if pick < 0:
            break
        w.presc[pick] = False
    lost = 0.0
    for j in range(3, q.shape[0]):
        lost += 0.5 * w.jf[j] * w.qdd[j]
        u[j] += w.qdd[j]
    if mode == ab.FREE:
        for j in range(3):
            u[j] += w.qdd[j]
    return lost


@njit(**JIT)
def set_contacts(mode, q, u, H, par, smin, touch, slow, w, cw):
    """The locked set (w.presc) and the velocities for the coming step: impacts, then
    the resting set (module docstring); touching: an opening within `touch` of its
    bound; a touching joint opening slower than `slow` (ds/dt) is stopped with those
    closing. Returns the energy the impulses took (J)."""
    n = w.frames.shape[0]
    first = 0 if mode == ab.CLAMPED else 1
    s, c, par0 = cw[3], cw[4], cw[5]
    for i in range(par.shape[0]):
        par0[i] = par[i]
    par0[ab.P_G] = 0.0
    for k in range(n):
        j = 3 + 3 * k
        s[k] = opening(q[j], q[j + 1], q[j + 2]) - smin if k >= first else 1.0
        if s[k] > touch:
            w.presc[k] = False
    # impacts: lock the touching joints that close, with those locked
    hit = False
    for k in range(first, n):
        j = 3 + 3 * k
        if (s[k] <= touch and not w.presc[k]
                and opening_rate(q[j], q[j + 1], q[j + 2], u[j], u[j + 1], u[j + 2],
                                 w.tmp) < slow):
            w.presc[k] = True
            hit = True
    lost = _lock(mode, q, H, u, par0, first, w, cw) if hit else 0.0
    # resting: release the pulling, lock the closed ones accelerating shut
    freed = cw[11]
    for k in range(n):
        freed[k] = 0.0
    known = False  # the last solve was this loop's, at this state (a release since)
    cw[ACC_OK][0] = 0.0
    for _ in range(MAX_ROUNDS):
        for j in range(3, q.shape[0]):  # (acc_p[:3]: the base's, kept)
            w.acc_p[j] = 0.0
        if known:
            ab.passes(mode, w.tau, w.arm, par, w.presc, w.acc_p, w.qdd, w.jf, w.frames,
                      w.ws, w.scr, w.tmp, w.d9, False)
            w.evaluations[0] += 1
        else:
            integrator3d.accelerations(mode, q, u, H, par, w)
        known = True
        for j in range(3, q.shape[0]):
            w.vd[j] = w.jf[j] - w.tau[j]
        contacts(first, q, H, w.vd, w.frames, c)
        pick = _most_pulling(first, n, w.presc, c)
        if pick >= 0:
            w.presc[pick] = False
            freed[pick] += 1.0
            continue
        shut = False
        again = False
        for k in range(first, n):
            j = 3 + 3 * k
            if w.presc[k] or s[k] > touch:
                continue
            ab.exp_rot(q[j], q[j + 1], q[j + 2], w.tmp)
            # s_ddot = exp[2, 2] w_dot_1 - exp[2, 1] w_dot_2 + (terms in w): at a rate
            # that does not open it, an acceleration that shuts it
            if (w.tmp[2, 2] * u[j + 1] - w.tmp[2, 1] * u[j + 2] <= 0.0
                    and w.tmp[2, 2] * w.qdd[j + 1] - w.tmp[2, 1] * w.qdd[j + 2] < 0.0):
                w.presc[k] = True
                shut = True
                again = again or freed[k] >= CYCLE
        if not shut:
            cw[ACC_OK][0] = 1.0  # w.qdd: the true accelerations with this set locked
            break
        lost += _lock(mode, q, H, u, par0, first, w, cw)
        known = False
        if again:
            break
    for j in range(3, q.shape[0]):
        w.acc_p[j] = 0.0
    return lost


@njit(**JIT)
def _lowest(q, smin, cand):
    """The smallest opening over the candidates (cand[k] != 0), less its bound."""
    low = np.inf
    for k in range(cand.shape[0]):
        if cand[k] != 0.0:
            j = 3 + 3 * k
            low = min(low, opening(q[j], q[j + 1], q[j + 2]) - smin)
    return low


@njit(**JIT)
def _opening_jet(q, u, qdd, j, tmp):
    """(s, ds/dt, d2s/dt2) of joint j's opening (its bound not taken off): with
    X = exp(phi), X_dot = X [w]x, s = -X[2, 0], s_dot = X22 w1 - X21 w2 and
    s_ddot = X22 w_dot1 - X21 w_dot2 + X20 (w1^2 + w2^2) - w0 (X21 w1 + X22 w2)."""
    ab.exp_rot(q[j], q[j + 1], q[j + 2], tmp)
    w0, w1, w2 = u[j], u[j + 1], u[j + 2]
    x20, x21, x22 = tmp[2, 0], tmp[2, 1], tmp[2, 2]
    sd = x22 * w1 - x21 * w2
    sdd = (x22 * qdd[j + 1] - x21 * qdd[j + 2] + x20 * (w1 * w1 + w2 * w2)
           - w0 * (x21 * w1 + x22 * w2))
    return -x20, sd, sdd


@njit(**JIT)
def _quintic_root(p0, m0, c0, p1, m1, c1, before):
    """First s in (0, 1) where the quintic Hermite (events.quintic) crosses from above
    its bound (> 0) to more than LOCATED below it, 2.0 if none before `before`. p0 may
    be at the bound (a joint touching at the start, opening): the scan then first
    looks for a point above it, at fractions 8^-6 .. 8^-2 of the step (a re-closure
    can come microseconds later) and then every 1/32; bisection and Newton inside the
    bracket refine the root to 1e-14."""
    lo = 0.0 if p0 > LOCATED else -1.0  # -1: no point above the bound yet
    hi = 2.0
    for i in range(37):
        x = 8.0 ** (i - 6) if i < 5 else (i - 4) / 32.0
        if x > before:
            return 2.0
        f = quintic(x, p0, m0, c0, p1, m1, c1)[0]
        if f > 0.0:
            lo = x
        elif lo >= 0.0 and f < -LOCATED:
            hi = x
            break
    if hi > 1.0:
        return 2.0
    for _ in range(60):
        if hi - lo <= 1e-14:
            break
        mid = 0.5 * (lo + hi)
        f, df = quintic(mid, p0, m0, c0, p1, m1, c1)
        if f > 0.0:
            lo = mid
        else:
            hi = mid
        if df != 0.0:
            x = mid - f / df
            if lo < x < hi:
                if quintic(x, p0, m0, c0, p1, m1, c1)[0] > 0.0:
                    lo = x
                else:
                    hi = x
    return hi if hi < before else 2.0


@njit(**JIT)
def _dense_hit(q, u, qdd, left, smin, cw, tmp):
    """The earliest hit's time on each candidate opening's quintic Hermite over the
    step (value, rate and acceleration at both ends: the start's in cw[6], cw[7],
    cw[10], the end's q, u, qdd); 2 left if none is found, -1 if a joint inside at
    the end touched at the start neither opening nor accelerating open (it shuts at
    once)."""
    q0, u0, a0, cand = cw[6], cw[7], cw[10], cw[9]
    best = 2.0
    h2 = left * left
    for k in range(cand.shape[0]):
        if cand[k] == 0.0:
            continue
        j = 3 + 3 * k
        s1, d1, e1 = _opening_jet(q, u, qdd, j, tmp)
        if s1 - smin >= -LOCATED:
            continue
        s0, d0, e0 = _opening_jet(q0, u0, a0, j, tmp)
        # touching at the start and shutting at once, or re-closing sooner than the
        # scan's finest point (its hit cannot be bracketed: the scan would find it
        # inside at every scale, after NEWTON + SCALES flows)
        if (abs(s0 - smin) <= LOCATED and e0 < 0.0
                and (d0 <= 0.0 or 2.0 * d0 < -e0 * left * FINEST)):
            return -1.0
        x = _quintic_root(s0 - smin, d0 * left, e0 * h2, s1 - smin, d1 * left, e1 * h2,
                          best)
        best = min(best, x)
    return best * left


@njit(**JIT)
def _jr_inv_dcoef(t2):
    """dc/d(theta^2) of ab.jr_inv_coef's c (series 1/12 + t2/720 + t2^2/30240 below
    0.01)."""
    if t2 < 1e-2:
        return 1.0 / 720.0 + t2 / 15120.0
    th = math.sqrt(t2)
    half = 0.5 * th
    sh = math.sin(half)
    cot = math.cos(half) / sh
    dth = -2.0 / (th * t2) + 1.0 / (4.0 * th * sh * sh) + cot / (2.0 * t2)
    return dth / (2.0 * th)


@njit(**JIT)
def _taylor(q, u, qdd, dt, q1, u1):
    """q1, u1 = the state dt after (q, u) on its quadratic Taylor polynomial: u' = qdd,
    q' = f_q(q, u) (E_1's velocity; J_r^-1(phi) w), q'' = its time derivative at
    w' = qdd (with J_r^-1's own rate)."""
    h2 = 0.5 * dt * dt
    for j in range(3):
        q1[j] = q[j] + dt * u[j] + h2 * qdd[j]
    for j in range(3, q.shape[0], 3):
        p0, p1, p2 = q[j], q[j + 1], q[j + 2]
        w0, w1, w2 = u[j], u[j + 1], u[j + 2]
        c = ab.jr_inv_coef(p0, p1, p2)
        d0, d1, d2 = ab.jr_inv_apply(p0, p1, p2, c, w0, w1, w2, 1.0)  # phi_dot
        a0, a1, a2 = ab.jr_inv_apply(p0, p1, p2, c, qdd[j], qdd[j + 1], qdd[j + 2], 1.0)
        # d/dt (J_r^-1) w = 1/2 phid x w + c_dot phi x (phi x w)
        #                   + c (phid x (phi x w) + phi x (phid x w))
        cd = _jr_inv_dcoef(p0 * p0 + p1 * p1 + p2 * p2) * 2.0 * (p0 * d0 + p1 * d1 + p2 * d2)
        x0, x1, x2 = ab._cross(p0, p1, p2, w0, w1, w2)  # phi x w
        y0, y1, y2 = ab._cross(p0, p1, p2, x0, x1, x2)  # phi x (phi x w)
        z0, z1, z2 = ab._cross(d0, d1, d2, w0, w1, w2)  # phid x w
        v0, v1, v2 = ab._cross(d0, d1, d2, x0, x1, x2)
        t0, t1, t2 = ab._cross(p0, p1, p2, z0, z1, z2)
        a0 += 0.5 * z0 + cd * y0 + c * (v0 + t0)
        a1 += 0.5 * z1 + cd * y1 + c * (v1 + t1)
        a2 += 0.5 * z2 + cd * y2 + c * (v2 + t2)
        q1[j] = p0 + dt * d0 + h2 * a0
        q1[j + 1] = p1 + dt * d1 + h2 * a1
        q1[j + 2] = p2 + dt * d2 + h2 * a2
    for j in range(q.shape[0]):
        u1[j] = u[j] + dt * qdd[j]


@njit(**JIT)
def _lowest_at(q, smin, cand):
    """(the smallest opening over the candidates less its bound, its joint)."""
    low = np.inf
    at = -1
    for k in range(cand.shape[0]):
        if cand[k] != 0.0:
            j = 3 + 3 * k
            s = opening(q[j], q[j + 1], q[j + 2]) - smin
            if s < low:
                low = s
                at = k
    return low, at


@njit(**JIT)
def _taylor_hit(q, u, qdd, smin, dt, limit, w, cw):
    """Move (q, u) onto its hit on the quadratic Taylor polynomial of the state (qdd its
    accelerations), within LOCATED (Newton from dt on the candidates' lowest opening);
    the time moved if it converged within `limit` of now, else nan and (q, u)
    unchanged."""
    cand = cw[9]
    q0, u0 = cw[12], cw[13]
    for j in range(q.shape[0]):
        q0[j] = q[j]
        u0[j] = u[j]
    for _ in range(4):
        if not abs(dt) <= limit:
            break
        _taylor(q0, u0, qdd, dt, q, u)
        f, at = _lowest_at(q, smin, cand)
        if abs(f) <= LOCATED:
            return dt
        j = 3 + 3 * at
        rate = opening_rate(q[j], q[j + 1], q[j + 2], u[j], u[j + 1], u[j + 2], w.tmp)
        if not rate < 0.0:
            break
        dt -= f / rate
    for j in range(q.shape[0]):
        q[j] = q0[j]
        u[j] = u0[j]
    return np.nan


@njit(**JIT)
def _restore(q, u, H, cw):
    for j in range(q.shape[0]):
        q[j] = cw[6][j]
        u[j] = cw[7][j]
    for i in range(3):
        for c in range(3):
            H[i, c] = cw[8][i, c]


@njit(**JIT)
def _keep_end(q, u, H, cw):
    """Keep a flow's end (q, u, H) in cw[ENDS], for `_restore_end`."""
    for j in range(q.shape[0]):
        cw[END_Q][j] = q[j]
        cw[END_U][j] = u[j]
    for i in range(3):
        for c in range(3):
            cw[END_H][i, c] = H[i, c]


@njit(**JIT)
def _restore_end(q, u, H, cw):
    for j in range(q.shape[0]):
        q[j] = cw[END_Q][j]
        u[j] = cw[END_U][j]
    for i in range(3):
        for c in range(3):
            H[i, c] = cw[END_H][i, c]


@njit(**JIT)
def step(mode, q, u, H, h, par, smin, w, cw):
    """One step of h with coil contact, hits located in time (module docstring), in
    place. Returns the energy the impacts took (J)."""
    n = w.frames.shape[0]
    first = 0 if mode == ab.CLAMPED else 1
    s, cand = cw[3], cw[9]
    left = h
    slow = 0.0
    lost = 0.0
    for ev in range(MAX_EVENTS + 1):
        lost += set_contacts(mode, q, u, H, par, smin, LOCATED, slow, w, cw)
        for j in range(q.shape[0]):  # the start's accelerations (set_contacts' last)
            cw[10][j] = w.qdd[j]
        # a located hit: the touching coils near rest are stopped with it (a collapse
        # front's chatter merged into one event, as in the plane)
        slow = SLOW
        for j in range(q.shape[0]):
            cw[6][j] = q[j]
            cw[7][j] = u[j]
        for i in range(3):
            for c in range(3):
                cw[8][i, c] = H[i, c]
        fa = np.inf
        for k in range(n):
            # a hit: a free joint that was not inside its bound at the start
            ok = k >= first and not w.presc[k] and s[k] > -LOCATED
            cand[k] = 1.0 if ok else 0.0
            if ok:
                fa = min(fa, s[k])
        # the resting set's last solve was at this state: the first stage keeps its
        # kinematics and velocity products
        w.known[0] = cw[ACC_OK][0] != 0.0
        integrator3d.flow(mode, q, u, H, left, par, w)
        fb = _lowest(q, smin, cand)
        if fb >= -LOCATED or ev == MAX_EVENTS:
            break
        _keep_end(q, u, H, cw)
        # the hit's time on the openings' quintics over the step (one evaluation: the
        # end's accelerations), refined on flows from the start: Newton from the
        # opening's rate there, then secants, each kept inside the bracket; the scan
        # and Illinois below if that fails
        integrator3d.accelerations(mode, q, u, H, par, w)
        tau = _dense_hit(q, u, w.qdd, left, smin, cw, w.tmp)
        if tau < 0.0:
            # a touching joint shutting at once: no point above its bound to bracket
            # its hit from (what the scan below would find at every scale); the step
            # ends where the flow above left it
            break
        if tau <= TAYLOR * h and cw[ACC_OK][0] != 0.0:
            # within microseconds of the start (a collapse front's chatter, half the
            # hits): on the start's Taylor polynomial, its accelerations known
            _restore(q, u, H, cw)
            dt = _taylor_hit(q, u, cw[10], smin, tau, TAYLOR * h, w, cw)
            if dt == dt and dt > 0.0:
                left -= dt
                continue
        lo = 0.0
        hi = left
        located = False
        t_prev = f_prev = 0.0
        for it in range(NEWTON):
            if not lo < tau < hi:
                break
            _restore(q, u, H, cw)
            integrator3d.flow(mode, q, u, H, tau, par, w)
            f, at = _lowest_at(q, smin, cand)
            if abs(f) <= LOCATED:
                located = True
                break
            if f < 0.0:
                hi = tau
            else:
                lo = tau
            if it == 0:
                j = 3 + 3 * at
                rate = opening_rate(q[j], q[j + 1], q[j + 2], u[j], u[j + 1], u[j + 2],
                                    w.tmp)
                if rate < 0.0 and abs(f / rate) <= TAYLOR * h:
                    # close: the rest on the state's quadratic Taylor polynomial (one
                    # evaluation instead of flows), Newton on its opening
                    room = tau - lo if f < 0.0 else hi - tau
                    integrator3d.accelerations(mode, q, u, H, par, w)
                    dt = _taylor_hit(q, u, w.qdd, smin, -f / rate, min(TAYLOR * h, room),
                                     w, cw)
                    if dt == dt:
                        tau += dt
                        located = True
                        break
            else:
                rate = (f - f_prev) / (tau - t_prev)
            t_prev, f_prev = tau, f
            tau = tau - f / rate if rate < 0.0 else -1.0
        if located:
            left -= tau
            continue
        # bracket the earliest crossing: a joint touching at the start may open before
        # it closes (a grazing root at 0), so scan (0, b) at SCAN points, finer while
        # the first is already inside
        a = 0.0
        b = left
        if fa <= LOCATED:
            for _ in range(SCALES):
                found = False
                for i in range(1, SCAN + 1):
                    t = b * i / SCAN
                    _restore(q, u, H, cw)
                    integrator3d.flow(mode, q, u, H, t, par, w)
                    f = _lowest(q, smin, cand)
                    if f > 0.0:
                        a, fa = t, f
                    elif f < -LOCATED:
                        b, fb = t, f
                        found = a > 0.0
                        break
                if found or a > 0.0:
                    break
            if a == 0.0:
                # inside at every scale: the step is finished (where the first flow
                # left it), the hit taken at the next
                _restore_end(q, u, H, cw)
                break
        # Illinois on the smallest opening over (a, b): each trial a flow from the start
        side = 0
        tau = b
        for _ in range(MAX_ITER):
            tau = (a * fb - b * fa) / (fb - fa)
            _restore(q, u, H, cw)
            integrator3d.flow(mode, q, u, H, tau, par, w)
            f = _lowest(q, smin, cand)
            if abs(f) <= LOCATED:
                break
            if f < 0.0:
                b, fb = tau, f
                if side == -1:
                    fa *= 0.5
                side = -1
            else:
                a, fa = tau, f
                if side == 1:
                    fb *= 0.5
                side = 1
        left -= tau
    return lost


@njit(**JIT)
def run(mode, q, u, H, h, nsteps, par, smin, w, cw, lost):
    """nsteps fixed steps of h with coil contact, in place; lost[0] += the impacts'
    energy."""
    for _ in range(nsteps):
        lost[0] += step(mode, q, u, H, h, par, smin, w, cw)
