"""The contact timeline: which joints are closed against time, with the collapse front
as a line, like the collision diagrams of the "three balls" lesson (sequential pairwise
impacts show as a staircase, simultaneous ones as a vertical edge).

Data (numpy only): the snapshots of the last SECONDS up to the time shown, one column
per snapshot; where there are more snapshots than COLUMNS, consecutive ones merge into
one column in which a joint counts as closed if it was closed in any of them (a brief
impact never disappears). Each column spans from its first snapshot to the next
column's. Drawn (ImPlot, imgui-bundle) as one plot per Slinky: time across, joint
index down (joint 0, at the anchored end, on top), each run of closed joints in a
column one filled rectangle (a heat map of two values, run-length encoded: a few
hundred rectangles where a cell per joint would be tens of thousands), the front
(collapse_front.py) as a line over it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from slinky3d.runtime.snapshot import Snapshot
from slinky3d.viewer.marks.collapse_front import FRONT_COLOUR, fronts
from slinky3d.viewer.overlay import placement

SECONDS = 1.5  # simulated s shown (a drop collapses in 0.2-0.3 s)
COLUMNS = 200  # time columns at most
MAX_RECTS = 4000  # rectangles drawn per plot at most: columns merge further beyond it
WINDOW = "##hud/timeline"  # its own window, cached in the HUD's layer (overlay._layer):
# it changes as often as the HUD's figures
CLOSED_COLOUR = (0.35, 0.62, 1.0, 0.95)
ALPHA = 0.55  # the window's background, as the HUD's


@dataclass(frozen=True)
class Timeline:
    """One Slinky's closed joints against time."""

    starts: np.ndarray  # (T,) s, where each column begins
    stops: np.ndarray  # (T,) s, where it ends (the next column's start, the last: t_end)
    closed: np.ndarray  # (T, N) bool
    front: np.ndarray  # (T,) the collapse front's joint at the column's last snapshot, nan
    t_end: float
    seconds: float

    @property
    def joints(self) -> int:
        return int(self.closed.shape[1])

    def runs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(column, first joint, last joint + 1) of every run of closed joints."""
        c = self.closed
        pad = np.zeros((len(c), 1), bool)
        d = np.diff(np.c_[pad, c, pad].astype(np.int8), axis=1)
        col, first = np.nonzero(d == 1)
        _, stop = np.nonzero(d == -1)  # row-major: the same order as the starts
        return col, first, stop


def build(snaps: list[Snapshot], slinky: int, t_end: float, seconds: float = SECONDS,
          columns: int = COLUMNS) -> Timeline | None:
    """Slinky `slinky`'s timeline from snapshots (oldest first) over [t_end - seconds,
    t_end]; None when none of them falls there."""
    t0 = t_end - seconds
    picked = [s for s in snaps if t0 <= s.t <= t_end and slinky < len(s.slinkies)]
    if picked:
        n = picked[-1].slinkies[slinky].N
        picked = [s for s in picked if s.slinkies[slinky].N == n]
    if not picked:
        return None
    t = np.array([s.t for s in picked])
    rows = np.array([s.slinkies[slinky].contact for s in picked], bool)
    group = np.minimum(((t - t0) / (seconds / columns)).astype(int), columns - 1)
    first = np.r_[0, np.flatnonzero(np.diff(group)) + 1]
    last = np.r_[first[1:] - 1, len(t) - 1]
    closed = np.logical_or.reduceat(rows, first, axis=0)
    starts = t[first]
    return Timeline(starts=starts, stops=np.r_[starts[1:], max(t_end, t[-1])],
                    closed=closed, front=fronts(rows[last]), t_end=t_end, seconds=seconds)


def coarsen(tl: Timeline, max_rects: int = MAX_RECTS) -> Timeline:
    """The same timeline with columns merged in pairs until its runs number at most
    `max_rects` (a Slinky rippling with contacts all along would otherwise cost many)."""
    while len(tl.runs()[0]) > max_rects and len(tl.starts) > 1:
        first = np.arange(0, len(tl.starts), 2)
        last = np.minimum(first + 1, len(tl.starts) - 1)
        tl = Timeline(starts=tl.starts[first], stops=tl.stops[last],
                      closed=np.logical_or.reduceat(tl.closed, first, axis=0),
                      front=tl.front[last], t_end=tl.t_end, seconds=tl.seconds)
    return tl


def draw(timelines: list[Timeline | None], font_px: float, imgui: Any, implot: Any,
         subjects: Sequence[placement.Box] = (), avoid: Sequence[placement.Box] = ()
         ) -> None:
    """The timeline window (bottom left, or in another corner where it covers less of
    the `subjects`, the Slinkies' boxes, and of the boxes to `avoid`, the HUD and the
    caption; imgui's pixels): one plot per Slinky that has a timeline."""
    shown = [tl for tl in timelines if tl is not None]
    if not shown:
        return
    io = imgui.get_io()
    pad = 0.5 * font_px
    size = (io.display_size.x, io.display_size.y)
    box = (22.0 * font_px, 10.0 * font_px)  # about its size: 20 px wide plots, 8 high
    spot, _ = placement.place(lambda s: box, size, subjects, avoid, margin=pad,
                              spots=("bottom-left", "bottom-right", "top-right", "top-left"))
    point, pivot = placement.anchor(spot, size, pad)
    imgui.set_next_window_pos(point, imgui.Cond_.always, pivot)
    imgui.set_next_window_bg_alpha(ALPHA)
    f = imgui.WindowFlags_
    imgui.begin(WINDOW, None, f.no_decoration | f.always_auto_resize | f.no_saved_settings
                | f.no_inputs | f.no_focus_on_appearing | f.no_nav | f.no_move)
    imgui.push_font(None, 0.7 * font_px)
    imgui.text_colored(CLOSED_COLOUR, "closed joints")
    imgui.same_line()
    imgui.text_colored(FRONT_COLOUR, "collapse front")
    height = max(4.0, 8.0 / len(shown)) * font_px
    for i, tl in enumerate(shown):
        _plot(f"##timeline{i}", tl, (20.0 * font_px, height), imgui, implot)
    imgui.pop_font()
    imgui.end()


def _plot(name: str, tl: Timeline, size: tuple[float, float], imgui: Any, implot: Any) -> None:
    flags = (implot.Flags_.no_title | implot.Flags_.no_legend | implot.Flags_.no_menus
             | implot.Flags_.no_box_select | implot.Flags_.no_mouse_text
             | implot.Flags_.no_inputs)
    if not implot.begin_plot(name, size, flags):
        return
    implot.setup_axis(implot.ImAxis_.x1, "t (s)")
    implot.setup_axis(implot.ImAxis_.y1, "joint", implot.AxisFlags_.invert)
    implot.setup_axis_limits(implot.ImAxis_.x1, tl.t_end - tl.seconds, tl.t_end,
                             implot.Cond_.always)
    # joints 0..N-1, and the far end N where the front ends when every joint is closed
    implot.setup_axis_limits(implot.ImAxis_.y1, -0.5, tl.joints + 0.5, implot.Cond_.always)
    implot.setup_finish()
    tl = coarsen(tl)
    col, first, stop = tl.runs()
    if len(col):
        # plot -> pixels is affine on linear axes: two points fix it
        p0, p1 = implot.plot_to_pixels(0.0, 0.0), implot.plot_to_pixels(1.0, 1.0)
        ax, bx, ay, by = p0.x, p1.x - p0.x, p0.y, p1.y - p0.y
        x0, x1 = ax + bx * tl.starts[col], ax + bx * tl.stops[col]
        y0, y1 = ay + by * (first - 0.5), ay + by * (stop - 0.5)
        draw_list = implot.get_plot_draw_list()
        colour = imgui.get_color_u32(CLOSED_COLOUR)
        implot.push_plot_clip_rect()
        for a, b, c, d in zip(x0.tolist(), np.minimum(y0, y1).tolist(),
                              np.maximum(x1, x0 + 1.0).tolist(), np.maximum(y0, y1).tolist(),
                              strict=True):
            draw_list.add_rect_filled((a, b), (c, d), colour)
        implot.pop_plot_clip_rect()
    ok = np.isfinite(tl.front)
    if np.any(ok):
        spec = implot.Spec(line_color=FRONT_COLOUR, line_weight=2.0)
        xs = np.ascontiguousarray(0.5 * (tl.starts + tl.stops), dtype=float)
        implot.plot_line("front", xs, np.ascontiguousarray(tl.front, dtype=float), spec)
    implot.end_plot()
