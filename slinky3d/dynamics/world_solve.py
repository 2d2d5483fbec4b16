"""The impulses of one piece of the world step (world_contact.py): the LCP over the
coil joints and the world contacts, solved with the closed coils locked (locked_solve:
prescribed joints of one impulse-response factorisation, only the world contacts in a
small LCP, its Delassus matrix from one sweep of that factorisation, those sliding
fast guessed to slide on, the guesses checked against the whole problem and
corrected), and
the whole LCP (full_solve) as its fallback (docs/solver.md, "The contact solve: closed
coils locked")."""

from __future__ import annotations

import math

from numba import njit

from slinky3d.dynamics.articulated_body import JIT
from slinky3d.dynamics.friction_lcp import solve
from slinky3d.dynamics.impulse_response import delassus, factor, respond
from slinky3d.dynamics.world_geometry import body_velocities, contact_point, contact_rates
from slinky3d.model.chain import BASE

MAX_ROUNDS = 4  # solves with more coil rows, when an impulse closes a joint left out
MAX_LOCKED = 24  # active sets the locked solve tries before the full LCP takes over
SINGLE_ROUNDS = 4  # rounds that free one pulling coil each, before all are freed at once
PULLING_MANY = 16  # coils pulling at once that are freed together (after SINGLE_ROUNDS)
FREED_TOGETHER, FREED_ALONE = 1, 2  # how locked_solve freed a coil (ww.freed; 0: not)
KEEP_NONE, KEEP_ADDED, KEEP_FREED = 0, 1, 2  # what a round of locked_solve carries over
TOUCH = 1e-6  # m: a contact this near (a point resting on the surface) is always solved
GAP_TOL = 1e-10  # m: how far a contact left out of the solve may close past its target
STUCK_MANY = 16  # contacts in the small LCP from which one at rest is not guessed sliding
SLIDE_GUESS = 1e-3  # m/s: a contact sliding faster than this with no world impulse is
# guessed to slide on, its friction at the cone's edge (friction_lcp.solve checks the guess)


@njit(**JIT)
def _slide_guess(ut, was, many):
    """A contact's sliding guess: the sign of its tangential rate ut in the motion
    without world impulses where that is faster than SLIDE_GUESS; else 0, no guess.
    Among many contacts (STUCK_MANY or more in the solve), only where the contact
    already slid that way at the step's start (was): a contact at rest there mostly
    stays stuck (the far end of a Slinky lying along the floor, pushed), and a wrong
    guess costs another solve of a large LCP."""
    if abs(ut) < SLIDE_GUESS or (many and ut * was <= 0.0):
        return 0.0
    return math.copysign(1.0, ut)


@njit(**JIT)
def factor_free(q, par, modes, fw, ww, armh):
    """impulse_response.factor with only the anchor's joints prescribed (as the step
    has them): what _response needs."""
    nj = q.shape[0]
    presc = ww.prescribed
    arm = fw.armature
    for j in range(nj):
        presc[j] = False
        arm[j] = armh if j >= BASE else 0.0
    if modes.anchor_free != 0:
        presc[BASE] = True
    else:
        for j in range(BASE):
            presc[j] = True
    factor(q, presc, arm, par.mass, par.inertia, par.radius, fw.ends, fw.bar_axes,
           ww.factored, ww.point)


@njit(**JIT)
def _response(r, nrow, zeros, par, fw, ww, out):
    """Mh^-1 g_r: the velocity change of a unit impulse along basis row r (a coil
    joint, or a contact's normal or tangent), from factor_free's factorisation."""
    tau = fw.applied
    fext = ww.loads
    b = -1
    if r < nrow:
        tau[ww.rows[r]] = 1.0
    else:
        c = (r - nrow) // 2
        b, px, py = contact_point(c, par.radius, fw.ends, fw.bar_axes, ww)
        nx = ww.normal[c, 0]
        ny = ww.normal[c, 1]
        if (r - nrow) % 2 == 0:
            fx, fy = nx, ny
        else:
            fx, fy = ny, -nx
        fext[b, 0] = px * fy - py * fx
        fext[b, 1] = fx
        fext[b, 2] = fy
    respond(tau, ww.prescribed, zeros, fext, ww.factored, out, ww.joint_impulse)
    if b >= 0:
        fext[b, 0] = 0.0
        fext[b, 1] = 0.0
        fext[b, 2] = 0.0
    else:
        tau[ww.rows[r]] = 0.0


