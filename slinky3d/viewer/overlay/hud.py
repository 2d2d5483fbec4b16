"""The HUD: time, rates, contacts, messages, and the energy account as bars and a plot.

The bars follow PhET's "Masses and Springs": one vertical bar per kind of energy,
coloured, labelled with its value, on a common zero line, and the total last. The
gravitational energy is drawn relative to its value at the start of the run (so it
goes below the zero line as the Slinky falls) and the total with it; a bar that goes
below zero is a negative value. The scale only grows during a run, so a bar's height
always reads against the same ruler.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from slinky3d.model.levitation import hover_time
from slinky3d.runtime.snapshot import Energy
from slinky3d.viewer.overlay import placement
from slinky3d.viewer.overlay.caption import Caption
from slinky3d.viewer.overlay.response import Response, driven

# (label, colour) of each bar, in the order drawn; colours as PhET's energy bars.
BARS: tuple[tuple[str, tuple[float, float, float]], ...] = (
    ("kinetic", (0.30, 0.82, 0.35)),
    ("gravity", (0.35, 0.55, 0.95)),
    ("spring", (0.20, 0.85, 0.90)),
    ("thermal", (0.95, 0.45, 0.25)),  # dissipated by the joint dampers
    ("impacts", (0.85, 0.40, 0.85)),  # taken by the coil impacts
    ("total", (0.95, 0.95, 0.95)),
)
PLOT_SECONDS = 10.0  # s of history in the plot
PLOT_POINTS = 150  # points per line at most (~3 px apart): the plot's cost grows with them
HUD_ALPHA = 0.55  # background opacity
PLOT_MARGIN = 0.08  # of the plotted values' range, above and below them
WINDOW = "##hud"  # the HUD's imgui window (overlay.py caches it as a layer of its own)
HOVER_COLOUR = (1.0, 0.85, 0.3)  # the predicted end of pseudo-levitation
SLOT = 3.0  # width of a bar's column, in font sizes (its labels are 0.75 of one)


def bar_values(energy: Energy, start: Energy | None) -> tuple[float, ...]:
    """The bars' values, J, in BARS order: gravity relative to `start` (the run's
    first account), the total with it."""
    g0 = start.gravity if start is not None else 0.0
    gravity = energy.gravity - g0
    return (energy.kinetic, gravity, energy.spring, energy.damping, energy.impacts,
            energy.total - g0)


def bar_spans(values: tuple[float, ...], top: float, bottom: float,
              height: float) -> list[tuple[float, float]]:
    """Screen rows (y0 <= y1, y down) of each bar: `top` and `bottom` are the largest
    positive and negative values the ruler holds, `height` its pixels; the zero line
    sits between them at y = height * top / (top + bottom)."""
    span = max(top + bottom, 1e-30)
    zero = height * top / span
    out = []
    for v in values:
        y = zero - v / span * height
        out.append((min(y, zero), max(y, zero)))
    return out


def count_text(n: int, noun: str) -> str:
    """A count and its noun: 1 contact, 2 contacts, 0 contacts."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def asleep_text(asleep: list[bool]) -> str:
    """What the HUD says of sleeping Slinkies: "asleep", "2 of 3 asleep", or nothing."""
    n = sum(asleep)
    if not n:
        return ""
    return "asleep" if n == len(asleep) else f"{n} of {len(asleep)} asleep"


def plot_range(series: list[np.ndarray]) -> tuple[float, float]:
    """The energy plot's y range: every plotted value and zero inside it, with a margin
    (ImPlot's own fit lags a frame behind, and a flat line has no range to fit)."""
    values = [np.asarray(y)[np.isfinite(y)] for y in series]
    lo = min([0.0, *(float(v.min()) for v in values if v.size)])
    hi = max([0.0, *(float(v.max()) for v in values if v.size)])
    margin = PLOT_MARGIN * (hi - lo) if hi > lo else 1.0
    return lo - margin, hi + margin


def scale_text(scale: float) -> str:
    """A time scale as people say it: 1, 1/2, ... 1/32, 2, 4."""
    if scale >= 1 or scale <= 0:
        return f"{scale:g}"
    n = 1 / scale
    return f"1/{round(n)}" if abs(n - round(n)) < 1e-6 * n else f"{scale:.3g}"


