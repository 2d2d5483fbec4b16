"""`slinky3d sweep`: run a grid of scenes and map how far the Slinky walks (docs/sweep.md).

A sweep spec (TOML) names a base scene, a duration and a grid of `--set` overrides; each
grid point is one scene, run headless with the real-time solver, its walk measured by
`slinky3d.output.walk`. The points run on a local process pool or on a Dask distributed
cluster; each carries the scene's TOML text, so a worker needs slinky3d but no files.
A point's result depends on the point alone (the solver is deterministic), never on
where or in which order it ran: the table is the same from any pool.
"""

from __future__ import annotations

import csv
import itertools
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from slinky3d.errors import SlinkyError, note
from slinky3d.output import DEFAULT_FPS, walk
from slinky3d.output.paths import check_folder, check_output
from slinky3d.resources import data_dir, shipped_names, sweep_path
from slinky3d.scene.validate import Context, Table, did_you_mean, type_name

SPEC_KEYS = ("title", "scene", "duration", "fps", "set", "out", "grid", "map", "walk")
MAP_KEYS = ("x", "y", "panels")
WALK_KEYS = ("tol", "dwell")
MAP_SLOTS = MAP_KEYS  # the picture shows at most this many axes
MAX_FPS = 10000.0
MAX_POINTS = 100_000  # a guard against a typo that multiplies the grid
CONNECT_TIMEOUT = 20.0  # s: how long to wait for a Dask scheduler
CLUSTER_HINT = "pip install 'slinky3d[cluster]'"
OK, INVALID, ERROR, ROLLED_BACK = "ok", "invalid", "error", "rolled back"


@dataclass(frozen=True)
class Point:
    """One grid point: everything a worker needs to run it (picklable, no files)."""

    index: int  # place in the grid (row order of the table)
    values: tuple[Any, ...]  # one per axis
    overrides: tuple[str, ...]  # the spec's fixed `set`, then this point's KEY=VALUE
    scene_text: str
    scene_where: str  # the scene's file, for error messages
    scene_stem: str
    duration: float | None  # s; None: the point's scene's own
    fps: float
    tol: float
    dwell: float


@dataclass(frozen=True)
class Outcome:
    """A point's result: the table's columns after the axis values."""

    index: int
    status: str  # "ok", "rolled back (...)", "invalid: <reason>" or "error: <reason>"
    steps_walked: int | None = None
    start_step: int | None = None
    lowest_step: int | None = None
    flips: int | None = None
    final_time: float | None = None  # s of simulated time reached
    rollbacks: int | None = None  # how often the divergence guard rolled the solver back
    state_hash: str = ""  # of the final state (Simulation.state_hash), 16 hex digits
    real_time_factor: float | None = None  # simulated time / wall time of the stepping
    runtime_s: float | None = None  # wall time of the point: loading and running


# Columns that vary from run to run (wall clock); every other one is deterministic.
TIMING = ("real_time_factor", "runtime_s")
RESULT_COLUMNS = tuple(f.name for f in fields(Outcome) if f.name != "index")


@dataclass(frozen=True)
class Spec:
    """A validated sweep spec."""

    path: str
    title: str
    stem: str
    scene_text: str
    scene_where: str
    scene_stem: str
    duration: float | None
    fps: float
    fixed: tuple[str, ...]
    axes: tuple[tuple[str, tuple[Any, ...]], ...]  # (key, values) in the grid's order
    out: str  # output prefix: PREFIX.csv, PREFIX.png
    x: str  # the map's axes (grid keys)
    y: str | None
    panels: str | None
    tol: float
    dwell: float

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(k for k, _ in self.axes)

    def points(self) -> list[Point]:
        """The grid's points, the last axis varying fastest."""
        out = []
        for i, values in enumerate(itertools.product(*(v for _, v in self.axes))):
            sets = tuple(f"{k}={toml_value(v)}" for k, v in zip(self.keys, values, strict=True))
            out.append(Point(index=i, values=values, overrides=self.fixed + sets,
                             scene_text=self.scene_text, scene_where=self.scene_where,
                             scene_stem=self.scene_stem, duration=self.duration,
                             fps=self.fps, tol=self.tol, dwell=self.dwell))
        return out


def toml_value(v: Any) -> str:
    """A grid value as the TOML text of a `--set` (floats round-trip exactly)."""
    import tomli_w

    return tomli_w.dumps({"v": v}).partition("=")[2].strip()