@njit(**JIT)
def basis_rates(nrow, m, v, q, R, E, U, ww, out):
    """G v: each basis row's rate for joint rates v (coil rows, then per contact its
    normal and tangent)."""
    for r in range(nrow):
        out[r] = v[ww.rows[r]]
    if m > 0:
        body_velocities(q, v, E, ww.body)
        for c in range(m):
            un, ut = contact_rates(c, R, E, U, ww.body, ww)
            out[nrow + 2 * c] = un
            out[nrow + 2 * c + 1] = ut


@njit(**JIT)
def _swap(a, b, ww):
    """Exchange contacts a and b in the contact arrays."""
    if a == b:
        return
    ww.bar[a], ww.bar[b] = ww.bar[b], ww.bar[a]
    ww.at[a], ww.at[b] = ww.at[b], ww.at[a]
    ww.gap[a], ww.gap[b] = ww.gap[b], ww.gap[a]
    ww.mu[a], ww.mu[b] = ww.mu[b], ww.mu[a]
    ww.was[a], ww.was[b] = ww.was[b], ww.was[a]
    ww.needed[a], ww.needed[b] = ww.needed[b], ww.needed[a]
    ww.kept[a], ww.kept[b] = ww.kept[b], ww.kept[a]
    for i in range(2):
        ww.normal[a, i], ww.normal[b, i] = ww.normal[b, i], ww.normal[a, i]


@njit(**JIT)
def _outermost(m, presc, R, E, U, ww, stay):
    """Put first the contacts the solve needs; returns how many, and whether the first
    `stay` contacts are among them and kept their places. Contacts on one rigid
    part (bars joined by prescribed joints) with one normal act on it only through the
    two outermost along their tangent: the normal impulses of the others add no wrench
    those two cannot give, and their friction acts along the same line. The others
    are left out with zero impulse, which solves their rows of the whole LCP as long as
    they do not close (checked after the solve: ww.needed)."""
    n = ww.group.shape[0]
    g = 0
    for k in range(n):
        if k > 0 and not presc[BASE + k]:
            g += 1
        ww.group[k] = g
    for c in range(m):  # kept unless two others of its set lie outside it
        ww.kept[c] = True
        if ww.needed[c]:
            continue
        _, px, py = contact_point(c, R, E, U, ww)
        nx = ww.normal[c, 0]
        ny = ww.normal[c, 1]
        sc = px * ny - py * nx
        below = False
        above = False
        for d in range(m):
            if d == c or ww.group[ww.bar[d]] != ww.group[ww.bar[c]]:
                continue
            if abs(ww.normal[d, 0] - nx) + abs(ww.normal[d, 1] - ny) > 1e-12:
                continue
            _, qx, qy = contact_point(d, R, E, U, ww)
            sd = qx * ny - qy * nx
            # ties broken by index, so that one of equal outermost contacts is kept
            if sd < sc or (sd == sc and d < c):
                below = True
            if sd > sc or (sd == sc and d > c):
                above = True
        ww.kept[c] = not (below and above)
    same = True
    for c in range(min(stay, m)):
        same = same and ww.kept[c]
    keep = 0
    for c in range(m):
        if ww.kept[c]:
            _swap(keep, c, ww)
            keep += 1
    return keep, same


