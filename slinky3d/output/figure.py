"""The paper-style figure: the Slinky's side view at a few instants.

Each half hoop is drawn as its bar (the zig-zag E_1 ... E_{N+1}), the anchored end
E_1 as a black square, the far end as an open circle and coils in contact (theta at
theta_min) as red dots where they touch. Panels: one small panel per instant on shared, equal-aspect
axes in cm, like the paper's time slices; overlay: all instants in one panel.
matplotlib loads when a figure is drawn, not when this module is imported.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from slinky3d.errors import SlinkyError
from slinky3d.model.chain import TOUCHING
from slinky3d.output.paths import cannot_write
from slinky3d.output.trajectory import Trajectory

LAYOUTS = ("panels", "overlay")
MAX_TIMES = 40
_NUM = r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*"


def parse_times(text: str) -> list[float]:
    """"start:stop:step" (stop included) or a comma list "0,0.2,0.5", in seconds."""
    m = re.fullmatch(_NUM + ":" + _NUM + ":" + _NUM, text)
    if m:
        start, stop, step = (float(g) for g in m.groups())
        if step <= 0 or stop < start:
            raise SlinkyError(f"--times {text}: needs start <= stop and a step > 0")
        count = (stop - start) / step + 1e-9
        if not math.isfinite(count):
            raise SlinkyError(f"--times {text}: at most {MAX_TIMES} instants, at finite times")
        n = math.floor(count) + 1
        if n > MAX_TIMES:
            raise SlinkyError(f"--times {text}: {n} instants, at most {MAX_TIMES}")
        times = [round(start + i * step, 12) for i in range(n)]
    else:
        parts = text.split(",")
        if not all(re.fullmatch(_NUM, p) for p in parts):
            raise SlinkyError(f"--times {text!r}: expected start:stop:step (e.g. 0:1.4:0.2) "
                              "or a comma list of times in seconds (e.g. 0,0.5,1)")
        times = sorted({float(p) for p in parts})
        if not math.isfinite(times[-1]):
            raise SlinkyError(f"--times {text}: the times must be finite numbers")
        if len(times) > MAX_TIMES:
            raise SlinkyError(f"--times: {len(times)} instants, at most {MAX_TIMES}")
    if times[0] < 0:
        raise SlinkyError(f"--times {text}: times must be >= 0")
    return times


def grid_fps(times: list[float], fps: float = 100.0) -> float:
    """A sample rate (a multiple of `fps`) that puts every time on the sample grid."""
    for mult in (1, 2, 4, 5, 10, 20, 50, 100):
        f = fps * mult
        if all(abs(t * f - round(t * f)) < 1e-6 for t in times):
            return f
    return fps * 10  # off-grid times take the nearest sample, at most 0.5 ms away


MARKS = ("coils in contact", "anchored end $E_1$", "far end $E_{N+1}$",
         "coils passing through (contacts off)")
MAX_WIDTH = 17.0  # in: wider rows wrap onto a new row
MIN_WIDTH = 6.6  # in: the legend's one row
# Margins and gaps in inches, so the equal-aspect panels fill the figure exactly.
LEFT, RIGHT, BOTTOM, TOP, WGAP, HGAP, SUPTITLE = 0.75, 0.25, 0.95, 0.4, 0.12, 0.5, 0.45


def combine(trajs: list[Trajectory], times: list[float]) -> Trajectory:
    """The samples nearest to `times` of several runs, their Slinkies side by side."""
    tracks = []
    for traj in trajs:
        if times[-1] > traj.t[-1] + 1e-9:
            raise SlinkyError(f"--times goes to {times[-1]:g} s but the run ends at "
                              f"{traj.t[-1]:g} s")
        idx = [traj.index(t) for t in times]
        tracks += [replace(tr, ends=tr.ends[idx], theta=tr.theta[idx],
                           theta_dot=tr.theta_dot[idx], energy=tr.energy[idx],
                           n_contacts=tr.n_contacts[idx]) for tr in traj.tracks]
    t = trajs[0].t[[trajs[0].index(t) for t in times]]
    return Trajectory(t=t, tracks=tuple(tracks), meta=trajs[0].meta)


def _label(params: dict, name: str, i: int, several: bool) -> str:
    if not several:
        return "_nolegend_"  # one Slinky needs no entry of its own
    return name or f"Slinky {i + 1} ({params.get('preset', '')})"


def _limits(traj: Trajectory, idx: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Shared axis limits (cm) over all that is drawn, widened to a readable aspect."""
    # the paper's side view: x and y of the end points
    pts = np.concatenate([tr.ends[idx][..., :2].reshape(-1, 2) for tr in traj.tracks]) * 100
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    pad = 0.06 * max(hi - lo) + 1.0
    lo, hi = lo - pad, hi + pad
    # A hanging steel Slinky is ten times taller than wide: give the panels some width.
    size = hi - lo
    want = np.array([max(size[0], 0.4 * size[1]), max(size[1], 0.3 * size[0])])
    mid = (lo + hi) / 2
    return mid - want / 2, mid + want / 2


