"""The app's instant replay and scrubber: showing the recent past from the solver's
history (runtime/history.py) while the solver is paused.

I replays the last keys.REPLAY_SECONDS at keys.REPLAY_SPEED, then live play resumes
(unless it was paused before); the panel's scrubber shows one moment of the history,
paused. A part of the window (window.Viewer): it reads the source's history and status
and sends its commands through the window's `send`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from slinky3d.runtime import commands
from slinky3d.runtime.commands import Command
from slinky3d.runtime.snapshot import Snapshot
from slinky3d.runtime.source import Source
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
    """Replay and scrubbing state, and the key and panel action that change it."""

    def __init__(self, source: Source, send: Callable[[Command], None],
                 say: Callable[[str], None]):
        self.source, self._send, self._say = source, send, say
        self.replay: Replay | None = None  # the replay in progress
        self.scrub_t: float | None = None  # simulated s the scrubber shows (paused)

    def actions(self) -> dict[str, Callable[[int], None]]:
        return {"replay": lambda index: self.toggle()}

    @property
    def in_past(self) -> bool:
        """Replaying or scrubbing: the window shows the past, the hand does nothing."""
        return self.replay is not None or self.scrub_t is not None

    @property
    def paused(self) -> bool:
        """The solver paused, or the scrubber showing the past."""
        return self.source.paused or self.scrub_t is not None

    def leave_past(self) -> None:
        """Stop replaying or scrubbing (without resuming the solver)."""
        self.replay, self.scrub_t = None, None

    def past_snapshot(self, now: float) -> Snapshot | None:
        """What the replay or the scrubber shows at wall time `now` (None: live play;
        a replay that reached its end ends here)."""
        history = self.source.history
        if self.replay is not None:
            r = self.replay
            t = r.t0 + (now - r.wall0) * keys.REPLAY_SPEED
            if t >= r.t1:
                self.end_replay()
            else:
                return history.at(t)
        if self.scrub_t is not None:
            return history.at(self.scrub_t)
        return None

    def view(self, snap: Snapshot) -> ReplayView:
        """The replay badge and the panel's scrubber for the overlay; `snap` is shown."""
        t0, t1 = self.source.history.span()
        if self.replay is not None:
            t = snap.t
        else:
            t = self.scrub_t if self.scrub_t is not None else t1
        return ReplayView(playing=self.replay is not None, speed=keys.REPLAY_SPEED, t=t,
                          t_start=t0, t_end=t1)

    def toggle(self) -> None:
        """The replay key: the last REPLAY_SECONDS again; pressed during one, its end."""
        if self.replay is not None:
            self.end_replay()
            return
        t0, t1 = self.source.history.span()
        if not t1 - t0 > 0.0:  # (nan: an empty history)
            self._say("nothing to replay yet")
            return
        self.start(max(t0, t1 - keys.REPLAY_SECONDS), t1, was_paused=self.paused)

    def start(self, t0: float, t1: float, was_paused: bool) -> None:
        """Replay simulated t0 -> t1 from now, the solver paused meanwhile."""
        self.replay = Replay(t0, t1, time.perf_counter(), was_paused)
        self.scrub_t = None
        self._send(commands.Pause())

    def end_replay(self) -> None:
        r, self.replay = self.replay, None
        if r is not None and not r.was_paused:
            self._send(commands.Resume())

    def scrub(self, t: float) -> None:
        """Show simulated time `t` of the history, paused (the panel's scrubber)."""
        self.replay = None
        self.scrub_t = float(t)
        self._send(commands.Pause())