@njit(**JIT)
def _delassus(ms, R, E, U, presc, ws, ww, cnt):
    """The first ms contacts' Delassus matrix on the locked chain (ww.delassus[:2ms,
    :2ms], row r: the basis rates of a unit impulse along direction r: contact c's
    normal 2c and tangent 2c + 1) from the factorisation, in one sweep along the chain
    (impulse_response.delassus) instead of one response per direction."""
    nb = 2 * ms
    G = ww.wrench
    order = ww.order
    rb = ww.row_bar
    for c in range(ms):
        b, px, py = contact_point(c, R, E, U, ww)
        nx = ww.normal[c, 0]
        ny = ww.normal[c, 1]
        for r in range(2 * c, 2 * c + 2):
            fx, fy = (nx, ny) if r % 2 == 0 else (ny, -nx)
            G[r, 0] = px * fy - py * fx
            G[r, 1] = fx
            G[r, 2] = fy
            rb[r] = b
    for r in range(nb):  # the rows by bar (insertion: stable, and nearly sorted already)
        i = r
        while i > 0 and rb[order[i - 1]] > rb[r]:
            order[i] = order[i - 1]
            i -= 1
        order[i] = r
    delassus(nb, order, rb, G, presc, ws, ww.sweep, ww.delassus)
    cnt.evaluations += 1


