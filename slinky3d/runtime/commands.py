"""Commands to a Simulation, applied the same way by the solver thread and by `replay`.

Commands are small frozen dataclasses. A log is a list of (step, command): the
command took effect after `step` steps of the run in all (counted over resets and
loads). `replay` applies a log at the same step indices without a thread, so a live
run is reproduced bit-identically offline (docs/solver.md, "The solver thread").

Steps are taken one `Simulation.step(1)` at a time, in the thread and in `replay`
alike, so that the divergence guard checks after every step: a roll-back then does
not depend on how the pacing happened to batch the steps (the rejected alternative,
guarded batches, is ~30% cheaper but makes a roll-back's target timing-dependent).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, SupportsIndex

from slinky3d.dynamics.hand import DRIVE_SPEED, TWIST_SPEED
from slinky3d.errors import error_line
from slinky3d.runtime.simulation import Simulation
from slinky3d.scene.spec import Scene

MAX_TARGET = 1e6  # m: farther targets are refused (the force is capped anyway)
# The hand that holds an anchored end moves it at most this fast (m/s): faster desired
# velocities are refused (the UI's "fast" is a few m/s).
MAX_DRIVE_SPEED = DRIVE_SPEED
MAX_TWIST_RATE = TWIST_SPEED  # rad/s: and twists it at most this fast
# Time scale: simulated seconds per wall second.
SCALE_MIN, SCALE_MAX = 1.0 / 32.0, 4.0


def _vec2(v: Any) -> Any:
    """(x, y) or (x, y, z) as a tuple of floats when it converts, else as given (refused
    later)."""
    if v is None:
        return None
    try:
        if len(v) not in (2, 3):
            return v
        return tuple(float(c) for c in v)
    except (TypeError, ValueError):
        return v


# -- commands -----------------------------------------------------------------------
@dataclass(frozen=True)
class Grab:
    """Grab end point `point` (0 = anchored end .. N = far end) of Slinky `slinky`,
    pulled toward `target` (world (x, y) or (x, y, z) in m; None: the point where it
    is). The planar solver drops z (`simulation.planar_target`)."""

    slinky: int
    point: int
    target: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        # a copy, so that a UI array changed later does not change the log
        object.__setattr__(self, "target", _vec2(self.target))


@dataclass(frozen=True)
class Move:
    """Move the grab target of Slinky `slinky` ((x, y) or (x, y, z), as Grab's)."""

    slinky: int
    target: tuple[float, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "target", _vec2(self.target))


@dataclass(frozen=True)
class Release:
    slinky: int


@dataclass(frozen=True)
class DriveBase:
    """Move the held anchored end of Slinky `slinky` toward `velocity` (world m/s) with
    a limited acceleration (dynamics/hand.py); (0, 0) brings it to a stop. (vx, vy) or
    (vx, vy, vz): the planar solver drops vz (`simulation.planar_target`)."""

    slinky: int
    velocity: tuple[float, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "velocity", _vec2(self.velocity))


@dataclass(frozen=True)
class TwistBase:
    """Turn the held anchored end of Slinky `slinky` about the vertical through it
    toward `rate` (rad/s, counter-clockwise seen from above; the keys [ and ]) with a
    limited angular acceleration (dynamics/hand.py); 0 brings it to a stop. The 3D
    solver only: the planar one refuses it (it cannot twist out of its plane)."""

    slinky: int
    rate: float


@dataclass(frozen=True)
class LetGo:
    """Let go of the held end of Slinky `slinky` now (a held Slinky dropped). If its far
    end is the one held, that one is let go of."""

    slinky: int


@dataclass(frozen=True)
class TakeHold:
    """Hold end point `point` of Slinky `slinky` where it is: 0 (the anchored end) or N
    (the far end). Holding the far end re-roots the chain: it becomes the anchored end
    (the snapshot's `ends` then run from it) and the other end is let go of."""

    slinky: int
    point: int


@dataclass(frozen=True)
class Reset:
    """Back to the scene's initial state (the step index goes on counting)."""


@dataclass(frozen=True)
class Pause:
    pass


@dataclass(frozen=True)
class Resume:
    pass


@dataclass(frozen=True)
class TogglePause:
    pass


@dataclass(frozen=True)
class Step:
    """Pause, then take exactly n steps; later commands wait until they are done."""

    n: int = 1


@dataclass(frozen=True)
class TimeScale:
    """Simulated seconds per wall second, clamped to SCALE_MIN..SCALE_MAX (1/32..4)."""

    scale: float


@dataclass(frozen=True)
class Load:
    """Replace the simulation by a new one of `scene`."""

    scene: Scene


@dataclass(frozen=True)
class Fault:
    """Log-only marker, never sent: here the thread tried `steps` steps, the solver
    raised `message`, and the state was put back as it was before them."""

    message: str
    steps: int


Command = (Grab | Move | Release | DriveBase | TwistBase | LetGo | TakeHold | Reset | Pause
           | Resume | TogglePause | Step | TimeScale | Load)
# the commands that change the simulation (the others pace the thread)
SIMULATION_COMMANDS = (Grab, Move, Release, DriveBase, TwistBase, LetGo, TakeHold, Reset,
                       Load)
PACING_COMMANDS = (Pause, Resume, TogglePause, Step, TimeScale)
LogEntry = tuple[int, Command | Fault]


# -- applying commands to a Simulation (shared by the thread and replay) -------------
def _index(v: object, n: int, what: str) -> tuple[int, str]:
    try:
        if isinstance(v, bool) or not isinstance(v, SupportsIndex):
            raise TypeError
        i = operator.index(v)
    except TypeError:
        return -1, f"{what} {v!r} is not an integer"
    if not 0 <= i < n:
        return -1, f"{what} {i} out of range 0..{n - 1}"
    return i, ""


def bad_target(v: object) -> str:
    if not (isinstance(v, tuple) and len(v) in (2, 3)):
        return f"target {v!r} is not (x, y) or (x, y, z)"
    if not all(math.isfinite(c) for c in v):
        return f"target {v!r} is not finite"
    if max(abs(c) for c in v) > MAX_TARGET:
        return f"target {v!r} farther than {MAX_TARGET:g} m"
    return ""


def bad_velocity(v: object) -> str:
    if not (isinstance(v, tuple) and len(v) in (2, 3)):
        return f"velocity {v!r} is not (vx, vy) or (vx, vy, vz)"
    if not all(math.isfinite(c) for c in v):
        return f"velocity {v!r} is not finite"
    if math.hypot(*v) > MAX_DRIVE_SPEED:
        return f"velocity {v!r} faster than {MAX_DRIVE_SPEED:g} m/s"
    return ""


def bad_rate(v: object) -> str:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return f"rate {v!r} is not a number"
    if not math.isfinite(v):
        return f"rate {v!r} is not finite"
    if abs(v) > MAX_TWIST_RATE:
        return f"rate {v!r} faster than {MAX_TWIST_RATE:g} rad/s"
    return ""


def check(sim: Simulation, cmd: object) -> str:
    """Why a simulation command would be refused ('' if it is fine)."""
    if isinstance(cmd, DriveBase | TwistBase | LetGo | TakeHold):
        i, why = _index(cmd.slinky, len(sim.slinkies), "Slinky")
        if why:
            return why
        if isinstance(cmd, DriveBase):
            return bad_velocity(cmd.velocity)
        if isinstance(cmd, TwistBase):
            return bad_rate(cmd.rate)
        if isinstance(cmd, TakeHold):
            n = sim.slinkies[i].p.N
            k, why = _index(cmd.point, n + 1, "point")
            if why:
                return why
            if k not in (0, n):
                return f"point {k} is not an end: 0 (anchored end) or {n} (far end)"
        return ""
    if isinstance(cmd, Grab | Move | Release):
        i, why = _index(cmd.slinky, len(sim.slinkies), "Slinky")
        if why:
            return why
        if isinstance(cmd, Grab):
            _, why = _index(cmd.point, sim.slinkies[i].p.N + 1, "point")
            if why or cmd.target is None:
                return why
        if isinstance(cmd, Grab | Move):
            return bad_target(cmd.target)
        return ""
    if isinstance(cmd, Load) and not isinstance(cmd.scene, Scene):
        return f"{type(cmd.scene).__name__} is not a Scene"
    return ""


def apply(sim: Simulation, cmd: object, h: float | None = None) -> tuple[Simulation, str]:
    """Apply one simulation command; returns the (possibly new) simulation and a
    message ('' when applied). Pacing commands are no-ops here. Never raises."""
    why = check(sim, cmd)
    if why:
        return sim, f"{type(cmd).__name__.lower()} ignored: {why}"
    try:
        if isinstance(cmd, Grab):
            sim.grab(int(cmd.slinky), int(cmd.point), cmd.target)
        elif isinstance(cmd, Move):
            # a target without a grab would only change the hashed state: skip it
            if sim.slinkies[cmd.slinky].grabbed is not None:
                sim.move_grab(int(cmd.slinky), cmd.target)
        elif isinstance(cmd, Release):
            sim.release(int(cmd.slinky))
        elif isinstance(cmd, DriveBase):
            why = sim.drive_base(int(cmd.slinky), cmd.velocity)
        elif isinstance(cmd, TwistBase):
            why = sim.twist_base(int(cmd.slinky), float(cmd.rate))
        elif isinstance(cmd, LetGo):
            why = sim.let_go(int(cmd.slinky))
        elif isinstance(cmd, TakeHold):
            why = sim.take_hold(int(cmd.slinky), int(cmd.point))
        elif isinstance(cmd, Reset):
            sim.reset()
        elif isinstance(cmd, Load):
            return Simulation(cmd.scene, h), ""
    except Exception as e:  # noqa: BLE001 - a bad command must not end the thread
        return sim, f"{type(cmd).__name__.lower()} failed: {error_line(e)}"
    if why:  # refused by the Slinky's state (e.g. no held end to drive)
        return sim, f"{type(cmd).__name__.lower()} ignored: {why}"
    return sim, ""


def checkpoint(sim: Simulation) -> tuple:
    return [s.state() for s in sim.slinkies], sim.status, sim.rollbacks


def restore(sim: Simulation, cp: tuple) -> None:
    states, sim.status, sim.rollbacks = cp
    for s, st in zip(sim.slinkies, states, strict=True):
        s.restore(st)


def advance(sim: Simulation, n: int) -> tuple[int, str]:
    """Take n guarded steps one at a time. If the solver raises, put the state back
    as it was and return (steps called, message); else (n, '')."""
    cp = checkpoint(sim)
    called = 0
    try:
        for _ in range(n):
            called += 1
            sim.step(1)
    except Exception as e:  # noqa: BLE001 - reported, never raised into the UI
        restore(sim, cp)
        return called, error_line(e)
    return n, ""


def replay(scene: Scene, log: Sequence[LogEntry], nsteps: int, h: float | None = None,
           every: int = 0, sample: Callable[[int, Simulation], None] | None = None
           ) -> Simulation:
    """The run of `scene` under `log` ((step, command) in order), `nsteps` steps in all,
    without a thread or a clock: bit-identical to the thread's run.

    With `sample`, sample(k, sim) is called at k = 0, every, 2 every, ... <= nsteps
    steps, after the commands of step k (pacing commands are no-ops here)."""
    sim = Simulation(scene, h)
    k = 0
    i = 0
    nxt = 0 if sample is not None else -1
    every = max(1, int(every))
    while True:
        while i < len(log) and log[i][0] == k and k <= nsteps:
            cmd = log[i][1]
            if isinstance(cmd, Fault):
                # the same attempt as the thread's, so that the guard saw the same steps
                cp = checkpoint(sim)
                advance(sim, cmd.steps)
                restore(sim, cp)
            else:
                sim, _ = apply(sim, cmd, h)
            i += 1
        if i < len(log) and log[i][0] < k:
            raise ValueError(f"log out of order at step {log[i][0]} (after {k})")
        if k == nxt:
            assert sample is not None
            sample(k, sim)
            nxt += every
        if k >= nsteps:
            return sim
        stop = nsteps
        if i < len(log):
            stop = min(stop, log[i][0])
        if nxt >= 0:
            stop = min(stop, nxt)
        advance(sim, stop - k)
        k = stop
