"""Real-time solver of one Slinky: fixed step, events inside steps, O(N) per step.

The compiled kernels are step.py's `step` and `run` (with the modules they use);
this class owns one Slinky's state (q, qd, contacts, grab), its parameters and modes
(workspace.py's records) and its end conditions, which change at release times and
on grab commands. Several Slinkies are several instances.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numba.core.registry import CPUDispatcher

from slinky3d.dynamics.articulated_body import energy as aba_energy
from slinky3d.dynamics.articulated_body import energy_parts, guard_figures
from slinky3d.dynamics.couplings import (
    grab_defaults,
    grab_substeps,
    soft_defaults,
    soft_substeps,
)
from slinky3d.dynamics.hand import DRIVE_SPEED, Left, catch, drive_acceleration, reverse
from slinky3d.dynamics.sleep import Rest, RestTest
from slinky3d.dynamics.step import run
from slinky3d.dynamics.workspace import (
    COUNTERS,
    LAW_OFF,
    LAW_SOFT,
    LAWS,
    MODES,
    PARAMETERS,
    hard,
    new_work,
    plain,
)
from slinky3d.dynamics.world_contact import WORLD, new_world_work, run_world
from slinky3d.model import chain
from slinky3d.model.chain import BASE, TOUCHING
from slinky3d.scene.spec import SlinkySpec
from slinky3d.scene.world import World


class SlinkySolver:
    """One Slinky advanced on a fixed grid of step h."""

    def __init__(self, spec: SlinkySpec, h: float = 1e-3, world: World | None = None,
                 sleep: bool = False):
        p = spec.params
        self.spec, self.p, self.h = spec, p, h
        n = p.N
        self._energy_constants = (p.m, p.I, p.R, p.g, p.k_coil)  # the energy kernels' own
        self.work = new_work(n)
        self._work = plain(self.work)  # what `run` takes (see there)
        # The world it may touch: then steps near it are world_contact's
        self.world = world if world is not None and world.solid else None
        self._world_args: tuple | None = None
        if self.world is not None:
            wpar = np.zeros(1, WORLD)
            wpar["floor"], wpar["mu"], wpar["mu_static"] = (
                self.world.floor, self.world.mu, self.world.mu_static)
            self.world_work = new_world_work(n, np.array(self.world.blocks(), float))
            self._world_args = (wpar, tuple(self.world_work))
        # Sleeping at rest on the world (sleep.py): only where there is a world to rest on
        self.sleeps = sleep and self.world is not None
        self.rest = Rest()
        self._rest_test = RestTest(p, self.world, h) if self.sleeps and self.world is not None \
            else None
        # The kernels take records: views of these 1-element arrays. The modes are part
        # of the state, copied as integers (a structured array's copy costs 1.2 us).
        self._parameters = np.zeros(1, PARAMETERS)
        self._modes = np.zeros(1, MODES)
        self._counters = np.zeros(1, COUNTERS)
        self.par, self.modes, self.cnt = self._parameters[0], self._modes[0], self._counters[0]
        self._mode_values = self._modes.view(np.int64)
        self._parameter_values = self._parameters.view(np.float64)  # all f8: copied as such
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
            px, py, _ = mo.phases()  # z's: the plane drops it
            par["drive_frequency"], par["drive_phase"], par["drive_phase_y"] = (
                mo.frequency, px, py)
            par["drive_start"] = mo.start
            par["drive_rate"], par["drive_frequency_max"] = mo.frequency_rate, mo.frequency_max
            par["drive_stop"] = mo.stop
        self._scripted = bool(par["drive_frequency"] > 0.0)
        law = LAWS[spec.contact.law] if spec.contact.enabled else LAW_OFF
        self.modes["law"] = law
        nsub = soft_substeps(kc, dc, p.I, self.h) if law == LAW_SOFT else 1
        self.modes["substeps"] = nsub
        self._substeps = nsub
        self._grab_substeps = max(nsub, grab_substeps(
            par["grab_stiffness"], par["grab_maxwell_stiffness"], p.m, self.h))

    # -- state ---------------------------------------------------------------
    def reset(self) -> None:
        """Back to the scene's initial state (at rest in q0)."""
        n = self.p.N
        self._parameters[:] = 0  # a hand may have moved the anchor
        self._fill_params()
        self.hand = False  # a hand took over the ends from the scene's schedule
        self.mirror = False  # model x = -world x (a re-rooting with N even)
        self.drive_velocity = np.zeros(2)  # the held anchor's, model frame (m/s)
        self.drive_wanted = np.zeros(2)  # DriveBase's, model frame (m/s)
        self._moving = False
        self.work.impact_time[:] = -np.inf
        sm = self.work.small
        sm["damping_loss"], sm["impact_loss"], sm["damping_trial"] = 0.0, 0.0, 0.0
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
        # Where a holder let go of an end (drawn there, open, afterwards): a drawing
        # hint, not part of the state. The far end is still until its scheduled release.
        self.left: list[Left] = []
        far = self.spec.far
        if far.condition == "released" and math.isfinite(far.release_time):
            self.left.append(self._left_end(far=True, t=max(far.release_time, 0.0)))
        if not self.spec.anchor.held_at(0.0):
            self._free_anchor()
        if hard(self.modes["law"]):
            j0 = self._first_joint()
            touching = self.q[j0:] <= self.p.theta_min + TOUCHING
            self.q[j0:][touching] = self.p.theta_min
            self.locked[j0:] = touching

    def _touched(self) -> None:
        """The state or the drives changed from outside: no cached dynamics, and a
        sleeping Slinky wakes."""
        self.work.small["dynamics_current"] = 0
        self.rest.wake()

    def wake(self) -> None:
        """Wake it (a change of the world or of its parameters, a roll-back)."""
        self._touched()

    @property
    def asleep(self) -> bool:
        return self.rest.asleep

    def _first_joint(self) -> int:
        return chain.first_joint(self.free)

    def _left_end(self, far: bool, t: float) -> Left:
        """Where the holder of an end lets go at time t: the end point and the next two
        (world m, from the end inward), the Slinky's middle (the side the holder sits
        on), the end half hoop's bulge sign (half hoop k bulges +z for even k)."""
        e = self.ends()
        middle = 0.5 * (e[1:] + e[:-1]).mean(axis=0)
        if far:
            return Left(e[::-1][:3].copy(), middle, -1.0 if (len(e) - 2) % 2 else 1.0, t)
        return Left(e[:3].copy(), middle, 1.0, t)

    def left_holders(self) -> list[Left]:
        """The holders that have let go of an end by now (see `_left_end`)."""
        return [x for x in self.left if x.t <= self.t]

    def _free_anchor(self) -> None:
        """The anchored end lets go: its pose becomes free, joint 1 loses its spring."""
        self._touched()
        self.modes["anchor_free"] = 1
        chain.release_anchor(self.qd)
        self.locked[BASE] = False

    @property
    def free(self) -> bool:
        return bool(self.modes["anchor_free"])

    def frozen(self, t: float) -> bool:
        """Both ends held: the Slinky rests in its static shape (it starts in equilibrium)."""
        return self.far_held(t)

    def far_held(self, t: float) -> bool:
        """Whether the far end is held at time t (never once a hand took over)."""
        return not self.hand and self.spec.far.held_at(t)

    @property
    def driven(self) -> bool:
        """Something may be putting energy in: a scripted anchor or a moving hand."""
        return self._moving or (self._scripted and not self.free)

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

    def energy_account(self) -> tuple[float, float, float, float, float]:
        """(kinetic, gravity, spring, damping, impacts) in J: the mechanical energy
        (gravity's zero at y = 0) and what the joint dampers and the coil impacts
        took since the last reset (the compiled kernels' running sums)."""
        f = self.work.forces
        kinetic, gravity, spring = energy_parts(
            self.q, self.qd, *self._energy_constants, self._first_joint(), f.ends,
            f.bar_axes, f.aba_rows)
        return (kinetic, gravity, spring, *self.losses())

    def guard_figures(self) -> tuple[float, float]:
        """(balance, fastest): the energy account summed (as `energy_account`'s parts
        in order: J), and the largest |qd| (inf when anything is not finite), in one
        compiled pass: what the divergence guard reads after every step."""
        f = self.work.forces
        mechanical, fastest = guard_figures(
            self.q, self.qd, *self._energy_constants, self._first_joint(), f.ends,
            f.bar_axes, f.aba_rows)
        damping, impacts = self.losses()
        return mechanical + damping + impacts, fastest

    def losses(self) -> tuple[float, float]:
        """(damping, impacts): the energy account's running sums (J)."""
        sm = self.work.small[0]
        return float(sm["damping_loss"]), float(sm["impact_loss"])

    def set_losses(self, losses: tuple[float, float]) -> None:
        """Put the account's sums back (a roll-back: what diverged steps booked is
        dropped, a NaN among it too)."""
        sm = self.work.small
        sm["damping_loss"], sm["impact_loss"], sm["damping_trial"] = *losses, 0.0

    def impact_age(self) -> np.ndarray:
        """(N,) simulated seconds since each joint's last coil impact (inf: none)."""
        return self.t - self.work.impact_time[BASE:]

    def energy(self) -> float:
        p = self.p
        return float(aba_energy(self.q, self.qd, p.m, p.I, p.R, p.g, p.k_coil,
                                self._first_joint(), self.work.forces.ends,
                                self.work.forces.bar_axes, self.work.forces.aba_rows))

    def ends(self) -> np.ndarray:
        """(N+1, 2) end points in world metres (E_1 first)."""
        return self._world(chain.end_points(self.q, self.p.R))

    def _world(self, xy: np.ndarray) -> np.ndarray:
        """Model-frame points or vectors (..., 2) in the world frame (and back)."""
        if self.mirror:
            xy = np.array(xy, dtype=float)
            xy[..., 0] *= -1.0
        return xy

    def grab_target(self) -> np.ndarray:
        """The grab's target in world metres."""
        return self._world(self.target.copy())

    # -- grab ----------------------------------------------------------------
    def grab(self, k: int, target: tuple[float, float] | None = None) -> None:
        """Grab end point k (0 = anchored end .. N = far end), pulled toward target."""
        k = int(min(max(k, 0), self.p.N))
        E = chain.end_points(self.q, self.p.R)
        self.target[:] = E[k] if target is None else self._world(self._reachable(target))
        self.sd[:] = self.target - E[k]  # Maxwell branch starts unloaded
        self.modes["grab_point"] = k
        self.modes["grab"] = 1
        self.modes["substeps"] = self._grab_substeps
        self._touched()

    def move_grab(self, target: tuple[float, float]) -> None:
        if np.all(np.isfinite(target)):
            self.target[:] = self._world(self._reachable(target))
            self._touched()

    def _reachable(self, target: tuple[float, float]) -> np.ndarray:
        """A grab's target (world metres) kept out of the world's solid: a hand cannot
        go into the floor or a step, so a target below the surface is lifted onto it
        (else the grabbed end is pressed into the surface with up to the grab's cap,
        five times the Slinky's weight)."""
        out = np.array(target, dtype=float)
        if self.world is not None and math.isfinite(out[0]):
            out[1] = max(out[1], self.world.surface(float(out[0])))
        return out

    def release_grab(self) -> None:
        self.modes["grab"] = 0
        self.modes["substeps"] = self._substeps
        self._touched()

    # -- a hand on the ends (docs/solver.md, "Holding the ends") ---------------------
    def twist(self, rate: float) -> str:
        """Refused: a twist about the vertical turns the end out of the plane."""
        return "the planar solver cannot twist an end out of its plane (--solver 3d can)"

    def drive(self, velocity: tuple[float, float]) -> str:
        """Move the held anchored end toward `velocity` (world m/s) with at most
        DRIVE_ACCELERATION; '' or why not."""
        if self.free:
            return "the anchored end is not held"
        if self.far_held(self.t):
            return "both ends are held: let go of one first"
        v = self._world(np.asarray(velocity, dtype=float))
        speed = float(np.hypot(*v))
        if not math.isfinite(speed):
            return f"velocity {velocity!r} is not finite"
        if speed > DRIVE_SPEED:
            v *= DRIVE_SPEED / speed
        self._take_over()
        if self.par["hand"] == 0.0:
            self._hand_at(self.t, np.zeros(2), np.zeros(2), np.zeros(2))
        self.drive_wanted[:] = v
        self._hand_moved()
        return ""

    def let_go(self) -> str:
        """Let go of the held end now; '' or why not. With both ends held, the anchored
        end is let go of and the far end becomes the anchored one (re-rooted)."""
        if self.far_held(self.t):
            self.left.append(self._left_end(far=self.free, t=self.t))
            if not self.free:
                self._reroot()
                self._clamp()
            self._take_over()
            return ""
        if self.free:
            return "no end is held"
        self.left.append(self._left_end(far=False, t=self.t))
        self._take_over()
        self._stop_hand()
        self._free_anchor()
        return ""

    def take_hold(self, point: int) -> str:
        """Hold end point `point` (0 or N) where it is, stopping it; '' or why not.
        Holding the far end re-roots the chain (it becomes the anchored end) and lets
        go of the other."""
        n = self.p.N
        if point == 0:
            if not self.free:
                return "the anchored end is already held"
        elif point == n:
            if self.far_held(self.t):
                return "the far end is already held"
            self._stop_hand()
            self._reroot()
        else:
            return f"point {point} is not an end (0 or {n})"
        self._take_over()
        self._clamp()
        self.left.clear()  # the hand holds on again: no holder is left open
        return ""

    def _clamp(self) -> None:
        """Clamp the anchored end of a free Slinky where it is: its pose stops at once
        (an impulse that conserves the momentum of the rest: the hand takes the kinetic
        energy it must), joint 1 gets its spring back at the angle that balances the
        chain's weight now (at least theta_min with contacts), bar 1 unmoved."""
        q = self.q
        catch(self.p, q, self.qd, self.locked, self.modes["law"] != LAW_OFF)
        par = self.par
        par["anchor_x"], par["anchor_y"], par["anchor_phi"] = q[0], q[1], q[2]
        par["drive_frequency"] = 0.0  # a scripted motion ends with the catch
        self._scripted = False
        par["hand"] = 0.0
        self.drive_velocity[:] = 0.0
        self.drive_wanted[:] = 0.0
        self._moving = False
        self.modes["anchor_free"] = 0
        self._touched()

    def _reroot(self) -> None:
        """The far end becomes the anchored end, free (`hand.reverse`); contacts,
        impact times and a grab follow it; `ends` and the grab stay in world
        coordinates when the model frame is mirrored."""
        n = self.p.N
        flip = reverse(self.p, self.q, self.qd)
        T = np.array([-1.0 if flip else 1.0, 1.0])
        self.locked[BASE + 1:] = self.locked[BASE + 1:][::-1].copy()
        self.locked[BASE] = False
        it = self.work.impact_time
        it[BASE + 1:] = it[BASE + 1:][::-1].copy()
        it[BASE] = -np.inf
        if self.modes["grab"]:
            self.modes["grab_point"] = n - int(self.modes["grab_point"])
            self.target *= T
            self.sd *= T
        self.mirror ^= flip
        self.modes["anchor_free"] = 1
        self._touched()

    def _take_over(self) -> None:
        """From now on the hand, not the scene's schedule, holds and lets go (a release
        the schedule had for later will not come)."""
        self.hand = True
        self.left = [x for x in self.left if x.t <= self.t]
        self._touched()

    def _hand_at(self, t0: float, offset: np.ndarray, velocity: np.ndarray,
                 acceleration: np.ndarray) -> None:
        par = self.par
        par["hand"], par["hand_t0"] = 1.0, t0
        par["hand_x"], par["hand_y"] = offset
        par["hand_vx"], par["hand_vy"] = velocity
        par["hand_ax"], par["hand_ay"] = acceleration
        self._touched()

    def _hand_offset(self, t: float) -> np.ndarray:
        par = self.par
        tau = t - par["hand_t0"]
        return np.array([par["hand_x"] + tau * (par["hand_vx"] + 0.5 * tau * par["hand_ax"]),
                         par["hand_y"] + tau * (par["hand_vy"] + 0.5 * tau * par["hand_ay"])])

    def _stop_hand(self) -> None:
        """The hand stops driving (where it is; a held anchor at rest stays put)."""
        if self.par["hand"] != 0.0:
            off = self._hand_offset(self.t)
            self.par["anchor_x"] += off[0]
            self.par["anchor_y"] += off[1]
            self.par["hand"] = 0.0
        self.drive_velocity[:] = 0.0
        self.drive_wanted[:] = 0.0
        self._moving = False
        self._touched()

    def settle(self) -> None:
        """After a roll-back to a state at rest: a moving hand stops where it is."""
        if self.par["hand"] != 0.0:
            self._stop_hand()
            self._hand_at(self.t, np.zeros(2), np.zeros(2), np.zeros(2))

    def _drive_step(self) -> None:
        """The hand's acceleration over the next step: toward the wanted velocity, at
        most DRIVE_ACCELERATION, braking in time to stay within DRIVE_REACH."""
        v = self.drive_velocity
        off = self._hand_offset(self.t)
        pos = np.array([self.par["anchor_x"], self.par["anchor_y"]]) + off
        a, v_end = drive_acceleration(pos, v, self.drive_wanted, self.h)
        self._hand_at(self.t, off, v.copy(), a)
        v[:] = v_end
        self._hand_moved()

    @property
    def grabbed(self) -> int | None:
        return int(self.modes["grab_point"]) if self.modes["grab"] else None

    # -- stepping ------------------------------------------------------------
    def _advance(self, dt: float, k: int) -> float:
        """k steps of dt from self.t by the compiled kernels; returns the end time."""
        if self._world_args is None:
            return run(self.q, self.qd, self.sd, self.t, dt, k, self.locked, self.target,
                       self._parameters, self._modes, self._work, self._counters)
        return run_world(self.q, self.qd, self.sd, self.t, dt, k, self.locked, self.target,
                         self._parameters, self._modes, self._work, self._counters,
                         *self._world_args)

    def _advance_raw(self, dt: float) -> None:
        self.t = self._advance(dt, 1)

    def _hand_moved(self) -> None:
        """The hand's velocities changed: is it moving (a flag: this runs every step)?"""
        self._moving = bool(self.drive_velocity.any() or self.drive_wanted.any())

    def _run(self, k: int) -> None:
        if self._moving:
            while k > 0 and self._moving:
                self._drive_step()  # a moving hand: its acceleration is set step by step
                self._run_steps(1)
                k -= 1
            if not self._moving:  # at rest now: it stays where it stopped
                self._hand_at(self.t, self._hand_offset(self.t), np.zeros(2), np.zeros(2))
        self._run_steps(k)

    def _run_steps(self, k: int) -> None:
        if k > 0:
            self._advance(self.h, k)
            self.k += k
            self.t = self.k * self.h  # on the grid exactly, whatever the sums

    def advance(self, nsteps: int) -> None:
        """nsteps fixed steps of h, with the end conditions switching at their times. A
        Slinky that may sleep is advanced one step at a time and checked for rest after
        each (sleep.py), so that when it sleeps does not depend on the batches; asleep,
        its steps integrate nothing."""
        if not self.sleeps:
            self._integrate(nsteps)
            return
        for left in range(int(nsteps), 0, -1):
            if self.rest.asleep:
                self.k += left
                self.t = self.k * self.h
                return
            self._integrate(1)
            contacts = None
            if self._rest_test is not None and self._left_alone():
                contacts = self._rest_test.contacts(self.q, self.qd, self._first_joint())
            if self.rest.count(contacts, self.h):
                self._fall_asleep()

    def _left_alone(self) -> bool:
        """Nothing from outside acts on it or is due to: no grab, no moving or scripted
        end, both ends not held, no release to come."""
        due = (not self.free and not self.hand and self.spec.anchor.condition == "released")
        return not (self.modes["grab"] or self.driven or self.frozen(self.t) or due)

    def _fall_asleep(self) -> None:
        """Velocities to zero (the kinetic energy left, below 1/2 M (rest speed)^2,
        booked as the contacts' loss), and no more integration until woken."""
        self.work.small["impact_loss"] += self.energy_account()[0]
        self.qd[:] = 0.0
        self.work.small["dynamics_current"] = 0
        self.rest.asleep = True

    def _integrate(self, nsteps: int) -> None:
        """nsteps steps, integrated: `advance` without sleeping."""
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
            if (not self.free and not self.hand and self.spec.anchor.condition == "released"
                    and t_rel < k_end * h):
                k = math.floor(t_rel / h + 1e-9) - self.k
                if k > 0:
                    self._run(k)
                    continue
                # the release falls inside this step: split it there
                t_next = (self.k + 1) * h
                if t_rel - self.t > 1e-12 * h:
                    self._advance_raw(t_rel - self.t)
                self.left.append(self._left_end(far=False, t=t_rel))
                self._free_anchor()
                self._advance_raw(t_next - self.t)
                self.k += 1
                self.t = t_next
                continue
            self._run(left)

    def state(self) -> tuple:
        """A copy of everything that evolves, for roll-back (the guard takes one after
        every chunk of steps: the hand's part only once it took over). The energy
        account's sums and the impact times are diagnostics and not part of it: a
        roll-back, which stops the Slinky, leaves them as they were."""
        hand = None
        if self.hand:
            hand = (self.mirror, self._parameter_values.copy(), self.drive_velocity.copy(),
                    self.drive_wanted.copy())
        return (self.q.copy(), self.qd.copy(), self.sd.copy(), self.locked.copy(),
                self._mode_values.copy(), self.target.copy(), self.k, hand, self.rest.copy())

    def hashed(self) -> list[np.ndarray]:
        """What a state hash covers: the state, the hand's once it took over, and the
        sleep count once it started (so that runs without either hash as before)."""
        out = [self.q, self.qd, self.sd, self.locked, self._mode_values, self.target]
        if self.hand:
            out += [np.array([self.mirror], dtype=np.int64), self._parameters.view(np.uint8),
                    self.drive_velocity, self.drive_wanted]
        if self.rest.counted():
            out += self.rest.hashed()
        return out

    def restore(self, state: tuple) -> None:
        q, qd, sd, locked, modes, target, k, hand, rest = state
        self._touched()
        if hand is not None:
            self.hand = True
            self.mirror, parameters, velocity, wanted = hand
            self._parameter_values[:] = parameters
            self.drive_velocity[:], self.drive_wanted[:] = velocity, wanted
            self._hand_moved()
            self._scripted = bool(self.par["drive_frequency"] > 0.0)
        elif self.hand:  # back to before the hand took over: the scene's own ends
            self.hand = self.mirror = False
            self._parameters[:] = 0
            self._fill_params()
            self.drive_velocity[:] = 0.0
            self.drive_wanted[:] = 0.0
            self._moving = False
        self.q[:], self.qd[:], self.sd[:], self.locked[:] = q, qd, sd, locked
        self._mode_values[:], self.target[:] = modes, target
        self.k = k
        self.t = k * self.h
        self.rest = rest.copy()


