"""What the viewer reads from whatever plays its scene, declared once: the solver thread
(thread.SimThread), a logged session played again (session.SessionPlayer) and the
tests' stand-ins all implement it.

The window draws the newest pair of published snapshots, shows the recent past from the
history (instant replay, energy plot, contact timeline), sends commands and reads the
status (steps taken, paused, the last solver fault); a clip re-runs the log so far.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from slinky3d.runtime.commands import Command, LogEntry
from slinky3d.runtime.history import History
from slinky3d.runtime.snapshot import Snapshot
from slinky3d.scene.spec import Scene


@runtime_checkable
class Source(Protocol):
    """A scene being played: snapshots out, commands in, never blocking the caller."""

    history: History  # the last seconds of snapshots
    error: str  # the last solver fault ("": none); the run goes on, paused
    initial_scene: Scene  # the scene the log starts from
    h_override: float | None  # the step, when it overrides the scene's

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def send(self, cmd: Command) -> None:
        """Queue a command (runtime/commands.py); returns at once."""

    def latest_pair(self) -> tuple[Snapshot, Snapshot]:
        """The two newest snapshots (for `snapshot.lerp`)."""
        ...

    @property
    def steps(self) -> int:
        """Steps taken since the start: the log's clock."""
        ...

    @property
    def paused(self) -> bool: ...

    @property
    def log(self) -> Sequence[LogEntry]:
        """(step, command) for every command taken, in order."""
        ...
