"""`slinky3d kiosk [PLAYLIST.toml]`: the app as an unattended exhibit (docs/kiosk.md).

Full screen, the cursor hidden until the mouse moves; an attract loop through the
playlist's scenes with their captions until a visitor touches the mouse or a key, then
the app's own controls; a slow-motion replay after each drop; back to the loop after
the playlist's idle time. The only way out is the exit chord: Esc, F11, the window's
close button and the keys that would open files (screenshot, clips, saving a scene) do
nothing. The logic is state.Attendant's; Kiosk is the policy it gives the app's window
(app/policy.py) and what it does in it.

It runs for months: a solver fault puts the scene back, a roll-back is logged, a GL
error (a lost context) recreates the GL objects and goes on, a playlist scene that no
longer loads is skipped. What cannot be mended in the process (the GL objects failing
again and again, a frame raising again and again) ends it with EXIT_RESTART, and the
systemd unit starts it again. The log rotates in the user's log folder.
"""

from __future__ import annotations

import logging
import logging.handlers
import math
import shutil
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any

import moderngl
import platformdirs
import pyglet  # its window submodule loads on first use, after the window's options

from slinky3d.errors import SlinkyError, error_line
from slinky3d.output.paths import cannot_write, check_folder
from slinky3d.resources import data_dir
from slinky3d.runtime import commands
from slinky3d.runtime.memory import Upkeep
from slinky3d.runtime.notify import Notifier
from slinky3d.runtime.source import Source
from slinky3d.runtime.thread import SimThread
from slinky3d.scene.spec import Scene
from slinky3d.viewer import WINDOW_SIZE
from slinky3d.viewer.app import keys
from slinky3d.viewer.app.lost_context import is_gl_error, release_gl
from slinky3d.viewer.app.play import say_compiling
from slinky3d.viewer.app.policy import Action, Policy
from slinky3d.viewer.app.window import Viewer
from slinky3d.viewer.jobs import need_display, parse_size
from slinky3d.viewer.kiosk.caption import Placard
from slinky3d.viewer.kiosk.playlist import Playlist, caption_of, load_playlist
from slinky3d.viewer.kiosk.state import (
    ATTRACT,
    Attendant,
    EndReplay,
    Event,
    Open,
    Play,
    PutBack,
    Quit,
    ReplayDrop,
    ScriptedDrop,
    check_playlist,
    first_valid,
)
from slinky3d.viewer.overlay import placement
from slinky3d.viewer.overlay.panel import SaveScene

log = logging.getLogger("slinky3d.kiosk")

EXIT_RESTART = 3  # status when the process cannot mend itself: systemd starts it again
MAX_GL_RECOVERIES = 5  # GL recoveries in a row (no good frame between) before giving up
# Recoveries in all before a fresh start: each leaves 10-20 MB with the driver (llvmpipe,
# measured: docs/kiosk.md), which only a new process gets back.
MAX_GL_RECOVERIES_TOTAL = 10
MAX_FRAME_ERRORS = 300  # frames raising in a row (~5 s) before giving up
LOG_FILE = "kiosk.log"
LOG_BYTES = 1_000_000  # one log file's size before it rotates
LOG_BACKUPS = 5  # rotated files kept: kiosk.log.1 .. .5
LOG_COMMANDS = 1000  # command log entries the solver thread keeps (it writes no session)
MOVE_PX = 3.0  # pixels the pointer must move to count as a touch
SWAY_PERIOD = 40.0  # wall s of one to-and-fro of the attract loop's camera
ATTRACT_HINT = "Touch the screen or press a key to play"
PLAY_HINT = ("Drag the Slinky with the mouse \u00b7 L lets go \u00b7 R starts again "
             "\u00b7 arrows move the hand \u00b7 H help")
# The app's keys that do nothing in the kiosk (no way out, no files, no full-screen toggle).
OFF = ("quit", "fullscreen", "screenshot", "clip", "keep")
_handlers: list[logging.Handler] = []


class KioskThread(SimThread):
    """The solver thread with a bounded command log: the kiosk writes no session, and
    the whole log of months of play would grow without end."""

    def __init__(self, scene: Scene, h: float | None = None, realtime: bool = True):
        super().__init__(scene, h, realtime)
        self._log = deque(maxlen=LOG_COMMANDS)


