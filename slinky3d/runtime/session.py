"""A logged session: its scene, its timed command log, and playing it back in real time.

A session is what `replay` needs to reproduce a run bit for bit: the scene (as TOML
text after overrides), the step override, the (step, command) log and the number of
steps. `slinky3d.output.session` writes it to a file with the sampled trajectory;
`SessionPlayer` plays it in a window with the solver thread's interface.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from typing import Any

from slinky3d.errors import SlinkyError
from slinky3d.runtime.commands import (
    PACING_COMMANDS,
    SIMULATION_COMMANDS,
    Command,
    DriveBase,
    Fault,
    Grab,
    LetGo,
    Load,
    LogEntry,
    Move,
    Pause,
    Release,
    Reset,
    Resume,
    Step,
    TakeHold,
    TimeScale,
    TogglePause,
    TwistBase,
    advance,
    checkpoint,
    restore,
)
from slinky3d.runtime.simulation import Simulation
from slinky3d.runtime.thread import SimThread
from slinky3d.scene import loader
from slinky3d.scene.spec import Scene
from slinky3d.version import __version__

FORMAT = 1  # the session file's layout; bumped when it changes
_KINDS: dict[str, type[Command | Fault]] = {
    c.__name__: c for c in (Grab, Move, Release, DriveBase, TwistBase, LetGo, TakeHold,
                            Reset, Pause, Resume, TogglePause, Step, TimeScale, Load,
                            Fault)}


@dataclass(frozen=True)
class Session:
    """A run as `commands.replay` reproduces it."""

    scene: Scene
    log: tuple[LogEntry, ...]
    nsteps: int
    h: float | None = None  # the step, when it overrode the scene's
    final_hash: str = ""  # Simulation.state_hash() after nsteps steps
    version: str = __version__  # slinky3d's, which wrote it

    @property
    def duration(self) -> float:
        """Simulated seconds stepped (over resets)."""
        return self.nsteps * (self.h if self.h is not None else self.scene.dt)


# -- scenes and commands as JSON ------------------------------------------------------
def scene_text(scene: Scene) -> str:
    """The scene as TOML text (after its overrides), which loads back to the same Scene
    (sleeping too, when it was turned off on the Scene rather than in its TOML)."""
    import tomli_w

    doc = scene.raw
    if doc.get("sleep", Scene.sleep) != scene.sleep:
        doc = {**doc, "sleep": scene.sleep}
    return tomli_w.dumps(doc)


def scene_json(scene: Scene) -> dict[str, Any]:
    return {"toml": scene_text(scene), "title": scene.title, "path": scene.path}


def scene_from_json(d: Any, where: str) -> Scene:
    if not (isinstance(d, dict) and isinstance(d.get("toml"), str)):
        raise SlinkyError(f"{where}: the session's scene is missing")
    title = d.get("title")
    return loader.loads(d["toml"], f"{where} (scene {d.get('path') or title})",
                        stem=title if isinstance(title, str) else "untitled")


def command_json(cmd: Command | Fault) -> dict[str, Any]:
    """A command (or Fault marker) as a JSON-able dict with its type's name."""
    out: dict[str, Any] = {"type": type(cmd).__name__}
    for f in fields(cmd):
        v = getattr(cmd, f.name)
        out[f.name] = scene_json(v) if isinstance(v, Scene) else v
    return out


def command_from_json(d: Any, where: str) -> Command | Fault:
    if not isinstance(d, dict) or d.get("type") not in _KINDS:
        kind = d.get("type") if isinstance(d, dict) else d
        raise SlinkyError(f"{where}: unknown command {kind!r} in the session log")
    cls = _KINDS[d["type"]]
    args = {}
    for f in fields(cls):
        if f.name not in d:
            continue
        v = d[f.name]
        if cls is Load:
            v = scene_from_json(v, where)
        elif isinstance(v, list):
            v = tuple(v)
        args[f.name] = v
    try:
        return cls(**args)
    except TypeError as e:
        raise SlinkyError(f"{where}: a broken {d['type']} in the session log ({e})") from None


def session_json(s: Session) -> str:
    return json.dumps({
        "format": FORMAT, "version": s.version, "scene": scene_json(s.scene),
        "h": s.h, "nsteps": s.nsteps, "final_hash": s.final_hash,
        "log": [[step, command_json(c)] for step, c in s.log],
    })


