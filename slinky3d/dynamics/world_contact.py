"""Contact with the world: the half hoops against the floor, steps and table, with
Coulomb friction, in one complementarity solve with the coil contacts.

While any end point or bar is near the world, a Slinky is advanced by a
time-stepping scheme instead of step.py's event-driven one (docs/solver.md, "Contact
with the world"; the law is docs/model.md section 11):

* The free velocity: the joint springs and damping linearly implicit, as in a
  Rosenbrock stage with gamma = THETA,  v_f = v + h (M + T h C + T^2 h^2 K)^-1 F,
  with the springs at q + T h v (T = THETA); everything else explicit.
* One linear complementarity problem for the impulses at the end of the step, over
  every coil joint near theta_min (gap theta_j - theta_min) and every world contact
  (normal impulse, and the friction impulse in the plane as two one-sided
  directions with a sliding-speed slack: Stewart and Trinkle's form, exact in 2D):
      v+ = v_f + Mh^-1 G^T lam,   q+ = q + h v+,
      gap + h (G v+)_n >= 0  complementary to  lam_n >= 0,
      |lam_t| <= mu lam_n, lam_t opposing the sliding velocity (G v+)_t.
  Mh = M + T h C + T^2 h^2 K. It is solved with the closed coils locked
  (_locked_solve): the coils guessed closed are prescribed joints of one impulse-
  response factorisation (impulse_response.py), only the world contacts form a small
  LCP (Lemke's method, lemke.py), and the guess is checked against the whole problem
  and corrected; the whole LCP (_full_solve) is the fallback.
* A contact that reaches the surface stops there (zero restitution): its end-of-step
  gap is zero to first order. The bars turn during a step, so a point can end a little
  inside; it is held there, not pushed out (that would lift the Slinky: energy from
  nothing, which the divergence guard rightly rejects). Pieces are cut so that no joint
  turns more than MAX_TURN in one, which bounds it.

The impulses never add kinetic energy: with lam_n (G v+)_n =
-lam_n gap / h <= 0 and friction opposing the sliding, 1/2 v+^T Mh v+ <= 1/2 v_f^T Mh
v_f. Whatever energy a step gains from nothing (the explicit velocity terms) is
taken back (`_no_gain`), and what the step loses beyond the dampers' share
goes to the energy account's `impacts`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from slinky3d.dynamics.articulated_body import (
    JIT,
    energy_parts,
    kinematics,
    workspace,
)
from slinky3d.dynamics.forces import derivatives, set_base
from slinky3d.dynamics.impulse_response import factor, respond
from slinky3d.dynamics.lemke import lemke
from slinky3d.dynamics.step import step, step_start
from slinky3d.dynamics.workspace import (
    ForceWork,
    Work,
    first_joint,
    hard,
)
from slinky3d.dynamics.world_geometry import (
    MAX_CONTACTS,
    body_velocities,
    contact_point,
    contact_rates,
    corners_of,
    detect,
    near,
)
from slinky3d.model.chain import BASE, RESTING_RATE

THETA = 0.6  # implicitness of the springs and damping (1/2: none lost; 1: Euler)
STICKING = 1e-3  # m/s: slower than this a contact sticks (mu_static), else slides (mu)
REGULARIZE = 1e-9  # relative: added to the Delassus diagonal (redundant contacts)
H_WORLD = 2e-3  # s: the longest step of this scheme (its own error is first order)
MAX_TURN = 0.005  # rad: the most a joint turns in one piece (fast tumbles take shorter ones)
MAX_PIECES = 32
RETRIES = 1  # solves again, more regularised, when Lemke's answer fails the check
MAX_ROUNDS = 4  # solves with more coil rows, when an impulse closes a joint left out
MAX_LOCKED = 12  # active sets the locked solve tries before the full LCP takes over
TOUCH = 1e-6  # m: a contact this near (a point resting on the surface) is always solved
GAP_TOL = 1e-10  # m: how far a contact left out of the solve may close past its target

WORLD = np.dtype([
    ("floor", "f8"),  # m; -inf: none
    ("mu", "f8"),  # sliding friction
    ("mu_static", "f8"),  # sticking friction
], align=True)


class WorldWork(NamedTuple):
    """The world's geometry and the scratch arrays of the world step."""

    blocks: np.ndarray  # (nb, 3) x0, x1, top
    corners: np.ndarray  # (nc, 4) x, y and the outward bisector of each convex corner
    bar: np.ndarray  # (MAX_CONTACTS,) the bar a contact is on
    at: np.ndarray  # its place along the bar, 0 .. 1 from E_bar
    normal: np.ndarray  # (MAX_CONTACTS, 2) from the world to the Slinky
    gap: np.ndarray  # m
    mu: np.ndarray  # its friction coefficient this step
    rows: np.ndarray  # (nj,) the coil joints in the solve
    in_rows: np.ndarray  # (nj,) bool
    response: np.ndarray  # (NB, nj) Mh^-1 g_r for each basis row r
    delassus: np.ndarray  # (NB, NB)
    free_rate: np.ndarray  # (NB,) u_f of each basis row
    target: np.ndarray  # (NB,) the least u+ of each normal/coil row
    impulse: np.ndarray  # (NB,) lam of each basis row
    lcp: np.ndarray  # (NZ, NZ)
    lcp_rhs: np.ndarray  # (NZ,)
    lcp_z: np.ndarray
    tableau: np.ndarray  # (NZ + 1, NZ + 2)
    basis: np.ndarray  # (NZ,) int
    column: np.ndarray  # (2 NZ + 1,) int
    free_velocity: np.ndarray  # (nj,)
    body: np.ndarray  # (3, N) bar velocities (omega, v at O)
    nolock: np.ndarray  # (nj,) all False
    state: np.ndarray  # (5,) int: in the world scheme (0/1), contacts, coil rows, pivots,
    # and the pieces the full LCP solved (the locked solve found no active set)
    # the solve with closed coils locked (_locked_solve)
    active: np.ndarray  # (nj,) bool: the coils locked at their targets
    prescribed: np.ndarray  # (nj,) bool: those and the anchor's joints
    change: np.ndarray  # (nj,) the prescribed joints' velocity changes
    joint_impulse: np.ndarray  # (nj,) the impulse each prescribed joint takes
    loads: np.ndarray  # (N, 3) bar impulses (world, about O)
    factored: np.ndarray  # (NROW, nj) impulse_response.factor's rows
    group: np.ndarray  # (N,) int: the rigid part each bar belongs to, coils locked
    needed: np.ndarray  # (MAX_CONTACTS,) bool: a contact the solve may not leave out
    kept: np.ndarray  # (MAX_CONTACTS,) bool: in the solve


