"""The interactive app's pyglet window and its draw loop: plays a scene from the solver
thread, draws the 3D picture (gl/renderer.py) and the overlay (overlay.py: HUD and
panel) at a paced frame rate, quits cleanly. The mouse and keys are controls.py's, the
instant replay app/instant_replay.py's, what the overlay shows overlay/view.py's.

The UI thread never waits on the solver: it sends commands (runtime/commands.py) and
draws the newest pair of published snapshots, interpolated.
"""

from __future__ import annotations

import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from slinky3d.errors import SlinkyError
from slinky3d.runtime import commands
from slinky3d.runtime.snapshot import Snapshot, lerp
from slinky3d.scene.look import CameraHint, Look
from slinky3d.viewer import coupling
from slinky3d.viewer.app import keys, picking
from slinky3d.viewer.app.controls import Controls
from slinky3d.viewer.app.instant_replay import InstantReplay
from slinky3d.viewer.film.clips import Clips
from slinky3d.viewer.marks.phenomena import PhenomenaOverlays
from slinky3d.viewer.overlay.cache import OverlayCache
from slinky3d.viewer.overlay.layer import Overlay, OverlayView
from slinky3d.viewer.overlay.view import OverlayViewAssembly, total_energy

MESSAGE_S = 5.0  # wall s a message stays up
FONT_PX = 22  # the overlay's font: readable from a metre away on a laptop
MARKER_COLOUR = (1.0, 0.85, 0.3, 1.0)
BAR_PX = 1.3  # the side view's bars, pixels across
FRAME_INTERVAL = 1 / 60  # s between frames the window asks for


def default_source(scene):
    """The solver thread: the UI never waits for the solver."""
    from slinky3d.runtime.thread import SimThread

    return SimThread(scene)


def pictures_dir() -> Path:
    """Where P saves screenshots: the user's pictures folder."""
    import platformdirs

    return Path(platformdirs.user_pictures_dir())


class Viewer(PhenomenaOverlays, Controls, InstantReplay, Clips, OverlayViewAssembly):
    """One window showing one scene (and the scenes the user opens from it): its input
    in controls.py, the instant replay in instant_replay.py, clips in clips.py, what the
    overlay shows in overlay/view.py, the centre of mass, collapse front, timeline,
    stretch colours and click in marks/phenomena.py."""

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
        self.init_controls()
        self.init_phenomena()
        self.leave_past()
        self.message, self._message_until = "", 0.0
        self.pictures = pictures_dir
        self._frame_walls: deque[float] = deque(maxlen=120)
        self._started: float | None = None
        self._due = 0.0  # perf_counter s the next frame is due (run, _pace)
        self._rows = None
        self._panel = None
        self._shown = self._last[1]
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
        self._overlay_cache = OverlayCache(self.ctx, self.overlay)

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
        self.leave_past()
        self.drop_hand()
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

    # -- the overlay: the mixins' parts joined -------------------------------------------
    def do_action(self, action) -> None:
        if not self.phenomena_action(action):
            super().do_action(action)  # Controls'

    def overlay_view(self, snap: Snapshot, now: float | None = None) -> OverlayView:
        now = time.perf_counter() if now is None else now
        view = super().overlay_view(snap, now)  # OverlayViewAssembly's
        view.phenomena = self.phenomena_view(snap, now)
        return view

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
        self.observe_phenomena(snap, now)
        self._update_hover()
        self.poll_clip()
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
                             extra=self._extra(snap), helices=not self.side_view,
                             tints=self.phenomena_tints(snap), marks=self.phenomena_marks(snap))

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
        past = self.past_snapshot(now)
        if past is not None:
            return past
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

    def _overlay(self, snap: Snapshot, now: float) -> None:
        if self.message and now > self._message_until:
            self.message = ""
        view = self.overlay_view(snap, now)
        for action in self._overlay_cache.frame(view, self._screen, self._screen_size, now):
            self.do_action(action)

    def on_resize(self, width: int, height: int):
        import pyglet

        return pyglet.event.EVENT_HANDLED  # on_draw follows the framebuffer's size

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

    def quit(self) -> None:
        """Stop the solver thread and a clip being made, free the overlay (the context
        still current), close."""
        self.close_clips()
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
                 "(a PNG), `slinky3d record SCENE --out FILM.mp4` (a film), "
                 "`slinky3d simulate SCENE` (a recording), `slinky3d figure SCENE`")


def _title(scene) -> str:
    return f"slinky3d \u2014 {scene.title}"