EXTENSIONS = (".png", ".pdf", ".svg")  # the formats `figure --out` takes, by name


def draw(traj: Trajectory, out: str | Path, layout: str = "panels", title: str = "",
         names: list[str] | None = None, dpi: int = 150) -> Path:
    """Draw the side view at every sample of `traj` (see `combine`) and save it to `out`
    (png, pdf or svg)."""
    import matplotlib
    from matplotlib.figure import Figure

    if layout not in LAYOUTS:
        raise SlinkyError(f"unknown layout {layout!r} (known: {', '.join(LAYOUTS)})")
    idx = list(range(len(traj.t)))
    names = names or [""] * len(traj.tracks)
    lo, hi = _limits(traj, idx)
    aspect = (hi[0] - lo[0]) / (hi[1] - lo[1])
    several = len(traj.tracks) > 1
    top = TOP + (SUPTITLE if title else 0.0)

    if layout == "panels":
        n = len(idx)
        ph = 3.4 if n > 1 else 5.0
        pw = ph * aspect
        if pw > 5.0:
            pw, ph = 5.0, 5.0 / aspect
        ncols = max(1, min(n, int((MAX_WIDTH - LEFT - RIGHT + WGAP) / (pw + WGAP) + 1e-6)))
        nrows = math.ceil(n / ncols)
        ncols = math.ceil(n / nrows)  # balanced rows: 2 x 4, not 7 + 1
        left, right = LEFT, RIGHT
        W = left + right + ncols * pw + (ncols - 1) * WGAP
        if W < MIN_WIDTH:  # room for the legend's row: centre the panels
            left, right = left + (MIN_WIDTH - W) / 2, right + (MIN_WIDTH - W) / 2
            W = MIN_WIDTH
        H = BOTTOM + top + nrows * ph + (nrows - 1) * HGAP
        fig = Figure(figsize=(W, H), dpi=dpi)
        fig.subplots_adjust(left=left / W, right=1 - right / W, bottom=BOTTOM / H,
                            top=1 - top / H, wspace=WGAP / pw, hspace=HGAP / ph)
        grid = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False)
        axes = grid.ravel()
        for ax in axes[n:]:
            ax.set_visible(False)
        for ax, k in zip(axes, idx, strict=False):
            for i, tr in enumerate(traj.tracks):
                colour = f"C{i}" if several else "#1f3b73"
                # Runs drawn together alternate solid and dashed, so one on top of
                # the other still shows both.
                _slinky(ax, tr, k, colour, _label(tr.params, names[i], i, several),
                        "--" if i % 2 else "-")
            ax.set_title(f"t = {traj.t[k]:.2f} s", fontsize=10)
            _axes(ax, lo, hi)
        for ax in grid[:, 0]:
            ax.set_ylabel("y (cm)")
        for c in range(ncols):
            # The lowest visible panel of each column carries the x axis labels.
            last = axes[max(r * ncols + c for r in range(nrows) if r * ncols + c < n)]
            last.set_xlabel("x (cm)")
            last.xaxis.set_tick_params(labelbottom=True)
        handles: list[Any] = []
        labels: list[str] = []
        for ax in axes[:n]:  # marks that appear only later count too
            h, lab = ax.get_legend_handles_labels()
            handles, labels = handles + h, labels + lab
    else:
        ph = 7.0
        pw = min(ph * aspect, 10.0)
        ph = pw / aspect
        # The legend's column: wide enough for its longest label (about 0.065 in a letter).
        longest = max([len(MARKS[3])] + [len(_label({}, n, 0, True)) for n in names])
        legend_w = 0.8 + 0.065 * longest
        top -= TOP - 0.15  # no panel titles here
        W, H = LEFT + pw + legend_w, BOTTOM - 0.35 + top + ph
        fig = Figure(figsize=(W, H), dpi=dpi)
        fig.subplots_adjust(left=LEFT / W, right=(LEFT + pw) / W, bottom=(BOTTOM - 0.35) / H,
                            top=1 - top / H)
        ax = fig.subplots()
        cmap = matplotlib.colormaps["viridis"]
        styles = ["-", "--", ":", "-."]
        # Colour tells the time, line style the Slinky (one legend entry each).
        for i, tr in enumerate(traj.tracks if several else ()):
            ax.plot([], [], styles[i % 4], color="0.3", lw=0.8,
                    label=_label(tr.params, names[i], i, True))
        for j, k in enumerate(idx):
            time_colour = cmap(0.9 * j / max(1, len(idx) - 1))
            for i, tr in enumerate(traj.tracks):
                _slinky(ax, tr, k, time_colour, f"t = {traj.t[k]:.2f} s", styles[i % 4])
        _axes(ax, lo, hi)
        ax.set_xlabel("x (cm)")
        ax.set_ylabel("y (cm)")
        handles, labels = ax.get_legend_handles_labels()
    # One entry per label: the Slinkies or times first, then the markers.
    uniq: dict[str, Any] = {}
    for lab, h in zip(labels, handles, strict=True):
        uniq.setdefault(lab, h)
    order = sorted(uniq, key=lambda lab: MARKS.index(lab) + 1 if lab in MARKS else 0)
    if layout == "panels":
        fig.legend([uniq[k] for k in order], order, loc="lower center", ncols=len(order),
                   fontsize=9, frameon=False, bbox_to_anchor=(0.5, 0.0))
    else:
        ax.legend([uniq[k] for k in order], order, loc="center left", fontsize=9,
                  bbox_to_anchor=(1.03, 0.5), frameon=False)
    if title:
        fig.suptitle(title, fontsize=12, y=1 - 0.12 / H, va="top")
    out = Path(out)
    try:
        fig.savefig(out)
    except (OSError, ValueError) as e:
        raise cannot_write("", out, e) from None
    return out


