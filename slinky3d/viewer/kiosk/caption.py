"""The kiosk's placard: the scene's title and its paragraph in the attract loop, a line
of what to do in play, where the Slinky is not: at the bottom's middle, else in a
corner (narrower) or at the top, wherever it covers least of the Slinkies' boxes on
screen and of the HUD (`overlay/placement.py`). Drawn with Pillow into a box of pixels
once per change (text, window size, place), laid over each frame through the cached
overlay's program (shaders/overlay.glsl: premultiplied pixels, only inside the box).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import moderngl
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from slinky3d.viewer.gl.programs import program
from slinky3d.viewer.overlay import placement
from slinky3d.viewer.overlay.layer import font_path

TITLE_FRACTION = 1 / 22  # title height, of the window's height
TEXT_FRACTION = 1 / 36  # caption and hint height
WIDTH_FRACTION = 0.8  # the box's width at most, of the window's, at the bottom or top
CORNER_FRACTION = 0.4  # ... in a corner
MARGIN_FRACTION = 0.04  # from the window's edges, of its height
BOX_RGBA = (10, 12, 18, 170)
TITLE_RGB = (255, 214, 120)
TEXT_RGB = (240, 240, 240)
MAX_LINES = 9  # of the caption's paragraph; more is cut with an ellipsis


def _font(px: int) -> Any:
    path = font_path()
    try:
        if path:
            return ImageFont.truetype(path, px)
        return ImageFont.load_default(px)
    except OSError:
        return ImageFont.load_default()


def wrap(text: str, font: Any, width: float) -> list[str]:
    """Words into lines no wider than `width` pixels (a longer word gets its own line)."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        trial = f"{line} {word}" if line else word
        if line and font.getlength(trial) > width:
            lines.append(line)
            line = word
        else:
            line = trial
    if line:
        lines.append(line)
    return lines