def new_world_work(n: int, blocks: np.ndarray) -> WorldWork:
    nj = n + BASE
    nb = nj + 2 * MAX_CONTACTS
    nz = nj + 4 * MAX_CONTACTS
    b = np.ascontiguousarray(np.asarray(blocks, float).reshape(-1, 3))
    return WorldWork(
        blocks=b, corners=corners_of(b), bar=np.zeros(MAX_CONTACTS, np.int64),
        at=np.zeros(MAX_CONTACTS), normal=np.zeros((MAX_CONTACTS, 2)),
        gap=np.zeros(MAX_CONTACTS), mu=np.zeros(MAX_CONTACTS),
        rows=np.zeros(nj, np.int64), in_rows=np.zeros(nj, np.bool_),
        response=np.zeros((nb, nj)), delassus=np.zeros((nb, nb)), free_rate=np.zeros(nb),
        target=np.zeros(nb), impulse=np.zeros(nb), lcp=np.zeros((nz, nz)),
        lcp_rhs=np.zeros(nz), lcp_z=np.zeros(nz), tableau=np.zeros((nz + 1, nz + 2)),
        basis=np.zeros(nz, np.int64), column=np.zeros(2 * nz + 1, np.int64),
        free_velocity=np.zeros(nj), body=np.zeros((3, n)),
        nolock=np.zeros(nj, np.bool_), state=np.zeros(5, np.int64),
        active=np.zeros(nj, np.bool_),
        prescribed=np.zeros(nj, np.bool_),
        change=np.zeros(nj), joint_impulse=np.zeros(nj), loads=np.zeros((n, 3)),
        factored=workspace(n), group=np.zeros(n, np.int64),
        needed=np.zeros(MAX_CONTACTS, np.bool_), kept=np.zeros(MAX_CONTACTS, np.bool_))


