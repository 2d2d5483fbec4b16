"""Sleeping, as game engines do: a Slinky at rest on the world is not integrated.

A Slinky that nothing from outside acts on, whose every point moves slower than
REST_FRACTION g h, that rests on the world, and whose contacts (which coils touch,
which end points rest on the world) stay the same for SLEEP_AFTER of simulated time in
a row falls asleep: its velocities are set to zero and its steps integrate nothing
(time goes on) until something wakes it (docs/solver.md, "Sleeping"). The test reads
the state after each step and counts steps, never the wall clock, so it does not
depend on how the steps were batched.

Why g h: a resting contact in a time-stepping scheme takes back, each step, the
velocity g h that gravity gave; a point that moves a thousandth of that is at rest to
the scheme (it would take 1000 steps to move as far as gravity moves it in one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from slinky3d.model.chain import BASE, TOUCHING, end_points, end_velocities
from slinky3d.model.params import Params
from slinky3d.scene.world import World, distance

SLEEP_AFTER = 0.5  # s at rest on the world, in a row, before a Slinky sleeps
REST_FRACTION = 1e-3  # a point slower than this fraction of g h is at rest
ON_WORLD = 1e-3  # m: an end point this near the world's solid rests on it


def rest_speed(g: float, h: float) -> float:
    """The speed (m/s) below which every point of a Slinky counts as at rest."""
    return REST_FRACTION * abs(g) * h


def steps_to_sleep(h: float) -> int:
    """Steps of h at rest, in a row, after which a Slinky sleeps (SLEEP_AFTER)."""
    return max(1, math.ceil(SLEEP_AFTER / h - 1e-9))


@dataclass
class Rest:
    """One Slinky's sleep: asleep or not, and for how many steps in a row it has been
    at rest on the world with the same contacts (`contacts`)."""

    asleep: bool = False
    steps: int = 0
    contacts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.bool_))

    def wake(self) -> None:
        """Awake, and the count starts again."""
        self.asleep = False
        self.steps = 0
        self.contacts = np.zeros(0, dtype=np.bool_)

    def copy(self) -> Rest:
        return Rest(self.asleep, self.steps, self.contacts.copy())

    def counted(self) -> bool:
        """Whether there is anything to hash (a Slinky never at rest hashes as before)."""
        return self.asleep or self.steps > 0

    def hashed(self) -> list[np.ndarray]:
        return [np.array([self.asleep, self.steps], dtype=np.int64), self.contacts]

    def count(self, contacts: np.ndarray | None, h: float) -> bool:
        """One more step: at rest with `contacts` (None: not at rest). True when the
        Slinky has now been at rest long enough to sleep."""
        if contacts is None:
            self.steps = 0
            return False
        if self.steps and np.array_equal(contacts, self.contacts):
            self.steps += 1
        else:
            self.steps, self.contacts = 1, contacts
        return self.steps >= steps_to_sleep(h)


def resting_contacts(q: np.ndarray, qd: np.ndarray, p: Params, j0: int, world: World,
                     h: float) -> np.ndarray | None:
    """Which coils touch and which end points rest on the world, if the Slinky is at
    rest on the world (every end point slower than `rest_speed`, and so every point of
    its bars; at least one end point on the world); else None."""
    v = rest_speed(p.g, h)
    # cheap first: each bar turns at most v / R when both its ends are that slow
    if v <= 0.0 or float(np.abs(qd[BASE:]).max()) > 2.0 * v / p.R:
        return None
    V = end_velocities(q, qd, p.R)
    if float((V * V).sum(axis=1).max()) >= v * v:
        return None
    on = distance(world, end_points(q, p.R)) <= ON_WORLD
    if not on.any():
        return None
    return np.concatenate([q[j0:] <= p.theta_min + TOUCHING, on])