# ----------------------------------------------------------------------------- spec


def read_spec(name: str | Path, duration: float | None = None) -> Spec:
    """Read and validate a sweep spec: a path, or the name of a shipped one ("walking").

    The base scene is loaded once (with the fixed overrides) so that a bad scene is a
    bad spec; each grid point's own overrides are checked when it runs."""
    import tomllib

    path = sweep_path(str(name))
    if not path.is_file():
        names = shipped_names("sweeps")
        what = ("is a directory, not a sweep spec" if path.is_dir()
                else "no such sweep spec" + did_you_mean(Path(name).stem, names))
        raise SlinkyError(f"{name}: {what} (shipped sweeps: {', '.join(names)})")
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise SlinkyError(f"{path}: cannot read: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise SlinkyError(f"{path}: invalid TOML: {e}") from None
    ctx = Context(str(path))
    t = Table(ctx, doc, "", SPEC_KEYS)
    fixed = _strings(t, "set")
    axes = _grid(ctx, doc.get("grid"), fixed)
    n = math.prod(len(v) for _, v in axes)
    if n > MAX_POINTS:
        t.fail("grid", f"has {n} points, more than {MAX_POINTS}")
    x, y, panels = _map(t, [k for k, _ in axes])
    wt = t.table("walk", WALK_KEYS)
    tol = wt.number("tol", walk.TOL, lo=0.0, hi=1.0, open_lo=True)
    dwell = wt.number("dwell", walk.DWELL, lo=0.0)
    if duration is None:
        duration = t.number("duration", None, lo=0.0, open_lo=True)
    fps = t.number("fps", DEFAULT_FPS, lo=0.0, hi=MAX_FPS, open_lo=True)
    if not t.has("scene"):
        t.fail("scene", "missing: the base scene (a shipped scene's name, or a path "
                        "relative to this file)")
    scene = _scene_file(t, path.parent)
    text = scene.read_text(encoding="utf-8")
    from slinky3d.scene import loader

    loader.loads(text, str(scene), fixed, stem=scene.stem)  # a bad base scene: a bad spec
    return Spec(path=str(path), title=t.string("title", path.stem), stem=path.stem,
                scene_text=text, scene_where=str(scene), scene_stem=scene.stem,
                duration=duration, fps=fps, fixed=fixed, axes=axes,
                out=t.string("out", path.stem) or path.stem, x=x, y=y, panels=panels,
                tol=tol, dwell=dwell)


def _strings(t: Table, k: str) -> tuple[str, ...]:
    v = t.data.get(k, [])
    if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
        t.fail(k, f"must be an array of KEY=VALUE strings, not {type_name(v)}")
    from slinky3d.scene.overrides import parse_assignment

    for s in v:
        try:
            parse_assignment(s)
        except SlinkyError:
            t.fail(k, f"{s!r} is not KEY=VALUE with a dotted KEY, e.g. slinky.C_D=0")
    return tuple(v)


def _grid(ctx: Context, raw: Any, fixed: Sequence[str]) -> tuple[tuple[str, tuple], ...]:
    if raw is None:
        ctx.fail("grid", "missing: a [grid] table of axes, e.g. "
                         "\"world.stairs.height\" = [0.05, 0.08]")
    g = Table(ctx, raw, "grid", tuple(raw) if isinstance(raw, dict) else ())
    if not g.data:
        ctx.fail("grid", "has no axes: give at least one, e.g. "
                         "\"world.stairs.height\" = [0.05, 0.08]")
    set_keys = {s.partition("=")[0].strip() for s in fixed}
    axes = []
    for k, values in g.data.items():
        where = f'grid."{k}"'
        parts = k.split(".")
        if any(not p.strip() or p != p.strip() for p in parts):
            ctx.fail(where, "must be a dotted scene key, e.g. world.stairs.height")
        if k in set_keys:
            ctx.fail(where, "is also in `set`: give a key one place only")
        if not isinstance(values, list) or not values:
            ctx.fail(where, f"must be a non-empty array of values, not {_what(values)}")
        for i, v in enumerate(values):
            if isinstance(v, list | dict) or not isinstance(v, bool | int | float | str):
                ctx.fail(f"{where}[{i}]", f"must be a number, a string or a boolean, "
                                          f"not {type_name(v)}")
            if isinstance(v, float) and not math.isfinite(v):
                ctx.fail(f"{where}[{i}]", f"must be a finite number, not {v}")
        seen = [(isinstance(v, bool), v) for v in values]  # 1 and 1.0 alike, true apart
        for i, v in enumerate(values):
            if seen[i] in seen[:i]:
                ctx.fail(f"{where}[{i}]", f"repeats the value {v!r}")
        axes.append((k, tuple(values)))
    return tuple(axes)


def _what(v: Any) -> str:
    return "an empty array" if v == [] else type_name(v)


def _map(t: Table, keys: list[str]) -> tuple[str, str | None, str | None]:
    """The picture's x, y and panel axes: as named in [map], the rest in grid order."""
    mt = t.table("map", MAP_KEYS)
    slots: dict[str, str | None] = {}
    for slot in MAP_SLOTS:
        if mt.has(slot):
            k = mt.string(slot, "")
            if k not in keys:
                mt.fail(slot, f"'{k}' is not an axis of [grid] (axes: {', '.join(keys)})")
            if k in slots.values():
                mt.fail(slot, f"'{k}' is already shown on another of x, y, panels")
            slots[slot] = k
        else:
            slots[slot] = None
    rest = [k for k in keys if k not in slots.values()]
    for slot in MAP_SLOTS:
        if slots[slot] is None and rest:
            slots[slot] = rest.pop(0)
    if rest:
        t.fail("grid", f"has {len(keys)} axes; the map shows at most {len(MAP_SLOTS)} "
                       f"(x, y and panels): split the sweep")
    x = slots["x"]
    assert x is not None  # the grid has at least one axis
    return x, slots["y"], slots["panels"]


def _scene_file(t: Table, here: Path) -> Path:
    """The base scene: a path relative to the spec's folder (or absolute), else the
    name of a shipped scene."""
    name = t.string("scene", "")
    if name:
        for p in (here / name, data_dir("scenes") / (name if name.endswith(".toml")
                                                       else name + ".toml")):
            if p.is_file():
                return p
    names = shipped_names("scenes")
    t.fail("scene", f"no scene file '{name}' beside the spec nor a shipped scene of that "
                    f"name{did_you_mean(Path(name).stem, names)} (shipped: {', '.join(names)})")


# ------------------------------------------------------------------------------ run

_warm = False


def run_point(point: Point) -> Outcome:
    """Load and run one grid point; its scene being invalid is an outcome, not an error."""
    global _warm
    from slinky3d.dynamics.solver import warm_up
    from slinky3d.scene import loader

    if not _warm:  # once per worker: load the compiled kernels, outside the timings
        warm_up()
        _warm = True
    t_start = time.perf_counter()
    try:
        sc = loader.loads(point.scene_text, point.scene_where, point.overrides,
                          stem=point.scene_stem)
    except SlinkyError as e:
        return Outcome(point.index, f"{INVALID}: {_line(e)}",
                       runtime_s=time.perf_counter() - t_start)
    try:
        import numpy as np

        from slinky3d.runtime.simulation import Simulation, grid_step

        duration = sc.duration if point.duration is None else point.duration
        n = int(math.floor(duration * point.fps + 1e-9)) + 1
        h, per = grid_step(sc.dt, 1.0 / point.fps)
        sim = Simulation(sc, h)
        s = sim.slinkies[0]  # the walker: the scene's first Slinky
        ends = np.empty((n, 2, 2))
        t0 = time.perf_counter()
        for k in range(n):
            if k:
                sim.step(per)
            xy = s.ends()
            ends[k, 0], ends[k, 1] = xy[0], xy[-1]
        wall = time.perf_counter() - t0
        w = walk.measure(sc.world.stairs, np.arange(n) / point.fps, ends[:, 0], ends[:, 1],
                         margin=s.p.R, tol=point.tol, dwell=point.dwell)
    except Exception as e:  # a solver failure is one point's result, not the sweep's end
        return Outcome(point.index, f"{ERROR}: {type(e).__name__}: {_line(e)}",
                       runtime_s=time.perf_counter() - t_start)
    status = OK if not sim.rollbacks else f"{ROLLED_BACK} ({sim.status})"
    return Outcome(point.index, status, steps_walked=w.steps, start_step=w.start,
                   lowest_step=w.lowest, flips=w.flips, final_time=sim.t,
                   rollbacks=sim.rollbacks, state_hash=sim.state_hash()[:16],
                   real_time_factor=sim.t / wall if wall > 0 else None,
                   runtime_s=time.perf_counter() - t_start)


def _line(e: BaseException) -> str:
    return " ".join(str(e).split())


def run(spec: Spec, jobs: int | None = None, cluster: str | None = None,
        progress: bool = True) -> list[Outcome]:
    """Run every grid point, on `jobs` local processes or on the Dask cluster at
    `cluster`; the outcomes in grid order."""
    global _warm
    points = spec.points()
    from tqdm import tqdm  # type: ignore[import-untyped]  # no stubs shipped

    from slinky3d.dynamics.solver import warm_up

    if cluster is None and not _warm:
        # Here, before the bar: the first run's compile is said once, and the workers
        # then load the kernels from numba's cache rather than each compiling them.
        warm_up(note)
        _warm = True

    # disable=None: a bar on a terminal only, so logs and tests stay clean
    with tqdm(total=len(points), desc=spec.stem, unit="point", file=sys.stderr,
              dynamic_ncols=True, disable=None if progress else True) as bar:
        if cluster is not None:
            done = _on_cluster(points, cluster, bar.update)
        else:
            done = _on_pool(points, jobs or os.cpu_count() or 1, bar.update)
    return sorted(done, key=lambda o: o.index)


def _on_pool(points: Sequence[Point], jobs: int, tick: Callable[[int], Any]) -> list[Outcome]:
    if jobs == 1:  # in this process: no pool to start
        return [_ticked(run_point(p), tick) for p in points]
    # forkserver: a fork of a clean server, not of this process and its threads.
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    out = []
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(points)),
                               mp_context=multiprocessing.get_context(method))
    try:
        for fut in as_completed([pool.submit(run_point, p) for p in points]):
            out.append(_ticked(fut.result(), tick))
    except BrokenProcessPool as e:
        raise SlinkyError(f"a worker process died: {_line(e)}") from None
    finally:  # Ctrl-C or a dead worker: the points not started are dropped
        pool.shutdown(wait=True, cancel_futures=True)
    return out


