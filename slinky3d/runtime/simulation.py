"""A scene in motion: all its Slinkies, on one fixed time grid, with a divergence guard.

`Simulation` is what the solver thread, the recorder and the tests drive.
"""

from __future__ import annotations

import math

import numpy as np

from slinky3d.dynamics.engine3d import SlinkySolver3D
from slinky3d.dynamics.solver import SlinkySolver
from slinky3d.engines import ENGINES, PLANAR
from slinky3d.errors import SlinkyError
from slinky3d.model import chain
from slinky3d.runtime.snapshot import Energy, SlinkySnapshot, Snapshot
from slinky3d.scene.spec import Scene


def grid_step(dt: float, interval: float) -> tuple[float, int]:
    """The largest step <= dt that divides `interval`, and how many make it up.

    Keeps samples on the step grid; the step is never enlarged.
    """
    k = max(1, math.ceil(interval / dt - 1e-9))
    return interval / k, k


def planar_target(v, solver: str):
    """A point or velocity given as (x, y) or (x, y, z) (world): the planar solver's
    Slinkies live in the plane z = 0, so there z is dropped (the point projected onto
    the plane along z: a 3D picking ray's point is taken where it is seen from the side);
    the 3D solver takes it whole. None stays None."""
    if v is None or solver != PLANAR:
        return v
    return tuple(v)[:2]