@njit(**JIT)
def _centre_x(q, R, E, U, ws):
    """x of the centre of mass (equal half hoops: the mean of the bar centres)."""
    kinematics(q, R, E, U, ws)
    n = U.shape[0]
    x = 0.0
    for k in range(n):
        x += E[k, 0] + R * U[k, 0]
    return x / n


@njit(**JIT)
def _centre_rate_x(q, R, E, U, body):
    """x' of the centre of mass from the bars' velocities (E, U at q)."""
    n = U.shape[0]
    v = 0.0
    for k in range(n):
        v += body[1, k] - body[0, k] * (E[k, 1] + R * U[k, 1])
    return v / n


@njit(**JIT)
def _factor_free(q, par, modes, fw, ww, armh):
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
           ww.factored)


@njit(**JIT)
def _response(r, nrow, zeros, par, fw, ww, out):
    """Mh^-1 g_r: the velocity change of a unit impulse along basis row r (a coil
    joint, or a contact's normal or tangent), from _factor_free's factorisation."""
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
def _basis_rates(nrow, m, v, q, R, E, U, ww, out):
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
def _solve(nrow, m, h, ww, cnt):
    """Build the LCP (z: coil impulses, then per contact lam_n, lam_+, lam_-, beta)
    from the basis Delassus matrix, solve it, and put the basis impulses in
    ww.impulse (lam_t = lam_+ - lam_-)."""
    nb = nrow + 2 * m
    nz = nrow + 4 * m
    W = ww.delassus
    A = ww.lcp
    bq = ww.lcp_rhs
    diag = 0.0
    for r in range(nb):
        diag = max(diag, W[r, r])
    eps = REGULARIZE * diag
    # z index of basis row r's impulse, and of the friction pair and slack
    for i in range(nz):
        for j in range(nz):
            A[i, j] = 0.0
    for i in range(nrow + m):
        ri = i if i < nrow else nrow + 2 * (i - nrow)  # coil row or contact normal
        zi = i if i < nrow else nrow + 4 * (i - nrow)
        for j in range(nrow + m):
            rj = j if j < nrow else nrow + 2 * (j - nrow)
            zj = j if j < nrow else nrow + 4 * (j - nrow)
            A[zi, zj] = W[ri, rj]
        for c in range(m):  # friction columns of this row
            t = nrow + 2 * c + 1
            zc = nrow + 4 * c
            A[zi, zc + 1] = W[ri, t]
            A[zi, zc + 2] = -W[ri, t]
        A[zi, zi] += eps
        bq[zi] = ww.free_rate[ri] - ww.target[ri]
    for c in range(m):
        t = nrow + 2 * c + 1
        zc = nrow + 4 * c
        for j in range(nrow + m):  # tangent rate's response to the normal-type impulses
            rj = j if j < nrow else nrow + 2 * (j - nrow)
            zj = j if j < nrow else nrow + 4 * (j - nrow)
            A[zc + 1, zj] = W[t, rj]
            A[zc + 2, zj] = -W[t, rj]
        for d in range(m):
            td = nrow + 2 * d + 1
            zd = nrow + 4 * d
            A[zc + 1, zd + 1] = W[t, td]
            A[zc + 1, zd + 2] = -W[t, td]
            A[zc + 2, zd + 1] = -W[t, td]
            A[zc + 2, zd + 2] = W[t, td]
        A[zc + 1, zc + 1] += eps
        A[zc + 2, zc + 2] += eps
        A[zc + 1, zc + 3] = 1.0
        A[zc + 2, zc + 3] = 1.0
        bq[zc + 1] = ww.free_rate[t]
        bq[zc + 2] = -ww.free_rate[t]
        A[zc + 3, zc] = ww.mu[c]
        A[zc + 3, zc + 1] = -1.0
        A[zc + 3, zc + 2] = -1.0
        bq[zc + 3] = 0.0
    z = ww.lcp_z
    pivots = -1
    for attempt in range(RETRIES + 1):
        if attempt > 0:  # a wrong answer (round-off on a near-singular matrix): again,
            for i in range(nz):  # regularised a thousand times more
                if i < nrow or (i - nrow) % 4 != 3:  # not the cone rows (no diagonal)
                    A[i, i] += 999.0 * eps
        pivots = lemke(A, bq, nz, z, ww.tableau, ww.basis, ww.column, 4 * nz + 20)
        # Lemke may end on a ray with z0 small but not zero where many contacts are
        # redundant (a locked stack on its tread: a rank-3 Delassus matrix); an answer
        # that solves the LCP is kept whatever the pivoting's own verdict
        if _solves(A, bq, z, nz):
            pivots = max(pivots, 0)
            break
        pivots = -1
    if pivots < 0:
        cnt.lcp_failures += 1
    ww.state[3] = pivots
    for r in range(nrow):
        ww.impulse[r] = z[r]
    for c in range(m):
        zc = nrow + 4 * c
        ww.impulse[nrow + 2 * c] = z[zc]
        ww.impulse[nrow + 2 * c + 1] = z[zc + 1] - z[zc + 2]