@njit(**JIT)
def locked_solve(q, vf, h, m, rigid, j0, par, modes, fw, ww, armh, zeros, vplus, cnt):
    """The step's impulses with the closed coils locked: returns whether it found them.

    Guess the coils that end the step closed (ww.active, set by the caller from the
    last piece), lock them at their targets (prescribed joints of one impulse-response
    factorisation), solve the small LCP of the world contacts alone on that chain, and
    read the coils' impulses off the prescribed joints. A coil closing past its bound
    is locked, a locked one pulling freed (the hardest one a round; after a few
    rounds all at once, until that cycles); an unchanged set is a solution of the
    whole LCP. Fills vplus, the world
    impulses (ww.impulse[2c], [2c + 1]) and the coils' (ww.joint_impulse)."""
    nj = q.shape[0]
    tmin = par.theta_min
    R = par.radius
    E = fw.ends
    U = fw.bar_axes
    ws = ww.factored
    act = ww.active
    presc = ww.prescribed
    dvp = ww.change
    lam = ww.joint_impulse
    loads = ww.loads
    arm = fw.armature
    for j in range(nj):
        arm[j] = armh if j >= BASE else 0.0
    for c in range(m):  # kept whatever their place: the points on the surface
        ww.needed[c] = ww.gap[c] <= TOUCH
    for j in range(nj):
        ww.freed[j] = 0
    cycled = False  # a coil freed with others closed again
    pivots = 0
    # what the last round carries over: KEEP_NONE, KEEP_ADDED (the same locked coils,
    # contacts added: its factorisation, and its contacts' sliding guesses) or
    # KEEP_FREED (a coil freed alone: its contacts' guesses), and its contact count
    keep = KEEP_NONE
    old = 0
    for _round in range(MAX_LOCKED):
        for j in range(nj):
            presc[j] = act[j]
            dvp[j] = 0.0
            if act[j]:
                dvp[j] = -max(q[j] - tmin, 0.0) / h - vf[j]
        if modes.anchor_free != 0:
            presc[BASE] = True
        else:
            for j in range(BASE):
                presc[j] = True
        if keep != KEEP_ADDED:
            factor(q, presc, arm, par.mass, par.inertia, R, E, U, ws, ww.point)
            cnt.evaluations += 1
        ms, same = _outermost(m, presc, R, E, U, ww, old)
        if keep == KEEP_ADDED and not same:  # (cannot happen: needed contacts only grow)
            factor(q, presc, arm, par.mass, par.inertia, R, E, U, ws, ww.point)
            cnt.evaluations += 1
        if not same:
            keep = KEEP_NONE
        # the motion with the locked coils at their targets and no world impulse
        respond(zeros, presc, dvp, loads, ws, vplus, lam)
        cnt.evaluations += 1
        for j in range(nj):
            vplus[j] += vf[j]
        basis_rates(0, ms, vplus, q, R, E, U, ww, ww.free_rate)
        for c in range(ms):
            ww.target[2 * c] = -max(ww.gap[c], 0.0) / h
            ww.target[2 * c + 1] = 0.0
            if keep != KEEP_NONE:  # the contacts kept keep their guesses (solve checks
                if c >= old:  # them); the contacts added come in plain
                    ww.slide[c] = 0.0
                continue
            ww.slide[c] = _slide_guess(ww.free_rate[2 * c + 1], ww.was[c], ms >= STUCK_MANY)
        _delassus(ms, R, E, U, presc, ws, ww, cnt)
        for _guess in range(ms + 1):  # each retry drops a guess at least
            if solve(0, ms, h, ww, cnt):
                break
            pivots += max(ww.state[3], 0)
        for r in range(2 * ms, 2 * m):
            ww.impulse[r] = 0.0
        pivots += ww.state[3]
        for c in range(ms):  # the world impulses on their bars, with the locked coils
            b, px, py = contact_point(c, R, E, U, ww)
            nx = ww.normal[c, 0]
            ny = ww.normal[c, 1]
            ln = ww.impulse[2 * c]
            lt = ww.impulse[2 * c + 1]
            fx = ln * nx + lt * ny
            fy = ln * ny - lt * nx
            loads[b, 0] += px * fy - py * fx
            loads[b, 1] += fx
            loads[b, 2] += fy
        respond(zeros, presc, dvp, loads, ws, vplus, lam)
        cnt.evaluations += 1
        for c in range(ms):
            b = ww.bar[c]
            loads[b, 0] = 0.0
            loads[b, 1] = 0.0
            loads[b, 2] = 0.0
        for j in range(nj):
            vplus[j] += vf[j]
        nv = 0
        if ms < m:  # the contacts left out may not close
            body_velocities(q, vplus, E, ww.body)
            for c in range(ms, m):
                un, _ = contact_rates(c, R, E, U, ww.body, ww)
                if un < -max(ww.gap[c], 0.0) / h - GAP_TOL / h:
                    ww.needed[c] = True
                    nv += 1
        keep = KEEP_NONE
        old = ms
        if not rigid:
            if nv == 0:
                ww.state[3] = pivots
                return True
            keep = KEEP_ADDED
            continue
        lmax = 0.0
        for j in range(j0, nj):
            if act[j]:
                lmax = max(lmax, abs(lam[j]))
        closing = 0
        pulling = 0
        worst = -1  # the locked coil pulling hardest
        for j in range(j0, nj):
            if act[j]:
                if lam[j] < -1e-9 * lmax:
                    pulling += 1
                    if worst < 0 or lam[j] < lam[worst]:
                        worst = j
            elif vplus[j] < -max(q[j] - tmin, 0.0) / h - 1e-12 / h:
                ww.in_rows[j] = True  # to lock
                closing += 1
            else:
                ww.in_rows[j] = False
        if nv == 0 and closing == 0 and worst < 0:
            ww.state[3] = pivots
            return True
        # Lock every coil closing past its bound at once; else free the one pulling
        # hardest, or, after SINGLE_ROUNDS rounds, every coil pulling at once until one
        # freed so closes again. (Freed together, a dozen degenerate coils can close
        # together, and locked together pull: a cycle. A stack dragged by its end has
        # fifty coils pulling at once: one a round does not end.) A coil freed alone
        # that pulls again after closing again is a cycle of its own: the whole LCP.
        if closing > 0:
            for j in range(j0, nj):
                if not act[j] and ww.in_rows[j]:
                    act[j] = True
                    cycled = cycled or ww.freed[j] == FREED_TOGETHER
        elif worst < 0:  # only contacts left out closed: solve again with them
            keep = KEEP_ADDED
            continue
        elif _round + 1 < SINGLE_ROUNDS or cycled or pulling < PULLING_MANY:
            if ww.freed[worst] == FREED_ALONE:
                break
            act[worst] = False
            ww.freed[worst] = FREED_ALONE
            keep = KEEP_FREED
        else:
            for j in range(j0, nj):
                if act[j] and lam[j] < -1e-9 * lmax:
                    act[j] = False
                    ww.freed[j] = FREED_TOGETHER
    ww.state[3] = pivots
    return False


