"""Contact of a 3D Slinky with the world: the floor, a table, stairs, with Coulomb
friction (docs/model.md section 12, "The world in 3D"; docs/solver.md, "World contact
in 3D").

While any half hoop is near the world the 3D solver advances by the planar solver's
time-stepping scheme (world_contact.py) in 3D: in pieces of at most PIECE,

1. the free velocity u_f = u + h (M + T h C + T^2 h^2 G^T K G)^-1 F with the springs
   at q + T h q_dot (one Rosenbrock stage: integrator3d's armature, T = 0.6), the coil
   joints near closing *locked* (prescribed joints of the articulated-body solve, at
   the rate that lands them on their bound: coil_contact3d's flat lock);
2. the world contacts (`world_geometry3d.detect`): per half hoop and surface, the
   arc's closest point (its lowest point toward a plane, found in closed form; its
   nearest point to a block's edge), and every end point;
3. one linear complementarity problem over them on the locked chain: normal impulse,
   friction in a pyramid of DIRS directions with a sliding slack (Stewart and
   Trinkle's form), solved by Lemke's method; its Delassus matrix from one repeated
   articulated-body solve per contact direction (`delassus`);
4. the locks checked: a locked coil whose contact moment pulls is freed, a free coil
   that closes past its bound is locked, and the problem solved again;
5. u+ = u_f + (M + ...)^-1 J^T lam, q+ = q + h q_dot(q, u+).

The world's planes and edges, and the contact points on them: world_geometry3d.py.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from slinky3d.dynamics import articulated_body3d as ab
from slinky3d.dynamics import coil_contact3d, grab3d, integrator3d
from slinky3d.dynamics.articulated_body import JIT
from slinky3d.dynamics.energy3d import guard_figures
from slinky3d.dynamics.friction_lcp import CORRECTIONS
from slinky3d.dynamics.lemke import lemke
from slinky3d.dynamics.sleep import ON_WORLD
from slinky3d.dynamics.world_geometry3d import (
    EDGE,
    NCOLS_CONTACT,
    SAME_NORMAL,
    SAME_PLACE,
    detect,
    end_points,
    surfaces,
)
from slinky3d.scene.world import World

T_IMPLICIT = 0.6  # the springs' implicitness (world_contact.py's, and why)
PIECE = 2e-3  # s: the longest piece of a step near the world
NEAR = 0.01  # m: a point this near the world (plus two steps' travel) needs this scheme
MARGIN = 2e-3  # m: a contact enters the solve this far out (plus a step's travel)
MAX_CONTACTS = 96  # world contacts at once (the nearest kept)
DIRS = 4  # friction directions: +-t1, +-t2 (the pyramid; docs/model.md section 12)
LOCK_ROUNDS = 24  # rounds of the coil locks' check a piece
PULL = 1e-6  # relative to the largest: a lock's contact this far below zero pulls (the
# contacts' regularisation leaves the resting locks' moments noisy at ~1e-9)
KEEP = 10  # pieces a coil that cycled in a piece (freed, shut again) stays locked
MANY = 16  # from the fourth round on, this many pulling locks are freed at once
TOUCH = 1e-7  # a coil this near its bound (in the opening s) is locked at the start
REGULARIZE = 1e-6  # relative: added to the Delassus diagonal (redundant contacts; a
# compliance that moves a resting contact's rate by ~1e-6 of g h: 4e-8 m/s at 4 ms)
GAIN = 1e-6  # of M g 2R N (the divergence guard's scale): a piece's gain taken back
RETRY = (REGULARIZE, 1e-4, 1e-2, 1.0)  # ... and where Lemke fails, more
RESTING = 1e-3  # m/s: a contact slower than this at the start holds with mu_static

PROFILE = np.zeros(3, np.int64)  # LCPs, Lemke's pivots, LCPs answered on a guessed
# basis: so far, all Slinkies (bench_contact.py --profile)
SAME_BASIS = 2e-3  # m: a contact this near one of the last answer's is guessed as it



@njit(**JIT)
def contact_rates(du, frames, ends, R, cont, m, out, vend, om):
    """out[3c + i] = the rate of contact c along its direction i (n, t1, t2) for the
    generalised velocities du (E_1's velocity, the joints' body rates); vend, om
    (N, 3): scratch (each half hoop's E_k velocity and angular velocity)."""
    n = frames.shape[0]
    v0, v1, v2 = du[0], du[1], du[2]
    o0 = o1 = o2 = 0.0
    for k in range(n):
        F = frames[k]
        j = 3 + 3 * k
        o0 += F[0, 0] * du[j] + F[0, 1] * du[j + 1] + F[0, 2] * du[j + 2]
        o1 += F[1, 0] * du[j] + F[1, 1] * du[j + 1] + F[1, 2] * du[j + 2]
        o2 += F[2, 0] * du[j] + F[2, 1] * du[j + 1] + F[2, 2] * du[j + 2]
        vend[k, 0], vend[k, 1], vend[k, 2] = v0, v1, v2
        om[k, 0], om[k, 1], om[k, 2] = o0, o1, o2
        d0, d1, d2 = 2.0 * R * F[0, 0], 2.0 * R * F[1, 0], 2.0 * R * F[2, 0]
        v0 += o1 * d2 - o2 * d1
        v1 += o2 * d0 - o0 * d2
        v2 += o0 * d1 - o1 * d0
    for c in range(m):
        r = cont[c]
        k = int(r[0])
        x0, x1, x2 = r[1] - ends[k, 0], r[2] - ends[k, 1], r[3] - ends[k, 2]
        w0 = vend[k, 0] + om[k, 1] * x2 - om[k, 2] * x1
        w1 = vend[k, 1] + om[k, 2] * x0 - om[k, 0] * x2
        w2 = vend[k, 2] + om[k, 0] * x1 - om[k, 1] * x0
        for i in range(3):
            out[3 * c + i] = w0 * r[4 + 3 * i] + w1 * r[5 + 3 * i] + w2 * r[6 + 3 * i]


@njit(**JIT)
def implicit_forces(mode, q, u, H, h, par, w):
    """The piece's armature T h C_D I + T^2 h^2 G^T K G (w.arm, w.G) and forces (w.tau):
    the joints' springs at q + T h q_dot and dampers at u, and the grab."""
    gh = T_IMPLICIT * h
    integrator3d._start(mode, q, gh, gh * gh, par, w)
    for j in range(3):
        w.qx[j] = gh * u[j]
        w.vdamp[j] = u[j]
    for k in range(w.G.shape[0]):
        j = 3 + 3 * k
        Gk = w.G[k]
        for i in range(3):
            w.qx[j + i] = gh * (Gk[i, 0] * u[j] + Gk[i, 1] * u[j + 1] + Gk[i, 2] * u[j + 2])
            w.vdamp[j + i] = u[j + i]
    integrator3d.joint_forces(mode, q, w.qx, w.vdamp, par, w.G, w.tau)
    integrator3d.external_forces(mode, q, q, u, H, gh, True, par, w)


@njit(**JIT)
def lock_targets(q, u, h, smin, locked, acc_p, tmp):
    """acc_p's joint rows: a locked coil's rate change over h to the rate that brings
    its opening to its bound at the piece's end (along the opening's gradient in w;
    0 for a coil on its bound: the flat lock). A coil inside its bound is held there,
    not pushed out (which would put energy in)."""
    for k in range(locked.shape[0]):
        j = 3 + 3 * k
        if not locked[k]:
            acc_p[j] = acc_p[j + 1] = acc_p[j + 2] = 0.0
            continue
        p0, p1, p2 = q[j], q[j + 1], q[j + 2]
        gap = coil_contact3d.opening(p0, p1, p2) - smin
        ab.exp_rot(p0, p1, p2, tmp)
        g1, g2 = tmp[2, 2], -tmp[2, 1]  # ds/dt = g . w (coil_contact3d.opening_rate)
        rate = -max(gap, 0.0) / h / (g1 * g1 + g2 * g2)
        acc_p[j] = -u[j] / h
        acc_p[j + 1] = (rate * g1 - u[j + 1]) / h
        acc_p[j + 2] = (rate * g2 - u[j + 2]) / h


@njit(**JIT)
def delassus(mode, par, w, presc, acc_p, tau, qdd0, cont, m, ends, R, D, tau_e, du, rates,
             vend, om):
    """D[:, 3c + i] = every contact direction's rate per unit impulse along contact c's
    direction i, on the chain as last solved (its locks): one repeated articulated-body
    solve a direction, its velocity products kept (the difference from qdd0, the same
    solve without the impulse, is the response)."""
    nq = tau.shape[0]
    for c in range(m):
        r = cont[c]
        k = int(r[0])
        for i in range(3):
            for j in range(nq):
                tau_e[j] = tau[j]
            grab3d.point_forces(mode, k, r[1], r[2], r[3], r[4 + 3 * i], r[5 + 3 * i],
                          r[6 + 3 * i], w.frames, ends, tau_e)
            ab.passes(mode, tau_e, w.arm, par, presc, acc_p, w.qdd, w.jf, w.frames, w.ws,
                      w.scr, w.tmp, w.d9, False)
            for j in range(nq):
                du[j] = w.qdd[j] - qdd0[j]
            contact_rates(du, w.frames, ends, R, cont, m, rates, vend, om)
            for a in range(3 * m):
                D[a, 3 * c + i] = rates[a]
    w.evaluations[0] += 3 * m


@njit(**JIT)
def with_impulses(mode, par, w, presc, acc_p, tau, cont, m, lam, h, ends, tau_f):
    """tau_f = tau + the world impulses lam (3 per contact, along n, t1, t2) as forces
    over h; the chain solved with them (w.qdd, w.jf)."""
    for j in range(tau.shape[0]):
        tau_f[j] = tau[j]
    for c in range(m):
        r = cont[c]
        f0 = f1 = f2 = 0.0
        for i in range(3):
            li = lam[3 * c + i] / h
            f0 += li * r[4 + 3 * i]
            f1 += li * r[5 + 3 * i]
            f2 += li * r[6 + 3 * i]
        grab3d.point_forces(mode, int(r[0]), r[1], r[2], r[3], f0, f1, f2, w.frames, ends, tau_f)
    ab.passes(mode, tau_f, w.arm, par, presc, acc_p, w.qdd, w.jf, w.frames, w.ws, w.scr,
              w.tmp, w.d9, False)
    w.evaluations[0] += 1


@njit(**JIT)
def coil_check(q, u, h, smin, first, eligible, locked, c, tmp):
    """(the most pulling locked coil or -1, whether a free coil closes past its bound
    over h at the rates u; those are locked in `locked`)."""
    big = 0.0
    for k in range(locked.shape[0]):
        if locked[k]:
            big = max(big, abs(c[k]))
    worst, at = -PULL * big, -1
    closing = False
    for k in range(first, locked.shape[0]):
        j = 3 + 3 * k
        if locked[k]:
            if c[k] < worst:
                worst, at = c[k], k
            continue
        if not eligible:
            continue
        p0, p1, p2 = q[j], q[j + 1], q[j + 2]
        gap = coil_contact3d.opening(p0, p1, p2) - smin
        rate = coil_contact3d.opening_rate(p0, p1, p2, u[j], u[j + 1], u[j + 2], tmp)
        if gap + h * rate < -1e-12:
            locked[k] = True
            closing = True
    return at, closing


@njit(**JIT)
def openings(q, smin, out):
    """out[k] = joint k's opening less its bound (coil_contact3d.opening)."""
    for k in range(out.shape[0]):
        j = 3 + 3 * k
        out[k] = coil_contact3d.opening(q[j], q[j + 1], q[j + 2]) - smin


@njit(**JIT)
def move(mode, q, u, H, h, w):
    """q += h q_dot(q, u), then an unsprung joint 1's chart moved on (integrator3d)."""
    integrator3d.rates(q, u, w.vd)
    for j in range(q.shape[0]):
        q[j] += h * w.vd[j]
    integrator3d._rechart(mode, q, H, w.tmp, w.d9)


@njit(**JIT)
def fastest(ws, R):
    """A bound on any arc point's speed: the end points' and R |omega| (m/s)."""
    v = 0.0
    for k in range(ws.shape[0]):
        r = ws[k]
        a = math.sqrt(r[ab.EV] ** 2 + r[ab.EV + 1] ** 2 + r[ab.EV + 2] ** 2)
        o = math.sqrt(r[ab.OM] ** 2 + r[ab.OM + 1] ** 2 + r[ab.OM + 2] ** 2)
        v = max(v, a + 2.0 * R * o)
    return v


def friction_lcp(D: np.ndarray, rf: np.ndarray, gaps: np.ndarray, mu: np.ndarray,
                 h: float, eps: float, guess: np.ndarray | None = None
                 ) -> tuple[np.ndarray, bool, np.ndarray]:
    """The contacts' impulses (3m: n, t1, t2 each) from Stewart and Trinkle's LCP with the
    pyramid of DIRS directions: per contact lam_n, beta (+t1, -t1, +t2, -t2), the
    sliding slack; rf the free rates, D the Delassus matrix. With `guess` (6m bools:
    the unknowns guessed positive, the last answer's basis), first the linear equations
    of that basis, its violations flipped (the planar solver's friction_lcp._corrected);
    Lemke's method where that fails. (lam, solved, the answer's unknowns positive)."""
    m = len(gaps)
    nz = 6 * m
    PROFILE[0] += 1
    B = np.zeros((3 * m, nz))
    for c in range(m):
        B[3 * c, 6 * c] = 1.0
        B[3 * c + 1, 6 * c + 1], B[3 * c + 1, 6 * c + 2] = 1.0, -1.0
        B[3 * c + 2, 6 * c + 3], B[3 * c + 2, 6 * c + 4] = 1.0, -1.0
    A = B.T @ (D + eps * np.eye(3 * m)) @ B
    b = B.T @ rf
    for c in range(m):
        i = 6 * c
        A[i + 1:i + 5, i + 5] = 1.0
        A[i + 5, i] = mu[c]
        A[i + 5, i + 1:i + 5] = -1.0
        A[i + 5, i + 5] = 0.0
        b[i] += max(gaps[c], 0.0) / h  # a point inside stays there, not pushed out
        b[i + 5] = 0.0
    z = np.zeros(nz)
    T = np.zeros((nz + 1, nz + 2))
    scale = 1.0 + float(np.abs(b).max())
    if guess is not None and guess.any():
        zg = _on_guess(A, b, guess, scale)
        if zg is not None:
            PROFILE[2] += 1
            return B @ zg, True, zg > 0.0
    pivots = lemke(A, b, nz, z, T, np.zeros(nz, np.int64), np.zeros(2 * nz + 1, np.int64),
                   50 * nz + 100)
    PROFILE[1] += abs(pivots)
    # Lemke's answer is kept only if it solves the LCP (redundant contacts make the
    # matrix near singular, where its pivots can lose the answer)
    return B @ z, _answers(A, b, z, scale), z > 0.0


def _on_guess(A: np.ndarray, b: np.ndarray, guess: np.ndarray, scale: float
              ) -> np.ndarray | None:
    """The LCP (A, b) of friction_lcp solved on a guessed basis: the unknowns guessed
    positive from their rows' linear equations, every violation flipped at once (an
    unknown negative leaves, a rate w negative enters), at most CORRECTIONS times (the
    planar solver's friction_lcp._corrected). A contact not pushing has only its slack,
    set outright to its largest tangential approach rate (the equations cannot: its
    friction rows are not in the basis). The answer if it solves the LCP (_answers),
    else None."""
    nz = len(b)
    g = guess.copy()
    tol = 1e-9 * scale
    for _ in range(CORRECTIONS + 1):
        g6 = g.reshape(-1, 6)
        g6[~g6[:, 0], :] = False  # a contact not pushing: none of its unknowns
        P = np.nonzero(g)[0]
        z = np.zeros(nz)
        if len(P):
            try:
                z[P] = np.linalg.solve(A[np.ix_(P, P)], -b[P])
            except np.linalg.LinAlgError:
                return None
        w = A @ z + b
        loose = ~g6[:, 0]
        rows = w.reshape(-1, 6)
        slack = np.maximum(-rows[loose, 1:5].min(axis=1), 0.0)
        z.reshape(-1, 6)[loose, 5] = slack
        rows[loose, 1:5] += slack[:, None]
        out = g & (z < -1e-12 * (1.0 + np.abs(z).max()))
        into = ~g & (w < -tol)
        into.reshape(-1, 6)[loose, 1:] = False  # a loose contact enters by its push
        if not (out.any() or into.any()):
            return z if _answers(A, b, z, scale) else None
        g = (g & ~out) | into
    return None


def _answers(A: np.ndarray, b: np.ndarray, z: np.ndarray, scale: float) -> bool:
    """Whether z >= 0 solves the LCP (A, b): w = A z + b >= 0, w z = 0, to 1e-9 of
    scale (1 + max |b|)."""
    wv = A @ z + b
    return bool(z.min() >= 0.0 and wv.min() >= -1e-9 * scale
                and float(np.abs(wv * z).max()) <= 1e-9 * scale * (1 + np.abs(z).max()))


def _hull(xy: np.ndarray) -> list[int]:
    """The indices of the 2D convex hull's vertices of the points xy (Andrew's monotone
    chain; collinear points between two vertices left out)."""
    order = sorted(range(len(xy)), key=lambda i: (xy[i, 0], xy[i, 1]))

    def half(idx):
        out: list[int] = []
        for i in idx:
            while len(out) >= 2:
                a, b = xy[out[-2]], xy[out[-1]]
                if (b[0] - a[0]) * (xy[i, 1] - a[1]) - (b[1] - a[1]) * (xy[i, 0] - a[0]) > 1e-12:
                    break
                out.pop()
            out.append(i)
        return out

    lower, upper = half(order), half(order[::-1])
    return sorted(set(lower[:-1] + upper[:-1])) if len(order) > 2 else order


def reduced(cont: np.ndarray, locked: np.ndarray,
            planes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The contacts that enter the solve: per rigid part (half hoops joined by locked
    coils) and plane, the vertices of the contact patch's convex hull in the plane
    (the others' impulses add no wrench these cannot give: the planar solver's two
    outermost, in 2D); every edge contact. The rest is checked after the solve, but
    for the contacts `gone` (another of the half hoop's is at the same place). Returns
    (the indices kept, gone)."""
    part = np.cumsum(~np.concatenate([[True], locked[1:]]))
    keys: dict[tuple[int, int], list[int]] = {}
    # of two contacts of one half hoop at one place with one normal (an end point on a
    # face and the arc's point by its edge), the deeper: a pair would make the Delassus
    # matrix singular (a point in a step's corner keeps both faces: different normals)
    same = ((np.abs(cont[:, None, 1:4] - cont[None, :, 1:4]).max(axis=2) < SAME_PLACE)
            & (cont[:, None, 0] == cont[None, :, 0])
            & (cont[:, 4:7] @ cont[:, 4:7].T > SAME_NORMAL))
    deeper = (cont[None, :, 13] < cont[:, None, 13]) | (
        (cont[None, :, 13] == cont[:, None, 13]) & np.tri(len(cont), k=-1, dtype=bool))
    gone = (same & deeper).any(axis=1)
    for i, r in enumerate(cont):
        if gone[i]:
            continue
        keys.setdefault((int(part[int(r[0])]), int(r[14])), []).append(i)
    keep: list[int] = []
    for (_, surf), idx in keys.items():
        if surf >= EDGE or len(idx) <= 3:
            keep += idx
            continue
        pts = cont[idx, 1:4]
        xy = pts @ planes[surf, 4:10].reshape(2, 3).T  # in the plane's own tangents
        keep += [idx[i] for i in _hull(xy)]
    return np.array(sorted(keep), dtype=np.int64), gone


# its compiled kernels (engine3d.kernels_ready)
KERNELS = (detect, end_points, contact_rates, implicit_forces, lock_targets, delassus,
           with_impulses, coil_check, openings, move, fastest, lemke)


class WorldContact3D:
    """The world of one 3D Slinky (`Solver3D.world`): its steps near the world by the
    scheme of the module docstring, the others by the solver's own step."""

    def __init__(self, world: World, turn: np.ndarray, n: int):
        self.planes, self.edges = surfaces(world, np.asarray(turn, float))
        self.mu, self.mu_static = float(world.mu), float(world.mu_static)
        self.cont = np.zeros((MAX_CONTACTS, NCOLS_CONTACT))
        self.ends = np.zeros((n + 1, 3))
        self.vend = np.zeros((n, 3))
        self.om = np.zeros((n, 3))
        self._t, self._n3 = np.zeros(6), np.zeros(3)
        self.pieces = 0  # pieces taken near the world
        self.failed = 0  # LCPs whose answer failed the check (the frictionless one used)
        self.last_contacts = 0  # world contacts in the last piece
        self.taken = 0.0  # J: energy gained from nothing and taken back (_no_gain)
        # the rounds of the pieces so far, by what ended each: a contact added, a coil
        # closing, coils freed, the last (bench_contact.py --profile)
        self.rounds = np.zeros(4, np.int64)
        self._last: dict | None = None  # this step's last LCP answer's basis (_guess)
        # pieces left during which a coil that cycled (freed, then shut again) stays
        # locked whatever its moment: part of the state (engine3d's state, restore)
        self.keep = np.zeros(n, np.int64)

    def contacts(self, s, reach: float) -> int:
        """The world contacts within `reach` of the solver's state now (self.cont)."""
        w = s.work
        ab.kinematics(s.q, s.u, s.H, s.p.R, w.frames, w.ws, w.tmp)
        end_points(w.ws, w.frames, s.p.R, self.ends)
        return int(detect(w.frames, self.ends, s.p.R, self.planes, self.edges, reach,
                          self.cont, self._t, self._n3))

    def near(self, s, h: float) -> bool:
        """Whether any point is within NEAR plus two steps' travel of the world."""
        w = s.work
        ab.kinematics(s.q, s.u, s.H, s.p.R, w.frames, w.ws, w.tmp)
        reach = NEAR + 2.0 * h * fastest(w.ws, s.p.R)
        return self.contacts(s, reach) > 0

    def advance(self, s, nsteps: int, plain) -> None:
        """nsteps steps of s.h: near the world in pieces (`piece`), else `plain(1)`."""
        h = s.h
        for _ in range(int(nsteps)):
            if not self.near(s, h):
                plain(1)
                continue
            k = max(1, math.ceil(h / PIECE - 1e-9))
            alone = s.work.grab[0] == 0.0 and not s.work.acc_p[:3].any()
            e0 = self._energy(s) if alone else 0.0
            self._last = None  # a step's LCPs start afresh (_guess)
            for _ in range(k):
                self.piece(s, h / k)
            if alone:
                self._no_gain(s, e0)
            s.k += 1
            s.t = s.k * s.h

    def _impulses(self, D, rf, cont, mu, h, diag) -> np.ndarray:
        """The LCP's impulses; where Lemke's answer fails its check (redundant contacts:
        a near-singular Delassus matrix), again more regularised, then without friction;
        none at all (counted in `failed`) if nothing solves it. The first try starts
        from this step's last answer's basis (`_guess`)."""
        gaps = cont[:, 13]
        guess = self._guess(cont, rf, gaps, h)
        for friction in (mu, np.zeros_like(mu)):
            for eps in RETRY:
                lam, ok, basic = friction_lcp(D, rf, gaps, friction, h, eps * diag, guess)
                guess = None
                if ok:
                    self._remember(cont, basic)
                    return lam
        self.failed += 1
        return np.zeros_like(rf)

    def _guess(self, cont, rf, gaps, h) -> np.ndarray | None:
        """The unknowns guessed positive (6 a contact): a contact of the last answer in
        this step (the same half hoop and surface, within SAME_BASIS) as it was; a new
        one pushing where it approaches, sliding on (beta against its rate, the slack)
        where it slides. None in a step's first solve: a step depends on its start
        alone (replay, roll-backs)."""
        if self._last is None:
            return None
        m = len(cont)
        g = np.zeros(6 * m, np.bool_)
        for c in range(m):
            r = cont[c]
            best, hit = SAME_BASIS, None
            for p, basic in self._last.get((int(r[0]), int(r[14])), ()):
                d = float(np.abs(p - r[1:4]).max())
                if d < best:
                    best, hit = d, basic
            if hit is not None:
                g[6 * c:6 * c + 6] = hit
            elif rf[3 * c] + max(gaps[c], 0.0) / h < 0.0:
                g[6 * c] = True
                a, b = rf[3 * c + 1], rf[3 * c + 2]
                if math.hypot(a, b) >= RESTING:  # beta against the sliding, the slack
                    big = (1 if a < 0 else 2) if abs(a) >= abs(b) else (3 if b < 0 else 4)
                    g[6 * c + big] = g[6 * c + 5] = True
        return g

    def _remember(self, cont, basic) -> None:
        """The answer's basis, per contact, for the step's next solves (`_guess`)."""
        last: dict[tuple[int, int], list[tuple[np.ndarray, np.ndarray]]] = {}
        for c in range(len(cont)):
            r = cont[c]
            last.setdefault((int(r[0]), int(r[14])), []).append(
                (r[1:4].copy(), basic[6 * c:6 * c + 6].copy()))
        self._last = last

    def rest_pattern(self, s, speed: float) -> np.ndarray | None:
        """Sleeping's test (sleep.py) in 3D: None unless every point of every arc moves
        slower than `speed` and one is within ON_WORLD of the world; then which coils
        are locked and which half hoops rest on the world."""
        w = s.work
        ab.kinematics(s.q, s.u, s.H, s.p.R, w.frames, w.ws, w.tmp)
        if fastest(w.ws, s.p.R) >= speed:
            return None
        m = self.contacts(s, ON_WORLD)
        if m == 0:
            return None
        on = np.zeros(s.p.N, np.bool_)
        on[self.cont[:m, 0].astype(np.int64)] = True
        return np.concatenate([w.presc, on])

    def piece(self, s, h: float) -> None:
        """One piece of h (module docstring)."""
        w, q, u, H, par, mode = s.work, s.q, s.u, s.H, s.par, s.mode
        n = s.p.N
        R = s.p.R
        self.pieces += 1
        implicit_forces(mode, q, u, H, h, par, w)
        tau = w.tau.copy()
        ab.kinematics(q, u, H, R, w.frames, w.ws, w.tmp)
        reach = MARGIN + h * fastest(w.ws, R)
        m_all = self.contacts(s, reach)
        every = self.cont[:m_all].copy()
        first = 0 if mode == ab.CLAMPED else 1
        locked = np.zeros(n, np.bool_)
        if s.contact:
            gaps = np.zeros(n)
            openings(q, s.smin, gaps)
            locked[first:] = gaps[first:] <= TOUCH
            locked |= w.presc  # the coils the last step left locked stay so
            locked[:first] = False
        acc_p = np.zeros_like(w.acc_p)
        acc_p[:3] = w.acc_p[:3]  # a driven base's acceleration
        qdd0 = np.zeros_like(u)
        tau_e, du = np.zeros_like(u), np.zeros_like(u)
        tau_f = np.zeros_like(u)
        c = np.zeros(n)
        mu_all = np.full(m_all, self.mu)
        if m_all:  # contacts at rest hold with mu_static
            r0 = np.zeros(3 * m_all)
            contact_rates(u, w.frames, self.ends, R, every, m_all, r0, self.vend, self.om)
            a, b = r0[1::3], r0[2::3]
            speed = np.hypot(a, b)
            mu_all[speed < RESTING] = self.mu_static
            # a sliding contact's pyramid turned so that one edge lies along its
            # sliding: exactly mu against it (docs/model.md section 12)
            go = speed >= RESTING
            c_, s_ = a[go] / speed[go], b[go] / speed[go]
            t1, t2 = every[go, 7:10].copy(), every[go, 10:13].copy()
            every[go, 7:10] = c_[:, None] * t1 + s_[:, None] * t2
            every[go, 10:13] = -s_[:, None] * t1 + c_[:, None] * t2
        added = np.zeros(m_all, np.bool_)
        freed = np.zeros(n, np.bool_)  # coils freed in this piece
        carried = locked & (self.keep > 0)  # cycled in the last KEEP pieces
        kept = carried.copy()  # ... or freed in this one and locked again: stay locked
        lam = np.zeros(0)
        rf = np.zeros(0)
        cont = every[:0]
        for rnd in range(LOCK_ROUNDS):
            lock_targets(q, u, h, s.smin, locked, acc_p, w.tmp)
            ab.aba(mode, q, u, H, tau, w.arm, par, locked, acc_p, w.qdd, w.jf, w.frames,
                   w.ws, w.scr, w.tmp, w.d9)
            w.evaluations[0] += 1
            qdd0[:] = w.qdd
            sel = np.zeros(0, np.int64)
            if m_all:
                keep = np.zeros(m_all, np.bool_)
                # a kept coil parts the patches: its freeing showed their support needed
                idx, gone = reduced(every, locked & ~kept, self.planes)
                keep[idx] = True
                keep |= gone  # never checked
                sel = np.nonzero((keep & ~gone) | added)[0]
            m = len(sel)
            cont = np.ascontiguousarray(every[sel])
            lam = np.zeros(3 * m)
            rf = np.zeros(3 * m)
            if m:
                D = np.zeros((3 * m, 3 * m))
                delassus(mode, par, w, locked, acc_p, tau, qdd0, cont, m, self.ends, R, D,
                         tau_e, du, np.zeros(3 * m), self.vend, self.om)
                contact_rates(u + h * qdd0, w.frames, self.ends, R, cont, m, rf, self.vend,
                              self.om)
                D = 0.5 * (D + D.T)
                diag = max(float(np.abs(np.diag(D)).max()), 1e-300)
                mu = mu_all[sel]
                lam = self._impulses(D, rf, cont, mu, h, diag)
            with_impulses(mode, par, w, locked, acc_p, tau, cont, m, lam, h, self.ends, tau_f)
            vplus = u + h * w.qdd
            if m_all > m:  # a contact left out that closes past its gap joins
                r1 = np.zeros(3 * m_all)
                contact_rates(vplus, w.frames, self.ends, R, every, m_all, r1, self.vend,
                              self.om)
                past = (np.maximum(every[:, 13], 0.0) + h * r1[0::3] < -1e-9) & ~keep & ~added
                if past.any():
                    added |= past
                    self.rounds[0] += 1
                    continue
            if not s.contact:
                break
            coil_contact3d.contacts(first, q, H, w.jf - tau_f, w.frames, c)
            c[kept] = 0.0  # a coil freed and shut again stays locked (below)
            before = locked.copy()
            at, closing = coil_check(q, vplus, h, s.smin, first, True, locked, c, w.tmp)
            if closing:
                # freed in this piece and shutting again: that cycle (the lock pulls,
                # the free coil shuts) ends with it locked, as coil_contact3d's does
                cycled = locked & ~before & freed
                kept |= cycled
                if cycled.any():
                    # the pull was the patch's support left to its hull's corners;
                    # the contacts that freeing it brought in stay
                    added[sel] = True
                self.rounds[1] += 1
                continue
            if at >= 0:
                pulling = locked & (c < -PULL * np.abs(c[locked]).max())
                if rnd < 3 or pulling.sum() < MANY:  # one at a time, the worst first
                    pulling[:] = False
                    pulling[at] = True
                locked &= ~pulling  # (the planar solver's rule for a dragged stack)
                freed |= pulling
                self.rounds[2] += 1
                continue
            break
        self.rounds[3] += 1
        self.last_contacts = len(cont)
        grab3d.clear_point_mass(w.ws)  # the grab's implicit point mass (implicit_forces)
        self.keep = np.where(kept & ~carried, KEEP, np.maximum(self.keep - 1, 0)) * locked
        u[:] = u + h * w.qdd
        move(mode, q, u, H, h, w)
        w.presc[:] = locked
        w.known[0] = False

    def _energy(self, s) -> float:
        """T + V (energy3d's compiled pass)."""
        w = s.work
        return float(guard_figures(s.q, s.u, s.H, s.par, s.anchor == "clamped", w.frames,
                                   w.ws, w.tmp)[0])

    def _no_gain(self, s, e0: float) -> None:
        """Energy a step gained from nothing (its explicit position update of stiff
        springs), beyond GAIN, taken back from the kinetic energy, as the planar scheme
        does: the velocities scaled down (docs/solver.md, "World contact in 3D")."""
        gain = self._energy(s) - e0
        p = s.p
        if gain <= GAIN * p.mass * abs(p.g) * 2.0 * p.R * p.N:
            return
        s.u[:] = 0.0 if not np.all(np.isfinite(s.u)) else s.u
        ke = self._kinetic(s)
        self.taken += min(gain, ke)
        s.u *= math.sqrt(max(0.0, 1.0 - gain / ke)) if ke > 0.0 else 0.0

    def _kinetic(self, s) -> float:
        e_all = self._energy(s)
        u = s.u.copy()
        s.u[:] = 0.0
        e_rest = self._energy(s)
        s.u[:] = u
        return e_all - e_rest
