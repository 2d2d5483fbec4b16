"""The caption box: the scene's title and description, at the bottom of the window.

It shows for CAPTION_SECONDS (wall time) each time a scene is opened (a visitor learns
what they are looking at, then has the view to themselves); the caption key (keys.py)
shows it for good, or hides it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

CAPTION_SECONDS = 12.0  # wall s a new scene's caption stays up by itself
WINDOW = "##caption"
WIDTH = 0.6  # of the window's width, at most
ALPHA = 0.6  # background opacity


class Caption:
    """Whether the caption shows, and drawing it (immediate mode, once per frame)."""

    def __init__(self, font_px: float, clock: Callable[[], float] = time.perf_counter):
        self.px = font_px
        self.clock = clock
        self.pinned: bool | None = None  # True: shown, False: hidden, None: by the timer
        self.enabled = True  # False: never shown (the kiosk shows its own placard)
        self._scene: Any = None
        self._opened = -float("inf")  # clock s the scene was opened
        self.rect = (0.0, 0.0, 0.0, 0.0)  # where it was drawn last (x0, y0, x1, y1)

    def visible(self, scene: Any) -> bool:
        """Whether the caption of `scene` shows now (a new scene restarts the timer)."""
        if scene is not self._scene:
            self._scene, self._opened, self.pinned = scene, self.clock(), None
        if not self.enabled or scene is None:
            return False
        if not (getattr(scene, "title", "") or getattr(scene, "description", "")):
            return False
        if self.pinned is not None:
            return self.pinned
        return self.clock() - self._opened < CAPTION_SECONDS

    def toggle(self, scene: Any) -> bool:
        """The caption key: hide a shown caption, show a hidden one for good; returns
        whether it shows now."""
        self.pinned = not self.visible(scene)
        return self.pinned

    def draw(self, scene: Any, imgui: Any) -> None:
        if not self.visible(scene):
            self.rect = (0.0, 0.0, 0.0, 0.0)
            return
        io = imgui.get_io()
        w = min(WIDTH * io.display_size.x, 40.0 * self.px)
        imgui.set_next_window_pos((io.display_size.x / 2, io.display_size.y - 0.5 * self.px),
                                  imgui.Cond_.always, (0.5, 1.0))
        imgui.set_next_window_size((w, 0.0))
        imgui.set_next_window_bg_alpha(ALPHA)
        f = imgui.WindowFlags_
        imgui.begin(WINDOW, None, f.no_decoration | f.no_saved_settings | f.no_inputs
                    | f.no_focus_on_appearing | f.no_nav | f.no_move)
        imgui.push_font(None, 1.25 * self.px)
        imgui.text_colored((1.0, 0.9, 0.6, 1.0), scene.title)
        imgui.pop_font()
        if scene.description:
            imgui.push_text_wrap_pos(0.0)
            imgui.text(scene.description)
            imgui.pop_text_wrap_pos()
        (x, y), (ww, hh) = imgui.get_window_pos(), imgui.get_window_size()
        self.rect = (x, y, x + ww, y + hh)
        imgui.end()