def _ticked(o: Outcome, tick: Callable[[int], Any]) -> Outcome:
    tick(1)
    return o


def _on_cluster(points: Sequence[Point], address: str,
                tick: Callable[[int], Any]) -> list[Outcome]:
    try:
        from dask.distributed import Client
        from dask.distributed import as_completed as dask_completed
    except ImportError:
        raise SlinkyError(f"--cluster needs Dask distributed: {CLUSTER_HINT}") from None
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT)
    except Exception as e:  # OSError, TimeoutError, ValueError for a malformed address...
        raise SlinkyError(f"cannot reach the Dask scheduler at {address}: {_line(e)}") from None
    out = []
    with client:
        futures = client.map(run_point, points, pure=False)
        for fut in dask_completed(futures):
            try:
                out.append(_ticked(fut.result(), tick))
            except Exception as e:
                raise SlinkyError(f"a Dask worker failed: {type(e).__name__}: {_line(e)} "
                                  "(is slinky3d installed on the workers?)") from None
    return out


# ---------------------------------------------------------------------------- output


def table_columns(spec: Spec) -> tuple[str, ...]:
    return (*spec.keys, *RESULT_COLUMNS)


def rows(spec: Spec, outcomes: Iterable[Outcome]) -> list[dict[str, Any]]:
    """The table's rows: the point's axis values, then its outcome."""
    points = spec.points()
    out = []
    for o in outcomes:
        row = dict(zip(spec.keys, points[o.index].values, strict=True))
        row.update({c: getattr(o, c) for c in RESULT_COLUMNS})
        out.append(row)
    return out


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, float) else str(v)  # repr: floats round-trip


