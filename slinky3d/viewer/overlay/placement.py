"""Where 2D boxes go so that they cover the subject: the Slinkies' boxes on screen, and
of a few spots along the picture's edges, the one that covers them least.

Boxes are (x0, y0, x1, y1) with y down. The Slinkies' boxes are fractions of the
picture (0..1 across and down: `subject`), so that each user scales them to its own
pixels (imgui's display size, the kiosk's framebuffer). numpy only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from slinky3d.runtime.snapshot import Snapshot
from slinky3d.viewer import helix
from slinky3d.viewer.camera import OrbitCamera

Box = tuple[float, float, float, float]  # x0, y0, x1, y1; y down
# The spots a box may take, in order of preference: the bottom's middle, where a caption
# is read first, then the corners and the top.
SPOTS = ("bottom", "bottom-left", "bottom-right", "top", "top-right", "top-left")
SAMPLES = 9  # points per half hoop's centre line projected


def subject(snap: Snapshot, cam: OrbitCamera, aspect: float, pad: float = 0.01) -> list[Box]:
    """Each Slinky's box on screen as fractions of the picture (its half hoops' centre
    lines projected, widened by `pad` of the picture's height and by its radius where
    the wire bulges toward the eye); the whole picture when some of it is behind the
    eye."""
    out = []
    for sl in snap.slinkies:
        pts = helix.centre_line(sl, SAMPLES).reshape(-1, 3)
        clip = np.c_[pts, np.ones(len(pts))] @ cam.view_proj(aspect)
        if np.any(clip[:, 3] <= 1e-9):
            return [(0.0, 0.0, 1.0, 1.0)]
        ndc = clip[:, :2] / clip[:, 3:4]
        x, y = 0.5 * (ndc[:, 0] + 1), 0.5 * (1 - ndc[:, 1])
        px, py = pad / aspect, pad
        out.append((float(x.min()) - px, float(y.min()) - py, float(x.max()) + px,
                    float(y.max()) + py))
    return out


def scaled(boxes: Sequence[Box], size: tuple[float, float]) -> list[Box]:
    """Fractions of the picture as pixels of a picture of `size` (w, h)."""
    w, h = size
    return [(x0 * w, y0 * h, x1 * w, y1 * h) for x0, y0, x1, y1 in boxes]


def shared_area(a: Box, b: Box) -> float:
    """The area two boxes share."""
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * \
        max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def spot_box(spot: str, box: tuple[float, float], size: tuple[float, float],
             margin: float) -> Box:
    """Where a box of `box` (w, h) lies at `spot`, `margin` off the picture's edges."""
    w, h = size
    bw, bh = box
    if spot.endswith("left"):
        x0 = margin
    elif spot.endswith("right"):
        x0 = w - margin - bw
    else:
        x0 = 0.5 * (w - bw)
    y0 = h - margin - bh if spot.startswith("bottom") else margin
    return (x0, y0, x0 + bw, y0 + bh)


def anchor(spot: str, size: tuple[float, float], margin: float
           ) -> tuple[tuple[float, float], tuple[float, float]]:
    """The point a box at `spot` is pinned to and where on the box it is (the pivot,
    0..1 across and down): the box then lies at the spot whatever its size (imgui's
    windows know theirs only once drawn)."""
    w, h = size
    px = 0.0 if spot.endswith("left") else 1.0 if spot.endswith("right") else 0.5
    py = 1.0 if spot.startswith("bottom") else 0.0
    return (margin + px * (w - 2 * margin), margin + py * (h - 2 * margin)), (px, py)


def place(sizes: Callable[[str], tuple[float, float]], size: tuple[float, float],
          subjects: Sequence[Box], avoid: Sequence[Box] = (), margin: float = 0.0,
          current: str | None = None, spots: Sequence[str] = SPOTS) -> tuple[str, Box]:
    """The spot (and its box) where a box covers the least of the `subjects` (pixels)
    and of the boxes to `avoid` (other panels); `sizes(spot)`: the box's (w, h) there
    (narrower in a corner). Of equal ones, the `current` spot (no needless jumps), else
    the first of `spots`."""
    best: tuple[float, int, str, Box] | None = None
    for i, spot in enumerate(spots):
        b = spot_box(spot, sizes(spot), size, margin)
        cost = sum(shared_area(b, s) for s in subjects) + sum(shared_area(b, a) for a in avoid)
        rank = (cost, 0 if spot == current else 1 + i)
        if best is None or rank < best[:2]:
            best = (*rank, spot, b)
    assert best is not None, "no spots"
    return best[2], best[3]


def room(obstacles: Sequence[Box], subject: tuple[float, float], least: float = 0.5) -> Box:
    """The part of the picture (fractions, y down) to frame the subject in, out of the
    way of `obstacles` (the HUD, the panel: fractions too): of the rectangles between
    their edges that meet none of them, the one the subject's box (w, h, fractions of
    the picture) is largest in when scaled to fit; of equal ones the larger. The whole
    picture when nothing is in the way, or when the best room would show the subject
    at less than `least` of the size the whole picture gives it (a small window: the
    panels cover it rather than shrink it to nothing)."""
    w, h = max(subject[0], 1e-6), max(subject[1], 1e-6)
    boxes = [(max(0.0, x0), max(0.0, y0), min(1.0, x1), min(1.0, y1))
             for x0, y0, x1, y1 in obstacles]
    boxes = [b for b in boxes if b[2] > b[0] and b[3] > b[1]]
    whole: Box = (0.0, 0.0, 1.0, 1.0)
    if not boxes:
        return whole
    xs = sorted({0.0, 1.0, *(v for b in boxes for v in (b[0], b[2]))})
    ys = sorted({0.0, 1.0, *(v for b in boxes for v in (b[1], b[3]))})
    best: tuple[float, float, Box] | None = None
    for i, x0 in enumerate(xs):
        for x1 in xs[i + 1:]:
            for j, y0 in enumerate(ys):
                for y1 in ys[j + 1:]:
                    r = (x0, y0, x1, y1)
                    if any(shared_area(r, b) > 0.0 for b in boxes):
                        break  # taller rooms from this corner meet it too
                    rank = (min((x1 - x0) / w, (y1 - y0) / h), (x1 - x0) * (y1 - y0), r)
                    if best is None or rank[:2] > best[:2]:
                        best = rank
    if best is None or best[0] < least * min(1.0 / w, 1.0 / h):
        return whole
    return best[2]
