"""A hand on a Slinky's ends, as geometry on (q, qd): catching an end (it stops where
it is), reversing the chain (the far end becomes the anchored end) and the motion of
a held end driven from the keyboard (docs/solver.md, "Holding the ends").

numpy only, called between steps by the solver (`solver.py`), which owns the state
and the modes these change.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from slinky3d.model import chain
from slinky3d.model.chain import BASE
from slinky3d.model.params import Params

DRIVE_ACCELERATION = 8.0  # m/s^2: the hand moving a held end (DriveBase) at most this
DRIVE_SPEED = 20.0  # m/s: and at most this fast
DRIVE_REACH = 100.0  # m: and keeps it this near the origin (it brakes in time)
# A hand twisting a held end about the vertical (TwistBase, the 3D solver): at most a
# turn a second, reached in half a second (a wrist's turn, a few rad/s)
TWIST_SPEED = 2.0 * math.pi  # rad/s
TWIST_ACCELERATION = 4.0 * math.pi  # rad/s^2


class Left(NamedTuple):
    """A holder that let go of an end, where it let go: what the viewer draws there,
    open, from then on (`SlinkySolver._left_end`)."""

    points: np.ndarray  # (3, 2) the end point and the next two, world m, end first ((3, 3): 3D)
    middle: np.ndarray  # (2,) the Slinky's middle at the release (the holder's side) ((3,))
    sign: float  # the end half hoop's bulge: +1 toward +z
    t: float  # simulated s of the release
    bulge: np.ndarray | None = None  # (3,) the end half hoop's unit bulge (3D; else sign's)


def catch(p: Params, q: np.ndarray, qd: np.ndarray, locked: np.ndarray,
          contacts: bool) -> None:
    """Clamp the anchored end of a free Slinky where it is, in place: its pose stops at
    once (an impulse that conserves the momentum of the rest: the hand takes the
    kinetic energy it must), joint 1 gets its spring back at the angle that balances
    the chain's weight now (at least theta_min with contacts), bar 1 unmoved."""
    E = chain.end_points(q, p.R)
    C = 0.5 * (E[:-1] + E[1:])
    grip = -p.m * p.g * float(np.sum(C[:, 0] - E[0, 0])) / p.k_coil
    grip = min(max(grip, -0.5 * math.pi), 0.5 * math.pi)  # a hand bends a coil so far
    if contacts:
        grip = max(grip, p.theta_min)
    bar1 = q[2] + q[BASE]  # Theta_1, kept
    q[BASE] = grip
    q[2] = bar1 - grip
    qd[2] += qd[BASE]  # bar 1's rate on phi_A (it is there already when free)
    qd[BASE] = 0.0
    locked[BASE] = False
    held = np.zeros(q.shape[0], dtype=bool)
    held[:BASE] = True
    held |= locked
    moving = ~held
    M = chain.mass_matrix(p, q)
    qd[moving] += np.linalg.solve(M[np.ix_(moving, moving)], M[np.ix_(moving, held)]
                                  @ qd[held])
    qd[held] = 0.0


def reverse(p: Params, q: np.ndarray, qd: np.ndarray) -> bool:
    """Reverse the chain in place: the far end E_{N+1} becomes the anchored end E_1,
    free (theta_1 frozen, phi_A carrying bar 1). Returns whether the model frame is
    now mirrored in x.

    The half hoops keep their places and rates; theta'_k = theta_{N+2-k} (k >= 2) and
    Theta'_k = +-Theta_{N+1-k} + pi. With N even the reversed chain is the mirror image
    of a model chain (the fold signs alternate from the held end), so the frame is
    mirrored in x (gravity is vertical: the dynamics are the same)."""
    n = p.N
    flip = n % 2 == 0
    sgn = -1.0 if flip else 1.0
    Th = chain.composite(q[BASE:], q[2])
    W = chain.composite_rates(q, qd)
    E = chain.end_points(q, p.R)
    u = chain.bar_dirs(Th)
    du = W[:, None] * np.stack([-u[:, 1], u[:, 0]], axis=-1)
    v_end = qd[:2] + 2.0 * p.R * du.sum(axis=0)
    T = np.array([sgn, 1.0])
    q_new = np.empty_like(q)
    qd_new = np.empty_like(qd)
    q_new[:2] = T * E[n]
    qd_new[:2] = T * v_end
    q_new[2] = sgn * Th[-1] + math.pi
    qd_new[2] = sgn * W[-1]
    q_new[BASE] = 0.0
    qd_new[BASE] = 0.0
    q_new[BASE + 1:] = q[BASE + 1:][::-1]
    qd_new[BASE + 1:] = qd[BASE + 1:][::-1]
    q[:], qd[:] = q_new, qd_new
    return flip


def drive_acceleration(pos: np.ndarray, v: np.ndarray, wanted: np.ndarray,
                       h: float) -> tuple[np.ndarray, np.ndarray]:
    """The driven end's acceleration over the next step of length h, toward the wanted
    velocity ((x, y) in the plane, (x, y, z) in 3D), at most DRIVE_ACCELERATION,
    braking in time to stay within DRIVE_REACH; and its velocity at the step's end."""
    want = wanted.copy()
    for i in range(len(pos)):
        # where it would stop braking from the next step on, with a step's margin
        stop = (abs(pos[i]) + v[i] * v[i] / (2.0 * DRIVE_ACCELERATION)
                + 2.0 * abs(v[i]) * h + DRIVE_ACCELERATION * h * h)
        if want[i] * pos[i] > 0.0 and stop >= DRIVE_REACH:
            want[i] = 0.0
    a = (want - v) / h
    na = float(np.hypot(*a)) if len(a) == 2 else float(np.sqrt(a @ a))
    if na <= DRIVE_ACCELERATION:
        return a, want
    a *= DRIVE_ACCELERATION / na
    return a, v + a * h


def twist_acceleration(rate: float, wanted: float, h: float) -> tuple[float, float]:
    """A twisting hand's angular acceleration over the next step of length h, toward
    the wanted rate, at most TWIST_ACCELERATION; and its rate at the step's end."""
    a = (wanted - rate) / h
    if abs(a) <= TWIST_ACCELERATION:
        return a, wanted
    a = math.copysign(TWIST_ACCELERATION, a)
    return a, rate + a * h
