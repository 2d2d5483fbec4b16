"""One Slinky of a scene under the 3D solver: what `Simulation` needs of a Slinky's
solver (dynamics/solver.py's `SlinkySolver`: advance, state and restore for the
divergence guard, the energy account, ends, commands), over dynamics/solver3d.py's
`Solver3D` (docs/solver.md, "The 3D solver", "Scenes on the 3D solver").

The scene's planar start (its static shape) is put in space by `chain3d.from_planar`
and turned by the scene's `rotate`; the half hoops carry the ring mass model, whose
equilibria the planar static shapes are and which reduces to the paper's model exactly
in the plane (docs/model.md section 12). What the 3D solver cannot run yet is refused
when the Slinky is made, in one line naming it (`unsupported`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from slinky3d.dynamics import articulated_body3d as ab
from slinky3d.dynamics import coil_contact3d, grab3d, integrator3d, world_contact3d
from slinky3d.dynamics.couplings import (
    grab_defaults,
    grab_substeps,
    soft_defaults,
    soft_substeps,
)
from slinky3d.dynamics.energy3d import guard_figures
from slinky3d.dynamics.hand import (
    DRIVE_SPEED,
    TWIST_SPEED,
    Left,
    drive_acceleration,
    twist_acceleration,
)
from slinky3d.dynamics.sleep import Rest, rest_speed
from slinky3d.dynamics.solver import COMPILING
from slinky3d.dynamics.solver3d import Solver3D, Solver3DError
from slinky3d.dynamics.world_contact3d import WorldContact3D
from slinky3d.model import chain, chain3d
from slinky3d.runtime.snapshot import SlinkySnapshot
from slinky3d.runtime.snapshot3d import slinky_snapshot
from slinky3d.scene.spec import SlinkySpec
from slinky3d.scene.world import World

MASS = "ring"  # the scenes' mass model under the 3D solver (module docstring)
ADVICE = "run it with --solver planar"


def unsupported(spec: SlinkySpec, world: World | None) -> str:
    """What of this Slinky's scene the 3D solver cannot run yet ('' if nothing)."""
    if spec.contact.enabled and spec.contact.law == "paper":
        return "the 'paper' contact law (it has the rigid and soft laws)"
    return ""