@njit(**JIT)
def _solves(A, b, z, n):
    """Whether z solves the LCP: w = A z + b >= 0 and w z = 0, to round-off."""
    scale = 0.0
    for i in range(n):
        scale = max(scale, abs(b[i]))
    tol = 1e-9 * (1.0 + scale)
    for i in range(n):
        w = b[i]
        for j in range(n):
            w += A[i, j] * z[j]
        if w < -tol or abs(w * z[i]) > tol * (1.0 + abs(z[i])):
            return False
    return True


@njit(**JIT)
def _swap(a, b, ww):
    """Exchange contacts a and b in the contact arrays."""
    if a == b:
        return
    ww.bar[a], ww.bar[b] = ww.bar[b], ww.bar[a]
    ww.at[a], ww.at[b] = ww.at[b], ww.at[a]
    ww.gap[a], ww.gap[b] = ww.gap[b], ww.gap[a]
    ww.mu[a], ww.mu[b] = ww.mu[b], ww.mu[a]
    ww.needed[a], ww.needed[b] = ww.needed[b], ww.needed[a]
    ww.kept[a], ww.kept[b] = ww.kept[b], ww.kept[a]
    for i in range(2):
        ww.normal[a, i], ww.normal[b, i] = ww.normal[b, i], ww.normal[a, i]