class Kiosk(Policy):
    """The kiosk's rules for the app's window, and the Attendant that runs it. The
    window is `app`: the kiosk holds it, and it asks the kiosk (its policy) which keys
    do what, before and after each frame, and when a frame fails."""

    off = frozenset(OFF)
    hud_caption = False  # the kiosk's placard shows the captions, with what to do
    draws_over = True  # the placard, over every frame

    def __init__(self, playlist: Playlist, first: tuple[int, Scene], size: tuple[int, int],
                 fullscreen: bool = True, quality: str = "auto", max_frames: int = 0,
                 save_frame: Path | None = None, source: Source | None = None,
                 notifier: Notifier | None = None):
        index, scene = first
        self.playlist = playlist
        now = time.perf_counter()
        self.attendant = Attendant(playlist, now)
        self.attendant.opened_entry(index, now)
        self.entry_scene = scene
        self.notifier = notifier or Notifier()
        self.exit_code = 0
        self.gl_recoveries = 0  # over the run
        self.rollbacks = 0  # divergence-guard roll-backs seen, over every scene
        self.solver_faults = 0
        self.frame_errors = 0  # frames that raised, over the run
        self.entries_opened = 0
        self.upkeep = Upkeep(time.perf_counter())  # garbage collected, heap trimmed
        self.skipped = 0  # entries skipped because their scene did not load
        self._gl_failures = 0  # recoveries since the last good frame
        self._frame_failures = 0  # frames raising in a row
        self._lose_context = False
        self._gl_broken = False  # the last recovery failed half way
        self._seen_rollbacks = 0
        self._seen_error = ""
        self._cursor_shown: bool | None = None
        self._pointer: tuple[float, float] | None = None  # where the pointer was last
        self.app = Viewer(scene, scene.look, scene.camera, size, quality=quality,
                          max_frames=max_frames, save_frame=save_frame,
                          source=source or KioskThread(scene), policy=self)
        if fullscreen:
            self.app.window.set_fullscreen(True)
        log.info("kiosk: playing entry %d (%s)", index + 1, playlist.entries[index].name)

    def bind(self, app: Viewer) -> None:
        self.app = app
        self.placard = Placard(app.ctx)
        self._push_kiosk_handlers()
        self._sync_cursor()

    # -- the policy's rules -------------------------------------------------------------
    def actions(self) -> dict[str, Action]:
        return {"scene": self.open_playlist_entry}

    def allows(self, action: object) -> bool:
        if isinstance(action, SaveScene):
            self.app.say("saving scenes is off in the kiosk")
            return False
        return True

    def help_lines(self, lines: list[tuple[str, str]]) -> list[tuple[str, str]]:
        off = {b.label for b in keys.BINDINGS if b.action in OFF}
        n = len(self.playlist.entries)
        return [(k, f"open scene 1-{min(n, 9)} of the exhibit") if k == "1-9" else (k, w)
                for k, w in lines if k not in off]

    def close_requested(self) -> bool:
        log.info("window close ignored (the exit chord is %s)", self.playlist.exit)
        return False

    # -- input: above the overlay's handlers, so that the chord always gets through --
    def _kiosk_handlers(self) -> dict[str, Any]:
        return dict(on_key_press=self._kiosk_key, on_mouse_motion=self._kiosk_motion,
                    on_mouse_press=self._kiosk_pointer, on_mouse_drag=self._kiosk_pointer,
                    on_mouse_scroll=self._kiosk_pointer)

    def _push_kiosk_handlers(self) -> None:
        self.app.window.push_handlers(**self._kiosk_handlers())

    def _kiosk_key(self, symbol, modifiers):
        key = pyglet.window.key
        name = key.symbol_string(symbol)
        mods = {m for m, bit in (("ctrl", key.MOD_CTRL), ("alt", key.MOD_ALT),
                                 ("shift", key.MOD_SHIFT), ("super", key.MOD_WINDOWS))
                if modifiers & bit}
        events = self.attendant.key(name, frozenset(mods), time.perf_counter())
        self.do_events(events)
        if symbol == key.ESCAPE or any(isinstance(ev, Quit) for ev in events):
            return pyglet.event.EVENT_HANDLED  # Esc: nor pyglet's default (close) either
        return None  # on to the overlay and the app's controls

    def _kiosk_motion(self, x, y, dx, dy) -> None:
        """A move of the pointer is a touch; the events a window gets as it opens or goes
        full screen under a still pointer are not (the first, or no move)."""
        last, self._pointer = self._pointer, (x, y)
        if last is not None and math.hypot(x - last[0], y - last[1]) >= MOVE_PX:
            self._kiosk_pointer()

    def _kiosk_pointer(self, *args) -> None:
        self.do_events(self.attendant.touch(time.perf_counter(), pointer=True))
        self._sync_cursor()

    def _sync_cursor(self) -> None:
        visible = self.attendant.cursor_visible
        if visible != self._cursor_shown:
            self._cursor_shown = visible
            try:
                self.app.window.set_mouse_visible(visible)
            except Exception as e:  # noqa: BLE001 - a window system without a cursor
                log.info("cursor: %s", error_line(e))

    # -- the attendant's events --------------------------------------------------------
    def do_events(self, events: list[Event]) -> None:
        app = self.app
        for ev in events:
            if isinstance(ev, Open):
                self.open_entry(ev.index, attract=True)
            elif isinstance(ev, Play):  # the camera stays where the sway had it
                log.info("play: a visitor took over (%s)", self.attendant.entry.name)
            elif isinstance(ev, EndReplay):
                app.instant_replay.leave_past()
                app.send(commands.Resume())
            elif isinstance(ev, ReplayDrop):
                app.instant_replay.start(ev.t0, ev.t1, was_paused=False)
                log.info("drop: slow-motion replay of t = %.2f..%.2f s", ev.t0, ev.t1)
            elif isinstance(ev, ScriptedDrop):
                for i, sl in enumerate(app.shown.slinkies):
                    if sl.anchor_held:
                        app.send(commands.LetGo(i))
            elif isinstance(ev, PutBack):
                app.reset()
                app.send(commands.Resume())
            elif isinstance(ev, Quit):
                log.info("exit chord: quitting")
                self.exit_code = 0
                app.quit()

    def open_playlist_entry(self, index: int) -> None:
        """1-9: the playlist's scenes, not every shipped one."""
        if index < len(self.playlist.entries):
            self.open_entry(index, attract=False)

    def open_entry(self, index: int, attract: bool) -> None:
        """Open playlist entry `index`, or the next that loads; the attract loop's
        state back to its start (time scale 1, playing, no panel)."""
        app = self.app
        found = first_valid(self.playlist, index)
        now = time.perf_counter()
        if found is None:
            log.error("no scene of the playlist loads now: %s plays again",
                      self.attendant.entry.name)
            app.reset()
            app.send(commands.Resume())
            self.attendant.opened_entry(self.attendant.index, now)
            return
        i, scene = found
        self.skipped += (i - index) % len(self.playlist.entries)
        if attract and app.ui.side_view:
            app.toggle_side_view()  # the loop shows the 3D picture (open_scene keeps it)
        app.open_scene(scene)
        self.entry_scene = scene
        self._seen_rollbacks, self._seen_error = 0, ""
        if attract:
            app.ui.show_panel = app.ui.show_help = False
            app.set_scale(0)
            app.ui.message = ""
        app.send(commands.Resume())
        self.attendant.opened_entry(i, now)
        self.entries_opened += 1
        self.upkeep.scene_opened(now)
        log.info("%s: entry %d (%s)", "attract" if attract else "play", i + 1,
                 self.playlist.entries[i].name)

    # -- the frame ----------------------------------------------------------------------
    def before_frame(self, now: float) -> None:
        if self._lose_context:
            self._lose_context = False
            raise moderngl.Error("simulated GL context loss")
        self._watch_solver()
        snap = self.app.shown
        self.do_events(self.attendant.tick(
            now, snap.t, [sl.anchor_held for sl in snap.slinkies],
            self.app.instant_replay.replay is not None))
        self._sway(now)
        self._sync_cursor()

    def after_frame(self, now: float) -> None:
        self._gl_failures = self._frame_failures = 0
        self.upkeep.tick(now)
        self.notifier.ready("playing")
        self.notifier.watchdog()

    def after_overlay(self, screen: Any, size: tuple[int, int], now: float) -> None:
        a = self.attendant
        if a.mode == ATTRACT:
            title, text = caption_of(a.entry, self.entry_scene)
            hint = ATTRACT_HINT
        else:
            title, text, hint = "", "", PLAY_HINT
        if self.app.instant_replay.replay is not None:
            title, text, hint = "", "", ""  # the overlay's replay badge says it
        app = self.app
        subjects = placement.scaled(
            placement.subject(app.shown, app.camera, size[0] / max(size[1], 1)), size)
        self.placard.draw(screen, size, title, text, hint, subjects, [app.overlay.hud.rect])

    def _sway(self, now: float) -> None:
        """The attract loop's camera: to and fro about the director's (which follows
        the Slinky unless the scene says otherwise)."""
        sway = self.playlist.sway
        if self.attendant.mode != ATTRACT or sway <= 0 or self.app.ui.side_view:
            return
        phase = 2 * math.pi * (now - self.attendant.opened) / SWAY_PERIOD
        self.app.director.turn = math.radians(sway) * math.sin(phase)

    def _watch_solver(self) -> None:
        """Log roll-backs; a solver fault (the thread paused, its state put back) puts
        the scene back and plays on."""
        app = self.app
        rb = app.shown.rollbacks
        if rb > self._seen_rollbacks:
            self.rollbacks += rb - self._seen_rollbacks
            log.warning("%s (%s)", app.shown.status or "solver rolled back",
                        self.attendant.entry.name)
        self._seen_rollbacks = rb
        error = app.source.error
        if error and error != self._seen_error:
            self.solver_faults += 1
            log.error("%s (%s): scene put back", error, self.attendant.entry.name)
            app.instant_replay.leave_past()
            app.reset()
            app.send(commands.Resume())
        self._seen_error = error

    def frame_failed(self, error: Exception) -> bool:
        self.frame_errors += 1
        if is_gl_error(error) or self._gl_broken:
            self._recover_gl(error)
            return True
        self._frame_failures += 1
        log.error("frame failed: %s", error_line(error), exc_info=self._frame_failures == 1)
        if self._frame_failures >= MAX_FRAME_ERRORS:
            self._give_up(f"{self._frame_failures} frames in a row failed")
        return True

    def _give_up(self, why: str) -> None:
        log.critical("%s: exiting with status %d to be started again", why, EXIT_RESTART)
        self.exit_code = EXIT_RESTART
        self.app.quit()

    # -- a lost GL context --------------------------------------------------------------
    def simulate_context_loss(self) -> None:
        """As a lost context leaves things (tests, benchmarks): the GL objects gone, and
        the next frame's first GL call raising."""
        for obj in (*self.app.gl_objects(), self.placard):
            release_gl(obj)
        self._lose_context = True

    def _recover_gl(self, e: Exception) -> None:
        """New GL objects on the window's context (window.Viewer.recreate_gl), then the
        placard's and the kiosk's handlers above the new overlay's (gl_recreated)."""
        self._gl_failures += 1
        self.gl_recoveries += 1
        log.error("GL error (%s): recreating the GL objects (%d in a row)", error_line(e),
                  self._gl_failures)
        if self._gl_failures > MAX_GL_RECOVERIES:
            self._give_up("the GL objects cannot be recreated")
            return
        try:
            self.app.window.switch_to()
            release_gl(self.placard)
            self.app.recreate_gl()
            self._gl_broken = False
            log.info("GL objects recreated (%s)",
                     self.app.ctx.info.get("GL_RENDERER", "?"))
            if self.gl_recoveries >= MAX_GL_RECOVERIES_TOTAL:
                self._give_up(f"{self.gl_recoveries} GL recoveries: a fresh start frees "
                              "what they left with the driver")
        except Exception as e2:  # noqa: BLE001 - the next frame tries again
            self._gl_broken = True  # whatever the next frame raises, this is why
            log.error("recreating the GL objects failed: %s", error_line(e2))

    def gl_recreated(self) -> None:
        self.placard = Placard(self.app.ctx)
        # The new overlay's handlers went on top: the kiosk's go above them again.
        self.app.window.remove_handlers(**self._kiosk_handlers())
        self._push_kiosk_handlers()

    def run(self) -> int:
        """Play until the exit chord; 0 then, EXIT_RESTART when it gave up."""
        try:
            self.app.run()
        finally:
            self.notifier.stopping()
            log.info("kiosk stopped (status %d): %d entries opened, %d skipped, %d "
                     "roll-backs, %d solver faults, %d GL recoveries, %d frame errors",
                     self.exit_code, self.entries_opened, self.skipped, self.rollbacks,
                     self.solver_faults, self.gl_recoveries, self.frame_errors)
        return self.exit_code


