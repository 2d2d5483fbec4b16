"""What the app's overlay shows each frame (overlay.OverlayView): the HUD's figures and
energy account, the energy plot's rows, the first-run notice, the message line, the
panel's values, the replay badge and scrubber.

A mixin of the window (window.Viewer), which provides the scene, the solver `source`,
the UI state (show_panel, show_help, side_view, scale_index, message) and, through
instant_replay.InstantReplay, the history and the replay.
"""

from __future__ import annotations

import math
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from slinky3d.runtime.snapshot import Energy, Snapshot
from slinky3d.viewer.app import keys
from slinky3d.viewer.overlay.layer import OverlayView, ReplayView

NOTICE_COMPILING = "preparing the physics (first run only)"
NOTICE_AFTER = 0.3  # wall s without a first step before the notice shows
PLOT_PERIOD = 0.1  # wall s between updates of the energy plot
FPS_WINDOW = 1.0  # wall s over which the HUD's frame rate is counted


def total_energy(snap: Snapshot) -> Energy | None:
    """The energy account summed over the Slinkies (None when none has one)."""
    parts = [sl.energy for sl in snap.slinkies if sl.energy is not None]
    if not parts:
        return None
    return Energy(*(math.fsum(getattr(e, f) for e in parts)
                    for f in ("kinetic", "gravity", "spring", "damping", "impacts")))


class EnergyRows:
    """The history's energy rows (runtime/history.py History.energy_rows) gathered
    incrementally: the snapshots the ring has kept since the last time, and its newest.
    A pass over the whole ring (2400 snapshots) costs ~4 ms of Python: every tenth
    frame that much later."""

    def __init__(self) -> None:
        self._rows = np.zeros((0, 6))  # rows of the kept snapshots up to `_last`
        self._last: Snapshot | None = None  # the last kept snapshot gathered

    def gather(self, history) -> np.ndarray:
        if not hasattr(history, "snapshots"):  # a history that only gives its rows
            return history.energy_rows()
        snaps = history.snapshots()
        if not snaps:
            self._rows, self._last = self._rows[:0], None
            return self._rows
        # The last of the copy may be the ring's newest, replaced by the next step:
        # only those before it are kept for good.
        start = 0
        if self._last is not None:
            for j in range(len(snaps) - 2, -1, -1):
                if snaps[j] is self._last:
                    start = j + 1
                    break
            else:
                self._rows = self._rows[:0]  # not there (a reset): all again
        kept = self._rows[self._rows[:, 0] >= snaps[0].t] if start else self._rows[:0]
        new = _rows_of(history, snaps[start:-1])
        self._rows = np.concatenate([kept, new]) if len(new) else kept
        self._last = snaps[-2] if len(snaps) > 1 else None
        return np.concatenate([self._rows, _rows_of(history, snaps[-1:])])


class _Run:
    """A run of snapshots, read as a History reads its ring (for History.energy_rows)."""

    def __init__(self, snaps: list[Snapshot]):
        self._snaps = snaps

    def snapshots(self) -> list[Snapshot]:
        return self._snaps


def _rows_of(history, snaps: list[Snapshot]) -> np.ndarray:
    """History.energy_rows of these snapshots only."""
    return type(history).energy_rows(_Run(snaps))


class OverlayViewAssembly:
    """Builds the overlay's view; keeps the frame times and the few caches it needs."""

    scene: Any
    source: Any
    live: bool
    show_panel: bool
    show_help: bool
    side_view: bool
    scale_index: int
    message: str
    _energy_start: Energy | None  # the account at the scene's start: gravity is relative
    _frame_walls: deque[float]  # perf_counter s of the recent frames
    _started: float | None  # perf_counter s the window started playing
    _rows: tuple[float, Any] | None = None  # (when, energy rows) for the plot
    _gather: EnergyRows | None = None
    _panel: tuple[Any, Any] | None = None  # (scene, its panel values)

    if TYPE_CHECKING:
        replay: Any
        scrub_t: float | None

        @property
        def history(self) -> Any: ...

        @property
        def paused(self) -> bool: ...

        def replay_view(self, history, snap: Snapshot) -> ReplayView: ...

    def overlay_view(self, snap: Snapshot, now: float | None = None) -> OverlayView:
        """Everything the overlay shows this frame."""
        now = time.perf_counter() if now is None else now
        history = self.history
        energy_rows, replay_view = None, None
        if history is not None:
            energy_rows = self._energy_rows(history, now)
            replay_view = self.replay_view(history, snap)
        panel = None
        if self.show_panel:
            from slinky3d.scene import edit

            if self._panel is None or self._panel[0] is not self.scene:
                self._panel = (self.scene, edit.panel_values(self.scene))
            panel = self._panel[1]
        return OverlayView(
            snapshot=snap, time_scale=keys.TIME_SCALES[self.scale_index], fps=self.fps(now),
            paused=self.paused, energy=total_energy(snap), energy_history=energy_rows,
            show_panel=self.show_panel, show_help=self.show_help,
            help_lines=keys.help_lines(), notice=self._notice(now), message=self.message,
            panel=panel, replay=replay_view, side_view=self.side_view,
            scene_name=Path(self.scene.path).stem if self.scene.path else "scene",
            energy_start=self._energy_start, scene=self.scene)

    def _energy_rows(self, history, now: float):
        """The energy plot's rows, gathered again PLOT_PERIOD after the last time."""
        if self._rows is None or now - self._rows[0] >= PLOT_PERIOD or self.replay is not None:
            if self._gather is None:
                self._gather = EnergyRows()
            self._rows = (now, self._gather.gather(history))
        return self._rows[1]

    def _notice(self, now: float) -> str:
        """The first-run notice while the solver thread compiles its kernels."""
        if self._started is None or not self.live or self.paused:
            return ""
        steps = getattr(self.source, "steps", 1)
        return NOTICE_COMPILING if steps == 0 and now - self._started > NOTICE_AFTER else ""

    def fps(self, now: float) -> float:
        """Frames per second over the last FPS_WINDOW."""
        recent = [w for w in self._frame_walls if now - w <= FPS_WINDOW]
        if len(recent) < 2:
            return 0.0
        return (len(recent) - 1) / max(recent[-1] - recent[0], 1e-6)