@njit(**JIT)
def _outermost(m, presc, R, E, U, ww):
    """Put first the contacts the solve needs; returns how many. Contacts on one rigid
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
    keep = 0
    for c in range(m):
        if ww.kept[c]:
            _swap(keep, c, ww)
            keep += 1
    return keep


@njit(**JIT)
def _locked_solve(q, vf, h, m, rigid, j0, par, modes, fw, ww, armh, zeros, vplus, cnt):
    """The step's impulses with the closed coils locked: returns whether it found them.

    Guess the coils that end the step closed (ww.active, set by the caller from the
    last piece), lock them at their targets (prescribed joints of one impulse-response
    factorisation), solve the small LCP of the world contacts alone on that chain, and
    read the coils' impulses off the prescribed joints. A locked coil pulling, or a
    free one closing past its bound, flips (block principal pivoting, then one at a
    time); an unchanged set is a solution of the whole LCP. Fills vplus, the world
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
    pivots = 0
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
        factor(q, presc, arm, par.mass, par.inertia, R, E, U, ws)
        cnt.evaluations += 1
        ms = _outermost(m, presc, R, E, U, ww)
        nb = 2 * ms
        for r in range(nb):  # a unit impulse along each contact's normal and tangent
            c = r // 2
            b, px, py = contact_point(c, R, E, U, ww)
            nx = ww.normal[c, 0]
            ny = ww.normal[c, 1]
            fx, fy = (nx, ny) if r % 2 == 0 else (ny, -nx)
            loads[b, 0] = px * fy - py * fx
            loads[b, 1] = fx
            loads[b, 2] = fy
            respond(zeros, presc, zeros, loads, ws, ww.response[r], lam)
            loads[b, 0] = 0.0
            loads[b, 1] = 0.0
            loads[b, 2] = 0.0
            cnt.evaluations += 1
        for r in range(nb):
            _basis_rates(0, ms, ww.response[r], q, R, E, U, ww, ww.delassus[r])
        for r in range(nb):
            for s in range(r):
                a = 0.5 * (ww.delassus[r, s] + ww.delassus[s, r])
                ww.delassus[r, s] = a
                ww.delassus[s, r] = a
        # the motion with the locked coils at their targets and no world impulse
        respond(zeros, presc, dvp, loads, ws, vplus, lam)
        cnt.evaluations += 1
        for j in range(nj):
            vplus[j] += vf[j]
        _basis_rates(0, ms, vplus, q, R, E, U, ww, ww.free_rate)
        for c in range(ms):
            ww.target[2 * c] = -max(ww.gap[c], 0.0) / h
            ww.target[2 * c + 1] = 0.0
        _solve(0, ms, h, ww, cnt)
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
        if not rigid:
            if nv == 0:
                ww.state[3] = pivots
                return True
            continue
        lmax = 0.0
        for j in range(j0, nj):
            if act[j]:
                lmax = max(lmax, abs(lam[j]))
        closing = 0
        worst = -1  # the locked coil pulling hardest
        for j in range(j0, nj):
            if act[j]:
                if lam[j] < -1e-9 * lmax and (worst < 0 or lam[j] < lam[worst]):
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
        # hardest. (Flipping the pulling ones all at once too cycled: freed together,
        # they closed together.)
        if closing > 0:
            for j in range(j0, nj):
                if not act[j] and ww.in_rows[j]:
                    act[j] = True
        elif worst >= 0:
            act[worst] = False
    ww.state[3] = pivots
    return False


