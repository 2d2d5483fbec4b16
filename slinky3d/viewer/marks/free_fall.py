"""The centre of mass and its free-fall parabola (numpy only, no GL).

Each half hoop is a bar of equal mass with its centre of mass at its midpoint
(model/chain.py `centres`), so the Slinky's centre of mass is the mean of the bar
midpoints. Once nothing holds the Slinky (its anchored end let go, its far end free, no
grab), gravity is the only outside force: whatever the coils do among themselves, the
centre of mass moves on the parabola

    x(t) = x0 + vx (t - t0),   y(t) = y0 + vy (t - t0) - g (t - t0)^2 / 2

of a stone thrown from the release state. `FreeFall` finds that parabola from the
snapshots the window shows: it fits x0, y0, vx, vy (g known) by least squares to the
centre of mass seen during the first FIT_SECONDS after the release (one snapshot would
give the position but not the velocity), then holds it while the Slinky stays free.
If the centre of mass leaves the parabola by more than STRAY_RADII Slinky radii,
something other than gravity acts (a floor, a step) and the parabola is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from slinky3d.runtime.snapshot import SlinkySnapshot

FIT_SECONDS = 0.05  # simulated s after the release whose centres of mass fix the parabola
STRAY_RADII = 1.0  # the parabola is dropped when the centre of mass strays this far


def centre_of_mass(sl: SlinkySnapshot) -> np.ndarray:
    """(2,) the Slinky's centre of mass in world metres: the mean of its bar midpoints."""
    e = np.asarray(sl.ends, float)
    return 0.5 * (e[:-1].mean(axis=0) + e[1:].mean(axis=0))


def is_free(sl: SlinkySnapshot) -> bool:
    """Nothing holds the Slinky: gravity is the only outside force on it."""
    return not (sl.anchor_held or sl.far_held or sl.grab is not None)


@dataclass(frozen=True)
class Parabola:
    """Free fall from (t0, p0) with velocity v0 under gravity g (down -y)."""

    t0: float
    p0: np.ndarray  # (2,) m
    v0: np.ndarray  # (2,) m/s
    g: float  # m/s^2

    def at(self, t) -> np.ndarray:
        """(..., 2) points at simulated times t (scalar or array)."""
        s = np.asarray(t, float)[..., None] - self.t0
        down = np.zeros(len(self.p0))  # (2,) or (3,): gravity along -y
        down[1] = 0.5 * self.g
        return self.p0 + self.v0 * s - down * s * s

    def until(self, floor_y: float, t_max: float) -> float:
        """The time it reaches height floor_y (at the latest t_max; t0 if it starts below)."""
        y0, vy, g = float(self.p0[1]), float(self.v0[1]), self.g
        if y0 <= floor_y:
            return self.t0
        if g <= 0.0:
            return t_max if vy >= 0.0 else min(t_max, self.t0 + (floor_y - y0) / vy)
        # y0 + vy s - g s^2 / 2 = floor_y, the later root
        s = (vy + np.sqrt(vy * vy + 2.0 * g * (y0 - floor_y))) / g
        return min(t_max, self.t0 + float(s))


class FreeFall:
    """One Slinky's free-fall parabola, from the snapshots it is shown one by one."""

    def __init__(self, g: float):
        self.g = float(g)
        self.parabola: Parabola | None = None
        self._t0: float | None = None  # when the Slinky was first seen free
        self._seen: list[tuple[float, np.ndarray]] = []  # (t, centre of mass) to fit
        self._last_t = -np.inf
        self._strayed = False  # left the parabola: none until the next release

    def observe(self, t: float, sl: SlinkySnapshot) -> None:
        """The Slinky at simulated time t. Time going back (a reset, a replay), a hold or
        a grab start over: the next free snapshot is a new release."""
        if t < self._last_t or not is_free(sl):
            self._restart()
        if t == self._last_t or not is_free(sl):
            self._last_t = t
            return
        self._last_t = t
        if self._strayed:
            return
        com = centre_of_mass(sl)
        if self._t0 is None:
            self._t0 = t
        if t - self._t0 <= FIT_SECONDS or self.parabola is None:
            self._seen.append((t, com))
            if len(self._seen) >= 2:
                self.parabola = self._fit()
            return
        self._seen = []
        if np.linalg.norm(self.parabola.at(t) - com) > STRAY_RADII * sl.R:
            self.parabola, self._strayed = None, True

    def _restart(self) -> None:
        self.parabola, self._t0, self._seen, self._strayed = None, None, [], False

    def _fit(self) -> Parabola:
        """Least squares of p + g s^2 / 2 (y only) = p0 + v0 s over the points seen."""
        assert self._t0 is not None
        t0 = self._t0
        s = np.array([t for t, _ in self._seen]) - t0
        p = np.array([c for _, c in self._seen])
        p[:, 1] += 0.5 * self.g * s * s
        a = np.c_[np.ones_like(s), s]
        (p0, v0), *_ = np.linalg.lstsq(a, p, rcond=None)
        return Parabola(t0, p0, v0, self.g)
