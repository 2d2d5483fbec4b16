"""What the app's overlay shows each frame (overlay/layer.py OverlayView): the HUD's
figures and energy account, the energy plot's rows, the first-run notice, the message
line, the panel's values, the replay badge and scrubber.

A part of the window (window.Viewer): it reads the source (its history and status),
the instant replay and the app's view state (ui.py), and is given the scene.
"""

from __future__ import annotations

import math
import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from slinky3d.runtime.history import History, energy_rows
from slinky3d.runtime.snapshot import Energy, Snapshot
from slinky3d.runtime.source import Source
from slinky3d.scene import edit
from slinky3d.scene.spec import Scene
from slinky3d.viewer.app import keys
from slinky3d.viewer.app.instant_replay import InstantReplay
from slinky3d.viewer.app.ui import UiState
from slinky3d.viewer.overlay.layer import OverlayView

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

    def gather(self, history: History) -> np.ndarray:
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
        new = energy_rows(snaps[start:-1])
        self._rows = np.concatenate([kept, new]) if len(new) else kept
        self._last = snaps[-2] if len(snaps) > 1 else None
        return np.concatenate([self._rows, energy_rows(snaps[-1:])])


class OverlayViews:
    """Builds the overlay's view each frame; keeps the frame times and the few caches it
    needs."""

    def __init__(self, source: Source, replay: InstantReplay, ui: UiState, live: bool):
        self.source, self.replay, self.ui, self.live = source, replay, ui, live
        self.frame_walls: deque[float] = deque(maxlen=120)  # perf_counter s of frames
        self.started: float | None = None  # perf_counter s the window started playing
        self.energy_start: Energy | None = None  # the scene's start: gravity is relative
        self._rows: tuple[float, Any] | None = None  # (when, energy rows) for the plot
        self._gather = EnergyRows()
        self._panel: tuple[Any, Any] | None = None  # (scene, its panel values)

    def view(self, scene: Scene, snap: Snapshot, now: float | None = None) -> OverlayView:
        """Everything the overlay shows this frame."""
        now = time.perf_counter() if now is None else now
        ui = self.ui
        panel = None
        if ui.show_panel:
            if self._panel is None or self._panel[0] is not scene:
                self._panel = (scene, edit.panel_values(scene))
            panel = self._panel[1]
        return OverlayView(
            snapshot=snap, time_scale=keys.TIME_SCALES[ui.scale_index], fps=self.fps(now),
            paused=self.replay.paused, energy=total_energy(snap),
            energy_history=self._energy_rows(now), show_panel=ui.show_panel,
            show_help=ui.show_help, help_lines=keys.help_lines(), notice=self._notice(now),
            preparing=self.live and self.source.steps == 0 and not self.replay.paused,
            message=ui.message, panel=panel, replay=self.replay.view(snap),
            side_view=ui.side_view,
            scene_name=Path(scene.path).stem if scene.path else "scene",
            energy_start=self.energy_start, scene=scene)

    def _energy_rows(self, now: float):
        """The energy plot's rows, gathered again PLOT_PERIOD after the last time."""
        if self._rows is None or now - self._rows[0] >= PLOT_PERIOD or \
                self.replay.replay is not None:
            self._rows = (now, self._gather.gather(self.source.history))
        return self._rows[1]

    def _notice(self, now: float) -> str:
        """The first-run notice while the solver thread compiles its kernels."""
        if self.started is None or not self.live or self.replay.paused:
            return ""
        late = now - self.started > NOTICE_AFTER
        return NOTICE_COMPILING if self.source.steps == 0 and late else ""

    def fps(self, now: float) -> float:
        """Frames per second over the last FPS_WINDOW."""
        recent = [w for w in self.frame_walls if now - w <= FPS_WINDOW]
        if len(recent) < 2:
            return 0.0
        return (len(recent) - 1) / max(recent[-1] - recent[0], 1e-6)
