"""The static description of a run: what a scene file resolves to.

Nothing here changes while a run goes on (MuJoCo's mjModel); the evolving state
lives in the solvers. `slinky3d.scene.loader` builds these from TOML and validates them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from slinky3d.engines import DEFAULT_ENGINE
from slinky3d.model.params import Params
from slinky3d.scene.look import CameraHint, Look
from slinky3d.scene.world import World

END_CONDITIONS = ("held", "free", "released", "scripted")
ANCHOR_CONDITIONS = END_CONDITIONS
# Only the anchored end can be scripted: the solvers drive E_1 alone.
FAR_CONDITIONS = tuple(c for c in END_CONDITIONS if c != "scripted")
# how q0 is found: static solves, given angles, or bent over the top step of the stairs
SHAPES = ("hanging", "both_ends", "angles", "bent_over")
CONTACT_LAWS = ("rigid", "paper", "soft")


@dataclass(frozen=True)
class Motion:
    """Scripted motion of an end: a sinusoid about its initial pose, from `start` on.

    offset(t) = amplitude * (sin(psi(t)) - sin(phase)), so the motion starts from the
    initial pose; the rotation uses rot_amplitude the same way. Before `start` the end
    is still. The phase psi grows at 2 pi f(t): a chirp, whose frequency
    f(t) = frequency + frequency_rate (t - start) rises until it reaches frequency_max
    and stays there (frequency_rate = 0: a plain sinusoid, psi = 2 pi f (t - start) +
    phase). `phase` is one number for every axis, or one per axis, (x, y) or (x, y, z)
    (a conical swing: x and z a quarter turn apart); the rotation takes x's. From
    `stop` on the end stays where it was then (a twist: the top turned half a cycle,
    from rest to rest with phase -pi/2, then held).
    """

    amplitude: tuple[float, ...] = (0.0, 0.0)  # m: (x, y), or (x, y, z) (the 3D solver)
    frequency: float = 1.0  # Hz, at `start`
    phase: float | tuple[float, ...] = 0.0  # rad: every axis's, or (x, y) or (x, y, z)
    rot_amplitude: float = 0.0  # rad
    # what the rotation turns about (world, before the scene's `rotate`): the plane's
    # normal z, phi_A's axis; any other axis, the vertical y (a twist), needs 3D
    rot_axis: tuple[float, float, float] = (0.0, 0.0, 1.0)
    start: float = 0.0  # s
    frequency_rate: float = 0.0  # Hz/s: the chirp's rise
    frequency_max: float = math.inf  # Hz: where the chirp stops rising
    stop: float = math.inf  # s: the end stays where it is from then on

    def sweep_time(self) -> float:
        """How long after `start` the frequency rises (s; inf: for ever, 0: never)."""
        if self.frequency_rate <= 0.0:
            return 0.0
        return max(self.frequency_max - self.frequency, 0.0) / self.frequency_rate

    def frequency_at(self, t: float) -> float:
        """The driving frequency f(t) (Hz); before `start`, the first one."""
        tau = min(max(t - self.start, 0.0), self.sweep_time())
        return self.frequency + self.frequency_rate * tau

    def phases(self) -> tuple[float, float, float]:
        """(x, y, z) phases (rad): `phase` for each, or its own per axis (z's 0 when
        it gives (x, y))."""
        p = self.phase
        if not isinstance(p, tuple):
            return (p, p, p)
        return (p[0], p[1], p[2] if len(p) > 2 else 0.0)

    @property
    def first_phase(self) -> float:
        """x's phase: the rotation's, and the drive's own (`phase_at`)."""
        return self.phases()[0]

    def phase_at(self, t: float) -> float:
        """psi(t), the phase of the sine along x (rad); x's phase before `start`."""
        return self._turned(t) + self.first_phase

    def _turned(self, t: float) -> float:
        """psi(t) less its phase: 2 pi times the cycles since `start` (rad)."""
        tau = max(t - self.start, 0.0)
        if self.frequency_rate <= 0.0:
            return 2 * math.pi * self.frequency * tau
        sweep = self.sweep_time()
        ts = min(tau, sweep)
        cycles = (self.frequency + 0.5 * self.frequency_rate * ts) * ts
        if tau > ts:  # past the sweep: on at frequency_max
            cycles += self.frequency_max * (tau - ts)
        return 2 * math.pi * cycles

    def path(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(position, velocity, acceleration) offsets of the translation, each (x, y, z)
        (z: the amplitude's third number, 0 when it has two); `at`'s, the rotation left
        out. Just after `start` it moves at once (a sine's velocity jump, as `at`)."""
        a = self.amplitude
        return self._sines((a[0], a[1], a[2] if len(a) > 2 else 0.0), self.phases(), t)

    def _sines(self, amp: tuple[float, ...], phase: tuple[float, ...], t: float,
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(offset, velocity, acceleration) of amp * (sin(psi + phase) - sin(phase)),
        per component."""
        if t <= self.start:
            return np.zeros(3), np.zeros(3), np.zeros(3)
        if t > self.stop:  # held where it stopped
            return self._sines(amp, phase, self.stop)[0], np.zeros(3), np.zeros(3)
        turned = self._turned(t)
        w = 2 * math.pi * self.frequency_at(t)
        wd = 2 * math.pi * self.frequency_rate \
            if 0.0 < self.frequency_rate and t - self.start < self.sweep_time() else 0.0
        pos, vel, acc = [0.0] * 3, [0.0] * 3, [0.0] * 3
        chirp = self.frequency_rate > 0.0
        for i in range(3):  # the compiled kernels' operations (forces.anchor_motion)
            a = turned + phase[i]
            s, c = math.sin(a), math.cos(a)
            pos[i] = amp[i] * (s - math.sin(phase[i]))
            vel[i] = amp[i] * w * c
            acc[i] = amp[i] * (wd * c - w * w * s) if chirp else -amp[i] * w * w * s
        return np.array(pos), np.array(vel), np.array(acc)

    @property
    def out_of_plane(self) -> bool:
        """Whether it moves the end along z (the 3D solver only)."""
        return len(self.amplitude) > 2 and self.amplitude[2] != 0.0

    def axis(self) -> np.ndarray:
        """The rotation's axis, a unit vector."""
        a = np.array(self.rot_axis, float)
        return a / np.sqrt(a @ a)

    @property
    def turns_out_of_plane(self) -> bool:
        """Whether its rotation turns the end out of the plane (about an axis other
        than +z: the 3D solver only)."""
        x, y, z = self.rot_axis
        return self.rot_amplitude != 0.0 and not (x == 0.0 and y == 0.0 and z > 0.0)

    def at(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(pose, velocity, acceleration) offsets, each (x, y, angle)."""
        ph = self.phases()
        return self._sines((self.amplitude[0], self.amplitude[1], self.rot_amplitude),
                           (ph[0], ph[1], ph[0]), t)


@dataclass(frozen=True)
class EndSpec:
    """One end of a Slinky.

    condition: "held" (clamped in place), "free", "released" (held until
    release_time, then free) or "scripted" (moves by `motion`; anchored end only; let
    go at release_time if finite: a toss, the 3D solver only).
    """

    condition: str = "held"
    release_time: float = math.inf  # s; 0 for "free", inf for "held"
    position: tuple[float, float] = (0.0, 0.0)  # world, m
    orientation: float = 0.0  # rad: phi_A for the anchored end, phi_B for the far end
    motion: Motion | None = None

    def held_at(self, t: float) -> bool:
        """Whether the end is held (clamped or scripted) at time t."""
        if self.condition == "held":
            return True
        if self.condition in ("released", "scripted"):
            return t < self.release_time
        return False

    def held_until(self) -> float:
        """The time until which the end stays still: a scripted end waits for its start."""
        if self.condition == "scripted":
            return self.motion.start if self.motion else 0.0
        return self.release_time


@dataclass(frozen=True)
class ContactSpec:
    """Coil-on-coil contact (theta >= theta_min)."""

    enabled: bool = True
    law: str = "rigid"  # rigid (e = 0, all contacts together) | paper (pairwise) | soft
    stiffness: float = 1.0  # soft law, N m / rad
    damping: float | None = None  # soft law, N m s / rad; None -> critical for one hoop


@dataclass(frozen=True)
class GrabSpec:
    """Mouse-grab coupling: a holding spring in parallel with a spring and damper in
    series (docs/model.md section 6), force capped. None: scaled to the Slinky
    (dynamics.couplings.grab_defaults): holding it all sags the grab by 5 mm, damped
    critically for its mass."""

    stiffness: float | None = None  # N/m
    damping: float | None = None  # N s / m
    max_force_weights: float = 5.0  # cap, in multiples of the Slinky's weight


@dataclass(frozen=True)
class SlinkySpec:
    """One Slinky: parameters, ends, initial shape (q0 resolved at load time)."""

    params: Params
    anchor: EndSpec  # E_1
    far: EndSpec  # E_{N+1}
    q0: np.ndarray  # (N+3,) initial coordinates, at rest
    shape: str = "hanging"  # one of SHAPES
    contact: ContactSpec = field(default_factory=ContactSpec)
    grab: GrabSpec = field(default_factory=GrabSpec)
    name: str = ""
    # moving at t = 0 as a rigid body ([slinky.start]; the 3D solver): its centre of
    # mass's velocity (m/s) and its spin about it (rad/s), world, before `rotate`
    velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)
    spin: tuple[float, float, float] = (0.0, 0.0, 0.0)

    @property
    def moving_at_start(self) -> bool:
        return any(self.velocity) or any(self.spin)

    @property
    def far_gripped(self) -> bool:
        """The far end held while the scripted anchored end moves: a hand's grip holds
        it (the 3D solver's; engine3d)."""
        a = self.anchor
        return (a.condition == "scripted" and a.motion is not None
                and self.far.release_time > a.motion.start)


@dataclass(frozen=True)
class Scene:
    """A whole scene file, validated."""

    slinkies: tuple[SlinkySpec, ...]
    title: str = "untitled"
    description: str = ""  # the caption visitors read: plain words, no doc references
    references: str = ""  # where the docs explain the scene (for the docs, never shown)
    duration: float = 1.0  # s
    dt: float = 4e-3  # real-time solver step, s: see default_dt
    path: str = ""
    look: Look = field(default_factory=Look)
    camera: CameraHint = field(default_factory=CameraHint)
    world: World = field(default_factory=World)
    sleep: bool = True  # a Slinky at rest on the world sleeps (docs/solver.md, "Sleeping")
    raw: dict = field(default_factory=dict, repr=False)  # the TOML after overrides
    # The engine that runs it (slinky3d.engines: "planar" or "3d") and the turn of the
    # whole scene about the vertical y, degrees (docs/scene-format.md): the Slinkies'
    # specs stay the unturned scene's, the 3D engine turns their start and motions.
    solver: str = DEFAULT_ENGINE
    rotate: float = 0.0

    @property
    def turn(self) -> float:
        """The scene's turn about the vertical, rad, in [0, 2 pi): 0 for a multiple of 360."""
        return math.radians(self.rotate % 360.0)

    @property
    def needs_3d(self) -> bool:
        """Whether only the 3D solver can run it: turned out of the x-y plane, an end
        moved along z, a scripted end let go (a toss), a Slinky moving at t = 0, or a
        far end held while the anchored end moves (gripped), a block of the world turned."""
        return self.turn != 0.0 or bool(self.world.turned) or any(
            s.moving_at_start or s.far_gripped or (
                s.anchor.motion is not None and (s.anchor.motion.out_of_plane
                                                 or s.anchor.motion.turns_out_of_plane
                                                 or math.isfinite(s.anchor.release_time)))
            for s in self.slinkies)


DT_UNDAMPED = 2e-3  # s: the explicit undamped step (docs/solver.md, "The default step")


def default_dt(slinkies: tuple[SlinkySpec, ...]) -> float:
    """The solver step of a scene that names none (step_for, all its Slinkies damped)."""
    return step_for(all(s.params.C_D > 0.0 for s in slinkies))


def step_for(damped: bool) -> float:
    """4 ms when damped (the Rosenbrock step, springs and damping implicit), else 2 ms
    (the explicit 8th-order step, whose energy drift grows as h^9)."""
    return Scene.dt if damped else DT_UNDAMPED