@njit(**JIT)
def full_solve(q, vf, h, m, rigid, j0, par, modes, fw, w, ww, armh, cnt):
    """The step's impulses from one LCP over every coil row near its bound and every
    world contact, on the Delassus matrix of one articulated-body solve per row: what
    locked_solve falls back to. Returns the coil rows and the kinetic energy the
    impulses took; fills w.velocity_after and ww.impulse (coil rows, then per contact
    its normal and tangent)."""
    nj = q.shape[0]
    tmin = par.theta_min
    R = par.radius
    E = fw.ends
    U = fw.bar_axes
    vplus = w.velocity_after
    nrow = 0
    for j in range(nj):
        ww.in_rows[j] = False
    if rigid:
        for j in range(j0, nj):
            if q[j] - tmin + h * min(vf[j], 0.0) <= 1e-12:
                ww.rows[nrow] = j
                ww.in_rows[j] = True
                nrow += 1
    for _round in range(MAX_ROUNDS):
        nb = nrow + 2 * m
        factor_free(q, par, modes, fw, ww, armh)
        for j in range(nj):
            fw.applied[j] = 0.0
        for r in range(nb):
            _response(r, nrow, w.zeros, par, fw, ww, ww.response[r])
            cnt.evaluations += 1
        for r in range(nb):
            basis_rates(nrow, m, ww.response[r], q, R, E, U, ww, ww.delassus[r])
        # the Delassus matrix is symmetric; its rows were filled column by column
        for r in range(nb):
            for s in range(r):
                a = 0.5 * (ww.delassus[r, s] + ww.delassus[s, r])
                ww.delassus[r, s] = a
                ww.delassus[s, r] = a
        basis_rates(nrow, m, vf, q, R, E, U, ww, ww.free_rate)
        for c in range(m):  # sliding fast: guessed to go on sliding, as in locked_solve
            ww.slide[c] = _slide_guess(ww.free_rate[nrow + 2 * c + 1], 0.0, False)
        for r in range(nrow):
            ww.target[r] = -max(q[ww.rows[r]] - tmin, 0.0) / h
        for c in range(m):
            ww.target[nrow + 2 * c] = -max(ww.gap[c], 0.0) / h
            ww.target[nrow + 2 * c + 1] = 0.0
        for _guess in range(m + 1):  # each retry drops a guess at least
            if solve(nrow, m, h, ww, cnt):
                break
        for j in range(nj):
            vplus[j] = vf[j]
        for r in range(nb):
            lam = ww.impulse[r]
            if lam != 0.0:
                resp = ww.response[r]
                for j in range(nj):
                    vplus[j] += lam * resp[j]
        grown = False
        if rigid:
            for j in range(j0, nj):
                if not ww.in_rows[j] and q[j] + h * vplus[j] < tmin - 1e-12:
                    ww.rows[nrow] = j
                    ww.in_rows[j] = True
                    nrow += 1
                    grown = True
        if not grown:
            break
    # the kinetic energy the impulses took: -1/2 sum lam (u_f + u+)
    nb = nrow + 2 * m
    loss = 0.0
    for r in range(nb):
        lam = ww.impulse[r]
        if lam != 0.0:
            up = ww.free_rate[r]
            for s in range(nb):
                up += ww.delassus[r, s] * ww.impulse[s]
            loss -= 0.5 * lam * (ww.free_rate[r] + up)
    return nrow, loss
