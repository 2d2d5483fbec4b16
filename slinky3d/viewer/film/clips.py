"""Clips from the app: V starts and stops one, K keeps the last keys.CLIP_KEEP seconds.

A clip is made after the fact from the solver's command log: the session so far is
re-run and filmed off screen at full quality by `filming.BackgroundFilm`, in another
process, while the app goes on (this 2-core machine cannot encode 1080p live, and
screen grabs would film whatever the window's frames happened to be). Its progress and
then the file's path show in the HUD's message line; the file goes to the user's
videos folder. A mixin of the window (window.Viewer), which provides the solver
`source`, the `scene` and `say`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from slinky3d.runtime.session import Session
from slinky3d.viewer.app.keys import CLIP_KEEP
from slinky3d.viewer.film.filming import BackgroundFilm, Shot, clip_path

CLIP_SHOT = Shot(size=(1920, 1080), fps=60, quality="gpu")  # the full-quality look


def session_so_far(source: Any) -> Session | None:
    """The live solver thread's session up to its last step, read without pausing it
    (None for a source that logs no session, e.g. a replayed one)."""
    if not all(hasattr(source, a) for a in ("initial_scene", "log", "steps", "h_override")):
        return None
    if getattr(source, "finished", None) is not None:  # a SessionPlayer: nothing new to film
        return None
    nsteps = int(source.steps)
    log = tuple(e for e in source.log if e[0] <= nsteps)  # the thread may have gone on
    return Session(scene=source.initial_scene, log=log, nsteps=nsteps, h=source.h_override)


class Clips:
    """The V and K keys, and the clip being made."""

    clip_from: int | None = None  # the step V started filming at, while it films
    film: BackgroundFilm | None = None
    source: Any
    scene: Any

    if TYPE_CHECKING:
        def say(self, text: str) -> None: ...

    def key_clip(self, index: int = 0) -> None:
        """V: start filming here; pressed again, make the clip of what was filmed."""
        steps = getattr(self.source, "steps", None)
        if self.clip_from is None:
            if session_so_far(self.source) is None or steps is None:
                self.say("clips film the live solver only")
                return
            self.clip_from = int(steps)
            self.say("filming: V again to stop")
            return
        start, self.clip_from = self.clip_from, None
        self._make_clip(start)

    def key_keep(self, index: int = 0) -> None:
        """K: make a clip of the last CLIP_KEEP seconds."""
        session = session_so_far(self.source)
        if session is None:
            self.say("clips film the live solver only")
            return
        h = session.h if session.h is not None else session.scene.dt
        self._make_clip(max(0, session.nsteps - round(CLIP_KEEP / h)))

    def _make_clip(self, start: int) -> None:
        session = session_so_far(self.source)
        if session is None:
            self.say("clips film the live solver only")
            return
        if self.film is not None and not self.film.poll():
            self.say("a clip is still being made: wait for it")
            return
        if session.nsteps <= start:
            self.say("nothing to film yet: the solver has not stepped since V")
            return
        h = session.h if session.h is not None else session.scene.dt
        self.film = BackgroundFilm(session, clip_path(self.scene), CLIP_SHOT,
                                   start=start * h, duration=(session.nsteps - start) * h)
        self.say(self.film.status())

    def poll_clip(self) -> None:
        """Each frame: the clip's progress, then its path, in the message line."""
        if self.film is None:
            return
        self.say(self.film.status())
        if self.film.finished:
            self.film = None  # the message stays up for its while

    def close_clips(self) -> None:
        """On quit: a clip still being made is cancelled (its process would not outlive
        the app), and its half-written file removed."""
        if self.film is not None:
            self.film.cancel()
            self.film = None
