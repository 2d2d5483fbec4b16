"""Real-time solver of one Slinky: fixed step, events inside steps, O(N) per step.

The compiled kernels are in `rt.py`, `rtlcp.py` and `rtcontact.py`; this class owns one
Slinky's state (q, qd, contacts, grab) and its end conditions, which change at
release times and on grab commands. Several Slinkies are several instances.
"""

from __future__ import annotations

import math

import numpy as np

from slinky3d.dynamics import rt
from slinky3d.dynamics.articulated_body import BASE
from slinky3d.dynamics.articulated_body import energy as aba_energy
from slinky3d.dynamics.step import run, step
from slinky3d.model import chain
from slinky3d.scene.spec import SlinkySpec

LAWS = {"rigid": rt.LAW_RIGID, "paper": rt.LAW_PAPER, "soft": rt.LAW_SOFT}


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
        self.work = rt.Work(n)
        self.w = self.work.arrays()
        self.cnt = np.zeros(6, dtype=np.int64)
        self.par = np.zeros(rt.NPAR)
        self.ipar = np.zeros(rt.NIPAR, dtype=np.int64)
        self._fill_params()
        self.reset()

    def _fill_params(self) -> None:
        p, spec, par, ipar = self.p, self.spec, self.par, self.ipar
        par[[rt.P_M, rt.P_I, rt.P_R, rt.P_G, rt.P_K, rt.P_CD, rt.P_TMIN]] = (
            p.m, p.I, p.R, p.g, p.k_coil, p.C_D, p.theta_min)
        kc, dc = soft_defaults(spec)
        par[rt.P_KC], par[rt.P_DC] = kc, dc
        par[[rt.P_GK, rt.P_GK2, rt.P_GD, rt.P_GCAP]] = grab_defaults(spec)
        a = spec.anchor
        par[[rt.P_X0, rt.P_Y0, rt.P_PHI0]] = (a.position[0], a.position[1], a.orientation)
        if a.condition == "scripted" and a.motion is not None:
            mo = a.motion
            par[[rt.P_AX, rt.P_AY, rt.P_AR, rt.P_FREQ, rt.P_PHASE, rt.P_START]] = (
                mo.amplitude[0], mo.amplitude[1], mo.rot_amplitude, mo.frequency, mo.phase,
                mo.start)
        law = LAWS[spec.contact.law] if spec.contact.enabled else rt.LAW_OFF
        ipar[rt.I_LAW] = law
        nsub = 1
        if law == rt.LAW_SOFT:
            # explicit soft contact: keep omega_c h_sub <= 0.5 (joint inertia ~ I/2)
            wc = math.sqrt(2.0 * kc / p.I) + dc / p.I
            nsub = max(1, math.ceil(wc * self.h / 0.5))
        ipar[rt.I_NSUB] = nsub

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
        self.cnt[:] = 0
        self._touched()
        self.ipar[rt.I_FREE] = 0
        self.ipar[rt.I_GRAB] = 0
        if not self.spec.anchor.held_at(0.0):
            self._free_anchor()
        if self.ipar[rt.I_LAW] in (rt.LAW_RIGID, rt.LAW_PAPER):
            j0 = BASE + 1 if self.ipar[rt.I_FREE] else BASE
            touching = self.q[j0:] <= self.p.theta_min + rt.POS_TOL
            self.q[j0:][touching] = self.p.theta_min
            self.locked[j0:] = touching

    def _touched(self) -> None:
        """The state or the drives changed from outside: no cached dynamics."""
        self.work.flags[0] = 0

    def _free_anchor(self) -> None:
        """The anchored end lets go: its pose becomes free, joint 1 loses its spring."""
        self._touched()
        self.ipar[rt.I_FREE] = 1
        # bar 1's rotation is now carried by phi_A; theta_1 is frozen
        self.qd[2] += self.qd[BASE]
        self.qd[BASE] = 0.0
        self.locked[BASE] = False

    @property
    def free(self) -> bool:
        return bool(self.ipar[rt.I_FREE])

    def frozen(self, t: float) -> bool:
        """Both ends held: the Slinky rests in its static shape (it starts in equilibrium)."""
        return self.spec.far.held_at(t)

    @property
    def n_contacts(self) -> int:
        j0 = BASE + 1 if self.free else BASE
        return int(np.count_nonzero(self.q[j0:] <= self.p.theta_min + 1e-9))

    @property
    def impacts(self) -> int:
        return int(self.cnt[rt.C_IMPACTS])

    @property
    def evals(self) -> int:
        return int(self.cnt[rt.C_EVALS])

    def energy(self) -> float:
        p = self.p
        return float(aba_energy(self.q, self.qd, p.m, p.I, p.R, p.g, p.k_coil,
                                BASE + 1 if self.free else BASE, self.work.E, self.work.U,
                                self.work.ws))

    def ends(self) -> np.ndarray:
        return chain.end_points(self.q, self.p.R)

    # -- grab ----------------------------------------------------------------
    def grab(self, k: int, target: tuple[float, float] | None = None) -> None:
        """Grab end point k (0 = anchored end .. N = far end), pulled toward target."""
        k = int(min(max(k, 0), self.p.N))
        E = self.ends()
        self.target[:] = E[k] if target is None else target
        self.sd[:] = self.target - E[k]  # Maxwell branch starts unloaded
        self.ipar[rt.I_GRABK] = k
        self.ipar[rt.I_GRAB] = 1
        self._touched()

    def move_grab(self, target: tuple[float, float]) -> None:
        if np.all(np.isfinite(target)):
            self.target[:] = target
            self._touched()

    def release_grab(self) -> None:
        self.ipar[rt.I_GRAB] = 0
        self._touched()

    @property
    def grabbed(self) -> int | None:
        return int(self.ipar[rt.I_GRABK]) if self.ipar[rt.I_GRAB] else None

    # -- stepping ------------------------------------------------------------
    def _advance_raw(self, dt: float) -> None:
        self.t = step(self.q, self.qd, self.sd, self.t, dt, self.locked, self.target,
                      self.par, self.ipar, self.w, self.cnt)

    def _run(self, k: int) -> None:
        if k > 0:
            run(self.q, self.qd, self.sd, self.t, self.h, k, self.locked, self.target,
                self.par, self.ipar, self.w, self.cnt)
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
                self.ipar.copy(), self.target.copy(), self.k)

    def restore(self, state: tuple) -> None:
        q, qd, sd, locked, ipar, target, k = state
        self._touched()
        self.q[:], self.qd[:], self.sd[:], self.locked[:] = q, qd, sd, locked
        self.ipar[:], self.target[:] = ipar, target
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
