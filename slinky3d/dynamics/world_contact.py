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
  (world_solve.py): the coils guessed closed are prescribed joints of one impulse-
  response factorisation (impulse_response.py), only the world contacts form a small
  LCP (Lemke's method, lemke.py), and the guess is checked against the whole problem
  and corrected; the whole LCP is the fallback.
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
from slinky3d.dynamics.friction_lcp import LAST_VALID
from slinky3d.dynamics.impulse_response import respond
from slinky3d.dynamics.step import step, step_start
from slinky3d.dynamics.workspace import (
    LAW_SOFT,
    ForceWork,
    Work,
    first_joint,
    hard,
)
from slinky3d.dynamics.world_geometry import (
    MAX_CONTACTS,
    body_velocities,
    contact_rates,
    corners_of,
    detect,
    near,
)
from slinky3d.dynamics.world_solve import basis_rates, factor_free, full_solve, locked_solve
from slinky3d.model.chain import BASE, RESTING_RATE

THETA = 0.6  # implicitness of the springs and damping (1/2: none lost; 1: Euler)
STICKING = 1e-3  # m/s: slower than this a contact sticks (mu_static), else slides (mu)
H_WORLD = 2e-3  # s: the longest step of this scheme (its own error is first order)
MAX_TURN = 0.005  # rad: the most a joint turns in one piece (fast tumbles take shorter ones)
MAX_PIECES = 32

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
    was: np.ndarray  # the sign of its sliding at the step's start; 0: at rest (sticking)
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
    point: np.ndarray  # (4,) the implicit grab's point mass: bar (-1: none), mass, x, y
    state: np.ndarray  # (8,) int: in the world scheme (0/1), contacts, coil rows, pivots,
    # the pieces the full LCP solved (the locked solve found no active set), whether
    # the last answer of the small LCP is this step's (0/1; friction_lcp.LAST_VALID),
    # and the small LCP's answers found on its basis and by Lemke's method
    # the solve with closed coils locked (locked_solve)
    active: np.ndarray  # (nj,) bool: the coils locked at their targets
    freed: np.ndarray  # (nj,) int: how a coil was freed in this piece's rounds (FREED_*)
    prescribed: np.ndarray  # (nj,) bool: those and the anchor's joints
    change: np.ndarray  # (nj,) the prescribed joints' velocity changes
    joint_impulse: np.ndarray  # (nj,) the impulse each prescribed joint takes
    loads: np.ndarray  # (N, 3) bar impulses (world, about O)
    factored: np.ndarray  # (NROW, nj) impulse_response.factor's rows
    group: np.ndarray  # (N,) int: the rigid part each bar belongs to, coils locked
    needed: np.ndarray  # (MAX_CONTACTS,) bool: a contact the solve may not leave out
    kept: np.ndarray  # (MAX_CONTACTS,) bool: in the solve
    slide: np.ndarray  # (MAX_CONTACTS,) the sign of a contact's guessed sliding; 0: none
    zpos: np.ndarray  # (MAX_CONTACTS,) int: its first unknown in the LCP
    # the Delassus matrix's sweep (world_solve._delassus, impulse_response.delassus)
    wrench: np.ndarray  # (2 MAX_CONTACTS, 3) each contact direction's unit wrench
    row_bar: np.ndarray  # (2 MAX_CONTACTS,) int: its bar
    order: np.ndarray  # (2 MAX_CONTACTS,) int: the directions by bar
    sweep: np.ndarray  # (3, 2 MAX_CONTACTS) the sweep's rows
    # the last answer of the small LCP in this step, by contact (friction_lcp._keep_last)
    last_first: np.ndarray  # (N,) int: its first contact on each bar; -1: none
    last_next: np.ndarray  # (MAX_CONTACTS,) int: the next on the same bar; -1: none
    last_at: np.ndarray  # (MAX_CONTACTS,)
    last_normal: np.ndarray  # (MAX_CONTACTS, 2)
    last_slide: np.ndarray  # (MAX_CONTACTS,) its sliding guess
    last_basic: np.ndarray  # (MAX_CONTACTS, 4) bool: which of its unknowns were positive


def new_world_work(n: int, blocks: np.ndarray) -> WorldWork:
    nj = n + BASE
    nb = nj + 2 * MAX_CONTACTS
    nz = nj + 4 * MAX_CONTACTS
    b = np.ascontiguousarray(np.asarray(blocks, float).reshape(-1, 3))
    return WorldWork(
        blocks=b, corners=corners_of(b), bar=np.zeros(MAX_CONTACTS, np.int64),
        at=np.zeros(MAX_CONTACTS), normal=np.zeros((MAX_CONTACTS, 2)),
        gap=np.zeros(MAX_CONTACTS), mu=np.zeros(MAX_CONTACTS), was=np.zeros(MAX_CONTACTS),
        rows=np.zeros(nj, np.int64), in_rows=np.zeros(nj, np.bool_),
        response=np.zeros((nb, nj)), delassus=np.zeros((nb, nb)), free_rate=np.zeros(nb),
        target=np.zeros(nb), impulse=np.zeros(nb), lcp=np.zeros((nz, nz)),
        lcp_rhs=np.zeros(nz), lcp_z=np.zeros(nz), tableau=np.zeros((nz + 1, nz + 2)),
        basis=np.zeros(nz, np.int64), column=np.zeros(2 * nz + 1, np.int64),
        free_velocity=np.zeros(nj), body=np.zeros((3, n)),
        nolock=np.zeros(nj, np.bool_), point=np.array([-1.0, 0.0, 0.0, 0.0]),
        state=np.zeros(8, np.int64),
        active=np.zeros(nj, np.bool_), freed=np.zeros(nj, np.int64),
        prescribed=np.zeros(nj, np.bool_),
        change=np.zeros(nj), joint_impulse=np.zeros(nj), loads=np.zeros((n, 3)),
        factored=workspace(n), group=np.zeros(n, np.int64),
        needed=np.zeros(MAX_CONTACTS, np.bool_), kept=np.zeros(MAX_CONTACTS, np.bool_),
        slide=np.zeros(MAX_CONTACTS), zpos=np.zeros(MAX_CONTACTS, np.int64),
        wrench=np.zeros((2 * MAX_CONTACTS, 3)), row_bar=np.zeros(2 * MAX_CONTACTS, np.int64),
        order=np.zeros(2 * MAX_CONTACTS, np.int64), sweep=np.zeros((3, 2 * MAX_CONTACTS)),
        last_first=np.full(n, -1, np.int64), last_next=np.zeros(MAX_CONTACTS, np.int64),
        last_at=np.zeros(MAX_CONTACTS), last_normal=np.zeros((MAX_CONTACTS, 2)),
        last_slide=np.zeros(MAX_CONTACTS), last_basic=np.zeros((MAX_CONTACTS, 4), np.bool_))


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
    gb = kp if kp < n else n - 1  # the grabbed point's bar
    gx = 0.0  # the grabbed point at the start, and its velocity
    gy = 0.0
    gvx = 0.0
    gvy = 0.0
    gfx = 0.0  # the grab's force at the predicted point, capped
    gfy = 0.0
    gex = 0.0  # the grab's stretch (target - point) at the predicted point
    gey = 0.0
    k2e = 0.0  # the Maxwell branch's stiffness over the step
    lead = THETA * h
    ww.point[0] = -1.0
    if modes.grab != 0:
        kinematics(q, R, fw.ends, fw.bar_axes, fw.aba_rows)
        gx = fw.ends[kp, 0]
        gy = fw.ends[kp, 1]
        gvx, gvy = _point_rate(q, qd, gb, gx, gy, fw.ends, ww.body)
        gfx, gfy, gex, gey, k2e = _grab_force(gx + lead * gvx, gy + lead * gvy, lead, sd,
                                              target, par, ww)
    armh = THETA * h * cd + THETA * THETA * h * h * par.stiffness
    qx = w.spring_offset
    for j in range(nj):
        qx[j] = THETA * h * qd[j]
    derivatives(q, qd, sd, t, ww.nolock, target, par, modes, fw, w.qdd, sm.damper_rate, qd,
                qx, armh, False)
    cnt.evaluations += 1
    vf = ww.free_velocity
    for j in range(nj):
        vf[j] = qd[j] + h * w.qdd[j]
    if modes.grab != 0:
        _grab_free(q, qd, h, gb, gx, gy, gvx, gvy, gfx, gfy, par, modes, fw, ww, armh,
                   w.zeros, w.velocity_after, vf)
        cnt.evaluations += 2
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
        ww.was[c] = 0.0 if abs(ut) < STICKING else math.copysign(1.0, ut)
    rigid = hard(modes.law)
    vplus = w.velocity_after
    # the coils locked first: those touching at the last piece's end (or, entering the
    # scheme, the event-driven step's locked ones), and those closing now
    for j in range(nj):
        ww.active[j] = rigid and j >= j0 and (locked[j] or q[j] + h * vf[j] < tmin)
    if locked_solve(q, vf, h, m, rigid, j0, par, modes, fw, ww, armh, w.zeros, vplus, cnt):
        off = 0  # the world impulses' place in ww.impulse
        nrow = 0
        loss = 0.0  # the kinetic energy the impulses took: -1/2 sum lam (u_f + u+)
        for j in range(j0, nj):
            if ww.active[j]:
                nrow += 1
                loss -= 0.5 * ww.joint_impulse[j] * (vf[j] + vplus[j])
        basis_rates(0, m, vf, q, R, E, U, ww, ww.free_rate)
        basis_rates(0, m, vplus, q, R, E, U, ww, ww.target)  # (the targets are spent)
        for r in range(2 * m):
            loss -= 0.5 * ww.impulse[r] * (ww.free_rate[r] + ww.target[r])
    else:
        ww.state[4] += 1
        nrow, loss = full_solve(q, vf, h, m, rigid, j0, par, modes, fw, w, ww, armh, cnt)
        off = nrow
    if modes.grab != 0:
        # the grab's force over the piece, F(p + T h v_p) - T^2 h k_e (v_p+ - v_p): at
        # the point T h (v_p + T (v_p+ - v_p)) ahead; its Maxwell damper moves with it
        px, py = _point_rate(q, vplus, gb, gx, gy, E, ww.body)
        sx = gex - THETA * lead * (px - gvx)
        sy = gey - THETA * lead * (py - gvy)
        pm = ww.point[1] / (lead * lead)
        gfx -= pm * THETA * lead * (px - gvx)
        gfy -= pm * THETA * lead * (py - gvy)
        sm.damper_rate[0] = k2e * (sx - sd[0]) / par.grab_damping
        sm.damper_rate[1] = k2e * (sy - sd[1]) / par.grab_damping
        sd[0] += h * sm.damper_rate[0]
        sd[1] += h * sm.damper_rate[1]
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
def _point_rate(q, v, b, px, py, E, body):
    """The velocity of the point (px, py) of bar b for joint rates v."""
    body_velocities(q, v, E, body)
    return body[1, b] - body[0, b] * py, body[2, b] + body[0, b] * px


@njit(**JIT)
def _grab_force(px, py, lead, sd, target, par, ww):
    """The grab's force with its grabbed point at (px, py) (where the piece's start
    predicts it, lead = T h ahead), linearly implicit: the holding spring k and the
    Maxwell branch, whose damper moves over the piece too (its stiffness k2 / (1 + T h
    k2 / d)), capped. Their stiffness, scaled as the force, becomes a point mass T^2 h^2
    (k + k2e) at the point in the factorisations (ww.point). Returns the force, the
    stretch (target - point) and the Maxwell branch's stiffness over the piece."""
    ex = target[0] - px
    ey = target[1] - py
    k2e = par.grab_maxwell_stiffness / (1.0 + lead * par.grab_maxwell_stiffness
                                        / par.grab_damping)
    fx = par.grab_stiffness * ex + k2e * (ex - sd[0])
    fy = par.grab_stiffness * ey + k2e * (ey - sd[1])
    fn = math.sqrt(fx * fx + fy * fy)
    scale = 1.0
    if fn > par.grab_max_force:
        scale = par.grab_max_force / fn
    ww.point[1] = scale * (par.grab_stiffness + k2e) * lead * lead
    return scale * fx, scale * fy, ex, ey, k2e


@njit(**JIT)
def _grab_free(q, qd, h, b, px, py, vpx, vpy, fx, fy, par, modes, fw, ww, armh, zeros,
               out, vf):
    """Add the grab to the free velocity vf (computed without it): with Mh' = Mh + J^T
    m J (the point mass m = ww.point[1] at the grabbed point, J its Jacobian),
    v + h Mh'^-1 (F + J^T f) = vf + Mh'^-1 J^T (h f - m J (vf - v)): one response of
    the factorisation with the point mass to an impulse at the point. Leaves ww.point
    set for the contact solve's factorisations."""
    ww.point[0] = b
    ww.point[2] = px
    ww.point[3] = py
    ux, uy = _point_rate(q, vf, b, px, py, fw.ends, ww.body)
    pm = ww.point[1]
    ix = h * fx - pm * (ux - vpx)
    iy = h * fy - pm * (uy - vpy)
    factor_free(q, par, modes, fw, ww, armh)
    loads = ww.loads
    loads[b, 0] = px * iy - py * ix
    loads[b, 1] = ix
    loads[b, 2] = iy
    respond(zeros, ww.prescribed, zeros, loads, ww.factored, out, ww.joint_impulse)
    loads[b, 0] = 0.0
    loads[b, 1] = 0.0
    loads[b, 2] = 0.0
    for j in range(q.shape[0]):
        vf[j] += out[j]


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
            # the grab is implicit here: its sub-steps are the soft law's only
            sub = md.substeps if md.grab == 0 or md.law == LAW_SOFT else 1
            pieces = max(sub, int(math.ceil(h / H_WORLD - 1e-9)),
                         min(MAX_PIECES, int(math.ceil(rate * h / MAX_TURN - 1e-9))))
            hs = h / pieces
            ww.state[LAST_VALID] = 0  # each step solves its first LCP afresh
            for _piece in range(pieces):
                t = world_step(q, qd, sd, t, hs, locked, target, par, md, wpar, w, ww, cnt)
            ww.state[0] = 1
        else:
            if ww.state[0] == 1:
                _hand_over(q, qd, locked, par, md, w)
                ww.state[0] = 0
            t = step(q, qd, sd, t, h, locked, target, par, md, w, cnt)
    return t
