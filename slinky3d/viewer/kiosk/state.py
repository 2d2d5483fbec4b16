"""The kiosk's logic, without a window: the attract loop, hands-on play, the replay after a
drop, the idle timeout, the exit chord and the cursor. kiosk.py's window feeds it the wall
clock, input and what each frame shows, and carries out the events it returns.

    attract --(a touch: mouse or key)--> play --(idle for playlist.idle s)--> attract

In the attract loop each playlist entry plays for its seconds (a scripted let-go
`let_go` s after it opens), then the next opens; a drop's replay, once over, moves the
loop on too. In play the visitor has the app's controls; a drop's replay, once over,
puts the scene back (PutBack). A drop is a Slinky's anchored end let go (the let-go key or
a scene's scheduled release): the snapshot's `anchor_held` going from true to false.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from slinky3d.errors import SlinkyError
from slinky3d.scene.spec import Scene
from slinky3d.viewer.kiosk.playlist import Entry, Playlist, open_entry

ATTRACT, PLAY = "attract", "play"
REPLAY_LEAD = 0.3  # simulated s before a drop that its replay starts at
CURSOR_HIDE_S = 3.0  # wall s without a pointer move before the cursor hides again

log = logging.getLogger("slinky3d.kiosk")


# -- events the window carries out ---------------------------------------------------
@dataclass(frozen=True)
class Open:
    """Open playlist entry `index` (the loop moves on, or comes back)."""

    index: int


@dataclass(frozen=True)
class Play:
    """Hands-on play begins: the attract loop's caption and camera sway stop."""


@dataclass(frozen=True)
class EndReplay:
    """A touch during a replay: back to live play at once."""


@dataclass(frozen=True)
class ReplayDrop:
    """Replay simulated times t0..t1 (around a drop) in slow motion."""

    t0: float
    t1: float


@dataclass(frozen=True)
class ScriptedDrop:
    """The attract loop lets go of the held ends (the entry's `let_go`)."""


@dataclass(frozen=True)
class PutBack:
    """Put the scene back (after a drop's replay in play)."""


@dataclass(frozen=True)
class Quit:
    """The exit chord."""


Event = Open | Play | EndReplay | ReplayDrop | ScriptedDrop | PutBack | Quit


