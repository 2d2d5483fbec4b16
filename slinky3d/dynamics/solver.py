"""Real-time solver of one Slinky: fixed step, events inside steps, O(N) per step.

The compiled kernels are step.py's `step` and `run` (with the modules they use);
this class owns one Slinky's state (q, qd, contacts, grab), its parameters and modes
(workspace.py's records) and its end conditions, which change at release times and
on grab commands. Several Slinkies are several instances.
"""

from __future__ import annotations

import math

import numpy as np

from slinky3d.dynamics.articulated_body import energy as aba_energy
from slinky3d.dynamics.step import run
from slinky3d.dynamics.workspace import (
    COUNTERS,
    LAW_OFF,
    LAW_PAPER,
    LAW_RIGID,
    LAW_SOFT,
    LAWS,
    MODES,
    PARAMETERS,
    first_joint_of,
    new_work,
    plain,
)
from slinky3d.model import chain
from slinky3d.model.chain import BASE, TOUCHING
from slinky3d.scene.spec import SlinkySpec


def soft_defaults(spec: SlinkySpec) -> tuple[float, float]:
    """Soft-law stiffness and damping; damping defaults to critical for one hoop."""
    p, c = spec.params, spec.contact
    d = c.damping if c.damping is not None else 2.0 * math.sqrt(c.stiffness * p.I)
    return c.stiffness, d


def grab_defaults(spec: SlinkySpec) -> tuple[float, float, float, float]:
    """(holding spring, Maxwell spring, Maxwell damper, force cap) of the grab."""
    g = spec.grab
    weight = spec.params.mass * spec.params.g
    return g.stiffness, g.stiffness, g.damping, g.max_force_weights * weight


