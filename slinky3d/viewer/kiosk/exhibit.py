"""`slinky3d kiosk [PLAYLIST.toml]`: the app as an unattended exhibit (docs/kiosk.md).

Full screen, the cursor hidden until the mouse moves; an attract loop through the
playlist's scenes with their captions until a visitor touches the mouse or a key, then
the app's own controls; a slow-motion replay after each drop; back to the loop after
the playlist's idle time. The only way out is the exit chord: Esc, F11, the window's
close button and the keys that would open files (screenshot, clips, saving a scene) do
nothing. The logic is state.Attendant's; this is its window.

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
from dataclasses import replace
from pathlib import Path
from typing import Any

from slinky3d.errors import SlinkyError
from slinky3d.runtime import commands
from slinky3d.runtime.commands import one_line
from slinky3d.runtime.memory import Upkeep
from slinky3d.runtime.notify import Notifier
from slinky3d.runtime.thread import SimThread
from slinky3d.scene.look import CameraHint, Look
from slinky3d.scene.spec import Scene
from slinky3d.viewer.app import keys
from slinky3d.viewer.app.instant_replay import Replay
from slinky3d.viewer.app.window import FONT_PX, Viewer
from slinky3d.viewer.kiosk.playlist import Playlist, caption_of, load_playlist
from slinky3d.viewer.kiosk.state import (
    ATTRACT,
    Attendant,
    EndReplay,
    Event,
    LetGo,
    Open,
    Play,
    Quit,
    ReplayDrop,
    Reset,
    check_playlist,
    first_valid,
)

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


class Kiosk(Viewer):
    """The app's window run as a kiosk by an Attendant."""

    def __init__(self, playlist: Playlist, first: tuple[int, Scene], size: tuple[int, int],
                 fullscreen: bool = True, quality: str = "auto", max_frames: int = 0,
                 save_frame: Path | None = None, source: Any = None,
                 notifier: Notifier | None = None):
        index, scene = first
        look = scene.look if isinstance(scene.look, Look) else Look()
        hint = scene.camera if isinstance(scene.camera, CameraHint) else CameraHint()
        super().__init__(scene, look, hint, size, quality=quality, max_frames=max_frames,
                         save_frame=save_frame, source=source or KioskThread(scene))
        from slinky3d.viewer.kiosk.caption import Caption

        self.quality = quality
        self.playlist = playlist
        now = time.perf_counter()
        self.attendant = Attendant(playlist, now)
        self.attendant.opened_entry(index, now)
        self.entry_scene = scene
        self.caption = Caption(self.ctx)
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
        self._sway_base = self.camera
        self._quiet_hud_caption()
        self._push_kiosk_handlers()
        self._sync_cursor()
        if fullscreen:
            self.window.set_fullscreen(True)
        log.info("kiosk: playing entry %d (%s)", index + 1, playlist.entries[index].name)

    def _quiet_hud_caption(self) -> None:
        """The kiosk draws the captions (the playlist's, for the whole attract time, with
        what to do): an overlay whose HUD has a caption of its own (the app's, a few
        seconds after a scene opens) keeps it hidden here, not drawn twice."""
        caption = getattr(getattr(self.overlay, "hud", None), "caption", None)
        if caption is not None and hasattr(caption, "visible"):
            caption.visible = lambda scene: False

    # -- input: above the overlay's handlers, so that the chord always gets through --
    def _kiosk_handlers(self) -> dict[str, Any]:
        return dict(on_key_press=self._kiosk_key, on_mouse_motion=self._kiosk_motion,
                    on_mouse_press=self._kiosk_pointer, on_mouse_drag=self._kiosk_pointer,
                    on_mouse_scroll=self._kiosk_pointer)

    def _push_kiosk_handlers(self) -> None:
        self.window.push_handlers(**self._kiosk_handlers())

    def _kiosk_key(self, symbol, modifiers):
        import pyglet
        from pyglet.window import key

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
                self.window.set_mouse_visible(visible)
            except Exception as e:  # noqa: BLE001 - a window system without a cursor
                log.info("cursor: %s", one_line(e))

    # -- the attendant's events --------------------------------------------------------
    def do_events(self, events: list[Event]) -> None:
        for ev in events:
            if isinstance(ev, Open):
                self.open_entry(ev.index, attract=True)
            elif isinstance(ev, Play):  # the camera stays where the sway had it
                log.info("play: a visitor took over (%s)", self.attendant.entry.name)
            elif isinstance(ev, EndReplay):
                self.leave_past()
                self.send(commands.Resume())
            elif isinstance(ev, ReplayDrop):
                self.replay = Replay(ev.t0, ev.t1, time.perf_counter(), False)
                self.scrub_t = None
                self.send(commands.Pause())
                log.info("drop: slow-motion replay of t = %.2f..%.2f s", ev.t0, ev.t1)
            elif isinstance(ev, LetGo):
                for i, sl in enumerate(self._shown.slinkies):
                    if sl.anchor_held:
                        self.send(commands.LetGo(i))
            elif isinstance(ev, Reset):
                self.key_reset()
                self.send(commands.Resume())
            elif isinstance(ev, Quit):
                log.info("exit chord: quitting")
                self.exit_code = 0
                self.quit()

    def open_entry(self, index: int, attract: bool) -> None:
        """Open playlist entry `index`, or the next that loads; the attract loop's
        state back to its start (time scale 1, playing, no panel)."""
        found = first_valid(self.playlist, index)
        now = time.perf_counter()
        if found is None:
            log.error("no scene of the playlist loads now: %s plays again",
                      self.attendant.entry.name)
            self.key_reset()
            self.send(commands.Resume())
            self.attendant.opened_entry(self.attendant.index, now)
            return
        i, scene = found
        self.skipped += (i - index) % len(self.playlist.entries)
        if attract and self.side_view:
            self.toggle_side_view()  # the loop shows the 3D picture (open_scene keeps it)
        self.open_scene(scene)
        self.entry_scene = scene
        self._seen_rollbacks, self._seen_error = 0, ""
        if attract:
            self.show_panel = self.show_help = False
            self._set_scale(0)
            self.message = ""
        self.send(commands.Resume())
        self._sway_base = self.camera
        self.attendant.opened_entry(i, now)
        self.entries_opened += 1
        self.upkeep.scene_opened(now)
        log.info("%s: entry %d (%s)", "attract" if attract else "play", i + 1,
                 self.playlist.entries[i].name)

    # -- keys the kiosk changes ---------------------------------------------------------
    def key_scene(self, index: int = 0) -> None:
        """1-9: the playlist's scenes, not every shipped one."""
        if index < len(self.playlist.entries):
            self.open_entry(index, attract=False)

    def key_quit(self, index: int = 0) -> None:
        pass

    def key_fullscreen(self, index: int = 0) -> None:
        pass

    def key_screenshot(self, index: int = 0) -> None:
        pass

    def key_clip(self, index: int = 0) -> None:
        pass

    def key_keep(self, index: int = 0) -> None:
        pass

    def do_action(self, action) -> None:
        from slinky3d.viewer.overlay.panel import SaveScene

        if isinstance(action, SaveScene):
            self.say("saving scenes is off in the kiosk")
            return
        super().do_action(action)

    def on_close(self):
        import pyglet

        log.info("window close ignored (the exit chord is %s)", self.playlist.exit)
        return pyglet.event.EVENT_HANDLED

    def overlay_view(self, snap, now: float | None = None):
        view = super().overlay_view(snap, now)
        off = {b.label for b in keys.BINDINGS if b.action in OFF}
        lines = [(k, w) for k, w in view.help_lines if k not in off]
        n = len(self.playlist.entries)
        view.help_lines = [(k, f"open scene 1-{min(n, 9)} of the exhibit") if k == "1-9"
                           else (k, w) for k, w in lines]
        return view

    # -- the frame ----------------------------------------------------------------------
    def on_draw(self) -> None:
        now = time.perf_counter()
        try:
            if self._lose_context:
                import moderngl

                self._lose_context = False
                raise moderngl.Error("simulated GL context loss")
            self._watch_solver()
            snap = self._shown
            self.do_events(self.attendant.tick(
                now, snap.t, [sl.anchor_held for sl in snap.slinkies],
                self.replay is not None))
            self._sway(now)
            self._sync_cursor()
            if self.window.context is None:  # the chord closed it
                return
            super().on_draw()
        except Exception as e:  # noqa: BLE001 - the exhibit goes on; see below
            self._frame_failed(e)
            return
        self._gl_failures = self._frame_failures = 0
        self.upkeep.tick(now)
        self.notifier.ready("playing")
        self.notifier.watchdog()

    def _pace(self, dt: float) -> None:
        """The app's frame loop; what the frame's drawing does not catch (the buffer
        swap: a lost context raises there too) is handled as a failed frame."""
        import pyglet

        from slinky3d.viewer.app.window import FRAME_INTERVAL

        try:
            super()._pace(dt)
        except Exception as e:  # noqa: BLE001 - the exhibit goes on
            self._frame_failed(e)
            if self.window.context is not None:
                pyglet.clock.schedule_once(self._pace, FRAME_INTERVAL)

    def _overlay(self, snap, now: float) -> None:
        super()._overlay(snap, now)
        a = self.attendant
        if a.mode == ATTRACT:
            title, text = caption_of(a.entry, self.entry_scene)
            hint = ATTRACT_HINT
        else:
            title, text, hint = "", "", PLAY_HINT
        if self.replay is not None:
            title, text, hint = "", "", ""  # the overlay's replay badge says it
        self.caption.draw(self._screen, self._screen_size, title, text, hint)

    def _sway(self, now: float) -> None:
        """The attract loop's camera: to and fro about the scene's framing."""
        sway = self.playlist.sway
        if self.attendant.mode != ATTRACT or sway <= 0 or self.side_view:
            return
        phase = 2 * math.pi * (now - self.attendant.opened) / SWAY_PERIOD
        base = self._sway_base
        self.camera = replace(base, yaw=base.yaw + math.radians(sway) * math.sin(phase))

    def _watch_solver(self) -> None:
        """Log roll-backs; a solver fault (the thread paused, its state put back) puts
        the scene back and plays on."""
        rb = self._shown.rollbacks
        if rb > self._seen_rollbacks:
            self.rollbacks += rb - self._seen_rollbacks
            log.warning("%s (%s)", self._shown.status or "solver rolled back",
                        self.attendant.entry.name)
        self._seen_rollbacks = rb
        error = getattr(self.source, "error", "")
        if error and error != self._seen_error:
            self.solver_faults += 1
            log.error("%s (%s): scene put back", error, self.attendant.entry.name)
            self.leave_past()
            self.key_reset()
            self.send(commands.Resume())
        self._seen_error = error

    def _frame_failed(self, e: Exception) -> None:
        self.frame_errors += 1
        if _is_gl_error(e) or self._gl_broken:
            self._recover_gl(e)
            return
        self._frame_failures += 1
        log.error("frame failed: %s", one_line(e), exc_info=self._frame_failures == 1)
        if self._frame_failures >= MAX_FRAME_ERRORS:
            self._give_up(f"{self._frame_failures} frames in a row failed")

    def _give_up(self, why: str) -> None:
        log.critical("%s: exiting with status %d to be started again", why, EXIT_RESTART)
        self.exit_code = EXIT_RESTART
        self.quit()

    # -- a lost GL context --------------------------------------------------------------
    def simulate_context_loss(self) -> None:
        """As a lost context leaves things (tests, benchmarks): the GL objects gone, and
        the next frame's first GL call raising."""
        for obj in (self.renderer, self._overlay_cache, self.caption):
            release_gl(obj)
        self._lose_context = True

    def _recover_gl(self, e: Exception) -> None:
        """New GL objects on the window's context: moderngl's context, the renderer, the
        overlay (imgui's GL objects) and its cache, the caption."""
        import moderngl

        from slinky3d.viewer.gl.renderer import Renderer
        from slinky3d.viewer.kiosk.caption import Caption
        from slinky3d.viewer.overlay.cache import OverlayCache
        from slinky3d.viewer.overlay.layer import Overlay

        self._gl_failures += 1
        self.gl_recoveries += 1
        log.error("GL error (%s): recreating the GL objects (%d in a row)", one_line(e),
                  self._gl_failures)
        if self._gl_failures > MAX_GL_RECOVERIES:
            self._give_up("the GL objects cannot be recreated")
            return
        try:
            self.window.switch_to()
            for obj in (self.renderer, self._overlay_cache, self.caption):
                release_gl(obj)
            try:
                self.overlay.close()
            except Exception as e2:  # noqa: BLE001 - its objects may be gone already
                log.info("overlay close: %s", one_line(e2))
            # A new moderngl context on the window's GL context (create_context would
            # hand back the old one, its default).
            moderngl.init_context()
            self.ctx = moderngl.get_context()
            fb = tuple(self.window.get_framebuffer_size())
            self.renderer = Renderer(self.ctx, fb, quality=self.quality)
            self._screen, self._screen_size = self.ctx.screen, fb
            self.overlay = Overlay(self.window, FONT_PX)
            self._overlay_cache = OverlayCache(self.ctx, self.overlay)
            self._quiet_hud_caption()
            self.caption = Caption(self.ctx)
            # The new overlay's handlers went on top: the kiosk's go above them again.
            self.window.remove_handlers(**self._kiosk_handlers())
            self._push_kiosk_handlers()
            self._gl_broken = False
            log.info("GL objects recreated (%s)", self.ctx.info.get("GL_RENDERER", "?"))
            if self.gl_recoveries >= MAX_GL_RECOVERIES_TOTAL:
                self._give_up(f"{self.gl_recoveries} GL recoveries: a fresh start frees "
                              "what they left with the driver")
        except Exception as e2:  # noqa: BLE001 - the next frame tries again
            self._gl_broken = True  # whatever the next frame raises, this is why
            log.error("recreating the GL objects failed: %s", one_line(e2))

    def run(self) -> int:
        """Play until the exit chord; 0 then, EXIT_RESTART when it gave up."""
        try:
            super().run()
        finally:
            self.notifier.stopping()
            log.info("kiosk stopped (status %d): %d entries opened, %d skipped, %d "
                     "roll-backs, %d solver faults, %d GL recoveries, %d frame errors",
                     self.exit_code, self.entries_opened, self.skipped, self.rollbacks,
                     self.solver_faults, self.gl_recoveries, self.frame_errors)
        return self.exit_code


