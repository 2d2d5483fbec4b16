"""How far a Slinky walked down the stairs, measured from its two ends' track.

The measure of `slinky3d sweep` (docs/sweep.md, "What is measured"). It reads only the
end points E_1 (the anchored end) and E_(N+1) (the far end), sampled over a run, and
the staircase's geometry (`Stairs.step_at`), so it judges any solver's run alike.

* An end *rests* on step k while `Stairs.step_at` puts it on that tread for at least
  `dwell` seconds without a break: an end sweeping past a tread in mid-flip does not.
* The *start step* is the lowest step (largest k) an end rests on in the first rest of
  the run (the rest that begins earliest; a Slinky arched from step 0 onto step 1 at
  t = 0 starts on step 1).
* *Steps walked*: the lowest step any end rests on during the run minus the start step;
  None when the scene has no stairs or no end ever rests on a tread.
* A *flip*: the leading end (the one farther toward +x, the way the stairs go down)
  changes from one end to the other. The lead only changes once the other end is ahead
  by more than `margin` (a hysteresis), so ends side by side do not count flips.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from slinky3d.scene.world import Stairs

DWELL = 0.05  # s: how long an end stays on a tread to count as resting there
TOL = 0.01  # m: how near a tread's height an end counts as on it (Stairs.step_at)


@dataclass(frozen=True)
class Walk:
    """What `measure` found; steps are numbered as in `Stairs` (0 = the top one)."""

    steps: int | None  # steps walked: lowest - start; None without stairs or a rest
    start: int | None  # the step the Slinky started on
    lowest: int | None  # the lowest step an end rested on
    flips: int  # times the leading end changed


def rests(stairs: Stairs, t: np.ndarray, end: np.ndarray, tol: float = TOL,
          dwell: float = DWELL) -> list[tuple[float, int]]:
    """(start time, step) of each rest of one end, in time order.

    t: (M,) sample times, s; end: (M, 2) the end's positions, m."""
    on = [stairs.step_at(float(x), float(y), tol) for x, y in end]
    out: list[tuple[float, int]] = []
    i = 0
    while i < len(on):
        j = i
        while j + 1 < len(on) and on[j + 1] == on[i]:
            j += 1
        k = on[i]
        if k is not None and t[j] - t[i] >= dwell - 1e-12:
            out.append((float(t[i]), k))
        i = j + 1
    return out


def flips(anchored: np.ndarray, far: np.ndarray, margin: float) -> int:
    """How often the leading end (larger x) changed, with `margin` (m) of hysteresis."""
    lead = 0  # +1: the far end leads, -1: the anchored end, 0: not yet told apart
    count = 0
    for dx in np.asarray(far)[:, 0] - np.asarray(anchored)[:, 0]:
        now = 1 if dx > margin else -1 if dx < -margin else 0
        if now and now != lead:
            count += lead != 0
            lead = now
    return count


def measure(stairs: Stairs | None, t: np.ndarray, anchored: np.ndarray, far: np.ndarray,
            margin: float, tol: float = TOL, dwell: float = DWELL) -> Walk:
    """The walk of one Slinky whose ends were at `anchored` and `far` (M, 2) at times t."""
    n_flips = flips(anchored, far, margin)
    if stairs is None:
        return Walk(steps=None, start=None, lowest=None, flips=n_flips)
    found = rests(stairs, t, anchored, tol, dwell) + rests(stairs, t, far, tol, dwell)
    if not found:
        return Walk(steps=None, start=None, lowest=None, flips=n_flips)
    first = min(t0 for t0, _ in found)
    start = max(k for t0, k in found if t0 == first)
    lowest = max(k for _, k in found)
    return Walk(steps=lowest - start, start=start, lowest=lowest, flips=n_flips)