@njit(**JIT)
def _full_solve(q, vf, h, m, rigid, j0, par, modes, fw, w, ww, armh, cnt):
    """The step's impulses from one LCP over every coil row near its bound and every
    world contact, on the Delassus matrix of one articulated-body solve per row: what
    _locked_solve falls back to. Returns the coil rows and the kinetic energy the
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
        _factor_free(q, par, modes, fw, ww, armh)
        for j in range(nj):
            fw.applied[j] = 0.0
        for r in range(nb):
            _response(r, nrow, w.zeros, par, fw, ww, ww.response[r])
            cnt.evaluations += 1
        for r in range(nb):
            _basis_rates(nrow, m, ww.response[r], q, R, E, U, ww, ww.delassus[r])
        # the Delassus matrix is symmetric; its rows were filled column by column
        for r in range(nb):
            for s in range(r):
                a = 0.5 * (ww.delassus[r, s] + ww.delassus[s, r])
                ww.delassus[r, s] = a
                ww.delassus[s, r] = a
        _basis_rates(nrow, m, vf, q, R, E, U, ww, ww.free_rate)
        for r in range(nrow):
            ww.target[r] = -max(q[ww.rows[r]] - tmin, 0.0) / h
        for c in range(m):
            ww.target[nrow + 2 * c] = -max(ww.gap[c], 0.0) / h
            ww.target[nrow + 2 * c + 1] = 0.0
        _solve(nrow, m, h, ww, cnt)
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


@njit(**JIT)
def world_step(q, qd, sd, t, h, locked, target, par, modes, wpar, w, ww, cnt):
    """Advance one step of h by the time-stepping scheme of this module's docstring."""
    fw = w.forces
    nj = q.shape[0]
    n = nj - BASE
    R = par.radius
    tmin = par.theta_min
    j0 = first_joint(modes)
    sm = w.small[0]
    cd = par.damping
    # Nothing from outside does work but the grab (no moving hand, no script): then
    # the step may not end with more energy than it began with plus the grab's work
    # (_no_gain)
    closed = modes.anchor_free != 0 or (par.hand == 0.0 and par.drive_frequency <= 0.0)
    e_start = 0.0
    if closed:
        e_start = _mechanical(q, qd, par, j0, fw)
    kp = modes.grab_point
    gx = 0.0  # the grabbed point at the start
    gy = 0.0
    if modes.grab != 0:
        kinematics(q, R, fw.ends, fw.bar_axes, fw.aba_rows)
        gx = fw.ends[kp, 0]
        gy = fw.ends[kp, 1]
    armh = THETA * h * cd + THETA * THETA * h * h * par.stiffness
    qx = w.spring_offset
    for j in range(nj):
        qx[j] = THETA * h * qd[j]
    derivatives(q, qd, sd, t, ww.nolock, target, par, modes, fw, w.qdd, sm.damper_rate, qd,
                qx, armh)
    cnt.evaluations += 1
    vf = ww.free_velocity
    for j in range(nj):
        vf[j] = qd[j] + h * w.qdd[j]
    sd[0] += h * sm.damper_rate[0]
    sd[1] += h * sm.damper_rate[1]
    gfx = 0.0  # the grab's force, constant over the step
    gfy = 0.0
    if modes.grab != 0:
        b = kp if kp < n else n - 1
        gfx = fw.bar_force[b, 1]
        gfy = fw.bar_force[b, 2]
    if fw.drive[0].force_applied != 0:  # the responses below need no grab force
        for i in range(n):
            fw.bar_force[i, 0] = 0.0
            fw.bar_force[i, 1] = 0.0
            fw.bar_force[i, 2] = 0.0
        fw.drive[0].force_applied = 0
    E = fw.ends
    U = fw.bar_axes
    kinematics(q, R, E, U, fw.aba_rows)
    m = detect(q, vf, h, par, wpar, ww, E, U)
    body_velocities(q, qd, E, ww.body)
    for c in range(m):  # static friction for contacts at rest, sliding otherwise
        _, ut = contact_rates(c, R, E, U, ww.body, ww)
        ww.mu[c] = wpar.mu_static if abs(ut) < STICKING else wpar.mu
    rigid = hard(modes.law)
    vplus = w.velocity_after
    # the coils locked first: those touching at the last piece's end (or, entering the
    # scheme, the event-driven step's locked ones), and those closing now
    for j in range(nj):
        ww.active[j] = rigid and j >= j0 and (locked[j] or q[j] + h * vf[j] < tmin)
    if _locked_solve(q, vf, h, m, rigid, j0, par, modes, fw, ww, armh, w.zeros, vplus, cnt):
        off = 0  # the world impulses' place in ww.impulse
        nrow = 0
        loss = 0.0  # the kinetic energy the impulses took: -1/2 sum lam (u_f + u+)
        for j in range(j0, nj):
            if ww.active[j]:
                nrow += 1
                loss -= 0.5 * ww.joint_impulse[j] * (vf[j] + vplus[j])
        _basis_rates(0, m, vf, q, R, E, U, ww, ww.free_rate)
        _basis_rates(0, m, vplus, q, R, E, U, ww, ww.target)  # (the targets are spent)
        for r in range(2 * m):
            loss -= 0.5 * ww.impulse[r] * (ww.free_rate[r] + ww.target[r])
    else:
        ww.state[4] += 1
        nrow, loss = _full_solve(q, vf, h, m, rigid, j0, par, modes, fw, w, ww, armh, cnt)
        off = nrow
    diss = 0.0
    for j in range(BASE, nj):
        vm = THETA * vplus[j] + (1.0 - THETA) * qd[j]
        diss += vm * vm
    diss *= h * cd
    # the centre of mass's x' from the momentum: before the step, plus the contacts'
    # horizontal impulse (the joint rates at q + h v+ give it only to first order)
    xc = _centre_x(q, R, E, U, fw.aba_rows)
    body_velocities(q, qd, E, ww.body)
    vc = _centre_rate_x(q, R, E, U, ww.body)
    for c in range(m):
        nx = ww.normal[c, 0]
        ny = ww.normal[c, 1]
        vc += (ww.impulse[off + 2 * c] * nx + ww.impulse[off + 2 * c + 1] * ny) / (
            n * par.mass)
    for j in range(nj):
        qd[j] = vplus[j]
        q[j] += h * vplus[j]
    level = True  # every contact that pushes pushes straight up, without friction
    for c in range(m):
        lam = ww.impulse[off + 2 * c]
        if lam > 0.0 and (ww.normal[c, 0] != 0.0
                          or abs(ww.impulse[off + 2 * c + 1]) > 1e-9 * lam):
            level = False
    if modes.anchor_free != 0 and modes.grab == 0 and level:
        # With no horizontal force, the centre moves as the momentum says: a rigid shift
        # and a uniform drift put it there (second-order terms of q + h v+ and of the
        # rates at the new q otherwise move it). Not against a riser, an edge or
        # friction: a shift would push a held point into the face.
        # The drift changes the kinetic energy by M d (x_c' + d / 2): it is left out
        # where that is a gain (contacts never add energy).
        q[0] += xc + h * vc - _centre_x(q, R, E, U, fw.aba_rows)
        body_velocities(q, qd, E, ww.body)
        now = _centre_rate_x(q, R, E, U, ww.body)
        drift = vc - now
        if drift * (now + 0.5 * drift) <= 0.0:
            qd[0] += drift
    set_base(q, qd, t + h, par, modes, fw)
    if closed:
        work = 0.0
        if modes.grab != 0:
            kinematics(q, R, E, U, fw.aba_rows)
            work = gfx * (E[kp, 0] - gx) + gfy * (E[kp, 1] - gy)
        _no_gain(q, qd, e_start + work, par, modes, j0, fw, ww)
        # the energy account: what the step lost beyond the dampers' share is the
        # contacts' (and this first-order scheme's own); booking -1/2 lam (u_f + u+)
        # would count gravity's g h, taken back each step from a resting contact, as
        # lost energy that was never gained
        lost = e_start + work - _mechanical(q, qd, par, j0, fw)
        damp = min(diss, max(lost, 0.0))
        sm.damping_loss += damp
        sm.impact_loss += lost - damp
    else:  # a moving hand or script works on it: the impulses' loss as computed
        sm.damping_loss += diss
        sm.impact_loss += loss
    for j in range(nj):
        locked[j] = False
    if rigid:  # the touching coils, for the snapshots' count (no lock in this scheme)
        for j in range(j0, nj):
            if abs(q[j] - tmin) < 1e-12:
                q[j] = tmin
            locked[j] = q[j] <= tmin
    ww.state[1] = m
    ww.state[2] = nrow
    sm.dynamics_current = 0
    return t + h


