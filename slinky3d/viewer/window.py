"""The interactive app's pyglet window: plays a scene from the solver thread; the mouse
grabs the Slinky or moves the camera, the keys (viewer/keys.py) drive the held base,
pause, slow down, replay...; the overlay (viewer/overlay.py) draws the HUD and panel.

The UI thread never waits on the solver: it sends commands (runtime/commands.py) and
draws the newest pair of published snapshots, interpolated.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from slinky3d.errors import SlinkyError
from slinky3d.runtime import commands
from slinky3d.runtime.snapshot import Energy, Snapshot, lerp
from slinky3d.scene.look import CameraHint, Look
from slinky3d.viewer import coupling, keys, picking
from slinky3d.viewer.overlay import (
    ApplyParams,
    ClosePanel,
    Overlay,
    OverlayView,
    ReplayView,
    SaveScene,
    Scrub,
)

NOTICE_COMPILING = "preparing the physics (first run only)"
NOTICE_AFTER = 0.3  # wall s without a first step before the notice shows
MESSAGE_S = 5.0  # wall s a message stays up
FONT_PX = 22  # the overlay's font: readable from a metre away on a laptop
MARKER_COLOUR = (1.0, 0.85, 0.3, 1.0)
BAR_PX = 1.3  # the side view's bars, pixels across
FRAME_INTERVAL = 1 / 60  # s between frames the window asks for
PLOT_PERIOD = 0.1  # wall s between updates of the energy plot


def default_source(scene):
    """The solver thread: the UI never waits for the solver."""
    from slinky3d.runtime.thread import SimThread

    return SimThread(scene)


def pictures_dir() -> Path:
    """Where P saves screenshots: the user's pictures folder."""
    import platformdirs

    return Path(platformdirs.user_pictures_dir())


@dataclass
class _Replay:
    """The instant replay in progress: simulated t0 -> t1 from wall time `wall0`."""

    t0: float
    t1: float
    wall0: float
    was_paused: bool