def rate_text(preparing: bool, factor: float) -> str:
    """The real-time factor as the HUD shows it; "preparing" before the solver's first
    step (a factor then would be a made-up 1.00 while the kernels compile)."""
    return "preparing" if preparing else f"real time \u00d7{factor:.2f}"


def unit(ruler: float) -> tuple[str, float]:
    """The energy unit that suits a ruler (mJ below 1 J) and its size in J."""
    return ("mJ", 1e-3) if ruler < 1.0 else ("J", 1.0)


def joules(v: float, ruler: float) -> str:
    """An energy in the unit that suits the ruler."""
    name, size = unit(ruler)
    digits = 2 if size == 1.0 else 1 if ruler < 0.1 else 0  # about three figures
    return f"{v / size:.{digits}f} {name}"


def hover_marks(scene: Any) -> list[float]:
    """The simulated times (s) at which the bottom of each dropped Slinky of the scene is
    predicted to start falling (model/levitation.py): a hanging Slinky whose top is let
    go at a time."""
    out = []
    for s in getattr(scene, "slinkies", ()):
        a = s.anchor
        if (s.shape == "hanging" and a.condition == "released" and s.far.condition == "free"
                and math.isfinite(a.release_time)):
            out.append(a.release_time + hover_time(s.params, s.q0))
    return out


@dataclass
class Ruler:
    """The bars' scale: the largest positive and negative values seen in this run."""

    top: float = 0.0
    bottom: float = 0.0

    def fit(self, values: tuple[float, ...]) -> None:
        self.top = max(self.top, *values, 0.0)
        self.bottom = max(self.bottom, *(-v for v in values), 0.0)
        # Never zero: a still Slinky's bars are flat, not divided by zero.
        if self.top + self.bottom == 0.0:
            self.top = 1e-6


def window_rect(imgui: Any) -> tuple[float, float, float, float]:
    """The current imgui window's (x0, y0, x1, y1), screen pixels, y down."""
    (x, y), (w, h) = imgui.get_window_pos(), imgui.get_window_size()
    return (x, y, x + w, y + h)