def render(title: str, text: str, hint: str, size: tuple[int, int],
           width: float = WIDTH_FRACTION) -> np.ndarray | None:
    """The caption's box, at most `width` of the window's, as premultiplied RGBA rows,
    bottom row first (GL's order); None when there is nothing to show."""
    w, h = size
    title_font, text_font = _font(max(8, round(h * TITLE_FRACTION))), \
        _font(max(8, round(h * TEXT_FRACTION)))
    pad = round(0.6 * h * TEXT_FRACTION)
    inner = width * w - 2 * pad
    rows: list[tuple[str, Any, tuple[int, int, int]]] = []
    if title:
        rows += [(s, title_font, TITLE_RGB) for s in wrap(title, title_font, inner)[:2]]
    body = wrap(text, text_font, inner)
    if len(body) > MAX_LINES:
        body = body[:MAX_LINES - 1] + [body[MAX_LINES - 1] + " \u2026"]
    rows += [(s, text_font, TEXT_RGB) for s in body]
    if hint:
        rows += [(s, text_font, TITLE_RGB) for s in wrap(hint, text_font, inner)]
    if not rows:
        return None
    heights = [round(1.25 * f.size) for _, f, _ in rows]
    bw = round(min(width * w, max(f.getlength(s) for s, f, _ in rows) + 2 * pad))
    bh = sum(heights) + 2 * pad
    bw, bh = min(bw, w), min(bh, h)
    img = Image.new("RGBA", (bw, bh), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    draw.rounded_rectangle((0, 0, bw - 1, bh - 1), radius=pad, fill=BOX_RGBA)
    y = pad
    for (s, f, rgb), dy in zip(rows, heights, strict=True):
        draw.text((pad, y), s, font=f, fill=(*rgb, 255))
        y += dy
    a = np.asarray(img, np.float32)
    a[..., :3] *= a[..., 3:] / 255.0  # premultiplied, as the overlay's blend wants
    return np.ascontiguousarray(a[::-1].round().astype(np.uint8))


def _width(spot: str) -> float:
    """The box's width at most, of the window's, at `spot`."""
    return WIDTH_FRACTION if spot in ("bottom", "top") else CORNER_FRACTION


class Placard:
    """The caption's GL objects: a window-sized texture holding the box's pixels at
    their place (the program fetches texels at the fragment's own pixel)."""

    def __init__(self, ctx: moderngl.Context):
        self.ctx = ctx
        self.prog = program(ctx, "overlay.glsl")
        self.tex: moderngl.Texture | None = None
        self.buffer = ctx.buffer(reserve=12 * 4)
        self.vao = ctx.vertex_array(self.prog, [(self.buffer, "2f", "in_pos")])
        self._key: tuple | None = None
        self._boxes: dict[float, np.ndarray | None] = {}  # the box at each width
        self._placed: tuple[int, int] | None = None  # its lower left corner in `tex`
        self.spot: str | None = None  # placement.SPOTS: where it is
        self.rect = (0.0, 0.0, 0.0, 0.0)  # where it was drawn last (x0, y0, x1, y1; y down)
        self.shown = False
        self.builds = 0

    def draw(self, screen: moderngl.Framebuffer, size: tuple[int, int], title: str,
             text: str, hint: str, subjects: Sequence[placement.Box] = (),
             avoid: Sequence[placement.Box] = ()) -> None:
        """Lay the caption over `screen` (the window's framebuffer, `size` pixels) where
        it covers least of the `subjects` and the boxes to `avoid` (pixels, y down)."""
        key = (title, text, hint, size)
        if key != self._key:
            self._boxes = {width: render(title, text, hint, size, width)
                           for width in (WIDTH_FRACTION, CORNER_FRACTION)}
            self.builds += 1
            self._key, self._placed = key, None
        wide = self._boxes[WIDTH_FRACTION]
        self.shown = wide is not None
        if wide is None:
            return

        def box(spot: str) -> tuple[float, float]:
            b = self._boxes[_width(spot)]
            return (0.0, 0.0) if b is None else (float(b.shape[1]), float(b.shape[0]))

        spot, (x0, y0, x1, y1) = placement.place(
            box, size, subjects, avoid, margin=round(MARGIN_FRACTION * size[1]),
            current=self.spot)
        placed = (round(x0), size[1] - round(y1))  # GL's lower left corner
        if (spot, placed) != (self.spot, self._placed):
            self._upload(self._boxes[_width(spot)], placed, size)
            self.spot, self._placed = spot, placed
        self.rect = (x0, y0, x1, y1)
        ctx = self.ctx
        screen.use()
        ctx.viewport = (0, 0, *size)
        ctx.disable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        ctx.enable(moderngl.BLEND)
        ctx.blend_func = moderngl.ONE, moderngl.ONE_MINUS_SRC_ALPHA
        self.prog["overlay"].value = 0
        assert self.tex is not None
        self.tex.use(0)
        self.vao.render(moderngl.TRIANGLES, vertices=6)
        ctx.disable(moderngl.BLEND)
        ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA  # GL's default

    def _upload(self, pixels: np.ndarray | None, corner: tuple[int, int],
                size: tuple[int, int]) -> None:
        """The box's pixels into the window-sized texture at `corner` (GL's lower left),
        and the quad drawn over it."""
        if pixels is None:
            return
        if self.tex is None or self.tex.size != size:
            if self.tex is not None:
                self.tex.release()
            self.tex = self.ctx.texture(size, 4)
        x0, y0 = corner
        bh, bw = pixels.shape[:2]
        self.tex.write(pixels.tobytes(), viewport=(x0, y0, bw, bh))
        w, h = size
        a, b = 2 * x0 / w - 1, 2 * y0 / h - 1
        c, d = 2 * (x0 + bw) / w - 1, 2 * (y0 + bh) / h - 1
        self.buffer.write(np.array([a, b, c, b, a, d, a, d, c, b, c, d], "f4").tobytes())

    def release(self) -> None:
        for o in (self.vao, self.buffer, self.tex):
            if o is not None:
                o.release()
        self.tex = None
