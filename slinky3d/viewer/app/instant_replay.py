"""The app's instant replay and scrubber: showing the recent past from the solver's
history (runtime/history.py) while the solver is paused.

I replays the last keys.REPLAY_SECONDS at keys.REPLAY_SPEED, then live play resumes
(unless it was paused before); the panel's scrubber shows one moment of the history,
paused. A mixin of the window (window.Viewer), which provides the solver `source`,
`send` and `say`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from slinky3d.runtime import commands
from slinky3d.runtime.snapshot import Snapshot
from slinky3d.viewer.app import keys
from slinky3d.viewer.overlay.layer import ReplayView


@dataclass
class Replay:
    """The instant replay in progress: simulated t0 -> t1 from wall time `wall0`."""

    t0: float
    t1: float
    wall0: float
    was_paused: bool


class InstantReplay:
    """Replay and scrubbing state, and the keys and panel actions that change it."""

    replay: Replay | None = None  # the replay in progress
    scrub_t: float | None = None  # simulated s the scrubber shows (paused), None: live
    source: Any  # the solver thread (or a logged session), from the window

    if TYPE_CHECKING:
        def send(self, cmd: Any) -> None: ...

        def say(self, text: str) -> None: ...

    @property
    def history(self):
        """The solver's buffer of recent snapshots (None for a source without one)."""
        return getattr(self.source, "history", None)

    @property
    def paused(self) -> bool:
        """The solver paused, or the scrubber showing the past."""
        return bool(getattr(self.source, "paused", False)) or self.scrub_t is not None

    def leave_past(self) -> None:
        """Stop replaying or scrubbing (without resuming the solver)."""
        self.replay, self.scrub_t = None, None

    def past_snapshot(self, now: float) -> Snapshot | None:
        """What the replay or the scrubber shows at wall time `now` (None: live play;
        a replay that reached its end ends here)."""
        history = self.history
        if self.replay is not None and history is not None:
            r = self.replay
            t = r.t0 + (now - r.wall0) * keys.REPLAY_SPEED
            if t >= r.t1:
                self.end_replay()
            else:
                return history.at(t)
        if self.scrub_t is not None and history is not None:
            return history.at(self.scrub_t)
        return None

    def replay_view(self, history, snap: Snapshot) -> ReplayView:
        """The replay badge and the panel's scrubber for the overlay; `snap` is shown."""
        t0, t1 = history.span()
        if self.replay is not None:
            t = snap.t
        else:
            t = self.scrub_t if self.scrub_t is not None else t1
        return ReplayView(playing=self.replay is not None, speed=keys.REPLAY_SPEED, t=t,
                          t_start=t0, t_end=t1)

    def key_replay(self, index: int = 0) -> None:
        history = self.history
        if self.replay is not None:
            self.end_replay()
            return
        if history is None:
            self.say("no replay: this source keeps no history")
            return
        t0, t1 = history.span()
        if t1 - t0 <= 0.0:
            self.say("nothing to replay yet")
            return
        self.replay = Replay(max(t0, t1 - keys.REPLAY_SECONDS), t1, time.perf_counter(),
                             self.paused)
        self.scrub_t = None
        self.send(commands.Pause())

    def end_replay(self) -> None:
        r, self.replay = self.replay, None
        if r is not None and not r.was_paused:
            self.send(commands.Resume())

    def scrub(self, t: float) -> None:
        """Show simulated time `t` of the history, paused (the panel's scrubber)."""
        self.replay = None
        self.scrub_t = float(t)
        self.send(commands.Pause())