def _is_gl_error(e: Exception) -> bool:
    """moderngl's, PyOpenGL's and pyglet's GL errors (a lost context raises them)."""
    import moderngl

    if isinstance(e, moderngl.Error):
        return True
    mod = type(e).__module__ or ""
    return mod.startswith("OpenGL") or type(e).__name__ == "GLException"


def release_gl(obj: Any, depth: int = 6) -> int:
    """Release the moderngl objects `obj` holds, in its attributes and those of the
    slinky3d objects it holds, in dicts, lists and tuples, a few levels deep, and a
    framebuffer's attachments (made inline, they are held by nothing else); returns how
    many. Errors are ignored: the context may be gone."""
    import moderngl

    seen: set[int] = set()
    count = 0

    def walk(x: Any, d: int) -> None:
        nonlocal count
        if d < 0 or id(x) in seen or isinstance(x, moderngl.Context):
            return
        seen.add(id(x))
        module = type(x).__module__ or ""
        if module.startswith("moderngl") and hasattr(x, "release"):
            if isinstance(x, moderngl.Framebuffer):
                try:  # (a released one has none)
                    parts = (*(x.color_attachments or ()), x.depth_attachment)
                except Exception:  # noqa: BLE001 - gone already
                    parts = ()
                for a in parts:
                    if a is not None:
                        walk(a, d)
            try:
                x.release()
                count += 1
            except Exception:  # noqa: BLE001, S110 - gone already
                pass
            return
        if isinstance(x, dict):
            items = list(x.values())
        elif isinstance(x, list | tuple):
            items = list(x)
        elif module.startswith("slinky3d") and hasattr(x, "__dict__"):
            items = list(vars(x).values())
        else:
            return
        for v in items:
            walk(v, d - 1)

    walk(obj, depth)
    return count


# -- the command ----------------------------------------------------------------------
def setup_logging(folder: Path | None = None, stderr: bool = False) -> Path:
    """The kiosk's log: rotating files in the user's log folder (or `folder`), and with
    `stderr` the warnings there too (the journal, under systemd). Returns the log file's
    path."""
    import platformdirs

    folder = Path(folder) if folder is not None else Path(platformdirs.user_log_dir("slinky3d"))
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SlinkyError(f"--log-dir: cannot make {folder}: {e.strerror or e}") from None
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
        raise SlinkyError(f"cannot write the log {path}: {e.strerror or e}") from None
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
    from slinky3d.resources import data_dir

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
    from slinky3d.viewer.jobs import _need_display, parse_size

    if args.print_unit:
        print(unit_text(args.playlist), end="")
        return 0
    try:
        size = parse_size(args.window) if args.window else (1280, 720)
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
    _need_display()
    first = first_valid(playlist, 0)
    if first is None:  # they loaded a moment ago
        raise SlinkyError(f"{playlist.path}: no scene of the playlist loads")
    k = Kiosk(playlist, first, size, fullscreen=not args.window, quality=args.quality,
              max_frames=args.frames, save_frame=args.save_frame)
    return k.run()