def write_table(spec: Spec, outcomes: Sequence[Outcome], path: Path) -> None:
    """The CSV: a header, then one row per grid point in grid order."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(table_columns(spec))
        for row in rows(spec, outcomes):
            w.writerow([_cell(v) for v in row.values()])


def _label(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


LEGEND = "-: no end rested on a tread;  *: the solver rolled back"


def _cell_text(o: Outcome) -> str:
    """A map cell's note: steps walked, '-' (no rest), 'invalid' or 'error'; '*' marks
    a run the divergence guard rolled back."""
    if o.status.startswith((INVALID, ERROR)):
        return o.status.split(":")[0]
    text = "-" if o.steps_walked is None else str(o.steps_walked)
    return text + ("*" if o.status.startswith(ROLLED_BACK) else "")


def draw_map(spec: Spec, outcomes: Sequence[Outcome], path: Path) -> None:
    """A heat map of steps walked over the map's x and y axes, one panel per value of
    its panel axis."""
    import matplotlib
    import numpy as np
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    axes = dict(spec.axes)
    xs = axes[spec.x]
    ys = axes[spec.y] if spec.y is not None else (None,)
    ps = axes[spec.panels] if spec.panels is not None else (None,)
    cells: dict[tuple, Outcome] = {}
    for p, o in zip(spec.points(), outcomes, strict=True):
        v: dict[str | None, Any] = dict(zip(spec.keys, p.values, strict=True))
        cells[(v.get(spec.panels), v.get(spec.y), v[spec.x])] = o
    steps = [o.steps_walked for o in outcomes if o.steps_walked is not None]
    lo, hi = (float(min(steps)), float(max(steps))) if steps else (0.0, 1.0)
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="0.85")
    fig = Figure(figsize=(max(5.6, 1.2 + 3.6 * len(ps)), 3.8), layout="constrained")
    panels = fig.subplots(1, len(ps), squeeze=False)[0]
    image = None
    for ax, pv in zip(panels, ps, strict=True):
        z = np.full((len(ys), len(xs)), np.nan)
        for i, yv in enumerate(ys):
            for j, xv in enumerate(xs):
                o = cells[(pv, yv, xv)]
                if o.steps_walked is not None:
                    z[i, j] = o.steps_walked
                # Dark text on viridis's light upper end and on the grey, light elsewhere.
                light = o.steps_walked is not None and (o.steps_walked - lo) / (hi - lo) < 0.6
                ax.text(j, i, _cell_text(o), ha="center", va="center", fontsize=8,
                        color="w" if light else "0.1")
        image = ax.imshow(z, origin="lower", cmap=cmap, vmin=lo, vmax=hi, aspect="auto")
        ax.set_xticks(range(len(xs)), [_label(v) for v in xs])
        ax.set_yticks(range(len(ys)), [_label(v) for v in ys] if spec.y else [""])
        ax.set_xlabel(spec.x)
        if spec.y is not None:
            ax.set_ylabel(spec.y)
        if spec.panels is not None:
            ax.set_title(f"{spec.panels} = {_label(pv)}", fontsize=9)
    assert image is not None
    bar = fig.colorbar(image, ax=list(panels), label="steps walked")
    bar.locator = MaxNLocator(integer=True)
    bar.update_ticks()
    fig.suptitle(f"{spec.title}\n{LEGEND}", fontsize=9)
    fig.savefig(path, dpi=120)


def outputs(prefix: str | Path, option: str = "--out") -> tuple[Path, Path]:
    """PREFIX.csv and PREFIX.png, checked before any point runs (their folder made as
    needed)."""
    prefix = Path(prefix)
    table, picture = prefix.with_name(prefix.name + ".csv"), prefix.with_name(prefix.name + ".png")
    check_folder(prefix.parent, option, create=True)
    for path in (table, picture):
        check_output(path, option)
    return table, picture


def write(spec: Spec, outcomes: Sequence[Outcome], prefix: str | Path,
          option: str = "--out") -> tuple[Path, Path]:
    """Write PREFIX.csv and PREFIX.png (folders made as needed); their paths."""
    table, picture = outputs(prefix, option)
    write_table(spec, outcomes, table)
    draw_map(spec, outcomes, picture)
    return table, picture


def summary(spec: Spec, outcomes: Sequence[Outcome], wall: float, where: str) -> str:
    """The one-line report of a sweep."""
    counts: dict[str, int] = {}
    for o in outcomes:
        kind = o.status.split(":")[0].split(" (")[0]
        counts[kind] = counts.get(kind, 0) + 1
    parts = ", ".join(f"{n} {k}" for k, n in counts.items())
    walked = [o.steps_walked for o in outcomes if o.steps_walked is not None]
    best = f"; most steps walked: {max(walked)}" if walked else ""
    return f"{spec.stem}: {len(outcomes)} points ({parts}) in {wall:.1f} s {where}{best}"
