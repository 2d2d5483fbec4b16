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
from numba import njit

from slinky3d.dynamics.articulated_body import JIT
from slinky3d.dynamics.world_geometry import point_distance
from slinky3d.model.chain import BASE, TOUCHING
from slinky3d.model.params import Params
from slinky3d.scene.world import World

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
        # `contacts` is replaced, never changed in place: a copy may share it
        return Rest(self.asleep, self.steps, self.contacts)

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
        # same length and dtype (one Slinky's pattern): the bytes compare cheapest
        if self.steps and contacts.tobytes() == self.contacts.tobytes():
            self.steps += 1
        else:
            self.steps, self.contacts = 1, contacts.copy()
        return self.steps >= steps_to_sleep(h)


class RestTest:
    """The rest test of one Slinky on one world, compiled (`_at_rest`); `contacts`
    returns its contact pattern (a view of a buffer it reuses) when the Slinky is at
    rest on the world, else None."""

    def __init__(self, p: Params, world: World, h: float):
        self.p, self.h = p, h
        self.speed = rest_speed(p.g, h)
        self.floor = -np.inf if world.floor is None else float(world.floor)
        self.blocks = np.ascontiguousarray(np.asarray(world.blocks(), float).reshape(-1, 3))
        self.pattern = np.zeros(2 * p.N + 1, dtype=np.bool_)
        self.touching = p.theta_min + TOUCHING

    def contacts(self, q: np.ndarray, qd: np.ndarray, j0: int) -> np.ndarray | None:
        if self.speed <= 0.0 or not _at_rest(q, qd, self.p.R, self.speed, self.touching, j0,
                                              self.floor, self.blocks, self.pattern):
            return None
        return self.pattern


@njit(**JIT)
def _at_rest(q, qd, R, speed, touching, j0, floor, blocks, pattern):
    """Whether every end point moves slower than `speed` and one is within ON_WORLD of
    the world; if so, `pattern` holds which joints touch (theta <= `touching`, from j0;
    N entries) and which end points rest on the world (N + 1). Each bar turns at most
    speed / R when both its ends are that slow, so the joint rates are bounded first."""
    nj = q.shape[0]
    n = nj - BASE
    rate = 2.0 * speed / R
    for j in range(BASE, nj):
        if abs(qd[j]) > rate:
            return False
    v2 = speed * speed
    x = q[0]
    y = q[1]
    vx = qd[0]
    vy = qd[1]
    if vx * vx + vy * vy >= v2:
        return False
    th = q[2]
    w = qd[2]
    for k in range(n):
        sg = 1.0 - 2.0 * (k & 1)  # theta_k enters Theta_k with (-1)^(k+1), 1-based
        th += sg * q[BASE + k]
        w += sg * qd[BASE + k]
        c = -sg * math.cos(th)  # u_k = (-1)^k (cos Theta_k, sin Theta_k), 1-based
        s = -sg * math.sin(th)
        x += 2.0 * R * c
        y += 2.0 * R * s
        vx -= 2.0 * R * w * s
        vy += 2.0 * R * w * c
        if vx * vx + vy * vy >= v2:
            return False
    # at rest: now where it touches (the end points again, from E_1)
    x = q[0]
    y = q[1]
    th = q[2]
    on = False
    for k in range(n + 1):
        d, _, _ = point_distance(x, y, floor, blocks)
        pattern[n + k] = d <= ON_WORLD
        on = on or d <= ON_WORLD
        if k < n:
            sg = 1.0 - 2.0 * (k & 1)
            th += sg * q[BASE + k]
            x -= 2.0 * R * sg * math.cos(th)
            y -= 2.0 * R * sg * math.sin(th)
            pattern[k] = BASE + k >= j0 and q[BASE + k] <= touching
    return on
