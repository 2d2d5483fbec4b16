"""The app's input: the mouse (hover, grab, orbit, pan, zoom), the keys (found in the
keys.py table and carried out through the window's `press`), the held base's drive
and letting go.

A part of the window (window.Viewer); what it reads of the window is `Host`. Everything
the hand does goes to the solver as a command.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import pyglet  # its window submodule loads on first use, after the window's options

from slinky3d.model.chain3d import in_space
from slinky3d.runtime import commands
from slinky3d.runtime.commands import Command
from slinky3d.runtime.snapshot import Snapshot
from slinky3d.viewer.app import keys, picking
from slinky3d.viewer.app.policy import Action
from slinky3d.viewer.app.ui import UiState
from slinky3d.viewer.camera import OrbitCamera

WHEEL_PX = 24.0  # 3D: a wheel notch while holding moves the point as a drag this long


class Host(Protocol):
    """What the input reads of the window and asks it to do."""

    window: Any  # pyglet.window.Window
    overlay: Any  # overlay.layer.Overlay: whether it takes the mouse, the keyboard
    camera: OrbitCamera
    camera_held: bool  # the mouse moved the camera: the director leaves it be
    box: tuple[np.ndarray, np.ndarray]  # corners (3D) the cursor's target stays in
    shown: Snapshot  # the snapshot drawn last
    ui: UiState

    @property
    def three_d(self) -> bool: ...  # the scene runs on the 3D solver: the hand moves in 3D

    def send(self, cmd: Command) -> None: ...

    def say(self, text: str) -> None: ...

    def can_grab(self) -> bool: ...

    def press(self, action: str, modifiers: int = 0, index: int = 0) -> None: ...


class Controls:
    """Mouse and key handlers (pushed onto the window) and the hand's state."""

    def __init__(self, host: Host):
        self.host = host
        self.mouse: tuple[float, float] | None = None  # pixels, y down
        self.hover: tuple[int, int] | None = None  # (Slinky, end point) under the cursor
        self.drag: str | None = None  # "grab" | "orbit" | "pan" while a button is down
        self.grabbed: tuple[int, np.ndarray] | None = None  # (Slinky, point's offset)
        self.driving: dict[str, bool] = {}  # drive action -> held
        self.twisting: dict[str, bool] = {}  # twist action -> held
        self.hands: dict[int, np.ndarray] = {}  # Slinky -> where the hand let go
        # Where the grabbing drag was last (pyglet's coordinates), not yet sent: a mouse
        # reports up to 1000 moves a second, and each Move is computed, logged and
        # sent once a frame (flush_drag), as games sample their input.
        self._dragged_to: tuple[float, float] | None = None
        self._target: np.ndarray | None = None  # 3D: the grab's target (world) last sent
        self._depth_px = 0.0  # 3D: Shift+drag and wheel since the last frame, pixels
        self._bindings = _resolve(keys.BINDINGS)

    def handlers(self) -> dict[str, Any]:
        return dict(on_mouse_press=self.on_mouse_press, on_mouse_drag=self.on_mouse_drag,
                    on_mouse_release=self.on_mouse_release,
                    on_mouse_motion=self.on_mouse_motion,
                    on_mouse_scroll=self.on_mouse_scroll, on_key_press=self.on_key_press,
                    on_key_release=self.on_key_release)

    def actions(self) -> dict[str, Action]:
        return {"let_go": lambda index: self.let_go()}

    def drop_hand(self) -> None:
        """Forget the grab, the camera drag, the drive and the twist (a reset, a new
        scene)."""
        self.grabbed, self.drag, self._dragged_to, self._target = None, None, None, None
        self.driving.clear()
        self.twisting.clear()

    def flush_drag(self) -> None:
        """Send where the grabbing drag has gone since the last frame (once a frame)."""
        moved, depth = self._dragged_to, self._depth_px
        self._dragged_to, self._depth_px = None, 0.0
        if self.drag != "grab" or self.grabbed is None or (moved is None and not depth):
            return
        i, offset = self.grabbed
        h = self.host
        if self._target is None:  # the plane z = 0 (the planar solver)
            if moved is None:
                return
            target = np.clip(self._cursor(*moved) + offset, h.box[0][:2], h.box[1][:2])
            h.send(commands.Move(i, (float(target[0]), float(target[1]))))
            return
        t = self._target
        if depth:  # towards or away from the camera, across the screen kept
            t = picking.along_view(h.camera, t, depth, self.window_size()[1], h.box)
        elif moved is not None:  # across the screen, at the depth it has
            t = picking.facing_point(h.camera, *self._pixel(*moved), self.window_size(), t,
                                     h.box) + offset
        self._target = np.clip(t, *h.box)
        h.send(commands.Move(i, tuple(float(c) for c in self._target)))

    # -- mouse ---------------------------------------------------------------------
    def _pixel(self, x: float, y: float) -> tuple[float, float]:
        """pyglet's window coordinates (y up) -> picking's (y down)."""
        return float(x), float(self.host.window.height - y)

    def window_size(self) -> tuple[int, int]:
        w = self.host.window
        return max(w.width, 1), max(w.height, 1)

    def update_hover(self) -> None:
        if self.mouse is None or self.drag is not None or not self.host.can_grab():
            self.hover = None
            return
        self.hover = picking.nearest_point(self.host.shown, self.host.camera, *self.mouse,
                                           self.window_size())

    def _cursor(self, x: float, y: float) -> np.ndarray:
        return picking.cursor_point(self.host.camera, *self._pixel(x, y),
                                    self.window_size(), self.host.box)

    def on_mouse_motion(self, x, y, dx, dy) -> None:
        self.mouse = self._pixel(x, y)

    def on_mouse_press(self, x, y, button, modifiers) -> None:
        h = self.host
        if h.overlay.wants_mouse():
            return
        mouse, key = pyglet.window.mouse, pyglet.window.key
        self.mouse = self._pixel(x, y)
        if button == mouse.LEFT and not modifiers & key.MOD_SHIFT:
            pick = None
            if h.can_grab():
                pick = picking.nearest_point(h.shown, h.camera, *self.mouse,
                                             self.window_size())
            if pick is not None:
                i, k = pick
                point = h.shown.slinkies[i].ends[k]
                # The point keeps its offset from the cursor: no jump on the grab.
                if h.three_d:
                    p3 = in_space(np.asarray(point, float))
                    under = picking.facing_point(h.camera, *self.mouse, self.window_size(),
                                                 p3, h.box)
                    self.grabbed, self._target = (i, p3 - under), p3
                else:
                    self.grabbed, self._target = (i, point - self._cursor(x, y)), None
                self.drag = "grab"
                h.send(commands.Grab(i, k, None))
                return
            self.drag = "pan" if h.ui.side_view else "orbit"
        else:
            self.drag = "pan"

    def on_mouse_drag(self, x, y, dx, dy, buttons, modifiers) -> None:
        h = self.host
        mouse, key = pyglet.window.mouse, pyglet.window.key
        self.mouse = self._pixel(x, y)
        if self.drag != "grab":
            # the camera follows the buttons held now (a press may have gone to the
            # overlay, or come before the window had the focus)
            if self.drag is None and h.overlay.wants_mouse():
                return
            pan = buttons & (mouse.RIGHT | mouse.MIDDLE) or modifiers & key.MOD_SHIFT
            self.drag = "pan" if pan or h.ui.side_view else "orbit"
        if self.drag == "grab" and self.grabbed is not None:
            if self._target is not None and modifiers & key.MOD_SHIFT:
                self._depth_px += dy  # up the screen: away from the camera
            else:
                self._dragged_to = (float(x), float(y))
        elif self.drag == "pan":
            h.camera_held = True
            h.camera.pan(dx, dy, h.window.height)
        elif self.drag == "orbit":
            h.camera_held = True
            h.camera.orbit(dx, -dy)  # pyglet's dy points up; orbit takes screen rows

    def on_mouse_release(self, x, y, button, modifiers) -> None:
        self.flush_drag()  # the last place the hand was, before it lets go
        if self.drag == "grab" and self.grabbed is not None:
            # The point keeps the velocity the hand gave it: a flick throws it.
            self.host.send(commands.Release(self.grabbed[0]))
        self.drag, self.grabbed = None, None

    def on_mouse_scroll(self, x, y, scroll_x, scroll_y) -> None:
        if self.host.overlay.wants_mouse():
            return
        if self.drag == "grab" and self._target is not None:  # 3D: the held point's depth
            self._depth_px += WHEEL_PX * scroll_y
            return
        self.host.camera_held = True
        self.host.camera.zoom(scroll_y)

    # -- keys ----------------------------------------------------------------------
    def on_key_press(self, symbol, modifiers):
        if self.host.overlay.wants_keyboard():
            return None
        found = self._bindings.get(symbol)
        if found is None:
            if symbol in _shift_keys():  # Shift while driving or twisting: faster now
                self._hands_moving(modifiers | pyglet.window.key.MOD_SHIFT)
            return None
        binding, index = found
        self.host.press(binding.action, modifiers, index)
        return pyglet.event.EVENT_HANDLED

    def on_key_release(self, symbol, modifiers):
        found = self._bindings.get(symbol)
        if found is not None and found[0].hold and found[0].action in self.driving:
            self.driving.pop(found[0].action)
            self._drive(modifiers)
        elif found is not None and found[0].hold and found[0].action in self.twisting:
            self.twisting.pop(found[0].action)
            self._twist(modifiers)
        elif symbol in _shift_keys():
            self._hands_moving(modifiers & ~pyglet.window.key.MOD_SHIFT)

    def _hands_moving(self, modifiers: int) -> None:
        """Shift pressed or let go while drive or twist keys are down: their speed anew."""
        if self.driving:
            self._drive(modifiers)
        if self.twisting:
            self._twist(modifiers)

    def twist_key(self, action: str, modifiers: int) -> None:
        """[ or ] down (keys.TWISTS): the held bases turn about the vertical."""
        self.twisting[action] = True
        self._twist(modifiers)

    def _twist(self, modifiers: int) -> None:
        """TwistBase for every held base, from the twist keys down now (the 3D solver's;
        the planar one cannot turn out of its plane: said once a press)."""
        fast = bool(modifiers & pyglet.window.key.MOD_SHIFT)
        sense = sum(keys.TWISTS[t] for t in self.twisting)
        if not self.host.three_d:
            if sense:
                self.host.say("twisting needs the 3D solver (run the scene with --solver 3d)")
            return
        rate = float(sense * (keys.TWIST_FAST if fast else keys.TWIST_RATE)) + 0.0
        held = [i for i, sl in enumerate(self.host.shown.slinkies) if sl.anchor_held]
        if not held and sense:
            self.host.say("no held base to twist: L takes hold of an end")
        for i in held:
            self.host.send(commands.TwistBase(i, rate))

    def drive_key(self, action: str, modifiers: int) -> None:
        """An arrow key down (keys.DIRECTIONS): the held bases move that way."""
        self.driving[action] = True
        self._drive(modifiers)

    def _drive(self, modifiers: int) -> None:
        """DriveBase for every held base, from the drive keys down now: on the 3D
        solver across, along the ground away from the viewer (the camera's heading) and
        up; on the planar solver in its plane, up for both W and E."""
        fast = bool(modifiers & pyglet.window.key.MOD_SHIFT)
        speed = keys.DRIVE_FAST if fast else keys.DRIVE_SPEED
        a, f, v = (sum(keys.DIRECTIONS[d][j] for d in self.driving) for j in range(3))
        velocity: tuple[float, ...]
        if self.host.three_d:
            yaw = self.host.camera.yaw
            right = np.array([np.cos(yaw), 0.0, -np.sin(yaw)])
            away = -np.array([np.sin(yaw), 0.0, np.cos(yaw)])
            w = speed * (a * right + f * away + v * np.array([0.0, 1.0, 0.0]))
            velocity = tuple(float(c) + 0.0 for c in w)  # + 0.0: no -0.0 in the log
        else:
            velocity = (speed * a, speed * (f + v))
        held = [i for i, sl in enumerate(self.host.shown.slinkies) if sl.anchor_held]
        if not held and (a or f or v):
            self.host.say("no held base to move: L takes hold of an end")
        for i in held:
            self.host.send(commands.DriveBase(i, velocity))

    def let_go(self) -> None:
        """Let go of every held base; pressed again, take hold of the end nearest the
        hand (where it let go)."""
        for i, sl in enumerate(self.host.shown.slinkies):
            if sl.anchor_held:
                self.hands[i] = np.array(sl.ends[0], float)
                self.host.send(commands.LetGo(i))
            else:
                hand = self.hands.get(i, sl.ends[0])
                far = np.linalg.norm(sl.ends[-1] - hand) < np.linalg.norm(sl.ends[0] - hand)
                self.host.send(commands.TakeHold(i, sl.N if far else 0))
        self.driving.clear()
        self.twisting.clear()


def _shift_keys() -> tuple[int, int]:
    key = pyglet.window.key
    return key.LSHIFT, key.RSHIFT


def _resolve(bindings) -> dict[int, tuple[keys.Binding, int]]:
    """pyglet key symbol -> (binding, index of the key in it)."""
    key = pyglet.window.key
    out: dict[int, tuple[keys.Binding, int]] = {}
    for b in bindings:
        for i, name in enumerate(b.keys):
            out[getattr(key, name)] = (b, i)
    return out
