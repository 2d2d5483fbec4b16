"""The caption box: the scene's title and description, where the Slinky is not.

It shows for CAPTION_SECONDS (wall time) each time a scene is opened (a visitor learns
what they are looking at, then has the view to themselves), fading out over the last
FADE_SECONDS; the caption key (keys.py) shows it for good, or hides it. It sits at the
bottom's middle unless the Slinkies are there: then in a corner or at the top, narrower,
wherever it covers least of them and of the HUD (`placement.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from slinky3d.viewer.overlay import placement

CAPTION_SECONDS = 12.0  # wall s a new scene's caption stays up by itself
FADE_SECONDS = 1.5  # ... the last of which it fades out over
WINDOW = "##caption"
WIDTH = 0.6  # of the window's width, at most, at the bottom's or the top's middle
CORNER_WIDTH = 0.36  # in a corner
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
        self.spot: str | None = None  # placement.SPOTS: where it was drawn last
        self._heights: dict[float, float] = {}  # its height at each width drawn

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

    def opacity(self, scene: Any) -> float:
        """1 while the caption shows, down to 0 over its last FADE_SECONDS (0: hidden)."""
        if not self.visible(scene):
            return 0.0
        if self.pinned:
            return 1.0
        left = CAPTION_SECONDS - (self.clock() - self._opened)
        return min(1.0, max(left, 0.0) / FADE_SECONDS)

    def toggle(self, scene: Any) -> bool:
        """The caption key: hide a shown caption, show a hidden one for good; returns
        whether it shows now."""
        self.pinned = not self.visible(scene)
        return self.pinned

    def draw(self, scene: Any, imgui: Any, subjects: Sequence[placement.Box] = (),
             avoid: Sequence[placement.Box] = ()) -> None:
        """Draw it (if it shows) where it covers least of the `subjects` (the Slinkies'
        boxes) and of the boxes to `avoid` (the HUD), in imgui's pixels."""
        opacity = self.opacity(scene)
        if opacity <= 0.0:
            self.rect, self.spot = (0.0, 0.0, 0.0, 0.0), None
            return
        io = imgui.get_io()
        size = (io.display_size.x, io.display_size.y)

        def width(spot: str) -> float:
            if spot in ("bottom", "top"):
                return min(WIDTH * size[0], 40.0 * self.px)
            return min(CORNER_WIDTH * size[0], 26.0 * self.px)

        def box(spot: str) -> tuple[float, float]:
            w = width(spot)
            return w, self._heights.get(w, self._guess_height(scene, w))

        margin = 0.5 * self.px
        self.spot, _ = placement.place(box, size, subjects, avoid, margin, current=self.spot)
        w = width(self.spot)
        point, pivot = placement.anchor(self.spot, size, margin)
        imgui.set_next_window_pos(point, imgui.Cond_.always, pivot)
        imgui.set_next_window_size((w, 0.0))
        imgui.set_next_window_bg_alpha(ALPHA * opacity)
        imgui.push_style_var(imgui.StyleVar_.alpha, opacity)
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
        self._heights[w] = hh
        imgui.end()
        imgui.pop_style_var()

    def _guess_height(self, scene: Any, width: float) -> float:
        """Its height at `width` before it was drawn at it: the title and the wrapped
        paragraph at about half a font size per character."""
        chars = max(1.0, (width - 2.0 * self.px) / (0.5 * self.px))
        lines = -(-len(getattr(scene, "description", "")) // int(chars))
        return (1.6 + 1.3 * lines) * self.px + self.px
