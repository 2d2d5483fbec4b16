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
shut is locked, until neither is left; the step is then taken with the set locked. A
free joint that closes inside the step (a hit) is located in time (the Illinois method
on the smallest opening, each trial a flow from the step's start), the contacts set
there, and the rest of the step taken.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from slinky3d.dynamics import articulated_body3d as ab
from slinky3d.dynamics import integrator3d
from slinky3d.dynamics.articulated_body import JIT

LOCATED = 1e-9  # touching: an opening within this of its bound (where a hit is located)
PULL = 1e-9  # relative to the largest contact: a contact this far below zero pulls
MAX_ROUNDS = 64  # resting-set rounds a step (each one articulated-body solve)
SLOW = 1e-3  # 1/s: at a located hit, touching joints opening slower than this are stopped too
MAX_EVENTS = 16  # hits located in one step; later ones are taken at the next step
SCAN = 8  # points a touching joint's re-closure is bracketed by
SCALES = 6  # ... at intervals down to SCAN^-SCALES of what is left of the step
MAX_ITER = 12  # Illinois iterations locating one hit (each one sub-step's flow)


@njit(**JIT)
def opening(p0, p1, p2):
    """s = -exp(phi)[2, 0] = -d_j . a_{j-1} of a joint's rotation vector phi."""
    t2 = p0 * p0 + p1 * p1 + p2 * p2
    if t2 < 1e-12:
        a = 1.0 - t2 / 6.0
        b = 0.5 - t2 / 24.0
    else:
        th = math.sqrt(t2)
        a = math.sin(th) / th
        b = (1.0 - math.cos(th)) / t2
    return a * p1 - b * p0 * p2


@njit(**JIT)
def opening_rate(p0, p1, p2, w0, w1, w2, tmp):
    """ds/dt = exp(phi)[2, 2] w_1 - exp(phi)[2, 1] w_2 (R_dot = R [w]x, w in body
    components)."""
    ab.exp_rot(p0, p1, p2, tmp)
    return tmp[2, 2] * w1 - tmp[2, 1] * w2


def new_work(n: int) -> tuple[np.ndarray, ...]:
    """(zero velocities, zero forces, zero armature, openings, contacts, impulse's
    parameters, a step's start q, u and H, hit candidates) for `run` with n half
    hoops."""
    m = 3 + 3 * n
    return (np.zeros(m), np.zeros(m), np.zeros((n, 3, 3)), np.zeros(n), np.zeros(n),
            np.zeros(ab.NPAR), np.zeros(m), np.zeros(m), np.zeros((3, 3)), np.zeros(n))


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
def _impulse(mode, q, H, u, par0, w, cw):
    """Lock w.presc at zero relative velocity by one impulse: u updated, the impulses'
    contacts in cw[4]. The base keeps its velocity unless free."""
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
    ab.aba(mode, q, zu, H, ztau, zarm, par0, w.presc, w.acc_p, w.qdd, w.jf, w.frames, w.ws,
           w.scr, w.tmp, w.d9)
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
    for _ in range(MAX_ROUNDS):
        _impulse(mode, q, H, u, par0, w, cw)
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
    for _ in range(MAX_ROUNDS):
        for j in range(3, q.shape[0]):  # (acc_p[:3]: the base's, kept)
            w.acc_p[j] = 0.0
        integrator3d.accelerations(mode, q, u, H, par, w)
        for j in range(3, q.shape[0]):
            w.vd[j] = w.jf[j] - w.tau[j]
        contacts(first, q, H, w.vd, w.frames, c)
        pick = _most_pulling(first, n, w.presc, c)
        if pick >= 0:
            w.presc[pick] = False
            continue
        shut = False
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
        if not shut:
            break
        lost += _lock(mode, q, H, u, par0, first, w, cw)
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
def _restore(q, u, H, cw):
    for j in range(q.shape[0]):
        q[j] = cw[6][j]
        u[j] = cw[7][j]
    for i in range(3):
        for c in range(3):
            H[i, c] = cw[8][i, c]


@njit(**JIT)
def step(mode, q, u, H, h, par, smin, w, cw):
    """One step of h with coil contact, hits located in time, in place. Returns the
    energy the impacts took (J)."""
    n = w.frames.shape[0]
    first = 0 if mode == ab.CLAMPED else 1
    s, cand = cw[3], cw[9]
    left = h
    slow = 0.0
    lost = 0.0
    for ev in range(MAX_EVENTS + 1):
        lost += set_contacts(mode, q, u, H, par, smin, LOCATED, slow, w, cw)
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
        integrator3d.flow(mode, q, u, H, left, par, w)
        fb = _lowest(q, smin, cand)
        if fb >= -LOCATED or ev == MAX_EVENTS:
            break
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
                # inside at every scale: the step is finished, the hit taken at the next
                _restore(q, u, H, cw)
                integrator3d.flow(mode, q, u, H, left, par, w)
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