def _axes(ax: Any, lo: np.ndarray, hi: np.ndarray) -> None:
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal", adjustable="box")
    ax.grid(True, color="0.9", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.tick_params(labelsize=8)


def _slinky(ax: Any, tr: Any, k: int, colour: Any, label: str, style: str = "-") -> None:
    """One Slinky at sample k: its bars, its ends and its touching coils."""
    E = tr.ends[k][:, :2] * 100
    ax.plot(E[:, 0], E[:, 1], style, color=colour, lw=0.8, label=label, zorder=2)
    tmin = tr.params.get("theta_min")
    if tmin is not None:
        # Joint j folds bars j-1 and j at E_j; at theta_min their free ends E_{j-1} and
        # E_{j+1} are one coil thickness apart: that is where the coils touch (the
        # inside of a bend), so the mark goes there rather than on the joint.
        n = tr.theta.shape[1]
        P = np.empty((n, 2))
        P[0] = E[1]  # joint 1 folds bar 1 against the holder
        P[1:] = 0.5 * (E[0 : n - 1] + E[2 : n + 1])
        if tr.params.get("contact") == "off":
            over = tr.theta[k] < tmin - TOUCHING
            ax.plot(P[over, 0], P[over, 1], "x", ms=3, mew=0.8, color="#9467bd",
                    label=MARKS[3] if over.any() else "_nolegend_", zorder=3)
        else:
            touching = tr.theta[k] <= tmin + TOUCHING
            ax.plot(P[touching, 0], P[touching, 1], "o", ms=2.2, color="#d62728", mec="none",
                    label=MARKS[0] if touching.any() else "_nolegend_", zorder=3)
    ax.plot(*E[0], "s", color="black", ms=5, label=MARKS[1], zorder=4)
    ax.plot(*E[-1], "o", mfc="white", mec="black", ms=5, mew=1.0, label=MARKS[2], zorder=4)
