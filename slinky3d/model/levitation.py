"""Pseudo-levitation: when the bottom of a dropped hanging Slinky starts to fall.

The prediction (docs/model.md section 8): after the top is let go, the collapse front
runs down the Slinky. Above it the coils have closed onto each other into a stack
that moves as one; below it nothing has heard of the release, so the Slinky there
keeps its hanging static shape (q0). The centre of mass falls freely,
y_cm(t) = y_cm(0) - g t^2 / 2, because gravity is the only outside force. So the
front has passed joint j at the time t_j at which the free-fall centre of mass has
come down to the centre of mass of the configuration "joints 2..j closed at theta_min,
bars j..N where they hung":

    t_j = sqrt(2 (y_cm(0) - y_cm,j) / g)

Joint 1 is not a contact: a free Slinky's theta_1 stays frozen (docs/model.md
section 10, "free anchor"). The bottom coils of a hanging Slinky already rest on
each other, and a rigid stack passes an impact on at once, so the bottom end starts
to fall when the front reaches the top of that stack: the hover time is t_J for the
last joint J that hangs open, when every joint has closed.
"""

from __future__ import annotations

import math

import numpy as np

from slinky3d.model import chain
from slinky3d.model.chain import BASE
from slinky3d.model.params import Params

COLLAPSED = 1e-9  # rad: a hanging joint this close to theta_min is already closed


def _centre_height(p: Params, q0: np.ndarray, j: int) -> float:
    """Mean height of the half hoops' centres with joints 2..j closed and bars j..N
    (1-based) where they hang in q0."""
    theta = np.array(q0[BASE:], dtype=float)
    Theta = chain.composite(theta, q0[2])
    theta[1:j] = p.theta_min
    # The anchor's orientation that keeps bar j's angle; the chain's position follows
    # from putting E_j back where it hung.
    phi = Theta[j - 1] - float(np.sum(chain.signs(p.N)[:j] * theta[:j]))
    q = np.concatenate([[0.0, 0.0, phi], theta])
    shift = chain.end_points(q0, p.R)[j - 1] - chain.end_points(q, p.R)[j - 1]
    return float(chain.centres(q, p.R)[:, 1].mean() + shift[1])


def front_times(p: Params, q0: np.ndarray) -> np.ndarray:
    """(N,) t_j, the time after the release at which the collapse front passes joint j
    (index j - 1; t_1 = 0, the front starts at the top), from the hanging shape q0."""
    y0 = float(chain.centres(q0, p.R)[:, 1].mean())
    out = np.zeros(p.N)
    for j in range(2, p.N + 1):
        drop = max(y0 - _centre_height(p, q0, j), 0.0)
        out[j - 1] = math.sqrt(2.0 * drop / p.g)
    return out


def last_open_joint(p: Params, q0: np.ndarray) -> int:
    """J (1-based): the lowest joint that hangs open, above the collapsed bottom stack
    (1 when every joint is closed)."""
    open_ = np.flatnonzero(q0[BASE:] > p.theta_min + COLLAPSED)
    return int(open_[-1]) + 1 if open_.size else 1


def hover_time(p: Params, q0: np.ndarray) -> float:
    """The predicted time (s) from letting go of the top of the Slinky hanging in q0 to
    its bottom end starting to fall: the collapse front reaching the bottom stack."""
    J = last_open_joint(p, q0)
    if J < 2:
        return 0.0
    y0 = float(chain.centres(q0, p.R)[:, 1].mean())
    return math.sqrt(2.0 * max(y0 - _centre_height(p, q0, J), 0.0) / p.g)
