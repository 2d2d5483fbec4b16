"""The last seconds of a run, for instant replay, a scrubber and the live energy plot.

The solver thread records a snapshot after its steps, at most one per `period` of
simulated time (every step when the step is longer); readers on other threads take copies
under a lock. Memory is bounded: the ring holds `seconds` of simulated time at most,
and never more than seconds / period + 2 snapshots whatever the step.
"""

from __future__ import annotations

import bisect
import math
import threading
from collections import deque
from collections.abc import Iterable

import numpy as np

from slinky3d.runtime.snapshot import Snapshot, lerp

SECONDS = 10.0  # s of simulated time kept
PERIOD = 1.0 / 240.0  # s: recorded at least this often in simulated time (>= 120 Hz)
ENERGY_COLUMNS = ("t", "kinetic", "gravity", "spring", "damping", "impacts")


class History:
    """A thread-safe ring of snapshots covering the last `seconds` of simulated time."""

    def __init__(self, seconds: float = SECONDS, period: float = PERIOD):
        if not (seconds > 0 and period > 0):
            raise ValueError(f"history needs seconds > 0 and period > 0, not {seconds}, {period}")
        self.seconds = float(seconds)
        self.period = float(period)
        self._lock = threading.Lock()
        self._ring: deque[Snapshot] = deque(maxlen=math.ceil(seconds / period) + 2)
        self._newest: Snapshot | None = None  # newer than the ring's last, not yet kept

    # -- writer (the solver thread) ---------------------------------------------------
    def due(self, t: float) -> bool:
        """Whether a snapshot at simulated time t would be kept (a period passed)."""
        last = self._ring[-1].t if self._ring else -math.inf
        return t >= last + self.period * (1 - 1e-9) or t < last

    def add(self, snap: Snapshot) -> None:
        """Record a snapshot: kept if a period passed since the last one kept, else held
        as the newest until one is; time going back (a reset) starts the ring afresh."""
        with self._lock:
            r = self._ring
            newest = self._newest or (r[-1] if r else None)
            if newest is not None and snap.t < newest.t:
                r.clear()
            self._newest = None
            if not r or snap.t - r[-1].t >= self.period * (1 - 1e-9):
                r.append(snap)
            elif snap.t == r[-1].t:
                r[-1] = snap  # the same instant again (a command between steps)
            else:
                self._newest = snap
            while snap.t - r[0].t > self.seconds:
                r.popleft()

    def clear(self) -> None:
        with self._lock:
            self._ring.clear()
            self._newest = None

    # -- readers -------------------------------------------------------------------
    def snapshots(self) -> list[Snapshot]:
        """A copy of the ring, oldest first (snapshots are read-only)."""
        with self._lock:
            return self._all()

    def _all(self) -> list[Snapshot]:
        return [*self._ring, self._newest] if self._newest is not None else list(self._ring)

    def __len__(self) -> int:
        return len(self._ring) + (self._newest is not None)

    def span(self) -> tuple[float, float]:
        """(oldest, newest) simulated time held; (nan, nan) when empty."""
        with self._lock:
            r = self._all()
        if not r:
            return math.nan, math.nan
        return r[0].t, r[-1].t

    def at(self, t: float) -> Snapshot:
        """The state at simulated time t, interpolated between the recorded snapshots
        around it (clamped to the span). Raises LookupError when nothing is recorded."""
        r = self.snapshots()
        if not r:
            raise LookupError("the history is empty")
        if not t > r[0].t:  # also nan
            return r[0]
        if t >= r[-1].t:
            return r[-1]
        i = bisect.bisect_right([s.t for s in r], t)
        return lerp(r[i - 1], r[i], t)

    def energy_rows(self, slinky: int | None = None) -> np.ndarray:
        """`energy_rows` of every recorded snapshot."""
        return energy_rows(self.snapshots(), slinky)


def energy_rows(snaps: Iterable[Snapshot], slinky: int | None = None) -> np.ndarray:
    """(n, 6) rows of ENERGY_COLUMNS: each snapshot's time and energy account (J) of
    Slinky `slinky`, or summed over all Slinkies (None). Snapshots without an account
    are left out."""
    rows = []
    for s in snaps:
        parts = s.slinkies if slinky is None else s.slinkies[slinky:slinky + 1]
        es = [p.energy for p in parts]
        if not es or any(e is None for e in es):
            continue
        rows.append((s.t, *(sum(getattr(e, k) for e in es) for k in ENERGY_COLUMNS[1:])))
    return np.array(rows, dtype=float).reshape(-1, len(ENERGY_COLUMNS))
