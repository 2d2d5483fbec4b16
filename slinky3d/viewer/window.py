"""The pyglet window: plays a scene in real time from the solver thread, mouse camera.

Left drag orbits, right or middle drag (or shift + left drag) pans, the wheel zooms,
Home re-frames, Esc quits. Grabbing, keys and the HUD come later and build on this.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from slinky3d.errors import SlinkyError
from slinky3d.runtime.snapshot import Snapshot, lerp
from slinky3d.scene.look import CameraHint, Look


def default_source(scene):
    """The solver thread: the UI never waits for the solver."""
    from slinky3d.runtime.thread import SimThread

    return SimThread(scene)


class Viewer:
    """One window showing one scene."""

    def __init__(self, scene, look: Look, hint: CameraHint, size: tuple[int, int],
                 quality: str = "auto", max_frames: int = 0, save_frame: Path | None = None,
                 source=None):
        import moderngl
        import pyglet

        from slinky3d.viewer.camera import frame_snapshots
        from slinky3d.viewer.gl.renderer import Renderer
        from slinky3d.viewer.stage import stage_for

        # No hidden extra context; and no GL error checks after pyglet's own calls, which
        # would trip over the state moderngl leaves.
        pyglet.options["shadow_window"] = False
        pyglet.options["debug_gl"] = False
        self.title = f"slinky3d \u2014 {scene.title}"
        try:
            # pyglet.gl.Config is the platform's concrete class at run time.
            config = pyglet.gl.Config(  # type: ignore[abstract]
                double_buffer=True, depth_size=24, major_version=3, minor_version=3,
                forward_compatible=True)
            self.window = pyglet.window.Window(width=size[0], height=size[1], caption=self.title,
                                               resizable=True, config=config, vsync=False)
        except Exception as e:  # noqa: BLE001 - no display, no GL 3.3: one clear line
            raise SlinkyError(f"cannot open a window ({type(e).__name__}: {e}); without a "
                              "display use `slinky3d screenshot`") from None
        self.ctx = moderngl.create_context()
        self.look, self.hint = look, hint
        self.source = source or default_source(scene)
        self.max_frames, self.save_frame = max_frames, save_frame
        self.frames = 0
        self.last_frame: np.ndarray | None = None
        pair = self.source.latest_pair()
        if not pair or pair[1] is None:  # a solver thread that has published nothing yet
            from slinky3d.runtime.simulation import Simulation

            pair = (None, Simulation(scene).snapshot())
        first = pair[1]
        self._last = (first, first)
        from slinky3d.scene.reach import lowest, reach_of

        reach, fall = reach_of(scene)
        self.stage = stage_for(look, first, lowest(reach, fall))
        fb = self.window.get_framebuffer_size()
        self.renderer = Renderer(self.ctx, fb, quality=quality)
        # The camera shows the start and where a held Slinky will swing down to.
        self._frame = lambda s: frame_snapshots((first,), s, hint, self.stage, reach)
        self.camera = self._frame(fb)
        self._clock0: float | None = None
        self._screen, self._screen_size = self.ctx.screen, tuple(fb)
        w = self.window
        w.push_handlers(on_draw=self.on_draw, on_resize=self.on_resize,
                        on_mouse_drag=self.on_mouse_drag, on_mouse_scroll=self.on_mouse_scroll,
                        on_key_press=self.on_key_press, on_close=self.on_close)

    # -- events --------------------------------------------------------------------
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
        pair = self.source.latest_pair()
        if pair and pair[0] is not None and pair[1] is not None:
            self._last = pair
        prev, cur = self._last
        snap = lerp(prev, cur, self._display_time(prev, cur))
        self.renderer.render(snap, self.look, self.camera, self.stage, target=self._screen)
        self.frames += 1
        if self.max_frames and self.frames >= self.max_frames:
            # The same frame again into the renderer's own buffer: reading the window's
            # back buffer through moderngl is an error on the default framebuffer.
            self.renderer.render(snap, self.look, self.camera, self.stage)
            self.last_frame = self.renderer.read()
            import pyglet

            # Not from inside the draw: pyglet is iterating over its windows.
            pyglet.clock.schedule_once(lambda dt: self.window.close(), 0.0)

    def _display_time(self, prev: Snapshot, cur: Snapshot) -> float:
        """Wall-clock time, one solver step behind the newest snapshot so that there is a
        pair to interpolate; clamped to it when the solver falls behind."""
        now = time.perf_counter()
        if self._clock0 is None:
            self._clock0 = now - cur.t
        return min(max(now - self._clock0 - (cur.t - prev.t), prev.t), cur.t)

    def on_resize(self, width: int, height: int):
        import pyglet

        return pyglet.event.EVENT_HANDLED  # on_draw follows the framebuffer's size

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers) -> None:
        import pyglet

        mouse, key = pyglet.window.mouse, pyglet.window.key
        pan = buttons & (mouse.RIGHT | mouse.MIDDLE) or (buttons & mouse.LEFT
                                                        and modifiers & key.MOD_SHIFT)
        if pan:
            self.camera.pan(dx, dy, self.window.height)
        elif buttons & mouse.LEFT:
            self.camera.orbit(dx, -dy)  # pyglet's dy points up; orbit takes screen rows

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y) -> None:
        self.camera.zoom(scroll_y)

    def on_key_press(self, symbol, modifiers):
        import pyglet

        key = pyglet.window.key
        if symbol == key.ESCAPE:
            self.window.close()
            return pyglet.event.EVENT_HANDLED
        if symbol == key.HOME:
            self.camera = self._frame(self.window.get_framebuffer_size())
            return pyglet.event.EVENT_HANDLED
        return None

    def on_close(self) -> None:
        self.source.stop()

    # -- loop ----------------------------------------------------------------------
    def run(self) -> int:
        """Play until the window closes; 0 on a normal quit."""
        import pyglet

        self.source.start()
        try:
            pyglet.app.run(1 / 60)
        finally:
            self.source.stop()
        if self.save_frame is not None and self.last_frame is not None:
            from PIL import Image

            Image.fromarray(self.last_frame).save(self.save_frame)
        return 0