class Viewer:
    """One window showing one scene (and the scenes the user opens from it)."""

    def __init__(self, scene, look: Look, hint: CameraHint, size: tuple[int, int],
                 quality: str = "auto", max_frames: int = 0, save_frame: Path | None = None,
                 source=None, live: bool = True, overlay: Any = None):
        import moderngl
        import pyglet

        from slinky3d.viewer.gl.renderer import Renderer

        # No hidden extra context; and no GL error checks after pyglet's own calls, which
        # would trip over the state moderngl leaves.
        pyglet.options["shadow_window"] = False
        pyglet.options["debug_gl"] = False
        try:
            # pyglet.gl.Config is the platform's concrete class at run time.
            config = pyglet.gl.Config(  # type: ignore[abstract]
                double_buffer=True, depth_size=24, major_version=3, minor_version=3,
                forward_compatible=True)
            self.window = pyglet.window.Window(width=size[0], height=size[1],
                                               caption=_title(scene), resizable=True,
                                               config=config, vsync=False)
        except Exception as e:  # noqa: BLE001 - no display, no GL 3.3: one clear line
            raise SlinkyError(f"cannot open a window ({type(e).__name__}: {e}); "
                              f"{HEADLESS_HINT}") from None
        self.ctx = moderngl.create_context()
        self.max_frames, self.save_frame = max_frames, save_frame
        self.frames = 0
        self.last_frame: np.ndarray | None = None
        self.live = live  # False: a logged session plays; the hand does nothing
        self.source = source or default_source(scene)
        fb = self.window.get_framebuffer_size()
        self.renderer = Renderer(self.ctx, fb, quality=quality)
        self._screen, self._screen_size = self.ctx.screen, tuple(fb)
        self._base_hint = hint
        pair = self.source.latest_pair()
        self._stale = None  # the pair published before a Load: not the new scene's
        self._set_scene(scene, look, hint, pair[1] if pair and pair[1] is not None else None)
        # UI state
        self.show_help = self.show_panel = self.side_view = False
        self.scale_index = 0
        self.mouse: tuple[float, float] | None = None  # pixels, y down
        self.hover: tuple[int, int] | None = None  # (Slinky, end point) under the cursor
        self.drag: str | None = None  # "grab" | "orbit" | "pan" while a button is down
        self.grabbed: tuple[int, np.ndarray] | None = None  # (Slinky, cursor-to-point offset)
        self.driving: dict[str, bool] = {}  # drive action -> held
        self.hands: dict[int, np.ndarray] = {}  # Slinky -> where the hand let go
        self.replay: _Replay | None = None
        self.scrub_t: float | None = None
        self.message, self._message_until = "", 0.0
        self.pictures = pictures_dir
        self._frame_walls: deque[float] = deque(maxlen=120)
        self._started: float | None = None
        self._due = 0.0  # perf_counter s the next frame is due (run, _pace)
        self._rows: tuple[float, Any] | None = None  # (when, energy rows) for the plot
        self._panel: tuple[Any, Any] | None = None  # (scene, its panel values)
        self._shown: Snapshot = self._last[1]
        self._bindings = _resolve(keys.BINDINGS)
        w = self.window
        w.push_handlers(on_draw=self.on_draw, on_resize=self.on_resize,
                        on_mouse_press=self.on_mouse_press, on_mouse_drag=self.on_mouse_drag,
                        on_mouse_release=self.on_mouse_release,
                        on_mouse_motion=self.on_mouse_motion,
                        on_mouse_scroll=self.on_mouse_scroll, on_key_press=self.on_key_press,
                        on_key_release=self.on_key_release, on_close=self.on_close)
        # After the app's handlers: pyglet calls the overlay's first, and what its panel
        # takes (a click on a slider, a key in a field) stops there.
        self.overlay = overlay if overlay is not None else Overlay(self.window, FONT_PX)

    # -- scene ---------------------------------------------------------------------
    def _set_scene(self, scene, look: Look | None = None, hint: CameraHint | None = None,
                   first: Snapshot | None = None) -> None:
        """Take a scene's look, floor and framing (at start and when one is opened)."""
        from slinky3d.scene.reach import lowest, reach_of
        from slinky3d.viewer.camera import frame_snapshots
        from slinky3d.viewer.stage import stage_for

        self.scene = scene
        self.look = look or (scene.look if isinstance(scene.look, Look) else Look())
        self.hint = hint or (scene.camera if isinstance(scene.camera, CameraHint)
                             else CameraHint())
        if first is None:
            from slinky3d.runtime.simulation import Simulation

            first = Simulation(scene).snapshot()
        self._last = (first, first)
        self._energy_start = total_energy(first)  # the gravity bar is relative to it
        self._display_t: float | None = None
        self._display_wall = 0.0
        reach, fall = reach_of(scene)
        self.stage = stage_for(self.look, first, lowest(reach, fall))
        # The camera shows the start and where a held Slinky will swing down to.
        self._frame = lambda s: frame_snapshots((first,), s, self.hint, self.stage, reach)
        self.camera = self._frame(self.window.get_framebuffer_size())
        self._camera_3d = self.camera
        self.box = picking.scene_box(first, max(1.0, self.stage.size))
        self.window.set_caption(_title(scene))

    def open_scene(self, scene) -> None:
        """Replace the running scene (keys 1-9, the panel): the solver loads it."""
        if not self.live:
            self.say("replaying a session: open scenes in `slinky3d run`")
            return
        self.send(commands.Load(scene))
        self._stale = self.source.latest_pair()
        self.replay, self.scrub_t, self.grabbed, self.drag = None, None, None, None
        self.driving.clear()
        self.hands.clear()
        side = self.side_view
        self.side_view = False
        self._set_scene(scene)
        if side:
            self.toggle_side_view()

    def send(self, cmd) -> None:
        """A command to the solver; playing a logged session, only pacing ones (the
        session's own commands move the Slinky)."""
        if self.live or isinstance(cmd, PACING):
            self.source.send(cmd)

    def say(self, text: str) -> None:
        self.message, self._message_until = text, time.perf_counter() + MESSAGE_S

    # -- drawing -------------------------------------------------------------------
    def on_draw(self) -> None:
        size = tuple(self.window.get_framebuffer_size())
        if 0 in size:
            return  # minimised
        if size != self._screen_size:
            # The window's framebuffer object carries its size: detect it again.
            self.ctx.viewport = (0, 0, *size)
            self._screen = self.ctx.detect_framebuffer(0)
            self._screen_size = size
            self.renderer.resize(size)
        now = time.perf_counter()
        self._frame_walls.append(now)
        snap = self._snapshot_now(now)
        self._shown = snap
        self._update_hover()
        self._render(snap, self._screen)
        self._overlay(snap, now)
        self.frames += 1
        if self.max_frames and self.frames >= self.max_frames:
            # The same frame again into the renderer's own buffer: reading the window's
            # back buffer through moderngl is an error on the default framebuffer.
            self._render(snap, None)
            self.last_frame = self.renderer.read()
            import pyglet

            # Not from inside the draw: pyglet is iterating over its windows.
            pyglet.clock.schedule_once(lambda dt: self.quit(), 0.0)

    def _render(self, snap: Snapshot, target) -> None:
        self.renderer.render(snap, self.look, self.camera, self.stage, target=target,
                             extra=self._extra(snap), helices=not self.side_view)

    def _extra(self, snap: Snapshot) -> np.ndarray | None:
        """This frame's hand props: the hover marker, the side view's bars."""
        parts = []
        if self.side_view:
            h = self.renderer.size[1]
            radius = 0.5 * BAR_PX * 2 * self.camera.half_height() / max(h, 1)
            for sl in snap.slinkies:
                colour = self.look.colour if self.look.material_for(sl.preset) == "plastic" \
                    else (0.3, 0.32, 0.36)
                parts.append(coupling.bars(sl, radius, (*colour, 0.2)))
        if self.hover is not None and self.drag is None:
            i, k = self.hover
            if i < len(snap.slinkies) and k <= snap.slinkies[i].N:
                sl = snap.slinkies[i]
                parts.append(coupling.marker(sl.ends[k], 0.35 * sl.R, MARKER_COLOUR))
        return np.concatenate(parts) if parts else None

    def _snapshot_now(self, now: float) -> Snapshot:
        """What to show: the replay or scrubbed past, else the newest pair interpolated."""
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
        pair = self.source.latest_pair()
        if pair is not self._stale and pair and pair[0] is not None and pair[1] is not None:
            if len(pair[1].slinkies) == len(self.scene.slinkies):
                self._last, self._stale = pair, None
        prev, cur = self._last
        return lerp(prev, cur, self._display_time(prev, cur, now))

    def _display_time(self, prev: Snapshot, cur: Snapshot, now: float) -> float:
        """The time shown: it runs with the wall clock times the time scale, within the
        newest pair (so that frames interpolate); held at its ends when the solver is
        ahead or behind, paused or reset."""
        t = self._display_t
        if t is None:
            t = prev.t
        else:
            t += (now - self._display_wall) * keys.TIME_SCALES[self.scale_index]
        t = min(max(t, prev.t), cur.t)
        self._display_t, self._display_wall = t, now
        return t

    @property
    def history(self):
        """The solver's buffer of recent snapshots (None for a source without one)."""
        return getattr(self.source, "history", None)

    def _overlay(self, snap: Snapshot, now: float) -> None:
        if self.message and now > self._message_until:
            self.message = ""
        view = self.overlay_view(snap, now)
        self._screen.use()  # the overlay draws into the bound framebuffer
        for action in self.overlay.frame(view):
            self.do_action(action)

    def overlay_view(self, snap: Snapshot, now: float | None = None) -> OverlayView:
        """Everything the overlay shows this frame."""
        now = time.perf_counter() if now is None else now
        history = self.history
        energy_rows, replay_view = None, None
        if history is not None:
            energy_rows = self._energy_rows(history, now)
            t0, t1 = history.span()
            if self.replay is not None:
                t = snap.t
            else:
                t = self.scrub_t if self.scrub_t is not None else t1
            replay_view = ReplayView(playing=self.replay is not None,
                                     speed=keys.REPLAY_SPEED, t=t, t_start=t0, t_end=t1)
        panel = None
        if self.show_panel:
            from slinky3d.scene import edit

            if self._panel is None or self._panel[0] is not self.scene:
                self._panel = (self.scene, edit.panel_values(self.scene))
            panel = self._panel[1]
        return OverlayView(
            snapshot=snap, time_scale=keys.TIME_SCALES[self.scale_index], fps=self.fps(now),
            paused=self.paused, energy=total_energy(snap), energy_history=energy_rows,
            show_panel=self.show_panel, show_help=self.show_help,
            help_lines=keys.help_lines(), notice=self._notice(now), message=self.message,
            panel=panel, replay=replay_view, side_view=self.side_view,
            scene_name=Path(self.scene.path).stem if self.scene.path else "scene",
            energy_start=self._energy_start)

    def _energy_rows(self, history, now: float):
        """The energy plot's rows, gathered again PLOT_PERIOD after the last time (a
        pass over the whole history: every frame, it costs a software-rendered frame
        about a millisecond)."""
        if self._rows is None or now - self._rows[0] >= PLOT_PERIOD or self.replay is not None:
            self._rows = (now, history.energy_rows())
        return self._rows[1]

    def _notice(self, now: float) -> str:
        """The first-run notice while the solver thread compiles its kernels."""
        if self._started is None or not self.live or self.paused:
            return ""
        steps = getattr(self.source, "steps", 1)
        return NOTICE_COMPILING if steps == 0 and now - self._started > NOTICE_AFTER else ""

    @property
    def paused(self) -> bool:
        return bool(getattr(self.source, "paused", False)) or self.scrub_t is not None

    def fps(self, now: float) -> float:
        """Frames per second over the last second."""
        recent = [w for w in self._frame_walls if now - w <= 1.0]
        if len(recent) < 2:
            return 0.0
        return (len(recent) - 1) / max(recent[-1] - recent[0], 1e-6)

    # -- overlay actions -----------------------------------------------------------
    def do_action(self, action) -> None:
        from slinky3d.scene import edit

        if isinstance(action, ApplyParams):
            self.open_scene(edit.with_values(self.scene, action.values))
            if self.live:
                self.say("new parameters: static shape solved, restarted")
        elif isinstance(action, SaveScene):
            path = edit.save(self.scene, action.path)
            self.say(f"scene saved to {path}")
        elif isinstance(action, Scrub):
            self.replay = None
            self.scrub_t = float(action.t)
            self.send(commands.Pause())
        elif isinstance(action, ClosePanel):
            self.show_panel = False

    # -- mouse ---------------------------------------------------------------------
    def _pixel(self, x: float, y: float) -> tuple[float, float]:
        """pyglet's window coordinates (y up) -> picking's (y down)."""
        return float(x), float(self.window.height - y)

    def _window_size(self) -> tuple[int, int]:
        return max(self.window.width, 1), max(self.window.height, 1)

    def _update_hover(self) -> None:
        if self.mouse is None or self.drag is not None or not self.live:
            self.hover = None
            return
        self.hover = picking.nearest_point(self._shown, self.camera, *self.mouse,
                                           self._window_size())

    def _cursor(self, x: float, y: float) -> np.ndarray:
        return picking.cursor_point(self.camera, *self._pixel(x, y), self._window_size(),
                                    self.box)

    def on_mouse_motion(self, x, y, dx, dy) -> None:
        self.mouse = self._pixel(x, y)

    def on_mouse_press(self, x, y, button, modifiers) -> None:
        import pyglet

        if self.overlay.wants_mouse():
            return
        mouse, key = pyglet.window.mouse, pyglet.window.key
        self.mouse = self._pixel(x, y)
        if button == mouse.LEFT and not modifiers & key.MOD_SHIFT:
            pick = None
            if self.live and self.replay is None and self.scrub_t is None:
                pick = picking.nearest_point(self._shown, self.camera, *self.mouse,
                                             self._window_size())
            if pick is not None:
                i, k = pick
                point = self._shown.slinkies[i].ends[k]
                # The point keeps its offset from the cursor: no jump on the grab.
                self.grabbed = (i, point - self._cursor(x, y))
                self.drag = "grab"
                self.send(commands.Grab(i, k, None))
                return
            self.drag = "pan" if self.side_view else "orbit"
        else:
            self.drag = "pan"

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers) -> None:
        import pyglet

        mouse, key = pyglet.window.mouse, pyglet.window.key
        self.mouse = self._pixel(x, y)
        if self.drag != "grab":
            # the camera follows the buttons held now (a press may have gone to the
            # overlay, or come before the window had the focus)
            if self.drag is None and self.overlay.wants_mouse():
                return
            pan = buttons & (mouse.RIGHT | mouse.MIDDLE) or modifiers & key.MOD_SHIFT
            self.drag = "pan" if pan or self.side_view else "orbit"
        if self.drag == "grab" and self.grabbed is not None:
            i, offset = self.grabbed
            target = np.clip(self._cursor(x, y) + offset, *self.box)
            self.send(commands.Move(i, (float(target[0]), float(target[1]))))
        elif self.drag == "pan":
            self.camera.pan(dx, dy, self.window.height)
        elif self.drag == "orbit":
            self.camera.orbit(dx, -dy)  # pyglet's dy points up; orbit takes screen rows

    def on_mouse_release(self, x, y, button, modifiers) -> None:
        if self.drag == "grab" and self.grabbed is not None:
            # The point keeps the velocity the hand gave it: a flick throws it.
            self.send(commands.Release(self.grabbed[0]))
        self.drag, self.grabbed = None, None

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y) -> None:
        if self.overlay.wants_mouse():
            return
        self.camera.zoom(scroll_y)

    def on_resize(self, width: int, height: int):
        import pyglet

        return pyglet.event.EVENT_HANDLED  # on_draw follows the framebuffer's size

    # -- keys ----------------------------------------------------------------------
    def on_key_press(self, symbol, modifiers):
        import pyglet

        if self.overlay.wants_keyboard():
            return None
        found = self._bindings.get(symbol)
        if found is None:
            if self.driving and symbol in _shift_keys():  # Shift while driving: faster now
                self._drive(modifiers | pyglet.window.key.MOD_SHIFT)
            return None
        binding, index = found
        self.press(binding.action, modifiers, index)
        return pyglet.event.EVENT_HANDLED

    def on_key_release(self, symbol, modifiers):
        import pyglet

        found = self._bindings.get(symbol)
        if found is not None and found[0].hold and found[0].action in self.driving:
            self.driving.pop(found[0].action)
            self._drive(modifiers)
        elif self.driving and symbol in _shift_keys():
            self._drive(modifiers & ~pyglet.window.key.MOD_SHIFT)

    def press(self, action: str, modifiers: int = 0, index: int = 0) -> None:
        """Do what a key's action says (keys.BINDINGS); `index`: which of its keys."""
        if action in keys.DIRECTIONS:
            self.driving[action] = True
            self._drive(modifiers)
            return
        getattr(self, "key_" + action)(index)

    def _drive(self, modifiers: int) -> None:
        """DriveBase for every held base, from the arrow keys down now."""
        import pyglet

        fast = bool(modifiers & pyglet.window.key.MOD_SHIFT)
        speed = keys.DRIVE_FAST if fast else keys.DRIVE_SPEED
        vx = sum(keys.DIRECTIONS[a][0] for a in self.driving)
        vy = sum(keys.DIRECTIONS[a][1] for a in self.driving)
        held = [i for i, sl in enumerate(self._shown.slinkies) if sl.anchor_held]
        if not held and (vx or vy):
            self.say("no held base to move: L takes hold of an end")
        for i in held:
            self.send(commands.DriveBase(i, (speed * vx, speed * vy)))

    def key_let_go(self, index: int = 0) -> None:
        """Let go of every held base; pressed again, take hold of the end nearest the
        hand (where it let go)."""
        snap = self._shown
        for i, sl in enumerate(snap.slinkies):
            if sl.anchor_held:
                self.hands[i] = np.array(sl.ends[0], float)
                self.send(commands.LetGo(i))
            else:
                hand = self.hands.get(i, sl.ends[0])
                far = np.linalg.norm(sl.ends[-1] - hand) < np.linalg.norm(sl.ends[0] - hand)
                self.send(commands.TakeHold(i, sl.N if far else 0))
        self.driving.clear()

    def key_pause(self, index: int = 0) -> None:
        if self.replay is not None or self.scrub_t is not None:
            self.replay, self.scrub_t = None, None
            self.send(commands.Resume())
        else:
            self.send(commands.TogglePause())

    def key_step(self, index: int = 0) -> None:
        self.replay, self.scrub_t = None, None
        self.send(commands.Step(1))

    def _set_scale(self, index: int) -> None:
        self.scale_index = min(max(index, 0), len(keys.TIME_SCALES) - 1)
        scale = keys.TIME_SCALES[self.scale_index]
        self.send(commands.TimeScale(scale))
        self.say(f"time scale {_fraction(scale)}")

    def key_slower(self, index: int = 0) -> None:
        self._set_scale(self.scale_index + 1)

    def key_faster(self, index: int = 0) -> None:
        self._set_scale(self.scale_index - 1)

    def key_reset(self, index: int = 0) -> None:
        self.replay, self.scrub_t, self.grabbed, self.drag = None, None, None, None
        self.driving.clear()
        self.send(commands.Reset())

    def key_scene(self, index: int = 0) -> None:
        from slinky3d.scene.loader import load, shipped

        paths = sorted(shipped(), key=lambda p: p.stem)
        if index >= len(paths):
            return
        self.open_scene(load(paths[index]))
        self.say(f"{index + 1}: {paths[index].stem}")

    def toggle_side_view(self) -> None:
        if self.side_view:
            self.camera, self.side_view = self._camera_3d, False
            return
        self._camera_3d = self.camera
        self.camera = replace(self._frame(self.window.get_framebuffer_size()), yaw=0.0,
                              pitch=0.0, ortho=True)
        self.side_view = True

    def key_side_view(self, index: int = 0) -> None:
        self.toggle_side_view()

    def key_panel(self, index: int = 0) -> None:
        self.show_panel = not self.show_panel

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
        self.replay = _Replay(max(t0, t1 - keys.REPLAY_SECONDS), t1, time.perf_counter(),
                              self.paused)
        self.scrub_t = None
        self.send(commands.Pause())

    def end_replay(self) -> None:
        r, self.replay = self.replay, None
        if r is not None and not r.was_paused:
            self.send(commands.Resume())

    def key_screenshot(self, index: int = 0) -> None:
        from PIL import Image

        folder = self.pictures()
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / time.strftime("slinky3d-%Y%m%d-%H%M%S.png")
        n = 1
        while path.exists():
            n += 1
            path = folder / time.strftime(f"slinky3d-%Y%m%d-%H%M%S-{n}.png")
        Image.fromarray(self.grab_frame()).save(path)
        self.say(f"screenshot saved to {path}")

    def grab_frame(self) -> np.ndarray:
        """The window as shown (3D and overlay), (h, w, 3) uint8, top row 0: drawn again
        now into the back buffer and read from it."""
        from pyglet import gl

        self.window.switch_to()
        self._render(self._shown, self._screen)
        self._screen.use()
        self.overlay.frame(self.overlay_view(self._shown))
        w, h = self._screen_size
        buf = (gl.GLubyte * (w * h * 3))()
        gl.glBindFramebuffer(gl.GL_READ_FRAMEBUFFER, 0)
        gl.glReadBuffer(gl.GL_BACK)
        gl.glPixelStorei(gl.GL_PACK_ALIGNMENT, 1)
        gl.glReadPixels(0, 0, w, h, gl.GL_RGB, gl.GL_UNSIGNED_BYTE, buf)
        return np.frombuffer(buf, np.uint8).reshape(h, w, 3)[::-1].copy()

    def key_fullscreen(self, index: int = 0) -> None:
        self.window.set_fullscreen(not self.window.fullscreen)

    def key_help(self, index: int = 0) -> None:
        self.show_help = not self.show_help

    def key_camera(self, index: int = 0) -> None:
        cam = self._frame(self.window.get_framebuffer_size())
        self.camera = replace(cam, yaw=0.0, pitch=0.0, ortho=True) if self.side_view else cam

    def key_quit(self, index: int = 0) -> None:
        self.quit()

    def quit(self) -> None:
        """Stop the solver thread, free the overlay (the context still current), close."""
        self.source.stop()
        if self.window.context is not None:
            self.window.switch_to()
            self.overlay.close()
            self.window.close()

    def on_close(self):
        import pyglet

        self.quit()
        return pyglet.event.EVENT_HANDLED

    # -- loop ----------------------------------------------------------------------
    def _pace(self, dt: float) -> None:
        """Draw a frame, then ask for the next on a fixed grid of FRAME_INTERVAL: a late
        wake-up (the OS, the solver thread holding the GIL) shortens the next wait
        instead of lengthening every period, as rescheduling from the wake-up would."""
        import pyglet

        if self.window.context is None:  # closed
            return
        self.window.draw(dt)
        now = time.perf_counter()
        self._due = max(self._due + FRAME_INTERVAL, now)
        pyglet.clock.schedule_once(self._pace, self._due - now)

    def run(self) -> int:
        """Play until the window closes; 0 on a normal quit."""
        import pyglet

        self._started = time.perf_counter()
        self.source.start()
        self._due = time.perf_counter()
        pyglet.clock.schedule_once(self._pace, 0.0)
        try:
            pyglet.app.run(None)  # frames paced by _pace
        finally:
            self.source.stop()
        if self.save_frame is not None and self.last_frame is not None:
            from PIL import Image

            Image.fromarray(self.last_frame).save(self.save_frame)
        return 0


