"""The overlay drawn into buffers a few times a second and laid over every frame.

On a software rasterizer the overlay (HUD text, energy bars and plot, the panel) costs
a frame about 4 ms: imgui's Python and its layers of blended pixels, in proportion to
the area drawn. Most frames show it unchanged, or with figures that need not change 60
times a second. So imgui's frame is made every REFRESH s, and at once when the overlay
may look different (a key, a click, the pointer over the panel, a panel, help, message
or notice shown or gone, the window resized); other frames only lay the buffers over
the 3D picture, inside the rectangles the overlay drew in.

The overlay's layers (overlay.LAYERS: the HUD under the panel, help, notice and badge)
have a buffer each, and a layer is drawn into its buffer only when what it would draw
differs from what its buffer holds (the same vertices, clip rectangles and textures:
the same pixels). The HUD's figures change at every refresh; the panel, the larger,
only when it is used. Every window is still submitted to imgui in each of its frames,
so the panel keeps taking clicks, slider drags and text as when drawn directly.

When the frame under the overlay was drawn again only in part (viewer/app/redraw.py),
the buffers are laid over only there, and where a layer was drawn anew (its old and
new rectangles) the frame is first drawn again under it. A layer is then drawn anew
into a spare buffer and laid over from the next frame on: its drawing and the frame
drawn again under it fall on two frames, not one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import moderngl
import numpy as np

from slinky3d.viewer.gl.programs import program
from slinky3d.viewer.overlay.layer import LAYERS, OverlayView
from slinky3d.viewer.rects import Rect, pieces

REFRESH = 0.1  # s between redraws of an unchanged overlay (HUD figures at 10 Hz)
# s: the longest a refresh waits for a frame with room for it (viewer/app/pacing.py)
REFRESH_LATEST = 3 * REFRESH


def _look(view: OverlayView) -> tuple:
    """What of the view changes the overlay at once (the figures wait for REFRESH)."""
    r = view.replay
    return (view.show_hud, view.show_panel, view.show_help, view.notice, view.message,
            view.panel, view.paused, view.time_scale, view.side_view, view.scene_name,
            r is not None and r.playing, r.t if r is not None and view.paused else None)


def disjoint(rects, size: tuple[int, int]) -> list[tuple[int, int, int, int]]:
    """Rectangles (x0, y0, x1, y1) covering the union of `rects` in whole pixels within
    (0, 0)-size, none overlapping another (a pixel laid over twice would blend twice)."""
    w, h = size
    boxes = [(max(0, math.floor(x0)), max(0, math.floor(y0)), min(w, math.ceil(x1)),
              min(h, math.ceil(y1))) for x0, y0, x1, y1 in rects]
    cut = pieces([(x0, y0, x1 - x0, y1 - y0) for x0, y0, x1, y1 in boxes
                  if x1 > x0 and y1 > y0])
    return [(x, y, x + bw, y + bh) for x, y, bw, bh in cut]


class Layer:
    """One layer's buffers and the rectangles to lay it over in: the buffer laid over
    (`tex`) and a spare one, drawn into while the other is still shown (`pending`)."""

    def __init__(self, ctx: moderngl.Context, prog: moderngl.Program, size: tuple[int, int]):
        self.tex, self.spare = ctx.texture(size, 4), ctx.texture(size, 4)
        self.fbo, self.spare_fbo = ctx.framebuffer(self.tex), ctx.framebuffer(self.spare)
        self.buffer = ctx.buffer(reserve=4096, dynamic=True)
        self.vao = ctx.vertex_array(prog, [(self.buffer, "2f", "in_pos")])
        self.quads = 0  # rectangles to lay over
        self.boxes: list[tuple[int, int, int, int]] = []  # they, (x0, y0, x1, y1)
        self.signature: tuple | None = None  # what the buffer drawn last holds
        self.draws = 0  # times drawn into a buffer
        self.pending: list[tuple[int, int, int, int]] | None = None  # the spare's boxes

    def show(self, boxes: list[tuple[int, int, int, int]], size: tuple[int, int]) -> None:
        """Lay it over inside `boxes` (x0, y0, x1, y1) from now on."""
        w, h = size
        quads = []
        for x0, y0, x1, y1 in boxes:
            a, b, c, d = 2 * x0 / w - 1, 2 * y0 / h - 1, 2 * x1 / w - 1, 2 * y1 / h - 1
            quads.append([a, b, c, b, a, d, a, d, c, b, c, d])
        self.boxes, self.quads = boxes, len(quads)
        if quads:
            data = np.asarray(quads, "f4").tobytes()
            if len(data) > self.buffer.size:
                self.buffer.orphan(len(data))
            self.buffer.write(data)

    def swap(self, size: tuple[int, int]) -> list[tuple[int, int, int, int]]:
        """The spare buffer drawn last laid over from now on; the rectangles that
        change: where it was laid over, and where it is."""
        boxes, self.pending = self.pending or [], None
        changed = self.boxes + boxes
        self.tex, self.spare = self.spare, self.tex
        self.fbo, self.spare_fbo = self.spare_fbo, self.fbo
        self.show(boxes, size)
        return changed

    def release(self) -> None:
        for o in (self.vao, self.buffer, self.fbo, self.spare_fbo, self.tex, self.spare):
            o.release()


class OverlayCache:
    """Draws an overlay.Overlay through cached buffers, one per layer, into a window's
    framebuffer."""

    def __init__(self, ctx: moderngl.Context, overlay: Any):
        self.ctx, self.overlay = ctx, overlay
        self.prog = program(ctx, "overlay.glsl")
        self.layers: dict[str, Layer] = {}  # by name, bottom to top (overlay.LAYERS)
        self._size = (0, 0)
        self._key: tuple | None = None  # (look, overlay inputs) when last drawn
        self._drawn = -np.inf  # perf_counter s when last drawn
        self.refreshed = False  # whether the last frame drew the overlay anew

    def frame(self, view: OverlayView, screen: moderngl.Framebuffer, size: tuple[int, int],
              now: float, drawn: Sequence[Rect] | None = None,
              restore: Callable[[list[Rect]], None] | None = None,
              wait: bool = False) -> list:
        """The overlay over `screen` (of `size` pixels) at wall time `now`; returns the
        actions the overlay's frame asked for (none when only laid over). `drawn`: the
        rectangles (x, y, w, h) where the frame under it was drawn again this frame
        (None: all of it); `restore(rects)` draws the frame again there. Then a layer
        drawn anew is laid over from the next frame on, with what lies under it drawn
        again there: the two costs fall on two frames."""
        actions: list = []
        changed: list[tuple[int, int, int, int]] = []
        if size != self._size:
            drawn = None
        for layer in self.layers.values():
            if layer.pending is not None:
                changed += layer.swap(size)
        key = (_look(view), self.overlay.inputs)
        age = now - self._drawn
        self.refreshed = (size != self._size or key != self._key
                          or age >= (REFRESH_LATEST if wait else REFRESH))
        if self.refreshed:
            actions = self._draw(view, size, spare=drawn is not None)
            self._key, self._drawn = (_look(view), self.overlay.inputs), now
        if drawn is None:
            screen.use()
            self._lay_over(None)
            return actions
        if changed and restore is not None:
            restore([(x0, y0, x1 - x0, y1 - y0) for x0, y0, x1, y1 in disjoint(changed, size)])
        screen.use()
        boxes = [(x, y, x + w, y + h) for x, y, w, h in drawn] + changed
        self._lay_over(disjoint(boxes, size))
        return actions

    def _draw(self, view: OverlayView, size: tuple[int, int], spare: bool) -> list:
        """imgui's frame, and the layers whose pixels differ drawn into their buffers
        (the spare ones, to be laid over from the next frame on: `spare`); the actions
        asked for."""
        ctx = self.ctx
        if size != self._size or not self.layers:
            for layer in self.layers.values():
                layer.release()
            self.layers = {name: Layer(ctx, self.prog, size) for name in LAYERS}
            self._size = size
        actions = self.overlay.build(view)
        for name, layer in self.layers.items():
            signature = self.overlay.signature(name)
            if signature == layer.signature:
                continue  # its buffer holds these pixels already
            boxes = disjoint(self.overlay.layer_rects[name], size)
            fbo = layer.spare_fbo if spare else layer.fbo
            fbo.use()
            for x0, y0, x1, y1 in boxes:  # only what is laid over need be transparent
                fbo.clear(0.0, 0.0, 0.0, 0.0, viewport=(x0, y0, x1 - x0, y1 - y0))
            self.overlay.render(name, premultiplied=True)
            layer.signature = signature
            layer.draws += 1
            if spare:
                layer.pending = boxes
            else:
                layer.show(boxes, size)
        return actions

    def _lay_over(self, clip: list[tuple[int, int, int, int]] | None) -> None:
        """The layers' buffers over the bound framebuffer, inside their rectangles (and
        inside `clip`'s, (x0, y0, x1, y1), when given)."""
        layers = [layer for layer in self.layers.values() if layer.quads]
        if not layers or clip == []:
            return
        ctx = self.ctx
        ctx.viewport = (0, 0, *self._size)
        ctx.disable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        ctx.enable(moderngl.BLEND)
        ctx.blend_func = moderngl.ONE, moderngl.ONE_MINUS_SRC_ALPHA
        self.prog["overlay"].value = 0
        for layer in layers:  # bottom to top (the clip's rectangles do not overlap)
            layer.tex.use(0)
            if clip is None:
                layer.vao.render(moderngl.TRIANGLES, vertices=6 * layer.quads)
                continue
            for x0, y0, x1, y1 in clip:
                if any(x0 < b[2] and b[0] < x1 and y0 < b[3] and b[1] < y1
                       for b in layer.boxes):
                    ctx.scissor = (x0, y0, x1 - x0, y1 - y0)
                    layer.vao.render(moderngl.TRIANGLES, vertices=6 * layer.quads)
        ctx.scissor = None
        ctx.disable(moderngl.BLEND)
        ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA  # GL's default
