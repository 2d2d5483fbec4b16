"""The app's input: the mouse (hover, grab, orbit, pan, zoom), the keys' actions
(viewer/app/keys.py: key_ACTION for each binding, the held base's drive) and the panel's
actions (panel.ApplyParams, SaveScene, Scrub, ClosePanel).

A mixin of the window (window.Viewer), which provides the pyglet `window`, the
`camera`, the `overlay`, the snapshot `_shown`, the scene's `box`, `send`, `say`,
`open_scene`, `grab_frame`, `quit` and, through instant_replay.InstantReplay, the
replay state. Everything the hand does goes to the solver as a command.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from slinky3d.runtime import commands
from slinky3d.runtime.snapshot import Snapshot
from slinky3d.viewer.app import keys, picking
from slinky3d.viewer.overlay.panel import ApplyParams, ClosePanel, SaveScene, Scrub


class Controls:
    """Mouse and key handlers (pushed onto the window) and the actions they do."""

    window: Any  # pyglet.window.Window
    camera: Any  # camera.OrbitCamera
    overlay: Any  # overlay.Overlay
    scene: Any
    live: bool  # False: a logged session plays; the hand does nothing
    box: Any  # (low, high) corners the cursor's target stays in
    _shown: Snapshot  # the snapshot drawn last
    _frame: Callable[[tuple[int, int]], Any]  # the scene's framing camera for a size
    _camera_3d: Any  # the 3D camera while the side view shows
    show_help: bool
    show_panel: bool
    side_view: bool
    scale_index: int
    mouse: tuple[float, float] | None  # pixels, y down
    hover: tuple[int, int] | None  # (Slinky, end point) under the cursor
    drag: str | None  # "grab" | "orbit" | "pan" while a button is down
    grabbed: tuple[int, np.ndarray] | None  # (Slinky, cursor-to-point offset)
    driving: dict[str, bool]  # drive action -> held
    hands: dict[int, np.ndarray]  # Slinky -> where the hand let go
    pictures: Callable[[], Any]  # the folder screenshots go to

    if TYPE_CHECKING:
        replay: Any
        scrub_t: float | None

        def send(self, cmd: Any) -> None: ...

        def say(self, text: str) -> None: ...

        def open_scene(self, scene) -> None: ...

        def grab_frame(self) -> np.ndarray: ...

        def quit(self) -> None: ...

        def leave_past(self) -> None: ...

        def scrub(self, t: float) -> None: ...

    def init_controls(self) -> None:
        """The input state at start."""
        self.show_help = self.show_panel = self.side_view = False
        self.scale_index = 0
        self.mouse = self.hover = self.drag = self.grabbed = None
        self.driving, self.hands = {}, {}
        self._bindings = _resolve(keys.BINDINGS)

    def drop_hand(self) -> None:
        """Forget the grab, the camera drag and the drive (a reset, a new scene)."""
        self.grabbed, self.drag = None, None
        self.driving.clear()

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
            self.scrub(action.t)
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
            self.leave_past()
            self.send(commands.Resume())
        else:
            self.send(commands.TogglePause())

    def key_step(self, index: int = 0) -> None:
        self.leave_past()
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
        self.leave_past()
        self.drop_hand()
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

    def key_fullscreen(self, index: int = 0) -> None:
        self.window.set_fullscreen(not self.window.fullscreen)

    def key_caption(self, index: int = 0) -> None:
        self.overlay.hud.caption.toggle(self.scene)

    def key_help(self, index: int = 0) -> None:
        self.show_help = not self.show_help

    def key_camera(self, index: int = 0) -> None:
        cam = self._frame(self.window.get_framebuffer_size())
        self.camera = replace(cam, yaw=0.0, pitch=0.0, ortho=True) if self.side_view else cam

    def key_quit(self, index: int = 0) -> None:
        self.quit()


def _fraction(scale: float) -> str:
    return "1" if scale >= 1 else f"1/{round(1 / scale)}"


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