class Simulation:
    """All Slinkies of a scene, advanced together on the grid of step h.

    `sleep` (default: the scene's `sleep`, on unless it says false): a Slinky at rest
    on the world sleeps until a command, a roll-back or `wake` wakes it
    (docs/solver.md, "Sleeping"). `solver` (default: the scene's, slinky3d.engines):
    "planar", the paper's model, or "3d" (dynamics/engine3d.py; what it cannot run yet
    is refused here, in one line)."""

    def __init__(self, scene: Scene, h: float | None = None, sleep: bool | None = None,
                 solver: str | None = None):
        self.scene = scene
        self.h = float(h if h is not None else scene.dt)
        self.sleep = scene.sleep if sleep is None else bool(sleep)
        self.solver = scene.solver if solver is None else solver
        if self.solver not in ENGINES:
            raise SlinkyError(f"unknown solver {self.solver!r} (known: {', '.join(ENGINES)})")
        self.slinkies: list[SlinkySolver | SlinkySolver3D]
        if self.solver == PLANAR:
            if scene.needs_3d:
                raise SlinkyError(f"{scene.title}: the planar solver cannot run this scene "
                                  "(turned by rotate, a block of its world turned, moved along "
                                  "z, a scripted end let go, "
                                  "moving at the start, or a far end held while the anchored "
                                  "end moves); the 3D solver runs it")
            self.slinkies = [SlinkySolver(s, self.h, scene.world, self.sleep)
                             for s in scene.slinkies]
        else:
            self.slinkies = [
                SlinkySolver3D(s, self.h, scene.world, scene.turn,
                               f"{scene.title}: {s.name or f'Slinky {i + 1}'}", self.sleep)
                for i, s in enumerate(scene.slinkies)]
        self.status = ""
        self.rollbacks = 0
        self._keep_all()

    @property
    def t(self) -> float:
        return self.slinkies[0].t if self.slinkies else 0.0

    def reset(self) -> None:
        for s in self.slinkies:
            s.reset()
        self._keep_all()
        self.status = ""

    def step(self, nsteps: int = 1) -> None:
        """Advance every Slinky nsteps steps; a diverged one is rolled back. A Slinky
        asleep before and after has not changed: nothing to guard."""
        for i, s in enumerate(self.slinkies):
            was = s.asleep
            # a hand that let go inside these steps (a scripted end's release) put energy
            # in before it did: the guard's energy check is off for them
            driven = s.grabbed is not None or s.driven
            s.advance(nsteps)
            if not (was and s.asleep):
                self._guard(i, s, nsteps, driven)

    def wake(self, i: int | None = None) -> None:
        """Wake Slinky i (None: all): what a change of the world or of a Slinky's
        parameters must do. Commands wake the Slinky they act on by themselves."""
        for s in self.slinkies if i is None else [self.slinkies[i]]:
            s.wake()

    def advance_to(self, t: float) -> None:
        """Advance to the last grid time not after t."""
        n = math.floor((t - self.t) / self.h + 1e-9)
        if n > 0:
            self.step(n)

    def _keep_all(self) -> None:
        """Every Slinky's state, energy balance and account sums as the last good ones."""
        self._good = [s.state() for s in self.slinkies]
        self._good_energy = [s.guard_figures()[0] for s in self.slinkies]
        self._good_losses = [s.losses() for s in self.slinkies]

    def _guard(self, i: int, s: SlinkySolver | SlinkySolver3D, nsteps: int,
               driven: bool = False) -> None:
        """NaN/inf, or energy rising with nothing putting any in, rolls back. The energy
        checked is the account's balance (mechanical energy plus what the dampers and
        impacts took): the paper's pairwise rule can put energy in at an impact, a flaw
        of that law that it books as a negative loss, not a divergence of the solver."""
        e, fastest = s.guard_figures()
        ok = math.isfinite(e) and fastest < 1e5
        p = s.p
        driven = driven or s.grabbed is not None or s.driven
        if ok and not driven:
            scale = p.mass * p.g * 2 * p.R * p.N
            ok = e <= self._good_energy[i] + 1e-3 * scale
        if ok:
            self._good[i] = s.state()
            self._good_energy[i] = e
            self._good_losses[i] = s.losses()
            return
        k, t = s.k, s.t
        s.restore(self._good[i])
        s.set_losses(self._good_losses[i])
        s.release_grab()
        s.k, s.t = k, t  # time goes on; the state is the last good one, at rest in it
        s.qd[:] = 0.0
        s.settle()
        s.wake()
        self.rollbacks += 1
        self.status = f"solver diverged at t = {t:.3f} s on Slinky {i + 1}: rolled back"

    # -- commands ------------------------------------------------------------
    def grab(self, i: int, k: int, target: tuple[float, ...] | None = None) -> None:
        """Grab end point k of Slinky i, pulled toward `target` (world metres, (x, y) or
        (x, y, z): see `planar_target`)."""
        self.slinkies[i].grab(k, planar_target(target, self.solver))

    def move_grab(self, i: int, target: tuple[float, ...]) -> None:
        self.slinkies[i].move_grab(planar_target(target, self.solver))

    def release(self, i: int) -> None:
        s = self.slinkies[i]
        if not s.asleep:  # a sleeping Slinky holds no grab: nothing to let go of, no wake
            s.release_grab()

    def drive_base(self, i: int, velocity: tuple[float, ...]) -> str:
        """Move Slinky i's held anchored end toward `velocity` (world m/s, (vx, vy) or
        (vx, vy, vz): see `planar_target`); '' or why not."""
        return self.slinkies[i].drive(planar_target(velocity, self.solver))

    def twist_base(self, i: int, rate: float) -> str:
        """Turn Slinky i's held anchored end about the vertical toward `rate` (rad/s,
        counter-clockwise seen from above); '' or why not (the planar solver refuses)."""
        return self.slinkies[i].twist(rate)

    def let_go(self, i: int) -> str:
        """Let go of Slinky i's held end now; '' or why not."""
        return self._by_hand(i, self.slinkies[i].let_go())

    def take_hold(self, i: int, point: int) -> str:
        """Hold end point `point` (0 or N) of Slinky i where it is; '' or why not."""
        return self._by_hand(i, self.slinkies[i].take_hold(point))

    def _by_hand(self, i: int, why: str) -> str:
        """After a hand let go of an end or caught one: the hand's work (a catch's joint
        1 spring, a release taking it away) is not the solver's, so the guard's last
        good state is the state now, and the next step's energy its new baseline (that
        step is checked for NaN and speed only; the guard's figures are not computed
        here: the planar kernels keep their scratch, and results would depend on it)."""
        if not why:
            s = self.slinkies[i]
            self._good[i] = s.state()
            self._good_energy[i] = math.inf
            self._good_losses[i] = s.losses()
        return why

    # -- output --------------------------------------------------------------
    def snapshot(self, real_time_factor: float = 1.0, behind: bool = False) -> Snapshot:
        out = []
        for s in self.slinkies:
            if isinstance(s, SlinkySolver3D):
                out.append(s.snapshot())
                continue
            p = s.p
            g = s.grabbed
            ends = s.ends()
            out.append(SlinkySnapshot(
                ends=ends, theta=s.q[chain.BASE:].copy(),
                contact=s.q[chain.BASE:] <= p.theta_min + chain.TOUCHING,
                R=p.R, pitch=p.delta, theta_min=p.theta_min,
                grab=s.grab_target() if g is not None else None,
                grab_point=ends[g].copy() if g is not None else None,
                anchor_held=not s.free, far_held=s.far_held(s.t), preset=p.preset,
                energy=Energy(*s.energy_account()), impact_age=s.impact_age(),
                asleep=s.asleep, left=tuple(s.left_holders())))
        return Snapshot(t=self.t, slinkies=tuple(out), real_time_factor=real_time_factor,
                        behind=behind, status=self.status, rollbacks=self.rollbacks)

    def state_hash(self) -> str:
        """Hash of everything that evolves: bit-identical runs give the same hash."""
        import hashlib

        h = hashlib.sha256()
        for s in self.slinkies:
            for a in s.hashed():
                h.update(np.ascontiguousarray(a).tobytes())
            h.update(np.int64(s.k).tobytes())
        return h.hexdigest()