class Hud:
    """Draws the HUD window (top left, or top right when the Slinkies are at the top
    left). Immediate mode: `draw` once per frame."""

    def __init__(self, font_px: float):
        self.px = font_px
        self.ruler = Ruler()
        self._start: Energy | None = None  # the run's first account, when the app gives none
        self._t_last = -math.inf
        # Where the last frame drew each bar, (x0, y0, x1, y1) in screen pixels: tests
        # and the window engineer's pointer checks read it.
        self.bar_rects: dict[str, tuple[float, float, float, float]] = {}
        self.values: tuple[float, ...] = ()
        self.rect = (0.0, 0.0, 0.0, 0.0)  # the HUD window's, last frame
        self.spot: str | None = None  # its corner (placement.SPOTS), last frame
        self.caption = Caption(font_px)
        self._scene: Any = None  # the scene the marks and responses below are for
        self.hover: list[float] = []  # predicted ends of pseudo-levitation (s)
        self.responses: list[tuple[int, Response]] = []  # (Slinky, its response curve)

    def draw(self, view: Any, imgui: Any, implot: Any) -> None:
        """One frame of the HUD for an `OverlayView`."""
        snap = view.snapshot
        replaying = view.replay is not None
        self._follow(getattr(view, "scene", None), snap, replaying)
        if snap.t < self._t_last and not replaying:  # a reset or a new scene: a new run
            self._start = None
            self.ruler = Ruler()
        self._t_last = snap.t if not replaying else self._t_last
        flags = (imgui.WindowFlags_.no_decoration | imgui.WindowFlags_.always_auto_resize
                 | imgui.WindowFlags_.no_saved_settings | imgui.WindowFlags_.no_inputs
                 | imgui.WindowFlags_.no_focus_on_appearing | imgui.WindowFlags_.no_nav
                 | imgui.WindowFlags_.no_move)
        pad = 0.5 * self.px
        io = imgui.get_io()
        size = (io.display_size.x, io.display_size.y)
        subjects = placement.scaled(getattr(view, "subject", ()), size)
        # The HUD's top corner where the Slinkies are not (its size: last frame's).
        hud_box = (self.rect[2] - self.rect[0], self.rect[3] - self.rect[1])
        self.spot, _ = placement.place(lambda spot: hud_box, size, subjects, margin=pad,
                                       current=self.spot, spots=("top-left", "top-right"))
        point, pivot = placement.anchor(self.spot, size, pad)
        imgui.set_next_window_pos(point, imgui.Cond_.always, pivot)
        imgui.set_next_window_bg_alpha(HUD_ALPHA)
        imgui.begin(WINDOW, None, flags)
        # Under every other window, as overlay/cache.py lays its layers over each other.
        imgui.internal.bring_window_to_display_back(imgui.internal.get_current_window())
        self._text(view, imgui)
        if view.energy is not None:
            if self._start is None:
                self._start = view.energy
            start = view.energy_start if view.energy_start is not None else self._start
            self.values = bar_values(view.energy, start)
            self.ruler.fit(self.values)
            self._bars(imgui)
            if view.energy_history is not None and len(view.energy_history) > 1:
                self._plot(np.asarray(view.energy_history, dtype=float), start, imgui, implot)
        for i, response in self.responses:
            self._response_plot(i, response, imgui, implot)
        self.rect = window_rect(imgui)
        imgui.end()
        self.caption.draw(self._scene, imgui, subjects, [self.rect])

    def _follow(self, scene: Any, snap: Any, replaying: bool) -> None:
        """The scene's predicted hover times and the driven Slinkies' responses."""
        if scene is not self._scene:
            self._scene = scene
            self.hover = hover_marks(scene)
            self.responses = [(i, Response(m)) for i, m in driven(scene)]
        if replaying:
            return
        for i, response in self.responses:
            if i < len(snap.slinkies) and snap.slinkies[i].anchor_held:
                response.add(snap.t, float(snap.slinkies[i].ends[-1][1]))

    # -- parts ---------------------------------------------------------------------
    def _text(self, view: Any, imgui: Any) -> None:
        snap = view.snapshot
        contacts = sum(int(np.count_nonzero(s.contact)) for s in snap.slinkies)
        line = f"t = {snap.t:7.3f} s    time scale {scale_text(view.time_scale)}"
        if view.paused:
            line += "    PAUSED"
        imgui.text(line)
        sleeping = asleep_text([s.asleep for s in snap.slinkies])
        scale = "" if view.render_scale is None else f"3D at {100 * view.render_scale:.0f} %    "
        imgui.text(f"{rate_text(view.preparing, snap.real_time_factor)}    {view.fps:3.0f} FPS    "
                   + scale + count_text(contacts, "contact")
                   + (f"    {sleeping}" if sleeping else "")
                   + ("    side view" if view.side_view else ""))
        if snap.behind:
            imgui.text_colored((1.0, 0.7, 0.3, 1.0), "behind real time: the machine can't "
                                                     "keep up")
        status = snap.status
        if snap.rollbacks and not status:
            status = f"{snap.rollbacks} roll-backs"
        if status:
            imgui.text_colored((1.0, 0.6, 0.3, 1.0), status)
        if view.message:
            imgui.text_colored((1.0, 0.95, 0.5, 1.0), view.message)
        for t in self.hover:
            imgui.text_colored((*HOVER_COLOUR, 1.0), f"bottom predicted to fall at t = {t:.3f} s")
        for _, r in self.responses:
            if r.amp:
                imgui.text(f"drive {r.freq[-1]:.2f} Hz    bottom amplitude "
                           f"{r.amp[-1] * 1e3:.1f} mm")

    def _bars(self, imgui: Any) -> None:
        px = self.px
        slot, width, height = SLOT * px, 1.4 * px, 5.5 * px
        x0, y0 = imgui.get_cursor_screen_pos()
        y0 += 0.3 * px
        draw = imgui.get_window_draw_list()
        spans = bar_spans(self.values, self.ruler.top, self.ruler.bottom, height)
        zero = y0 + height * self.ruler.top / (self.ruler.top + self.ruler.bottom)
        total_w = slot * len(BARS)
        draw.add_line((x0, zero), (x0 + total_w, zero),
                      imgui.get_color_u32((1.0, 1.0, 1.0, 0.6)), 1.0)
        small = 0.75 * px
        imgui.push_font(None, small)
        ruler = max(self.ruler.top, self.ruler.bottom)
        self.bar_rects = {}
        for i, ((name, rgb), (a, b), v) in enumerate(zip(BARS, spans, self.values,
                                                         strict=True)):
            bx = x0 + i * slot + (slot - width) / 2
            rect = (bx, y0 + a, bx + width, y0 + b)
            self.bar_rects[name] = rect
            if b - a >= 0.5:
                draw.add_rect_filled(rect[:2], rect[2:], imgui.get_color_u32((*rgb, 0.95)))
            for k, text in enumerate((name, joules(v, ruler))):
                tw = imgui.calc_text_size(text).x
                draw.add_text((x0 + i * slot + (slot - tw) / 2, y0 + height + 0.2 * px
                               + k * 1.05 * small), imgui.get_color_u32((*rgb, 1.0)), text)
        imgui.pop_font()
        imgui.dummy((total_w, height + 0.5 * px + 2.2 * small))

    def _plot(self, rows: np.ndarray, start: Energy | None, imgui: Any, implot: Any) -> None:
        if rows.ndim != 2 or rows.shape[1] < 6:
            return
        t_end = rows[-1, 0]
        rows = rows[rows[:, 0] >= t_end - PLOT_SECONDS]
        rows = rows[:: max(1, len(rows) // PLOT_POINTS)]
        t = np.ascontiguousarray(rows[:, 0])
        g0 = start.gravity if start is not None else 0.0
        name, size = unit(max(self.ruler.top, self.ruler.bottom))
        gravity = rows[:, 2] - g0
        series = (rows[:, 1], gravity, rows[:, 3], rows[:, 4], rows[:, 5],
                  rows[:, 1:6].sum(axis=1) - g0)
        w = SLOT * self.px * len(BARS)
        flags = (implot.Flags_.no_title | implot.Flags_.no_legend | implot.Flags_.no_menus
                 | implot.Flags_.no_box_select | implot.Flags_.no_mouse_text)
        imgui.push_font(None, 0.7 * self.px)
        if implot.begin_plot("##energy", (w, 5.0 * self.px), flags):
            ys = [np.ascontiguousarray(y / size) for y in series]
            lo, hi = plot_range(ys)
            implot.setup_axes("t (s)", name)
            implot.setup_axis_limits(implot.ImAxis_.x1, t_end - PLOT_SECONDS, t_end,
                                     implot.Cond_.always)
            implot.setup_axis_limits(implot.ImAxis_.y1, lo, hi, implot.Cond_.always)
            for (label, rgb), y in zip(BARS, ys, strict=True):
                spec = implot.Spec(line_color=(*rgb, 1.0), line_weight=2.0)
                implot.plot_line(label, t, y, spec)
            if self.hover:
                implot.plot_inf_lines("hover", np.array(self.hover, dtype=float),
                                      implot.Spec(line_color=(*HOVER_COLOUR, 1.0)))
            implot.end_plot()
        imgui.pop_font()

    def _response_plot(self, i: int, response: Response, imgui: Any, implot: Any) -> None:
        """The bottom end's amplitude against the driving frequency (viewer/overlay/response.py)."""
        flags = (implot.Flags_.no_title | implot.Flags_.no_legend | implot.Flags_.no_menus
                 | implot.Flags_.no_box_select | implot.Flags_.no_mouse_text)
        imgui.push_font(None, 0.7 * self.px)
        if implot.begin_plot(f"##response{i}", (SLOT * self.px * len(BARS), 5.0 * self.px),
                             flags):
            implot.setup_axes("drive frequency (Hz)", "bottom, mm")
            lo, hi = response.frequency_range()
            implot.setup_axis_limits(implot.ImAxis_.x1, lo, hi, implot.Cond_.always)
            amp = np.asarray(response.amp, dtype=float) * 1e3
            top = float(amp.max()) * (1 + PLOT_MARGIN) if amp.size else 1.0
            implot.setup_axis_limits(implot.ImAxis_.y1, 0.0, max(top, 1.0), implot.Cond_.always)
            if amp.size:
                implot.plot_line("amplitude", np.asarray(response.freq, dtype=float), amp,
                                 implot.Spec(line_color=(1.0, 0.55, 0.2, 1.0), line_weight=2.0))
            implot.end_plot()
        imgui.pop_font()
