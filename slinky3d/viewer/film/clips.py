"""Clips from the app: V starts and stops one, K keeps the last few seconds (the window
gives how many: keys.CLIP_KEEP).

A clip is made after the fact from the solver's command log: the session so far is
re-run and filmed off screen at full quality by `filming.BackgroundFilm`, in another
process, while the app goes on (this 2-core machine cannot encode 1080p live, and
screen grabs would film whatever the window's frames happened to be). Its progress and
then the file's path show in the HUD's message line; the file goes to the user's
videos folder. A part of the window (window.Viewer): it reads the source's log, and
says what it does through the window's `say`.
"""

from __future__ import annotations

from collections.abc import Callable

from slinky3d.runtime.session import Session
from slinky3d.runtime.source import Source
from slinky3d.scene.spec import Scene
from slinky3d.viewer.film.filming import BackgroundFilm, Shot, clip_path

CLIP_SHOT = Shot(size=(1920, 1080), fps=60, quality="gpu")  # the full-quality look
LIVE_ONLY = "clips film the live solver only"


def session_so_far(source: Source) -> Session:
    """The source's session up to its last step, read without pausing it."""
    nsteps = int(source.steps)
    log = tuple(e for e in source.log if e[0] <= nsteps)  # the thread may have gone on
    return Session(scene=source.initial_scene, log=log, nsteps=nsteps, h=source.h_override)


class Clips:
    """The V and K keys, and the clip being made. `live`: False while a logged session
    plays (its film is the session's own: `slinky3d record --session`)."""

    def __init__(self, source: Source, scene: Callable[[], Scene],
                 say: Callable[[str], None], keep: float, live: bool = True):
        self.source, self._scene, self._say, self.live = source, scene, say, live
        self.keep = keep  # s of the recent past K films
        self.clip_from: int | None = None  # the step V started filming at, while it films
        self.film: BackgroundFilm | None = None

    def actions(self) -> dict[str, Callable[[int], None]]:
        return {"clip": lambda index: self.key_clip(), "keep": lambda index: self.key_keep()}

    def key_clip(self) -> None:
        """V: start filming here; pressed again, make the clip of what was filmed."""
        if not self.live:
            self._say(LIVE_ONLY)
            return
        if self.clip_from is None:
            self.clip_from = int(self.source.steps)
            self._say("filming: V again to stop")
            return
        start, self.clip_from = self.clip_from, None
        self._make_clip(start)

    def key_keep(self) -> None:
        """K: make a clip of the last `keep` seconds."""
        if not self.live:
            self._say(LIVE_ONLY)
            return
        session = session_so_far(self.source)
        h = session.h if session.h is not None else session.scene.dt
        self._make_clip(max(0, session.nsteps - round(self.keep / h)))

    def _make_clip(self, start: int) -> None:
        session = session_so_far(self.source)
        if self.film is not None and not self.film.poll():
            self._say("a clip is still being made: wait for it")
            return
        if session.nsteps <= start:
            self._say("nothing to film yet: the solver has not stepped since V")
            return
        h = session.h if session.h is not None else session.scene.dt
        self.film = BackgroundFilm(session, clip_path(self._scene()), CLIP_SHOT,
                                   start=start * h, duration=(session.nsteps - start) * h)
        self._say(self.film.status())

    def poll(self) -> None:
        """Each frame: the clip's progress, then its path, in the message line."""
        if self.film is None:
            return
        self._say(self.film.status())
        if self.film.finished:
            self.film = None  # the message stays up for its while

    def close(self) -> None:
        """On quit: a clip still being made is cancelled (its process would not outlive
        the app), and its half-written file removed."""
        if self.film is not None:
            self.film.cancel()
            self.film = None
