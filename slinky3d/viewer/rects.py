"""Rectangles of pixels on screen (x, y, width, height; GL's bottom-left origin): where
two meet, the part of one outside others, and a union cut into rectangles that do not
overlap, so that a pass over them touches each pixel once (a copy, a stretch, a
blended overlay laid over). Used by the renderer's partial frames and the overlay's
cache. Pure Python."""

from __future__ import annotations

from collections.abc import Sequence

Rect = tuple[int, int, int, int]  # x, y, width, height in pixels, GL's bottom-left origin


def overlap(a: Rect, b: Rect) -> Rect | None:
    """The part two rectangles share, None when none."""
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[0] + a[2], b[0] + b[2]), min(a[1] + a[3], b[1] + b[3])
    return (x0, y0, x1 - x0, y1 - y0) if x1 > x0 and y1 > y0 else None


def outside(within: Rect, rects: Sequence[Rect]) -> list[Rect]:
    """Rectangles covering the part of `within` outside all of `rects`, none overlapping
    another: bands between the rectangles' edges, cut at them."""
    x, y, w, h = within
    cut = [c for r in rects if (c := overlap(within, r)) is not None]
    ys = sorted({y, y + h, *(c[1] for c in cut), *(c[1] + c[3] for c in cut)})
    out = []
    for y0, y1 in zip(ys, ys[1:], strict=False):
        spans = sorted((c[0], c[0] + c[2]) for c in cut if c[1] <= y0 and y1 <= c[1] + c[3])
        at = x
        for a, b in [*spans, (x + w, x + w)]:
            if a > at:
                out.append((at, y0, a - at, y1 - y0))
            at = max(at, b)
    return out


def pieces(rects: Sequence[Rect]) -> list[Rect]:
    """The union of `rects` as rectangles none of which overlaps another: each
    rectangle's part outside those before it, in order."""
    return [p for i, r in enumerate(rects) for p in outside(r, rects[:i])]