def session_from_json(text: str, where: str) -> Session:
    """A Session from `session_json`'s text; a one-line SlinkyError if it is broken or
    from another format or slinky3d version (replays are bit-identical only within one)."""
    try:
        d = json.loads(text)
    except (json.JSONDecodeError, TypeError) as e:
        raise SlinkyError(f"{where}: the session log is not valid JSON ({e})") from None
    if not isinstance(d, dict):
        raise SlinkyError(f"{where}: the session log is not a JSON object")
    if d.get("format") != FORMAT:
        raise SlinkyError(f"{where}: a session file of format {d.get('format')!r}; "
                          f"this slinky3d reads format {FORMAT}")
    if d.get("version") != __version__:
        raise SlinkyError(f"{where}: a session of slinky3d {d.get('version')}; this is "
                          f"{__version__}, whose replay would not be bit-identical")
    nsteps, h, log = d.get("nsteps"), d.get("h"), d.get("log")
    if not (isinstance(nsteps, int) and nsteps >= 0):
        raise SlinkyError(f"{where}: the session's step count {nsteps!r} is not an integer >= 0")
    if h is not None and not (isinstance(h, float | int) and math.isfinite(h) and h > 0):
        raise SlinkyError(f"{where}: the session's step {h!r} is not a time > 0")
    if not isinstance(log, list):
        raise SlinkyError(f"{where}: the session has no command log")
    entries: list[LogEntry] = []
    last = 0
    for entry in log:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], int)
                and entry[0] >= last):
            raise SlinkyError(f"{where}: a broken or out-of-order log entry {entry!r:.80}")
        last = entry[0]
        entries.append((last, command_from_json(entry[1], where)))
    return Session(scene=scene_from_json(d.get("scene"), where), log=tuple(entries),
                   nsteps=nsteps, h=None if h is None else float(h),
                   final_hash=str(d.get("final_hash", "")), version=__version__)


def from_thread(thread: SimThread, timeout: float = 10.0) -> Session:
    """The session so far of a solver thread. A running thread is paused first (its log
    then ends with that Pause), so that its log and step count belong together."""
    if thread.alive:
        thread.send(Pause())
        if not thread.drain(timeout):  # e.g. still compiling its kernels on a first run
            raise SlinkyError(f"the solver thread did not pause within {timeout:g} s: "
                              "no session to save yet")
    nsteps = thread.steps
    log = tuple(e for e in thread.log if e[0] <= nsteps)
    return Session(scene=thread.initial_scene, log=log, nsteps=nsteps, h=thread.h_override,
                   final_hash=thread.sim.state_hash())


# -- playing a session in real time -------------------------------------------------------
class SessionPlayer(SimThread):
    """Plays a Session in real time with SimThread's interface (start, stop, send,
    latest_pair, history, paused, scale, ...): the logged simulation commands are
    applied at their steps, so the run is bit-identical to the session's. The viewer's
    own commands may only pace it (pause, step, time scale; Reset starts it over);
    the session's own pacing commands are not replayed. At the end it pauses and
    says whether the final state hash matches the session's."""

    def __init__(self, session: Session, realtime: bool = True):
        super().__init__(session.scene, session.h, realtime)
        self.session = session
        self.finished = False
        self._cursor = 0
        self._own = False  # applying a logged command (not the viewer's)

    def _restart(self) -> None:
        self.sim = Simulation(self.session.scene, self.session.h)
        self.scene = self.sim.scene
        self._steps = 0
        self._cursor = 0
        self._log.clear()
        self.finished = False
        self.status = self.error = ""
        self._seen_rollbacks = 0
        self._resync()
        first = self._snap(0)
        self._pair = (first, first)
        self.history.clear()
        self.history.add(first)

    def _handle(self, cmd: object) -> None:
        if self._own or cmd is None or not isinstance(cmd, SIMULATION_COMMANDS):
            super()._handle(cmd)
            return
        if isinstance(cmd, Reset):
            self._restart()
        else:
            self.status = f"replaying a session: {type(cmd).__name__} ignored"
        self._publish()

    def _apply_due(self) -> None:
        log = self.session.log
        while self._cursor < len(log) and log[self._cursor][0] <= self._steps:
            step, cmd = log[self._cursor]
            self._cursor += 1
            if step < self._steps or isinstance(cmd, PACING_COMMANDS):
                continue
            if isinstance(cmd, Fault):
                cp = checkpoint(self.sim)
                advance(self.sim, cmd.steps)
                restore(self.sim, cp)
                self._log.append((step, cmd))
                continue
            self._own = True
            try:
                self._handle(cmd)
            finally:
                self._own = False

    def _take_commands(self) -> None:
        self._apply_due()  # between iterations, as the thread takes the viewer's
        super()._take_commands()

    def _batch(self, n: int, deadline: float) -> int:
        self._apply_due()  # (due already, unless a Step of the viewer's came first)
        stop = self.session.nsteps
        if self._cursor < len(self.session.log):
            stop = min(stop, self.session.log[self._cursor][0])
        if self._steps >= self.session.nsteps:
            if not self.finished:
                self.finished = True
                same = self.sim.state_hash() == self.session.final_hash
                self.status = ("replay done: bit-identical to the session" if same else
                               "replay done: the final state differs from the session's")
            self._paused = True
            self._pending = 0
            self._publish()
            return 0
        return super()._batch(max(1, min(n, stop - self._steps)), deadline)

