"""One 3D Slinky, advanced on a fixed grid of step h by the compiled O(N) kernels
(articulated_body3d, integrator3d, coil_contact3d; docs/solver.md, "The 3D solver").

The pose and velocities in and out are chain3d's: E_1, the half hoops' frames (N, 3, 3),
E_1's velocity and the half hoops' angular velocities (world).
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from slinky3d.dynamics import articulated_body3d as ab
from slinky3d.dynamics import coil_contact3d, integrator3d
from slinky3d.dynamics.world_contact3d import WorldContact3D
from slinky3d.errors import SlinkyError
from slinky3d.model import chain3d
from slinky3d.model.params import Params
from slinky3d.scene.spec import step_for

REVERSE = np.diag([-1.0, 1.0, -1.0])  # half a turn about b: a half hoop seen from its other end


class Solver3DError(SlinkyError):
    """The 3D solver was given something it cannot run (the message says why)."""


class Solver3D:
    """One 3D Slinky: anchored end `anchor` (chain3d.ANCHORS), far end free.

    holder: a clamped end's holder frame (half hoop 0); stiffness (d, b, a) defaults to
    chain3d.joint_stiffness; mass: chain3d.MASS_MODELS; contact: coil contact, closed
    coils locked (coil_contact3d).
    """

    def __init__(self, p: Params, x: np.ndarray, frames: np.ndarray,
                 v: np.ndarray | None = None, omega: np.ndarray | None = None,
                 anchor: str = "clamped", holder: np.ndarray | None = None,
                 mass: str = "arc", h: float | None = None,
                 stiffness: np.ndarray | None = None, contact: bool = False):
        if anchor not in chain3d.ANCHORS:
            raise Solver3DError(f"unknown anchor {anchor!r} (known: {', '.join(chain3d.ANCHORS)})")
        if mass not in chain3d.MASS_MODELS:
            raise Solver3DError(f"unknown mass model {mass!r} "
                                f"(known: {', '.join(chain3d.MASS_MODELS)})")
        if anchor == "clamped" and holder is None:
            raise Solver3DError("a clamped anchor needs its holder frame")
        frames = np.array(frames, float)
        n = p.N
        if frames.shape != (n, 3, 3):
            raise Solver3DError(f"frames must be ({n}, 3, 3) for N = {n}, not {frames.shape}")
        self.h = step_for(p.C_D > 0.0) if h is None else float(h)  # the planar default
        if not self.h > 0.0:
            raise Solver3DError(f"the step must be positive, not {self.h}")
        self.p, self.anchor, self.mass = p, anchor, mass
        self.mode = chain3d.ANCHORS.index(anchor)
        self.K = chain3d.joint_stiffness(p) if stiffness is None else np.asarray(stiffness, float)
        self.par = ab.parameters(p.m, p.R, p.g, p.C_D, chain3d.centroid_offset(p.R, mass),
                                 self.K, chain3d.inertia_centroid(p, mass))
        self.work = integrator3d.new_work(n)
        v = np.zeros(3) if v is None or anchor != "free" else np.asarray(v, float)
        omega = np.zeros((n, 3)) if omega is None else np.asarray(omega, float)
        # holder: a clamped end's own; otherwise a chart in which phi_1 = 0
        self.H = np.array(holder if anchor == "clamped" else frames[0] @ chain3d.FLIP, float)
        phi = chain3d.joint_rotations(frames, self.H)
        prev = np.zeros_like(omega)
        prev[1:] = omega[:-1]
        w = np.einsum("kji,kj->ki", frames, omega - prev)  # R_k^T (omega_k - omega_{k-1})
        self.q = np.concatenate([np.asarray(x, float), phi.reshape(-1)])
        self.u = np.concatenate([v, w.reshape(-1)])
        self.t = 0.0
        self.k = 0
        self.contact = bool(contact)
        self.smin = math.sin(p.theta_min)
        self.cwork = coil_contact3d.new_work(n)
        self.impact_loss = np.zeros(1)  # J: the kinetic energy the coils' impacts took
        # the world it touches (world_contact3d.WorldContact3D; None: none)
        self.world: WorldContact3D | None = None
        self.substeps = 1

    def soft(self, stiffness: float, damping: float, substeps: int) -> None:
        """Coil contact by the soft law instead (integrator3d.soft_contact: a
        spring-dashpot on each joint's overlap, explicit, so each step is taken in
        `substeps`); the rigid contact off."""
        self.contact = False
        self.work.soft[:] = stiffness, damping, self.p.theta_min
        self.substeps = max(1, int(substeps))

    # -- stepping --------------------------------------------------------------
    def advance(self, nsteps: int) -> None:
        """nsteps fixed steps of h (near the world: world_contact3d's)."""
        if self.world is not None:
            self.world.advance(self, nsteps, self._advance)
        else:
            self._advance(nsteps)

    def _advance(self, nsteps: int) -> None:
        """nsteps fixed steps of h away from any world (each in `substeps` equal ones:
        an explicit coupling's, the soft contact law's, `soft`)."""
        n, h = int(nsteps) * self.substeps, self.h / self.substeps
        if self.contact:
            coil_contact3d.run(self.mode, self.q, self.u, self.H, h, n, self.par, self.smin,
                               self.work, self.cwork, self.impact_loss)
        else:
            integrator3d.run(self.mode, self.q, self.u, self.H, h, n, self.par, self.work)
        self.k += int(nsteps)
        self.t = self.k * self.h

    def drive(self, acceleration) -> None:
        """Move the held anchored end (clamped or on a pivot) at `acceleration` (world,
        m/s^2) from the next step on, until changed: a hand carrying it, its frame
        unturned. The caller sets it step by step (held through each step: at the
        step's middle, the hand's path is followed to second order)."""
        if self.anchor == "free":
            raise Solver3DError("a free Slinky has no held end to drive")
        a = np.asarray(acceleration, float)
        if a.shape != (3,) or not np.all(np.isfinite(a)):
            raise Solver3DError(f"a drive is a finite (x, y, z) acceleration, not {acceleration!r}")
        self.work.acc_p[:3] = a

    def let_go(self) -> None:
        """The held anchored end (clamped or on a pivot) lets go now: free from the next
        step on, its velocity and the half hoops' angular velocities kept (the holder
        was not turning), joint 1 without its spring, damper and lock; the holder frame
        becomes the chart in which phi_1 = 0, as a free anchor's always is."""
        if self.anchor == "free":
            return
        w = self.work
        ab.kinematics(self.q, self.u, self.H, self.p.R, w.frames, w.ws, w.tmp)
        self.H = np.ascontiguousarray(w.frames[0] @ chain3d.FLIP)
        self.q[3:6] = 0.0  # w_1 = R_1^T omega_1 in either chart: u is unchanged
        self.anchor, self.mode = "free", chain3d.ANCHORS.index("free")
        w.acc_p[:3] = 0.0
        w.presc[0] = False

    def reverse(self) -> None:
        """Renumber the chain from the far end (a hand taking hold of it, or letting go
        of the anchored end while both are held): E_{N+1} becomes E_1, half hoop k
        becomes N + 1 - k, the same arc (d reversed, b kept, a reversed: frame R_k Y, Y
        half a turn about b), joint k' = N + 2 - k with phi' = (-phi_d, phi_b, phi_a)
        (the same relative turn seen from the other side). The new anchored end is free
        (joint 1 unsprung, its chart where phi_1 = 0); locked joints follow theirs.
        Nothing moves: positions and velocities are the same, renumbered."""
        x, frames, v, omega = self.pose()
        R = self.p.R
        step = chain3d.cross(omega, 2 * R * frames[:, :, 0])  # d/dt of 2R d_k
        x_new = chain3d.end_points(x, frames, R)[-1]
        v_new = v + step.sum(axis=0)
        frames_new = frames[::-1] @ REVERSE
        omega_new = omega[::-1].copy()
        phi = self.q[3:].reshape(-1, 3)
        phi_new = np.zeros_like(phi)
        phi_new[1:] = phi[1:][::-1] * np.array([-1.0, 1.0, 1.0])
        w = self.work
        presc = w.presc.copy()
        w.presc[0] = False
        w.presc[1:] = presc[1:][::-1]
        self.anchor, self.mode = "free", chain3d.ANCHORS.index("free")
        self.H = np.ascontiguousarray(frames_new[0] @ chain3d.FLIP)
        self._set_state(x_new, frames_new, v_new, omega_new, phi_new)
        w.acc_p[:] = 0.0
        self.touched()

    def catch(self) -> None:
        """A hand takes hold of the free anchored end where it is (docs/solver.md,
        "Holding the ends"): E_1 stops at once, by an impulse on it alone (the joints'
        momenta kept, locked joints staying locked; half hoop 1 turns on about the
        hand's still holder, as in the planar catch; the hand takes the kinetic energy
        it must), and joint 1 gets its spring back at the rotation
        phi_1 = K^-1 R_1^T tau, tau the chain's weight's moment about E_1 (the planar
        catch's grip, theta_1 = tau_z / k_coil, in a planar state; at most pi/2, and
        open at least to the coils' bound with contact, either law), half hoop 1
        unmoved: the holder frame is set to match."""
        if self.anchor != "free":
            raise Solver3DError("only a free anchored end can be caught")
        w, p = self.work, self.p
        n = p.N
        # the impulse: E_1 prescribed to stop, locked joints to stay (the chart H is
        # still: joint 1's rate is half hoop 1's own, kept as the holder's below)
        par0 = self.par.copy()
        par0[ab.P_G] = 0.0
        presc = w.presc.copy()
        w.presc[0] = False
        w.acc_p[:] = 0.0
        for k in np.flatnonzero(w.presc):
            w.acc_p[3 + 3 * k:6 + 3 * k] = -self.u[3 + 3 * k:6 + 3 * k]
        w.acc_p[:3] = -self.u[:3]
        m = 3 + 3 * n
        ab.aba(ab.CLAMPED, self.q, np.zeros(m), self.H, np.zeros(m), np.zeros((n, 3, 3)),
               par0, w.presc, w.acc_p, w.qdd, w.jf, w.frames, w.ws, w.scr, w.tmp, w.d9)
        self.u += w.qdd
        self.u[:3] = 0.0
        w.presc[:] = presc
        w.presc[0] = False
        w.acc_p[:] = 0.0
        # the grip: joint 1's spring balancing the weight's moment about E_1
        x, frames, _, _ = self.pose()
        r = chain3d.centroids(x, frames, p.R, self.mass) - x
        tau = -p.m * p.g * chain3d.cross(r, chain3d.UP).sum(axis=0)
        phi = (frames[0].T @ tau) / self.K
        size = float(np.linalg.norm(phi))
        if size > 0.5 * math.pi:  # a hand bends a coil so far
            phi *= 0.5 * math.pi / size
        if self.contact or self.work.soft[0] != 0.0:  # open at least to the bound
            for _ in range(50):
                gap = self.smin - coil_contact3d.opening(*phi)
                if gap <= 0.0:
                    break
                phi[1] += gap + 1e-15
        self.H = np.ascontiguousarray(frames[0] @ chain3d.exp_map(phi).T @ chain3d.FLIP)
        self.q[3:6] = phi
        self.anchor, self.mode = "clamped", chain3d.ANCHORS.index("clamped")
        self.touched()

    def _set_state(self, x, frames, v, omega, phi) -> None:
        """q and u of a pose given by its joints' rotations (N, 3) and its velocities."""
        prev = np.zeros_like(omega)
        prev[1:] = omega[:-1]
        w = np.einsum("kji,kj->ki", frames, omega - prev)  # R_k^T (omega_k - omega_{k-1})
        self.q[:3] = x
        self.q[3:] = phi.reshape(-1)
        self.u[:3] = v
        self.u[3:] = w.reshape(-1)

    def touched(self) -> None:
        """The state changed between steps: no solve's kinematics or accelerations kept."""
        self.work.known[0] = False
        self.cwork[coil_contact3d.ACC_OK][0] = 0.0
        if self.world is not None:
            self.world.keep[:] = 0  # the world solve's memory of cycled coils

    @property
    def locked(self) -> np.ndarray:
        """(N,) the joints locked closed for the last step."""
        return self.work.presc.copy()

    def contact_torques(self) -> np.ndarray:
        """(N,) each locked joint's contact moment c_j at the last step's start
        (coil_contact3d.contacts: >= 0 pushes the coil open; 0 where not locked)."""
        return np.where(self.work.presc, self.cwork[4], 0.0)

    def openings(self) -> np.ndarray:
        """(N,) each joint's opening s_j - sin(theta_min) (coil_contact3d.opening);
        inf at an unsprung joint 1 (pivot, free), which has no coil below."""
        q = self.q[3:].reshape(-1, 3)
        s = np.array([coil_contact3d.opening(*phi) for phi in q]) - self.smin
        if self.anchor != "clamped":
            s[0] = np.inf
        return s

    @property
    def evaluations(self) -> int:
        return int(self.work.evaluations[0])

    # -- what the state holds ----------------------------------------------------
    def accelerations(self) -> tuple[np.ndarray, np.ndarray]:
        """(E_1's acceleration, the half hoops' angular accelerations (N, 3), world)."""
        w = self.work
        integrator3d.accelerations(self.mode, self.q, self.u, self.H, self.par, w)
        n = self.p.N
        dw = np.einsum("kij,kj->ki", w.frames, w.qdd[3:].reshape(n, 3))  # R_k w_dot_k
        wr = w.ws[:, ab.WW:ab.WW + 3]
        om = w.ws[:, ab.OM:ab.OM + 3]
        # d/dt (R_k w_k) = omega_k x R_k w_k + R_k w_dot_k, summed along the chain
        return w.qdd[:3].copy(), np.cumsum(chain3d.cross(om, wr) + dw, axis=0)

    def pose(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(x, frames, v, omega) now, chain3d's way."""
        w = self.work
        ab.kinematics(self.q, self.u, self.H, self.p.R, w.frames, w.ws, w.tmp)
        return (self.q[:3].copy(), w.frames.copy(), self.u[:3].copy(),
                w.ws[:, ab.OM:ab.OM + 3].copy())

    def end_points(self) -> np.ndarray:
        x, frames, _, _ = self.pose()
        return chain3d.end_points(x, frames, self.p.R)

    def energy(self) -> float:
        """Mechanical energy T + V (chain3d's, with this solver's stiffness and mass)."""
        x, frames, v, omega = self.pose()
        holder = self.H if self.anchor == "clamped" else None
        return chain3d.kinetic_energy(self.p, frames, v, omega, self.mass) + \
            chain3d.potential_energy(self.p, x, frames, holder, self.K, self.mass)

    def state_hash(self) -> str:
        """The evolving state's bits: q, u and the holder's chart."""
        hs = hashlib.sha256()
        for a in (self.q, self.u, self.H):
            hs.update(np.ascontiguousarray(a).tobytes())
        return hs.hexdigest()