@njit(**JIT)
def _mechanical(q, qd, par, j0, fw):
    T, Vg, Vs = energy_parts(q, qd, par.mass, par.inertia, par.radius, par.gravity,
                             par.stiffness, j0, fw.ends, fw.bar_axes, fw.aba_rows)
    return T + (Vg + Vs)


@njit(**JIT)
def _no_gain(q, qd, e_start, par, modes, j0, fw, ww):
    """Take back energy the step gained from nothing. The scheme treats the velocity
    terms (a tumbling bar's turning) explicitly, and explicit Euler gains energy on a
    rotation, ~(omega h)^2 of it a step: a flung Slinky crashing onto the floor gained
    0.04 J in a step. The excess goes from the motion relative to the centre of mass
    (a free Slinky's momentum is kept), by scaling those rates down."""
    T, Vg, Vs = energy_parts(q, qd, par.mass, par.inertia, par.radius, par.gravity,
                             par.stiffness, j0, fw.ends, fw.bar_axes, fw.aba_rows)
    gain = T + (Vg + Vs) - e_start
    if gain <= 0.0:
        return
    n = q.shape[0] - BASE
    vx = 0.0
    vy = 0.0
    if modes.anchor_free != 0:  # the centre's velocity, carried by the base's x', y'
        body_velocities(q, qd, fw.ends, ww.body)
        E = fw.ends
        U = fw.bar_axes
        R = par.radius
        for k in range(n):
            cx = E[k, 0] + R * U[k, 0]
            cy = E[k, 1] + R * U[k, 1]
            vx += ww.body[1, k] - ww.body[0, k] * cy
            vy += ww.body[2, k] + ww.body[0, k] * cx
        vx /= n
        vy /= n
    t_centre = 0.5 * n * par.mass * (vx * vx + vy * vy)
    t_rel = T - t_centre  # Koenig: the rest is relative to the centre
    if t_rel <= 0.0:
        return
    s = math.sqrt(max(t_rel - gain, 0.0) / t_rel)
    qd[0] = vx + s * (qd[0] - vx)
    qd[1] = vy + s * (qd[1] - vy)
    for j in range(2, q.shape[0]):
        qd[j] *= s


