"""The overlay's pyglet event handlers: pushed onto the window above the app's, they pass
each event to imgui's backend and stop those the overlay takes (a click on the panel, a
key in a text field), and count those that may change what it shows (Overlay.inputs:
a cached overlay is then drawn again, overlay/cache.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class OverlayInput:
    """The overlay's pyglet event handlers (pushed as one frame of the window's stack)."""

    def __init__(self, backend: Any, io: Any, over_panel: Callable[[float, float], bool]):
        self.b, self.io, self.over_panel = backend, io, over_panel
        self.count = 0  # events that may change what the overlay shows (Overlay.inputs)

    def _seen(self, x: float | None = None, y: float | None = None) -> None:
        """Count an event; a pointer's move only over the overlay's windows (or just
        off them: their hover highlights go)."""
        if x is None or y is None or self.io.want_capture_mouse or \
                self.over_panel(x, self.io.display_size.y - y):
            self.count += 1

    def _mouse(self) -> bool | None:
        return True if self.io.want_capture_mouse else None

    def _press(self, x: int, y: int) -> bool | None:
        """Whether a press here is the overlay's. imgui knows where the pointer was at the
        last frame; a press elsewhere (the pointer moved since) asks the panel's place."""
        px, py = x, self.io.display_size.y - y
        seen = self.io.mouse_pos
        if abs(seen.x - px) <= 1 and abs(seen.y - py) <= 1:
            return self._mouse()
        return True if self.over_panel(px, py) else None

    def _keys(self) -> bool | None:
        return True if self.io.want_capture_keyboard else None

    def on_mouse_motion(self, x: int, y: int, dx: int, dy: int) -> None:
        self._seen(x, y)
        self.b.on_mouse_motion(x, y, dx, dy)

    def on_mouse_press(self, x: int, y: int, button: int, modifiers: int) -> bool | None:
        self._seen()
        captured = self._press(x, y)
        self.b.on_mouse_motion(x, y, 0, 0)
        self.b.on_mouse_press(x, y, button, modifiers)
        return captured

    def on_mouse_release(self, x: int, y: int, button: int, modifiers: int) -> None:
        self._seen()
        self.b.on_mouse_motion(x, y, 0, 0)
        self.b.on_mouse_release(x, y, button, modifiers)

    def on_mouse_drag(self, x: int, y: int, dx: int, dy: int, buttons: int,
                      modifiers: int) -> bool | None:
        self._seen(x, y)
        self.b.on_mouse_motion(x, y, dx, dy)
        return self._mouse()

    def on_mouse_scroll(self, x: int, y: int, scroll_x: float, scroll_y: float
                        ) -> bool | None:
        self._seen()
        captured = self._mouse()
        self.b.on_mouse_scroll(x, y, scroll_x, scroll_y)
        return captured

    def on_key_press(self, symbol: int, modifiers: int) -> bool | None:
        self._seen()
        captured = self._keys()
        self.b.on_key_press(symbol, modifiers)
        return captured

    def on_key_release(self, symbol: int, modifiers: int) -> None:
        self._seen()
        self.b.on_key_release(symbol, modifiers)

    def on_text(self, text: str) -> bool | None:
        self._seen()
        captured = self._keys()
        self.b.on_text(text)
        return captured

    def on_resize(self, width: int, height: int) -> None:
        self._seen()
        self.b.on_resize(width, height)
