"""Reference integrator of the 3D Slinky: dense, adaptive, with coil contact.

A yardstick for a future O(N) 3D solver, written for clarity, not speed: the
equations of motion come from the principle of virtual power over the arcs' centroid
velocities and angular velocities, with the velocity map assembled as one dense matrix.

Velocities u = (v, omega_1..omega_N): E_1's velocity and each half hoop's angular
velocity (world). The centroid of half hoop k moves at

    v_k = v + sum_{j<k} omega_j x 2R d_j + omega_k x rho_k     (rho_k = R d_k + 2R/pi b_k)

so v_k = A_k u, and with the inertia I_k about the centroid (world),

    M = sum_k m A_k^T A_k + blockdiag(I_k)
    M u_dot = sum_k A_k^T (m g_vec - m kappa_k) + (tau_k - omega_k x I_k omega_k)

kappa_k being v_k's velocity-product part and tau_k the joint torques on half hoop k.
Orientations are unit quaternions (scipy's x, y, z, w order), normalised when read.
solve_ivp (DOP853) integrates the state (x, quaternions, v, omega).

Coil contact (docs/model.md section 12), written for this integrator alone: joint k's
opening s_k = -d_k . a_{k-1} >= sin(theta_min), its rate ds_k/dt = (omega_k -
omega_{k-1}) . (a_{k-1} x d_k). A closed joint is locked in all three degrees of
freedom: the constraint omega_k - omega_{k-1} = 0 (world, constant coefficients) with a
Lagrange multiplier lam_k, the moment on half hoop k (and -lam_k on k-1), solved with
the mass matrix as one dense KKT system. Its contact moment c_k = -lam_k . b_{k-1} must
push (>= 0). Hits (a free joint's opening falling through its bound) and separations (a
locked joint's contact moment falling through zero) are terminal events of solve_ivp,
located to its root finder's tolerance. An impact (zero restitution) is one dense
impulse solve over the shutting joints with the locked ones, a pulling joint released
(the most pulling first) and the solve repeated; then the resting set: a locked joint
whose contact pulls is released, a touching free joint at rest accelerating shut is
locked, until neither is left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import cho_factor, cho_solve
from scipy.spatial.transform import Rotation

from slinky3d.errors import SlinkyError
from slinky3d.model import chain3d
from slinky3d.model.params import Params
from slinky3d.reference.integrator import Event  # solve_ivp's terminal event, shared

TOUCH = 1e-9  # an opening within this of its bound touches (the events land ~1e-12 off)
HIT = 1e-12  # a hit is located where a joint is this far inside its bound (or its start)
RATE = 1e-6  # 1/s: a touching joint opening or shutting slower than this is at rest
PULL = 1e-9  # relative to the largest: a contact moment this far below zero pulls
ROUNDS = 64  # resting-set rounds at one instant
MAX_EVENTS = 100000  # hits and separations in one advance_to
STUCK = 1000  # events in a row less than 1e-12 s apart: the run has stalled


class Integration3DError(SlinkyError):
    """The 3D reference integrator could not carry a run on (the message says why)."""


def quaternion_matrix(quat: np.ndarray) -> np.ndarray:
    """(N, 3, 3) rotation matrices of (N, 4) quaternions (x, y, z, w), normalised here."""
    qn = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    x, y, z, w = qn.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
    ], -2)


@dataclass
class State3D:
    """Pose and velocities: E_1 (3,), frames (N, 3, 3), v (3,), omega (N, 3)."""

    x: np.ndarray
    frames: np.ndarray
    v: np.ndarray
    omega: np.ndarray
    t: float = 0.0



class Reference3D:
    """One 3D Slinky, anchored end `anchor` (chain3d.ANCHORS), far end free.

    holder: the clamped anchor's holder frame (half hoop 0); C_D damps the relative
    angular velocity of every joint with a spring; stiffness (d, b, a) defaults to
    chain3d.joint_stiffness; contact: coil contact (the module docstring), the joints
    that can touch being those with a coil below (joint 1 only against a clamped
    holder).
    """

    def __init__(self, p: Params, state: State3D, anchor: str = "clamped",
                 holder: np.ndarray | None = None, stiffness: np.ndarray | None = None,
                 mass: str = "arc", rtol: float = 1e-10, atol: float = 1e-12,
                 contact: bool = False):
        if anchor not in chain3d.ANCHORS:
            raise Integration3DError(f"unknown anchor {anchor!r} "
                                     f"(known: {', '.join(chain3d.ANCHORS)})")
        if anchor == "clamped" and holder is None:
            raise Integration3DError("a clamped anchor needs its holder frame")
        self.p, self.anchor, self.rtol, self.atol = p, anchor, rtol, atol
        self.holder = holder if anchor == "clamped" else None
        self.K = chain3d.joint_stiffness(p) if stiffness is None else np.asarray(stiffness)
        self.s = State3D(np.array(state.x, float), np.array(state.frames, float),
                         np.array(state.v, float), np.array(state.omega, float), state.t)
        if anchor != "free":
            self.s.v[:] = 0.0
        if mass not in chain3d.MASS_MODELS:
            raise Integration3DError(f"unknown mass model {mass!r} "
                                     f"(known: {', '.join(chain3d.MASS_MODELS)})")
        self.mass = mass
        self.Ic = chain3d.inertia_centroid(p, mass)
        self.rho_body = chain3d.body_centroid(p.R, mass)
        self.nfev = 0
        n = self.s.frames.shape[0]
        # the coordinates the dynamics moves: all of u when free, else the omegas
        self.F = slice(0, None) if anchor == "free" else slice(3, None)
        self.contact = bool(contact)
        self.smin = math.sin(p.theta_min)
        self.first = 0 if anchor == "clamped" else 1  # joint 1 touches only a holder
        self.locked = np.zeros(n, bool)  # joints closed and locked, for the coming flow
        self.impacts = 0  # impulse solves
        self.events = 0  # hits and separations located
        self.impact_loss = 0.0  # J: the kinetic energy the impulses took
        self.passed = 0  # joints released shutting (coils meeting at an angle pass)
        self._y = self.pack(self.s)
        self._cache: tuple[float, np.ndarray, np.ndarray] | None = None
        self._slack = 0.0  # N m: a locked joint separates where its moment falls below -this
        self._passing = np.zeros(n, bool)  # joints passing inside: no hit event
        self._floor = np.full(n, -HIT)  # where each free joint's hit event has its root

    # -- the equations of motion -------------------------------------------------
    def velocity_map(self, frames: np.ndarray) -> np.ndarray:
        """(N, 3, 3 + 3N): A_k, the centroid velocity of each half hoop from u."""
        n, R = frames.shape[0], self.p.R
        P = -chain3d.skew(2 * R * frames[:, :, 0])  # omega_j x 2R d_j = -[2R d_j]x omega_j
        Q = -chain3d.skew(frames @ self.rho_body)
        below = np.tril(np.ones((n, n)), -1)  # j < k
        blocks = below[:, :, None, None] * P[None] + np.eye(n)[:, :, None, None] * Q[:, None]
        A = np.empty((n, 3, 3 + 3 * n))
        A[:, :, :3] = np.eye(3)
        A[:, :, 3:] = blocks.transpose(0, 2, 1, 3).reshape(n, 3, 3 * n)
        return A

    def joint_torques(self, frames: np.ndarray, omega: np.ndarray) -> np.ndarray:
        """(N, 3) torque of the joint springs and dampers on each half hoop (world)."""
        p = self.p
        phi = chain3d.joint_rotations(frames, self.holder)
        # dV/dt = (K phi) . J_r^-1 R_k^T (omega_k - omega_{k-1}): the joint's torque on k
        Jinv = chain3d.right_jacobian_inv(phi)
        tau_j = -np.einsum("kij,kjl,kl->ki", frames, np.swapaxes(Jinv, 1, 2), self.K * phi)
        prev = np.zeros_like(omega)
        prev[1:] = omega[:-1]
        tau_j -= p.C_D * (omega - prev)
        if self.holder is None:
            tau_j[0] = 0.0  # no holder: joint 1 has neither spring nor damper
        tau = tau_j.copy()
        tau[:-1] -= tau_j[1:]  # each joint pushes back on the half hoop before it
        return tau

    def equations(self, x: np.ndarray, frames: np.ndarray, v: np.ndarray,
                  omega: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(M, rhs) of M u_dot = rhs over all of u = (v, omega), E_1 not held."""
        p, n, R = self.p, frames.shape[0], self.p.R
        A = self.velocity_map(frames)
        Iw = frames @ self.Ic @ np.swapaxes(frames, 1, 2)
        A2 = A.reshape(3 * n, -1)
        M = p.m * (A2.T @ A2)
        spin_blocks = np.zeros((n, 3, n, 3))
        spin_blocks[np.arange(n), :, np.arange(n), :] = Iw
        M[3:, 3:] += spin_blocks.reshape(3 * n, 3 * n)
        rho = frames @ self.rho_body
        step = chain3d.cross(omega, chain3d.cross(omega, 2 * R * frames[:, :, 0]))
        kappa = np.cumsum(step, axis=0) - step + chain3d.cross(omega, chain3d.cross(omega, rho))
        f = p.m * (-p.g * chain3d.UP - kappa)
        rhs = A2.T @ f.reshape(-1)
        spin = self.joint_torques(frames, omega) - chain3d.cross(omega,
                                                            np.einsum("kij,kj->ki", Iw, omega))
        rhs[3:] += spin.reshape(-1)
        return M, rhs

    def lock_rows(self, locked: np.ndarray) -> np.ndarray:
        """(3 m, 3 + 3N) the locked joints' constraints on u: omega_k - omega_{k-1} = 0
        (omega_0 = 0: a clamped holder does not turn)."""
        n = locked.shape[0]
        idx = np.flatnonzero(locked)
        G = np.zeros((3 * idx.size, 3 + 3 * n))
        for r, k in enumerate(idx):
            G[3 * r: 3 * r + 3, 3 + 3 * k: 6 + 3 * k] = np.eye(3)
            if k > 0:
                G[3 * r: 3 * r + 3, 3 * k: 3 * k + 3] = -np.eye(3)
        return G

    def _constrained(self, M: np.ndarray, rhs: np.ndarray, locked: np.ndarray,
                     target: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Solve M z = rhs + G^T lam with G z = target (default 0) over the moving
        coordinates: (z over all of u, lam (N, 3), each locked joint's moment on its half
        hoop, world)."""
        n = locked.shape[0]
        F = self.F
        chol = cho_factor(M[F, F])
        z = np.zeros(3 + 3 * n)
        z[F] = cho_solve(chol, rhs[F])
        lam = np.zeros((n, 3))
        if locked.any():
            G = self.lock_rows(locked)[:, F]
            X = cho_solve(chol, G.T)
            goal = np.zeros(G.shape[0]) if target is None else target
            L = np.linalg.solve(G @ X, goal - G @ z[F])
            z[F] += X @ L
            lam[locked] = L.reshape(-1, 3)
        return z, lam

    def accelerations(self, x: np.ndarray, frames: np.ndarray, v: np.ndarray,
                      omega: np.ndarray, locked: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray]:
        """(v_dot, omega_dot) of the state, the `locked` joints (default: none) locked."""
        n = frames.shape[0]
        lk = np.zeros(n, bool) if locked is None else locked
        M, rhs = self.equations(x, frames, v, omega)
        ud, _ = self._constrained(M, rhs, lk, None)
        return ud[:3], ud[3:].reshape(n, 3)

    # -- coil contact ----------------------------------------------------------------
    def _below(self, frames: np.ndarray) -> np.ndarray:
        """(N, 3, 3) the frame of the half hoop before each (the holder before the first;
        an unheld first's own, unused)."""
        prev = np.empty_like(frames)
        prev[1:] = frames[:-1]
        prev[0] = self.holder if self.holder is not None else frames[0]
        return prev

    def openings(self, frames: np.ndarray) -> np.ndarray:
        """(N,) s_k - sin(theta_min), s_k = -d_k . a_{k-1}; inf where no coil is below."""
        s = -np.einsum("ki,ki->k", frames[:, :, 0], self._below(frames)[:, :, 2]) - self.smin
        s[: self.first] = np.inf
        return s

    def _relative(self, omega: np.ndarray) -> np.ndarray:
        prev = np.zeros_like(omega)
        prev[1:] = omega[:-1]
        return omega - prev

    def opening_rates(self, frames: np.ndarray, omega: np.ndarray) -> np.ndarray:
        """(N,) ds_k/dt = (omega_k - omega_{k-1}) . (a_{k-1} x d_k)."""
        nrm = chain3d.cross(self._below(frames)[:, :, 2], frames[:, :, 0])
        return np.einsum("ki,ki->k", self._relative(omega), nrm)

    def opening_accelerations(self, frames: np.ndarray, omega: np.ndarray,
                              omega_dot: np.ndarray) -> np.ndarray:
        """(N,) d2s_k/dt2 of the state and angular accelerations."""
        a, d = self._below(frames)[:, :, 2], frames[:, :, 0]
        prev = np.zeros_like(omega)
        prev[1:] = omega[:-1]
        nrm = chain3d.cross(a, d)
        nrm_dot = (chain3d.cross(chain3d.cross(prev, a), d)
                   + chain3d.cross(a, chain3d.cross(omega, d)))
        return (np.einsum("ki,ki->k", self._relative(omega_dot), nrm)
                + np.einsum("ki,ki->k", self._relative(omega), nrm_dot))

    def contact_moments(self, frames: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """(N,) c_k = -lam_k . b_{k-1}: >= 0 where the contact pushes the coil open."""
        return -np.einsum("ki,ki->k", lam, self._below(frames)[:, :, 1])

    def _moments(self, t: float, y: np.ndarray) -> np.ndarray:
        """The locked joints' contact moments at y (one KKT solve, kept for the events
        evaluated at the same point)."""
        if self._cache is not None and self._cache[0] == t and np.array_equal(self._cache[1], y):
            return self._cache[2]
        x, frames, v, omega = self.unpack(y)
        M, rhs = self.equations(x, frames, v, omega)
        _, lam = self._constrained(M, rhs, self.locked, None)
        c = self.contact_moments(frames, lam)
        self._cache = (t, y.copy(), c)
        return c

    def _impulse(self, locked: np.ndarray) -> np.ndarray:
        """Stop the `locked` joints' relative rates by one impulse (zero restitution);
        a joint whose impulse pulls is released, the most pulling first, and the solve
        repeated. Sets self.locked, updates the velocities and the energy account;
        returns the joints released."""
        x, frames, v, omega = self.unpack(self._y)
        n = frames.shape[0]
        M, _ = self.equations(x, frames, v, omega)
        u = np.concatenate([v, omega.reshape(-1)])
        A = locked.copy()
        for _ in range(ROUNDS * n):
            G = self.lock_rows(A)
            # M du = G^T Lambda, G (u + du) = 0
            du, Lam = self._constrained(M, np.zeros_like(u), A, -(G @ u))
            c = self.contact_moments(frames, Lam)
            pull = np.where(A, c, np.inf)
            k = int(np.argmin(pull))
            if not A.any() or pull[k] >= -PULL * np.abs(c).max():
                break
            A[k] = False
        self.impacts += 1
        self.impact_loss += 0.5 * float(du @ M @ du)
        u = u + du
        self._set_velocities(u[:3], u[3:].reshape(n, 3))
        self.locked = A
        return locked & ~A

    def _set_velocities(self, v: np.ndarray, omega: np.ndarray) -> None:
        n = omega.shape[0]
        self._y = self._y.copy()
        self._y[3 + 4 * n: 6 + 4 * n] = v
        self._y[6 + 4 * n:] = omega.reshape(-1)

    def set_contacts(self, kept_open: np.ndarray) -> None:
        """At an instant: impacts (touching joints shutting, locked with those locked),
        then the resting set. kept_open: joints just separated, not locked again now.
        Sets the events' slack and the joints passing inside (touching, free, shutting:
        coils meeting at an angle, which a flat contact cannot stop)."""
        x, frames, v, omega = self.unpack(self._y)
        touching = self.openings(frames) <= TOUCH
        self.locked &= touching
        rate = self.opening_rates(frames, omega)
        shutting = touching & ~self.locked & ~kept_open & (rate < -RATE)
        if shutting.any():
            self._impulse(self.locked | shutting)
        released = kept_open.copy()
        for _ in range(ROUNDS):
            x, frames, v, omega = self.unpack(self._y)
            M, rhs = self.equations(x, frames, v, omega)
            ud, lam = self._constrained(M, rhs, self.locked, None)
            c = self.contact_moments(frames, lam)
            pull = np.where(self.locked, c, np.inf)
            k = int(np.argmin(pull))
            self._slack = PULL * np.abs(c).max()
            if self.locked.any() and pull[k] < -self._slack:
                self.locked[k] = False
                released[k] = True
                continue
            n = frames.shape[0]
            sdd = self.opening_accelerations(frames, omega, ud[3:].reshape(n, 3))
            rate = self.opening_rates(frames, omega)
            shut = touching & ~self.locked & ~released & (rate <= RATE) & (sdd < 0.0)
            if not shut.any():
                break
            released |= self._impulse(self.locked | shut)  # those pulling: not again
        x, frames, v, omega = self.unpack(self._y)
        self._passing = touching & ~self.locked & (self.opening_rates(frames, omega) < -RATE)
        # a touching free joint's hit is where it falls HIT below its bound or its start,
        # whichever is lower: never a root at the start
        self._floor = np.where(touching & ~self.locked,
                               np.minimum(self.openings(frames), 0.0), 0.0) - HIT
        self.passed += int(self._passing.sum())

    def _events(self) -> tuple[list[int], list[Event]]:
        """(joints, events): a hit for each free joint that can touch (its opening less
        HIT below its bound, or below where it starts if inside: a joint leaving its
        bound is caught closing again), but those passing inside; a separation for each
        locked one (its contact moment falling below the resting set's slack)."""
        if not self.contact:
            return [], []
        joints = [k for k in range(self.first, self.locked.shape[0])
                  if self.locked[k] or not self._passing[k]]
        return joints, [Event(partial(self._moment if self.locked[k] else self._opening, k))
                        for k in joints]

    def _moment(self, k: int, t: float, y: np.ndarray) -> float:
        return float(self._moments(t, y)[k]) + self._slack

    def _opening(self, k: int, t: float, y: np.ndarray) -> float:
        n = self.locked.shape[0]
        q = y[3: 3 + 4 * n].reshape(n, 4)
        d = quaternion_matrix(q[k: k + 1])[0, :, 0]
        below = self.holder if k == 0 and self.holder is not None else \
            quaternion_matrix(q[k - 1: k])[0]
        return float(-d @ below[:, 2] - self.smin - self._floor[k])

    # -- the state vector ----------------------------------------------------------
    def pack(self, s: State3D) -> np.ndarray:
        quat = Rotation.from_matrix(s.frames).as_quat()  # once a run: scipy's robust way
        return np.concatenate([s.x, quat.reshape(-1), s.v, s.omega.reshape(-1)])

    def unpack(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        n = self.s.frames.shape[0]
        x, quat = y[:3], y[3: 3 + 4 * n].reshape(n, 4)
        v, omega = y[3 + 4 * n: 6 + 4 * n], y[6 + 4 * n:].reshape(n, 3)
        return x, quaternion_matrix(quat), v, omega

    def _rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        self.nfev += 1
        n = self.s.frames.shape[0]
        x, frames, v, omega = self.unpack(y)
        quat = y[3: 3 + 4 * n].reshape(n, 4)
        vd, wd = self.accelerations(x, frames, v, omega, self.locked)
        # q_dot = 1/2 (omega, 0) * q for a world-frame omega (scalar last)
        qv, qw = quat[:, :3], quat[:, 3:]
        qd = np.concatenate([0.5 * (qw * omega + chain3d.cross(omega, qv)),
                             -0.5 * np.sum(omega * qv, axis=1, keepdims=True)], axis=1)
        return np.concatenate([v, qd.reshape(-1), vd, wd.reshape(-1)])

    def advance_to(self, t_end: float, t_eval: np.ndarray | None = None) -> list[State3D]:
        """Integrate to t_end; returns the states at the t_eval times passed."""
        t = self.s.t
        te = np.asarray([] if t_eval is None else t_eval, float)
        te = te[(te > t) & (te <= t_end)]
        out = []
        kept_open = np.zeros(self.locked.shape[0], bool)
        t_last, stuck = t, 0
        for _ in range(MAX_EVENTS):
            if self.contact:
                self.set_contacts(kept_open)
            self._cache = None  # the locked set may have changed, the state not
            joints, events = self._events()
            sol = solve_ivp(self._rhs, (t, t_end), self._y, method="DOP853",
                            rtol=self.rtol, atol=self.atol, dense_output=True, events=events)
            if sol.status < 0:
                raise Integration3DError(f"3D reference integrator failed at t = {t:g} s: "
                                         f"{sol.message}")
            t1 = float(sol.t[-1])
            for ti in te[(te > t) & (te <= t1)]:
                x, fr, v, om = self.unpack(sol.sol(ti))
                out.append(State3D(x, fr, v, om, float(ti)))
            self._y, t = sol.y[:, -1].copy(), t1
            if sol.status == 0:
                break
            self.events += 1
            stuck = stuck + 1 if t - t_last < 1e-12 else 0
            t_last = t
            if stuck > STUCK:
                raise Integration3DError(f"3D reference integrator: {STUCK} events without "
                                         f"time moving on at t = {t:.12g} s")
            kept_open = np.zeros_like(kept_open)
            for k, hit in zip(joints, sol.t_events, strict=True):
                if len(hit) and self.locked[k]:
                    self.locked[k] = False  # a separation: the contact stops pushing
                    kept_open[k] = True
        else:
            raise Integration3DError(f"3D reference integrator: more than {MAX_EVENTS} "
                                     f"events before t = {t_end:g} s (at t = {t:g} s)")
        x, fr, v, om = self.unpack(self._y)
        self.s = State3D(x.copy(), fr, v.copy(), om.copy(), float(t_end))
        return out

    # -- what the state holds ------------------------------------------------------
    def energy(self, s: State3D | None = None) -> float:
        s = self.s if s is None else s
        return chain3d.kinetic_energy(self.p, s.frames, s.v, s.omega, self.mass) + \
            chain3d.potential_energy(self.p, s.x, s.frames, self.holder, self.K, self.mass)


def simulate(ref: Reference3D, times: np.ndarray) -> list[State3D]:
    """States at `times` (the first being the start)."""
    s0 = ref.s
    first = State3D(s0.x.copy(), s0.frames.copy(), s0.v.copy(), s0.omega.copy(), s0.t)
    return [first] + ref.advance_to(float(times[-1]), np.asarray(times[1:]))