@njit(**JIT)
def _hand_over(q, qd, locked, par, modes, w):
    """Back to the event-driven step: touching coils at rest become locked contacts
    exactly at theta_min (resting contact), the others are free."""
    tmin = par.theta_min
    for j in range(first_joint(modes), q.shape[0]):
        touching = q[j] <= tmin
        if touching:
            q[j] = tmin  # the event-driven step starts from the bound, never below it
        locked[j] = touching and abs(qd[j]) <= 1e3 * RESTING_RATE
        if locked[j]:
            qd[j] = 0.0
    w.small[0].dynamics_current = 0


@njit(**JIT)
def run_world(q, qd, sd, t, h, nsteps, locked, target, parameters, modes, work, counters,
              world, world_work):
    """`step.run` with a world to touch: each step of h is the event-driven step, or,
    near the world, pieces of at most H_WORLD of the world step (also as many as a
    grab's or the soft law's sub-steps). Returns the final time."""
    par = parameters[0]
    md = modes[0]
    cnt = counters[0]
    wpar = world[0]
    w = Work(ForceWork(*work[0]), *work[1:])
    ww = WorldWork(*world_work)
    fw = w.forces
    t0 = t
    for i in range(nsteps):
        t = step_start(t0, h, i, t)
        kinematics(q, par.radius, fw.ends, fw.bar_axes, fw.aba_rows)
        if near(q, qd, h, par, wpar, ww, fw.ends, fw.bar_axes):
            rate = 0.0
            for j in range(BASE, q.shape[0]):
                rate = max(rate, abs(qd[j]))
            pieces = max(md.substeps, int(math.ceil(h / H_WORLD - 1e-9)),
                         min(MAX_PIECES, int(math.ceil(rate * h / MAX_TURN - 1e-9))))
            hs = h / pieces
            for _piece in range(pieces):
                t = world_step(q, qd, sd, t, hs, locked, target, par, md, wpar, w, ww, cnt)
            ww.state[0] = 1
        else:
            if ww.state[0] == 1:
                _hand_over(q, qd, locked, par, md, w)
                ww.state[0] = 0
            t = step(q, qd, sd, t, h, locked, target, par, md, w, cnt)
    return t