class SlinkySolver:
    """One Slinky advanced on a fixed grid of step h."""

    def __init__(self, spec: SlinkySpec, h: float = 1e-3):
        p = spec.params
        self.spec, self.p, self.h = spec, p, h
        n = p.N
        self.work = new_work(n)
        self._work = plain(self.work)  # what `run` takes (see there)
        # The kernels take records: views of these 1-element arrays. The modes are part
        # of the state, copied as integers (a structured array's copy costs 1.2 us).
        self._parameters = np.zeros(1, PARAMETERS)
        self._modes = np.zeros(1, MODES)
        self._counters = np.zeros(1, COUNTERS)
        self.par, self.modes, self.cnt = self._parameters[0], self._modes[0], self._counters[0]
        self._mode_values = self._modes.view(np.int64)
        self._fill_params()
        self.reset()

    def _fill_params(self) -> None:
        p, spec, par = self.p, self.spec, self.par
        par["mass"], par["inertia"], par["radius"], par["gravity"] = p.m, p.I, p.R, p.g
        par["stiffness"], par["damping"], par["theta_min"] = p.k_coil, p.C_D, p.theta_min
        kc, dc = soft_defaults(spec)
        par["contact_stiffness"], par["contact_damping"] = kc, dc
        (par["grab_stiffness"], par["grab_maxwell_stiffness"], par["grab_damping"],
         par["grab_max_force"]) = grab_defaults(spec)
        a = spec.anchor
        par["anchor_x"], par["anchor_y"], par["anchor_phi"] = (
            a.position[0], a.position[1], a.orientation)
        if a.condition == "scripted" and a.motion is not None:
            mo = a.motion
            par["drive_x"], par["drive_y"], par["drive_phi"] = (
                mo.amplitude[0], mo.amplitude[1], mo.rot_amplitude)
            par["drive_frequency"], par["drive_phase"], par["drive_start"] = (
                mo.frequency, mo.phase, mo.start)
        law = LAWS[spec.contact.law] if spec.contact.enabled else LAW_OFF
        self.modes["law"] = law
        nsub = 1
        if law == LAW_SOFT:
            # explicit soft contact: keep omega_c h_sub <= 0.5 (joint inertia ~ I/2)
            wc = math.sqrt(2.0 * kc / p.I) + dc / p.I
            nsub = max(1, math.ceil(wc * self.h / 0.5))
        self.modes["substeps"] = nsub

    # -- state ---------------------------------------------------------------
    def reset(self) -> None:
        """Back to the scene's initial state (at rest in q0)."""
        n = self.p.N
        self.t = 0.0
        self.k = 0  # steps taken: t = k h on the grid
        self.q = np.array(self.spec.q0, dtype=float)
        self.qd = np.zeros(n + BASE)
        self.sd = np.zeros(2)
        self.target = np.zeros(2)
        self.locked = np.zeros(n + BASE, dtype=np.bool_)
        self._counters[:] = 0
        self._touched()
        self.modes["anchor_free"] = 0
        self.modes["grab"] = 0
        if not self.spec.anchor.held_at(0.0):
            self._free_anchor()
        if self.modes["law"] in (LAW_RIGID, LAW_PAPER):
            j0 = self._first_joint()
            touching = self.q[j0:] <= self.p.theta_min + TOUCHING
            self.q[j0:][touching] = self.p.theta_min
            self.locked[j0:] = touching

    def _touched(self) -> None:
        """The state or the drives changed from outside: no cached dynamics."""
        self.work.small["dynamics_current"] = 0

    def _first_joint(self) -> int:
        return first_joint_of(self.free)

    def _free_anchor(self) -> None:
        """The anchored end lets go: its pose becomes free, joint 1 loses its spring."""
        self._touched()
        self.modes["anchor_free"] = 1
        # bar 1's rotation is now carried by phi_A; theta_1 is frozen
        self.qd[2] += self.qd[BASE]
        self.qd[BASE] = 0.0
        self.locked[BASE] = False

    @property
    def free(self) -> bool:
        return bool(self.modes["anchor_free"])

    def frozen(self, t: float) -> bool:
        """Both ends held: the Slinky rests in its static shape (it starts in equilibrium)."""
        return self.spec.far.held_at(t)

    @property
    def n_contacts(self) -> int:
        j0 = self._first_joint()
        return int(np.count_nonzero(self.q[j0:] <= self.p.theta_min + 1e-9))

    @property
    def impacts(self) -> int:
        return int(self.cnt["impacts"])

    @property
    def evals(self) -> int:
        return int(self.cnt["evaluations"])

    def energy(self) -> float:
        p = self.p
        return float(aba_energy(self.q, self.qd, p.m, p.I, p.R, p.g, p.k_coil,
                                self._first_joint(), self.work.forces.ends,
                                self.work.forces.bar_axes, self.work.forces.aba_rows))

    def ends(self) -> np.ndarray:
        return chain.end_points(self.q, self.p.R)

    # -- grab ----------------------------------------------------------------
    def grab(self, k: int, target: tuple[float, float] | None = None) -> None:
        """Grab end point k (0 = anchored end .. N = far end), pulled toward target."""
        k = int(min(max(k, 0), self.p.N))
        E = self.ends()
        self.target[:] = E[k] if target is None else target
        self.sd[:] = self.target - E[k]  # Maxwell branch starts unloaded
        self.modes["grab_point"] = k
        self.modes["grab"] = 1
        self._touched()

    def move_grab(self, target: tuple[float, float]) -> None:
        if np.all(np.isfinite(target)):
            self.target[:] = target
            self._touched()

    def release_grab(self) -> None:
        self.modes["grab"] = 0
        self._touched()

    @property
    def grabbed(self) -> int | None:
        return int(self.modes["grab_point"]) if self.modes["grab"] else None

    # -- stepping ------------------------------------------------------------
    def _advance_raw(self, dt: float) -> None:
        self.t = run(self.q, self.qd, self.sd, self.t, dt, 1, self.locked, self.target,
                     self._parameters, self._modes, self._work, self._counters)

    def _run(self, k: int) -> None:
        if k > 0:
            run(self.q, self.qd, self.sd, self.t, self.h, k, self.locked, self.target,
                self._parameters, self._modes, self._work, self._counters)
            self.k += k
            self.t = self.k * self.h  # on the grid exactly, whatever the sums

    def advance(self, nsteps: int) -> None:
        """nsteps fixed steps of h, with the end conditions switching at their times."""
        h = self.h
        k_end = self.k + int(nsteps)
        while self.k < k_end:
            left = k_end - self.k
            if self.frozen(self.t):
                # both ends held: nothing moves until the far end lets go
                t_rel = self.spec.far.release_time
                k = left
                if math.isfinite(t_rel):
                    k = min(left, max(1, math.ceil(t_rel / h - 1e-9) - self.k))
                self.k += k
                self.t = self.k * h
                continue
            t_rel = self.spec.anchor.release_time
            if not self.free and self.spec.anchor.condition == "released" and t_rel < k_end * h:
                k = math.floor(t_rel / h + 1e-9) - self.k
                if k > 0:
                    self._run(k)
                    continue
                # the release falls inside this step: split it there
                t_next = (self.k + 1) * h
                if t_rel - self.t > 1e-12 * h:
                    self._advance_raw(t_rel - self.t)
                self._free_anchor()
                self._advance_raw(t_next - self.t)
                self.k += 1
                self.t = t_next
                continue
            self._run(left)

    def state(self) -> tuple:
        """A copy of everything that evolves (for roll-back and hashing)."""
        return (self.q.copy(), self.qd.copy(), self.sd.copy(), self.locked.copy(),
                self._mode_values.copy(), self.target.copy(), self.k)

    def restore(self, state: tuple) -> None:
        q, qd, sd, locked, modes, target, k = state
        self._touched()
        self.q[:], self.qd[:], self.sd[:], self.locked[:] = q, qd, sd, locked
        self._mode_values[:], self.target[:] = modes, target
        self.k = k
        self.t = k * self.h


def warm_up() -> None:
    """Load (or compile) the compiled kernels on a tiny chain, so that timings of a
    real run measure the solver and not numba's cache loading."""
    from slinky3d.model.params import preset
    from slinky3d.scene.spec import ContactSpec, EndSpec

    p = preset("plastic", n_coils=2.0)
    for cd in (0.0, 1e-3):
        q0 = np.zeros(p.N + BASE)
        q0[BASE:] = p.theta_min
        spec = SlinkySpec(params=p.with_(C_D=cd), anchor=EndSpec("held"),
                          far=EndSpec("free", 0.0), q0=q0, contact=ContactSpec())
        s = SlinkySolver(spec, 1e-3)
        s.advance(2)