class Attendant:
    """The kiosk's state. Times: `now` in wall seconds (any monotonic clock), `t` in
    simulated seconds of the snapshot shown."""

    def __init__(self, playlist: Playlist, now: float):
        self.playlist = playlist
        self.mode = ATTRACT
        self.index = 0  # the entry open now
        self.opened = now  # wall s it opened
        self.last_input = now
        self.cursor_visible = False
        self._moved = -math.inf  # wall s of the last pointer move
        self._held: tuple[bool, ...] | None = None  # anchor_held per Slinky, last frame
        self._last_t: float | None = None
        self.drop_t: float | None = None  # a drop waiting for its replay
        self.replaying = False
        self._let_go_done = False
        self._entry_over = False  # the attract loop's entry made its point (a replay)
        self.drops = 0
        self.replays = 0

    @property
    def entry(self) -> Entry:
        return self.playlist.entries[self.index]

    def opened_entry(self, index: int, now: float) -> None:
        """The window opened entry `index` (after skipping any that would not load)."""
        self.index, self.opened = index, now
        self._held, self._last_t, self.drop_t = None, None, None
        self.replaying = self._let_go_done = self._entry_over = False

    def next_index(self) -> int:
        return (self.index + 1) % len(self.playlist.entries)

    # -- input -------------------------------------------------------------------------
    def touch(self, now: float, pointer: bool = False) -> list[Event]:
        """The mouse moved or was used, or a key was pressed."""
        self.last_input = now
        if pointer:
            self._moved = now
            self.cursor_visible = True
        events: list[Event] = []
        if self.replaying:
            self.replaying = False
            self.drop_t = None
            events.append(EndReplay())
        if self.mode == ATTRACT:
            self.mode = PLAY
            events.append(Play())
        return events

    def key(self, key: str, modifiers: frozenset[str] | set[str], now: float) -> list[Event]:
        """A key press (pyglet's key name, the modifiers held): the exit chord quits;
        any other key is a touch (what it does is the app's, or nothing in the kiosk)."""
        if self.playlist.exit.matches(key, modifiers):
            return [Quit()]
        return self.touch(now)

    # -- each frame --------------------------------------------------------------------
    def tick(self, now: float, t: float, held: Sequence[bool],
             replay_active: bool) -> list[Event]:
        """What to do this frame, given the simulated time shown, which Slinkies' anchored
        ends are held, and whether a replay shows (it ends by itself)."""
        events: list[Event] = []
        if self._last_t is not None and t < self._last_t - 1e-9:
            self._held, self.drop_t = None, None  # a reset: the time went back
        held = tuple(bool(h) for h in held)
        if not replay_active and self._held is not None and len(held) == len(self._held):
            if any(a and not b for a, b in zip(self._held, held, strict=True)):
                self.drops += 1
                if self.playlist.replay and self.drop_t is None:
                    self.drop_t = t
        if not replay_active:  # a replay shows the past: its snapshots are no news
            self._held, self._last_t = held, t
        if self.replaying and not replay_active:  # the replay has ended by itself
            self.replaying = False
            if self.mode == ATTRACT:
                self._entry_over = True
            else:
                events.append(PutBack())
        if (self.drop_t is not None and not self.replaying
                and t >= self.drop_t + self.playlist.replay_after):
            events.append(ReplayDrop(max(0.0, self.drop_t - REPLAY_LEAD),
                                     self.drop_t + self.playlist.replay_after))
            self.drop_t, self.replaying = None, True
            self.replays += 1
        if self.cursor_visible and now - self._moved >= CURSOR_HIDE_S:
            self.cursor_visible = False
        if self.mode == ATTRACT:
            events += self._attract(now)
        elif now - self.last_input >= self.playlist.idle:
            self.mode = ATTRACT
            self.cursor_visible = False
            events.append(Open(self.next_index()))
        return events

    def _attract(self, now: float) -> list[Event]:
        entry = self.entry
        events: list[Event] = []
        if entry.let_go is not None and not self._let_go_done \
                and now - self.opened >= entry.let_go:
            self._let_go_done = True
            events.append(ScriptedDrop())
        over = now - self.opened >= self.playlist.seconds_of(entry) and not self.replaying
        if (over or self._entry_over) and self.drop_t is None:
            events.append(Open(self.next_index()))
        return events


def first_valid(playlist: Playlist, start: int,
                load: Callable[[Playlist, Entry], Scene] = open_entry
                ) -> tuple[int, Scene] | None:
    """The first entry from `start` on (round the list) whose scene loads now, and its
    scene; each that does not is logged with why and skipped. None: none loads."""
    n = len(playlist.entries)
    for k in range(n):
        i = (start + k) % n
        entry = playlist.entries[i]
        try:
            return i, load(playlist, entry)
        except SlinkyError as e:
            log.warning("playlist entry %d (%s) skipped: %s", i + 1, entry.name, e)
    return None


def check_playlist(playlist: Playlist,
                   load: Callable[[Playlist, Entry], Scene] = open_entry) -> int:
    """At start: how many entries load (each that does not is logged); a SlinkyError
    (one line) when none does."""
    good = 0
    first = ""
    for i, entry in enumerate(playlist.entries):
        try:
            load(playlist, entry)
            good += 1
        except SlinkyError as e:
            log.warning("playlist entry %d (%s) skipped: %s", i + 1, entry.name, e)
            first = first or str(e)
    if not good:
        raise SlinkyError(f"{playlist.path}: no scene of the playlist loads (the first: "
                          f"{first})")
    return good