# -- the command ----------------------------------------------------------------------
def setup_logging(folder: Path | None = None, stderr: bool = False) -> Path:
    """The kiosk's log: rotating files in the user's log folder (or `folder`), and with
    `stderr` the warnings there too (the journal, under systemd). Returns the log file's
    path."""
    folder = Path(folder) if folder is not None else Path(platformdirs.user_log_dir("slinky3d"))
    check_folder(folder, "--log-dir", create=True)
    path = folder / LOG_FILE
    logger = logging.getLogger("slinky3d.kiosk")
    for h in _handlers:
        logger.removeHandler(h)
        h.close()
    _handlers.clear()
    try:
        file = logging.handlers.RotatingFileHandler(path, maxBytes=LOG_BYTES,
                                                    backupCount=LOG_BACKUPS, encoding="utf-8")
    except OSError as e:
        raise cannot_write("--log-dir", path, e) from None
    file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    handlers: list[logging.Handler] = [file]
    if stderr:
        err = logging.StreamHandler(sys.stderr)
        err.setLevel(logging.WARNING)
        err.setFormatter(logging.Formatter("slinky3d kiosk: %(levelname)s %(message)s"))
        handlers.append(err)
    for h in handlers:
        logger.addHandler(h)
        _handlers.append(h)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return path