COMPILING = ("compiling the simulation kernels (the first run only, about a minute; "
             "numba caches them)")


def kernels_ready() -> bool:
    """Whether `warm_up` will only load the kernels, not compile them: each kernel this
    module calls (the roots of all the others) is compiled in this process already, or
    numba's on-disk cache holds an index for it that numba accepts (same numba, source
    unchanged since)."""
    kernel: Any  # numba's cache object is private: no types for it
    for kernel in (v for v in globals().values() if isinstance(v, CPUDispatcher)):
        if kernel.signatures:
            continue
        try:
            # numba's own check: {} when the index is missing or stale
            index = kernel._cache._cache_file._load_index()
        except Exception:  # noqa: BLE001 - no cache (cache=False), or another numba
            return False
        if not index:
            return False
    return True


def warm_up(say: Callable[[str], object] | None = None) -> None:
    """Load (or compile) the compiled kernels on a tiny chain, so that timings of a
    real run measure the solver and not numba's cache loading. When they must be
    compiled, `say` is told so (COMPILING) first: a minute's silence looks like a hang."""
    if say is not None and not kernels_ready():
        say(COMPILING)
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
        s.energy_account()  # what snapshots and falling asleep read
        s.guard_figures()  # what the divergence guard reads
    # the world's scheme and sleeping's rest test too: a floor just below its far end
    floor = float(chain.end_points(q0, p.R)[:, 1].min()) - 1e-3
    SlinkySolver(spec, 1e-3, World(floor=floor), sleep=True).advance(2)