class SlinkySolver3D:
    """One Slinky of a scene on the 3D solver, on the grid of step h.

    Ends: the anchored end held (clamped in the scene's pose), free, released at its
    time (clamped, then free), scripted (its motion's translation, turned with the
    scene, followed step by step) or moved by a hand (`drive`), let go of and taken
    hold of again (`take_hold`: Solver3D.catch, re-rooted for the far end); the far
    end free, or held for ever or until its release (both held: at rest, `frozen`);
    any end point grabbed (grab3d, in the grab's sub-steps). `turn`: the scene's turn
    about the vertical (rad)."""

    def __init__(self, spec: SlinkySpec, h: float, world: World | None = None,
                 turn: float = 0.0, name: str = "", sleep: bool = False):
        why = unsupported(spec, world)
        if why:
            raise Solver3DError(f"{name or 'the Slinky'}: the 3D solver cannot run {why} "
                                f"yet; {ADVICE}")
        self.spec, self.p, self.h = spec, spec.params, float(h)
        self.world = world
        # sleeping at rest on the world (docs/solver.md, "Sleeping"): only with a world
        self.sleeps = bool(sleep and world is not None and world.solid)
        self.T = chain3d.turn_about_vertical(turn)
        law = spec.contact.law if spec.contact.enabled else ""
        self.contact = law == "rigid"  # the rigid law's coil contact (coil_contact3d)
        self._soft = law == "soft"
        # the grab: the planar one's law (couplings.py), linearly implicit in the damped
        # step (grab3d.implicit_forces: longer sub-steps); the undamped step is explicit
        # (Dormand and Prince's tableau): the planar grab's sub-steps
        k, k2, self._grab_damping, self._grab_max = grab_defaults(spec)
        self._grab_springs = (k, k2)
        self._grab_substeps = grab_substeps(k, k2, self.p.m, self.h,
                                            implicit=self.p.C_D > 0.0)
        # capped (a yank: the point far from its target), the force swings round as the
        # point passes the target: the explicit rule's sub-steps resolve that
        self._yank_substeps = grab_substeps(k, k2, self.p.m, self.h)
        self.reset()

    # -- state ---------------------------------------------------------------
    def reset(self) -> None:
        """Back to the scene's start, at rest."""
        p, spec, T = self.p, self.spec, self.T
        q = np.array(spec.q0, float)
        free = not spec.anchor.held_at(0.0)
        if self.contact:  # touching coils start at their bound, as the planar solver's
            j0 = chain.first_joint(free)
            q[j0:][q[j0:] <= p.theta_min + chain.TOUCHING] = p.theta_min
        x, frames, holder = chain3d.from_planar(q, p.R)
        x, frames, holder = T @ x, T @ frames, T @ holder
        self.base = x.copy()  # the held end's rest position: a motion's origin
        self.holder = holder.copy()  # the held end's frame before a motion's or a
        # twist's turn (`_turn_holder`), and the twist: [angle, rate, wanted rate]
        self.twist_state = np.zeros(3)
        self._turning = False
        self._stopped = False  # the twist stopped in the step being taken
        v = omega = None
        if spec.moving_at_start and free:  # a rigid motion: every body turning at spin
            spin = T @ np.array(spec.spin, float)
            c = chain3d.centre_of_mass(p, x, frames, MASS)
            v = T @ np.array(spec.velocity, float) + np.cross(spin, x - c)
            omega = np.broadcast_to(spin, (p.N, 3)).copy()
        self.solver = Solver3D(p, x, frames, v, omega, anchor="free" if free else "clamped",
                               holder=holder, mass=MASS, h=self.h, contact=self.contact)
        if self.world is not None and self.world.solid:
            self.solver.world = WorldContact3D(self.world, T, p.N)
        if self._soft:
            kc, dc = soft_defaults(spec)
            self.solver.soft(kc, dc, soft_substeps(kc, dc, p.I, self.h))
        self.t = 0.0
        self.k = 0  # steps taken: t = k h on the grid
        self.rest = Rest()
        self.free = free
        self.hand = False  # a hand took over the anchored end from the scene's schedule
        # where holders let go of an end (drawn there, open): a drawing hint, not part
        # of the state; the far end is still until its scheduled release
        self.left: list[Left] = []
        far = spec.far
        if far.condition == "released" and math.isfinite(far.release_time):
            self.left.append(self._left_end(far=True, t=max(far.release_time, 0.0)))
        self.drive_velocity = np.zeros(3)  # the hand's (world m/s)
        self.drive_wanted = np.zeros(3)
        self._moving = False
        # a far end held while the anchored end moves (both scripted hands: a U pulled
        # apart): held by a hand's grip, the grab's spring-damper at its place (decision:
        # its position, not its turn; a clamp would close the chain into a loop, which
        # neither solver has), until its release
        self.gripping = spec.far.held_at(0.0) and spec.anchor.condition == "scripted"
        if self.gripping:
            self._grab_at(self.p.N, None)

    @property
    def asleep(self) -> bool:
        return self.rest.asleep

    def wake(self) -> None:
        """Wake it (a command, a roll-back, a change of the world)."""
        self.rest.wake()

    @property
    def q(self) -> np.ndarray:
        """The solver's coordinates: E_1, then each joint's rotation vector."""
        return self.solver.q

    @property
    def qd(self) -> np.ndarray:
        """The solver's velocities (E_1's, then each joint's relative angular velocity):
        the array itself, so that `qd[:] = 0` stops the Slinky (the guard's roll-back)."""
        return self.solver.u

    @property
    def motion(self):
        """The scene's motion of the anchored end while it runs it, else None."""
        a = self.spec.anchor
        return a.motion if a.condition == "scripted" and not self.hand else None

    @property
    def driven(self) -> bool:
        """Something may be putting energy in: a scripted anchor or a moving hand."""
        return self._moving or self._turning or (self.motion is not None and not self.free)

    def far_held(self, t: float) -> bool:
        """Whether the far end is held at time t (never once a hand took over)."""
        return not self.hand and self.spec.far.held_at(t)

    def frozen(self, t: float) -> bool:
        """Both ends held: the Slinky rests in its static shape (it starts in equilibrium,
        the ring mass model's), exactly, as the planar solver's, until one lets go."""
        return self.far_held(t) and not self.gripping

    def state(self) -> tuple:
        """A copy of everything that evolves, for roll-back."""
        s = self.solver
        return (s.q.copy(), s.u.copy(), s.H.copy(), s.work.presc.copy(),
                s.work.acc_p[:3].copy(), s.anchor, self.k, self.free, self.hand,
                self.drive_velocity.copy(), self.drive_wanted.copy(), s.work.grab.copy(),
                self.holder.copy(), self.twist_state.copy(), s.work.spin.copy(),
                self.rest.copy(), self.gripping, self._kept().copy())

    def restore(self, state: tuple) -> None:
        s = self.solver
        (q, u, H, presc, acc, anchor, k, self.free, self.hand, dv, dw, grab, holder,
         twist, spin, rest, self.gripping, kept) = state
        self.rest = rest.copy()
        s.q[:], s.u[:], s.work.presc[:], s.work.acc_p[:3] = q, u, presc, acc
        s.work.grab[:] = grab
        self.holder[:], self.twist_state[:], s.work.spin[:] = holder, twist, spin
        self._turning = bool(twist[1] != 0.0 or twist[2] != 0.0)
        s.touched()
        self._kept()[:] = kept
        s.H = H.copy()
        s.anchor, s.mode = anchor, chain3d.ANCHORS.index(anchor)
        self.drive_velocity[:], self.drive_wanted[:] = dv, dw
        self._moving = bool(dv.any() or dw.any())
        self.k = k
        self.t = k * self.h

    def hashed(self) -> list[np.ndarray]:
        """What a state hash covers."""
        s = self.solver
        rest = self.rest.hashed() if self.rest.counted() else []
        return [s.q, s.u, s.H, s.work.presc, s.work.acc_p[:3],
                np.array([self.free, self.hand, self._moving], dtype=np.int64),
                self.drive_velocity, self.drive_wanted, s.work.grab, self.holder,
                self.twist_state, s.work.spin, self._kept(), *rest]

    def _kept(self) -> np.ndarray:
        """The world solve's coils kept locked (WorldContact3D.keep; none: no world)."""
        w = self.solver.world
        return w.keep if w is not None else np.zeros(0, np.int64)

    # -- what it holds -------------------------------------------------------
    def ends(self) -> np.ndarray:
        """(N+1, 3) end points in world metres (E_1 first)."""
        return self.solver.end_points()

    def energy(self) -> float:
        return self.solver.energy()

    def energy_account(self) -> tuple[float, float, float, float, float]:
        """(kinetic, gravity, spring, damping, impacts) in J; the dampers' loss is not
        booked yet (0)."""
        s, p = self.solver, self.p
        x, frames, v, omega = s.pose()
        holder = s.H if s.anchor == "clamped" else None
        return (chain3d.kinetic_energy(p, frames, v, omega, s.mass),
                chain3d.gravity_energy(p, x, frames, s.mass),
                chain3d.spring_energy(p, frames, holder, s.K), *self.losses())

    def guard_figures(self) -> tuple[float, float]:
        """(balance, fastest): the mechanical energy plus what the impacts took (J), and
        the largest |velocity| (inf when anything is not finite)."""
        s = self.solver
        w = s.work
        e, fastest = guard_figures(s.q, s.u, s.H, s.par, s.anchor == "clamped", w.frames,
                                   w.ws, w.tmp)
        return e + float(s.impact_loss[0]), fastest

    def losses(self) -> tuple[float, float]:
        """(damping, impacts) J: the impacts' running sum; damping not booked yet."""
        return 0.0, float(self.solver.impact_loss[0])

    def set_losses(self, losses: tuple[float, float]) -> None:
        self.solver.impact_loss[0] = losses[1]

    @property
    def n_contacts(self) -> int:
        """The joints locked closed (rigid law), or overlapping (soft law)."""
        if self._soft:
            return int(np.count_nonzero(self.solver.openings() <= 1e-9))
        return int(np.count_nonzero(self.solver.work.presc))

    @property
    def impacts(self) -> int:
        return 0  # not counted by the 3D solver

    @property
    def evals(self) -> int:
        return self.solver.evaluations

    def impact_age(self) -> np.ndarray:
        return np.full(self.p.N, np.inf)

    def left_holders(self) -> list[Left]:
        """The holders that have let go of an end by now, where they let go (drawn
        there, open: the planar solver's `left_holders`)."""
        return [x for x in self.left if x.t <= self.t]

    def _left_end(self, far: bool, t: float) -> Left:
        """Where the holder of an end lets go at time t: the end point and the next two
        (world m, from the end inward), the Slinky's middle, the end half hoop's bulge."""
        e = self.ends()
        middle = 0.5 * (e[1:] + e[:-1]).mean(axis=0)
        x, frames, _, _ = self.solver.pose()
        b = frames[-1 if far else 0][:, 1].copy()
        points = e[::-1][:3].copy() if far else e[:3].copy()
        return Left(points, middle, float(np.sign(b[2]) or 1.0), t, b)

    def snapshot(self) -> SlinkySnapshot:
        """It now: end points in 3D and each half hoop's bulge (runtime/snapshot3d.py),
        the ends held and the holders left open, asleep or not, and the grab."""
        snap = replace(slinky_snapshot(self.solver), far_held=self.far_held(self.t),
                       left=tuple(self.left_holders()), asleep=self.asleep)
        k = self.grabbed
        if k is None:
            return snap
        return replace(snap, grab=self.grab_target(), grab_point=snap.ends[k].copy())

    def torsion(self) -> tuple[np.ndarray, np.ndarray]:
        """(the joints' torsion, the b component of their relative angular velocity):
        the paper's theta and its rate in a planar state."""
        n = self.p.N
        return (self.solver.q[3:].reshape(n, 3)[:, 1].copy(),
                self.solver.u[3:].reshape(n, 3)[:, 1].copy())

    # -- commands ------------------------------------------------------------
    @property
    def grabbed(self) -> int | None:
        g = self.solver.work.grab
        return int(g[grab3d.G_POINT]) if g[grab3d.G_ON] != 0.0 else None

    def grab_target(self) -> np.ndarray:
        """The grab's target in world metres (3,)."""
        g = self.solver.work.grab
        return g[grab3d.G_TARGET:grab3d.G_TARGET + 3].copy()

    def grab(self, k: int, target=None) -> None:
        """Grab end point k (0 = anchored end .. N = far end), pulled toward `target`
        ((x, y) or (x, y, z), world m; None: where the point is). Not while a hand's grip
        holds the far end (`gripping`): the grab is that grip."""
        if not self.gripping:
            self._grab_at(k, target)

    def _grab_at(self, k: int, target) -> None:
        self.wake()
        k = int(min(max(k, 0), self.p.N))
        E = self.ends()[k]
        to = E if target is None else chain3d.in_space(np.asarray(target, dtype=float))
        g = self.solver.work.grab
        g[:] = 0.0
        g[grab3d.G_ON], g[grab3d.G_POINT] = 1.0, k
        g[grab3d.G_TARGET:grab3d.G_TARGET + 3] = to
        g[grab3d.G_K], g[grab3d.G_K2] = self._grab_springs
        g[grab3d.G_S:grab3d.G_S + 3] = to - E  # the Maxwell branch starts unloaded
        g[grab3d.G_MAX] = self._grab_max

    def move_grab(self, target) -> None:
        to = chain3d.in_space(np.asarray(target, dtype=float))
        if self.grabbed is not None and not self.gripping and np.all(np.isfinite(to)):
            self.solver.work.grab[grab3d.G_TARGET:grab3d.G_TARGET + 3] = to

    def release_grab(self) -> None:
        if not self.gripping:  # a grip lets go only at the far end's release
            self.solver.work.grab[:] = 0.0

    def drive(self, velocity) -> str:
        """Move the held anchored end toward `velocity` (world m/s, (x, y) or (x, y, z))
        with at most DRIVE_ACCELERATION; '' or why not. The hand takes over a scripted
        end where it is, at the speed it has."""
        if self.free:
            return "the anchored end is not held"
        if self.far_held(self.t):
            return "both ends are held: let go of one first"
        self.wake()
        v = chain3d.in_space(np.asarray(velocity, dtype=float))
        speed = float(np.sqrt(v @ v))
        if not math.isfinite(speed):
            return f"velocity {velocity!r} is not finite"
        if speed > DRIVE_SPEED:
            v *= DRIVE_SPEED / speed
        self._take_over()
        self.drive_wanted[:] = v
        self._moving = bool(self.drive_velocity.any() or self.drive_wanted.any())
        return ""

    def twist(self, rate: float) -> str:
        """Turn the held anchored end about the vertical through it toward `rate`
        (rad/s, counter-clockwise seen from above) with at most TWIST_ACCELERATION;
        '' or why not. The hand takes over a scripted end where it is, as `drive`."""
        if self.free:
            return "the anchored end is not held"
        if self.far_held(self.t):
            return "both ends are held: let go of one first"
        rate = float(rate)
        if not math.isfinite(rate):
            return f"rate {rate!r} is not finite"
        self._take_over()
        self.twist_state[2] = max(-TWIST_SPEED, min(TWIST_SPEED, rate))
        self._turning = bool(self.twist_state[1] != 0.0 or self.twist_state[2] != 0.0)
        return ""

    def _take_over(self) -> None:
        """A hand takes over the ends from the scene's schedule (a release it had for
        later will not come): a scripted end where it is, moving at the speed it has,
        turned as it is. A hand's act wakes a sleeping Slinky."""
        self.wake()
        self.left = [x for x in self.left if x.t <= self.t]
        if self.hand:
            return
        self.hand = True
        if not self.free:
            self.drive_velocity[:] = self.solver.u[:3]
            self._moving = bool(self.drive_velocity.any())
            self.holder[:] = self.solver.H
            self.twist_state[:] = 0.0
            self._spin(np.zeros(3))

    def let_go(self) -> str:
        """Let go of the held end now; '' or why not. With both ends held, the anchored
        end is let go of and the far end becomes the anchored one (re-rooted), as the
        planar solver's."""
        if self.far_held(self.t):
            self.left.append(self._left_end(far=self.free, t=self.t))
            if not self.free:
                self._reroot()
                self._clamp()
            self._take_over()
            return ""
        if self.free:
            return "no end is held"
        self.wake()
        self.left.append(self._left_end(far=False, t=self.t))
        self._take_over()
        self.settle()
        self._free_anchor()
        return ""

    def take_hold(self, point: int) -> str:
        """Hold end point `point` (0 or N) where it is, stopping it; '' or why not.
        Holding the far end re-roots the chain (it becomes the anchored end) and lets
        go of the other (docs/solver.md, "Holding the ends")."""
        n = self.p.N
        if point == 0:
            if not self.free:
                return "the anchored end is already held"
        elif point == n:
            if self.far_held(self.t):
                return "the far end is already held"
            self.settle()
            self._reroot()
        else:
            return f"point {point} is not an end (0 or {n})"
        self._take_over()
        self._clamp()
        self.left.clear()  # the hand holds on again: no holder is left open
        return ""

    def _reroot(self) -> None:
        """The far end becomes the anchored end, free (Solver3D.reverse); a grab follows
        its point."""
        if not self.free:
            self._free_anchor()
        self.solver.reverse()
        g = self.solver.work.grab
        if g[grab3d.G_ON] != 0.0:
            g[grab3d.G_POINT] = self.p.N - int(g[grab3d.G_POINT])

    def _clamp(self) -> None:
        """The free anchored end caught where it is (Solver3D.catch); a hand at rest
        holds it from now on."""
        self.solver.catch()
        self.free = False
        self.drive_velocity[:] = 0.0
        self.drive_wanted[:] = 0.0
        self._moving = False
        self.holder[:] = self.solver.H  # the hand's holder, still
        self.twist_state[:] = 0.0
        self._turning = False

    def settle(self) -> None:
        """A moving hand stops where it is (a roll-back to a state at rest)."""
        self.drive_velocity[:] = 0.0
        self.drive_wanted[:] = 0.0
        self._moving = False
        self.twist_state[1:] = 0.0
        self._turning = False
        self._spin(np.zeros(3))
        if not self.free:
            self.solver.drive(np.zeros(3))

    def _free_anchor(self) -> None:
        self._spin(np.zeros(3))
        self.solver.let_go()
        self.free = True
        self._moving = False
        self._turning = False
        self.twist_state[1:] = 0.0

    # -- stepping ------------------------------------------------------------
    def advance(self, nsteps: int) -> None:
        """nsteps fixed steps of h. A Slinky that may sleep is advanced one step at a time
        and checked for rest after each (sleep.py, as the planar solver); asleep, its
        steps integrate nothing."""
        if not self.sleeps:
            self._advance(nsteps)
            return
        for left in range(int(nsteps), 0, -1):
            if self.rest.asleep:
                self._tick(left)
                self.solver.k, self.solver.t = self.k, self.t
                return
            self._advance(1)
            contacts = None
            if self.solver.world is not None and self._left_alone():
                contacts = self.solver.world.rest_pattern(self.solver,
                                                          rest_speed(self.p.g, self.h))
            if self.rest.count(contacts, self.h):
                self.solver.impact_loss[0] += self.energy_account()[0]
                self.solver.u[:] = 0.0
                self.rest.asleep = True

    def _left_alone(self) -> bool:
        """Nothing from outside acts on it or is due to: no grab, no moving or scripted
        end, no release to come."""
        due = (not self.free and not self.hand
               and self.spec.anchor.condition in ("released", "scripted")
               and math.isfinite(self.spec.anchor.release_time))
        return not (self.grabbed is not None or self.driven or due)

    def _advance(self, nsteps: int) -> None:
        """nsteps fixed steps of h, the anchored end let go at its release time (inside a
        step: the step split there, as the planar solver does)."""
        h = self.h
        k_end = self.k + int(nsteps)
        rel = self.spec.anchor.release_time
        while self.k < k_end:
            if self.gripping:  # the grip lets go at the far end's release (on the grid)
                t_far = self.spec.far.release_time
                if self.hand or self.t >= t_far - 1e-9 * h:
                    self.gripping = False
                    self.release_grab()
                elif t_far < k_end * h:
                    self._run(max(1, math.ceil(t_far / h - 1e-9) - self.k))
                    continue
            if self.frozen(self.t):  # both ends held: nothing moves until one lets go
                t_far = self.spec.far.release_time
                k = k_end - self.k
                if math.isfinite(t_far):
                    k = min(k, max(1, math.ceil(t_far / h - 1e-9) - self.k))
                self._tick(k)
                continue
            due = (not self.free and not self.hand and rel < k_end * h
                   and self.spec.anchor.condition in ("released", "scripted"))
            if not due:
                self._run(k_end - self.k)
                continue
            k = math.floor(rel / h + 1e-9) - self.k
            if k > 0:
                self._run(k)
                continue
            t_next = (self.k + 1) * h
            motion = self.motion
            if motion is not None and self.t >= motion.start:  # the hand moving to the end
                self._motion_step(motion)
            if rel - self.t > 1e-12 * h:
                self._raw(rel - self.t)
            self.left.append(self._left_end(far=False, t=rel))
            self._free_anchor()
            self._raw(t_next - max(rel, self.t))
            self.k += 1
            self.t = t_next

    def _raw(self, dt: float) -> None:
        """One step of dt (a split step)."""
        s = self.solver
        s.h = dt
        try:
            s.advance(1)
        finally:
            s.h = self.h

    def _run(self, k: int) -> None:
        s = self.solver
        motion = None if self.free else self.motion
        while k > 0 and (self._moving or self._turning or motion is not None
                         or self.grabbed is not None):
            if self._turning:
                self._twist_step()
            if self._moving:
                self._hand_step()
            elif motion is not None:
                n = self._still_steps(motion.start)
                if n > 0 and self.grabbed is None:  # before it starts: still
                    n = min(n, k)
                    s.advance(n)
                    self._tick(n)
                    k -= n
                    continue
                if n == 0:
                    self._motion_step(motion)
            self._one_step()
            self._tick(1)
            k -= 1
            if self._stopped:  # the twist's last step: the holder where it stopped
                self._turn_holder(chain3d.UP, self.twist_state[0], 0.0)
                self._stopped = False
            if not self.free and not self._moving:
                s.drive(np.zeros(3))  # a hand at rest after that step stays there (a
                # motion sets its drive again at the next step)
        if k > 0:
            s.advance(k)
            self._tick(k)

    def _one_step(self) -> None:
        """One step of h; grabbed, in the grab's sub-steps, the Maxwell element's state
        (held through each: grab3d) advanced over half a sub-step before it and half
        after it (Strang's splitting: second order)."""
        s = self.solver
        if self.grabbed is None:
            s.advance(1)
            return
        w = s.work
        n1 = w.gscr.shape[0] - 1
        pieces = self._grab_substeps
        if pieces < self._yank_substeps and grab3d.force(
                s.q, s.H, s.par, w.grab, w.frames, w.gscr[:n1], w.tmp, w.gscr[n1]) < 1.0:
            pieces = self._yank_substeps
        sub = self.h / pieces
        for _ in range(pieces):
            grab3d.advance_maxwell(s.q, s.H, s.par, w.grab, self._grab_damping, 0.5 * sub,
                                   w.frames, w.gscr[:n1], w.tmp)
            self._raw(sub)
            grab3d.advance_maxwell(s.q, s.H, s.par, w.grab, self._grab_damping, 0.5 * sub,
                                   w.frames, w.gscr[:n1], w.tmp)

    def _tick(self, k: int) -> None:
        self.k += k
        self.t = self.k * self.h

    def _still_steps(self, start: float) -> int:
        """Whole steps from now before a motion starting at `start` moves."""
        return max(0, math.floor(start / self.h + 1e-9) - self.k)

    def _motion_step(self, motion) -> None:
        """The held end on its path at the step's start (position and velocity), and at
        its acceleration at the step's middle through the step (second order)."""
        s, T, t = self.solver, self.T, self.t
        if t >= motion.start:
            at = t if t > motion.start else float(np.nextafter(motion.start, math.inf))
            pos, vel, _ = motion.path(at)
            s.q[:3] = self.base + T @ pos
            s.u[:3] = T @ vel
        s.drive(T @ motion.path(t + 0.5 * self.h)[2])
        if motion.rot_amplitude != 0.0 and t >= motion.start:
            axis = T @ motion.axis()
            # a jump of the turning rate (a sine's at `start`, or at `stop`) turns the
            # whole Slinky with the holder, as the planar kernels' base rate does (its
            # joints' rates kept): half hoop 1's rate, on which the others' are relative
            jump = 0.0
            if t < motion.start + self.h:
                jump += motion.at(float(np.nextafter(motion.start, math.inf)))[1][2]
            if motion.stop <= t < motion.stop + self.h:
                jump -= motion.at(motion.stop)[1][2]
            if jump != 0.0:
                R1 = s.H @ chain3d.FLIP @ _exp(s.q[3:6])
                s.u[3:6] += R1.T @ (jump * axis)
            # the holder turned to the step's middle (`_turn_holder`)
            pose, rate, _ = motion.at(t + 0.5 * self.h)
            self._turn_holder(axis, pose[2], rate[2])

    def _twist_step(self) -> None:
        """The twisting hand over the next step: its angular acceleration toward the
        wanted rate (hand.twist_acceleration), the holder turned to the step's middle."""
        angle, rate, wanted = self.twist_state
        h = self.h
        a, rate_end = twist_acceleration(rate, wanted, h)
        self._turn_holder(chain3d.UP, angle + 0.5 * h * (rate + 0.25 * a * h),
                          rate + 0.5 * a * h)
        self.twist_state[0] = angle + h * (rate + 0.5 * a * h)
        self.twist_state[1] = rate_end
        self._turning = bool(rate_end != 0.0 or wanted != 0.0)
        self._stopped = not self._turning

    def _turn_holder(self, axis: np.ndarray, angle: float, rate: float) -> None:
        """The clamped holder turned by `angle` about `axis` (world, through E_1) from its
        frame `holder`, turning at `rate` (rad/s), for the next step (decision: the
        kernels' holder is still within a step, so it is set at the step's middle and
        joint 1's damper is given the holder's spin, integrator3d.external_forces: the
        spring's moment is then the midpoint rule's, the damper's exact; half hoop 1
        does not move, joint 1's rotation is measured anew)."""
        s = self.solver
        R1 = s.H @ chain3d.FLIP @ _exp(s.q[3:6])
        s.H = np.ascontiguousarray(_exp(angle * axis) @ self.holder)
        s.q[3:6] = chain3d.log_map((s.H @ chain3d.FLIP).T @ R1)
        self._spin(rate * axis)

    def _spin(self, spin: np.ndarray) -> None:
        self.solver.work.spin[:] = spin
        self.solver.touched()

    def _hand_step(self) -> None:
        """The hand's acceleration over the next step (hand.drive_acceleration)."""
        v = self.drive_velocity
        a, v_end = drive_acceleration(self.solver.q[:3].copy(), v, self.drive_wanted, self.h)
        self.solver.drive(a)
        v[:] = v_end
        self._moving = bool(v.any() or self.drive_wanted.any())



