"""Reference integrator of the 3D Slinky: dense, adaptive, no contact (yet).

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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import cho_factor, cho_solve
from scipy.spatial.transform import Rotation

from slinky3d.errors import SlinkyError
from slinky3d.model import chain3d
from slinky3d.model.params import Params


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
    chain3d.joint_stiffness.
    """

    def __init__(self, p: Params, state: State3D, anchor: str = "clamped",
                 holder: np.ndarray | None = None, stiffness: np.ndarray | None = None,
                 mass: str = "arc", rtol: float = 1e-10, atol: float = 1e-12):
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

    def accelerations(self, x: np.ndarray, frames: np.ndarray, v: np.ndarray,
                      omega: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(v_dot, omega_dot) of the state."""
        n = frames.shape[0]
        M, rhs = self.equations(x, frames, v, omega)
        ud = np.zeros(3 + 3 * n)
        F = slice(0, None) if self.anchor == "free" else slice(3, None)
        ud[F] = cho_solve(cho_factor(M[F, F]), rhs[F])
        return ud[:3], ud[3:].reshape(n, 3)

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
        vd, wd = self.accelerations(x, frames, v, omega)
        # q_dot = 1/2 (omega, 0) * q for a world-frame omega (scalar last)
        qv, qw = quat[:, :3], quat[:, 3:]
        qd = np.concatenate([0.5 * (qw * omega + chain3d.cross(omega, qv)),
                             -0.5 * np.sum(omega * qv, axis=1, keepdims=True)], axis=1)
        return np.concatenate([v, qd.reshape(-1), vd, wd.reshape(-1)])

    def advance_to(self, t_end: float, t_eval: np.ndarray | None = None) -> list[State3D]:
        """Integrate to t_end; returns the states at the t_eval times passed."""
        s = self.s
        te = np.asarray([] if t_eval is None else t_eval, float)
        te = te[(te > s.t) & (te <= t_end)]
        sol = solve_ivp(self._rhs, (s.t, t_end), self.pack(s), method="DOP853",
                        rtol=self.rtol, atol=self.atol, dense_output=True)
        if sol.status < 0:
            raise Integration3DError(f"3D reference integrator failed at t = {s.t:g} s: "
                                     f"{sol.message}")
        out = []
        for ti in te:
            x, fr, v, om = self.unpack(sol.sol(ti))
            out.append(State3D(x, fr, v, om, float(ti)))
        x, fr, v, om = self.unpack(sol.y[:, -1])
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