PACING = (commands.Pause, commands.Resume, commands.TogglePause, commands.Step,
          commands.TimeScale, commands.Reset)
HEADLESS_HINT = ("without a display use the headless jobs: `slinky3d screenshot SCENE` "
                 "(a PNG), `slinky3d simulate SCENE` (a recording), `slinky3d figure SCENE`")


def _title(scene) -> str:
    return f"slinky3d \u2014 {scene.title}"


def _fraction(scale: float) -> str:
    return "1" if scale >= 1 else f"1/{round(1 / scale)}"


def total_energy(snap: Snapshot) -> Energy | None:
    """The energy account summed over the Slinkies (None when none has one)."""
    parts = [sl.energy for sl in snap.slinkies if sl.energy is not None]
    if not parts:
        return None
    return Energy(*(math.fsum(getattr(e, f) for e in parts)
                    for f in ("kinetic", "gravity", "spring", "damping", "impacts")))


def _shift_keys() -> tuple[int, int]:
    from pyglet.window import key

    return key.LSHIFT, key.RSHIFT


def _resolve(bindings) -> dict[int, tuple[keys.Binding, int]]:
    """pyglet key symbol -> (binding, index of the key in it)."""
    from pyglet.window import key

    out: dict[int, tuple[keys.Binding, int]] = {}
    for b in bindings:
        for i, name in enumerate(b.keys):
            out[getattr(key, name)] = (b, i)
    return out