def unit_text(playlist: str | None) -> str:
    """The shipped systemd unit with ExecStart naming this installation's slinky3d."""
    text = (data_dir("kiosk") / "slinky3d-kiosk.service").read_text(encoding="utf-8")
    exe = shutil.which("slinky3d")
    command = exe if exe else f"{sys.executable} -m slinky3d"
    line = f"ExecStart={command} kiosk"
    if playlist:
        line += f" {Path(playlist).resolve()}"
    return "\n".join(line if s.startswith("ExecStart=") else s
                     for s in text.splitlines()) + "\n"


def run(args: Any) -> int:
    """`slinky3d kiosk`: check the playlist, open the kiosk, play until the chord."""
    if args.print_unit:
        print(unit_text(args.playlist), end="")
        return 0
    try:
        size = parse_size(args.window) if args.window else WINDOW_SIZE
    except SlinkyError as e:
        raise SlinkyError(str(e).replace("--size", "--window")) from None
    playlist = load_playlist(args.playlist)
    path = setup_logging(args.log_dir)  # the file only: a bad playlist is one line
    log.info("kiosk starting: playlist %s (%d scenes), log %s", playlist.path,
             len(playlist.entries), path)
    try:
        good = check_playlist(playlist)
    except SlinkyError as e:
        log.error("%s", e)
        raise
    setup_logging(args.log_dir, stderr=True)
    if good < len(playlist.entries):
        log.warning("%d of %d playlist scenes load (%s says why not)", good,
                    len(playlist.entries), path)
    need_display()
    say_compiling()
    first = first_valid(playlist, 0)
    if first is None:  # they loaded a moment ago
        raise SlinkyError(f"{playlist.path}: no scene of the playlist loads")
    k = Kiosk(playlist, first, size, fullscreen=not args.window, quality=args.quality,
              max_frames=args.frames, save_frame=args.save_frame)
    return k.run()