def _exp(phi: np.ndarray) -> np.ndarray:
    """exp(phi), a rotation vector's matrix, by the kernels' compiled Rodrigues (numpy's
    chain3d.exp_map costs ~60 us a call: a twisting hand's every step takes two)."""
    out = np.empty((3, 3))
    ab.exp_rot(float(phi[0]), float(phi[1]), float(phi[2]), out)
    return out


def kernels_ready() -> bool:
    """Whether `warm_up` will only load the 3D kernels (solver.kernels_ready's test, on
    the roots this module calls)."""
    kernel: Any  # numba's cache object is private: no types for it
    for kernel in (integrator3d.run, integrator3d.accelerations, coil_contact3d.run,
                   guard_figures, grab3d.advance_maxwell, ab.kinematics,
                   *world_contact3d.KERNELS):
        if kernel.signatures:
            continue
        try:
            index = kernel._cache._cache_file._load_index()
        except Exception:  # noqa: BLE001 - no cache, or another numba
            return False
        if not index:
            return False
    return True


def warm_up(say: Callable[[str], object] | None = None) -> None:
    """Load (or compile: `say` is told first) the 3D solver's kernels on a tiny chain,
    held, grabbed and let go, with coil contact."""
    if say is not None and not kernels_ready():
        say(COMPILING)
    from slinky3d.model.params import preset
    from slinky3d.scene.spec import ContactSpec, EndSpec

    p = preset("plastic", n_coils=2.0).with_(C_D=1e-3)
    q0 = np.zeros(p.N + chain.BASE)
    q0[chain.BASE:] = p.theta_min
    spec = SlinkySpec(params=p, anchor=EndSpec("held"), far=EndSpec("free", 0.0), q0=q0,
                      contact=ContactSpec())
    s = SlinkySolver3D(spec, 1e-3)
    s.advance(1)
    s.grab(p.N)
    s.advance(1)
    s.guard_figures()
    s.let_go()
    s.advance(1)
    # without coil contact (integrator3d.run)
    SlinkySolver3D(replace(spec, contact=ContactSpec(enabled=False)), 1e-3).advance(1)
    # the world's: the same chain let go 1 mm above a floor
    floor = float(chain.end_points(q0, p.R)[:, 1].min()) - 1e-3
    w = SlinkySolver3D(spec, 1e-3, World(floor=floor), sleep=True)
    w.let_go()
    w.advance(3)
