"""The world the Slinkies touch: a floor, a staircase, a table, and their friction.

A scene's `[world]` table. The solid parts are a floor (the half-plane below `floor`)
and *blocks*: rectangles (x0, x1, top) that stand on the floor (or reach down for ever
when there is none). Stairs and a table are blocks; the stairs go down toward +x. The
model's plane is x-y, y up; the blocks extend along z only when drawn. The contact law
is docs/model.md section 11; the renderer draws the same blocks (scene.look).

Each of the stairs and the table may be turned about the vertical (`rotate`, degrees,
as the scene's): the stairs about the top step's nosing (top x, z = 0), the table about
its edge's point (edge x, z = 0), so that the block's cross-section in the model's
plane keeps its heights and its front edge where the scene puts it. A turned block
reaches out of the model's plane: only the 3D solver runs it (docs/model.md section 12).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from slinky3d.model import chain
from slinky3d.scene.validate import Context, Table

Block = tuple[float, float, float]  # (x0, x1, top): a solid rectangle below top, m

WORLD_KEYS = ("floor", "mu", "mu_static", "stairs", "table")
STAIRS_KEYS = ("top", "height", "depth", "count", "landing", "rotate")
TABLE_KEYS = ("edge", "width", "rotate")
PLACE = 1e3  # m: a guard against typos, as in [look]
START_INSIDE = 1e-3  # m: how far a scene's initial shape may reach into the world
AUTO = "auto"  # floor = "auto": AUTO_GAP below the lowest point of the initial shapes
AUTO_GAP = 0.10  # m
TABLE_HEIGHT = 0.75  # m: a table's floor, when the scene names none
ROTATE_MAX = 1e6  # degrees: a finite turn (the scene's own bound)
Turn = tuple[float, float]  # a block's (turn about the vertical, rad; pivot x, m)


def heading(degrees: float) -> float:
    """A block's `rotate` as a turn in [0, 2 pi) rad: 0 for a whole number of turns."""
    return math.radians(degrees % 360.0)


def local_x(x, z, turn: Turn):
    """A point's x in the frame of a block turned by `turn`, from its (x, z) in the
    scene's (unturned) frame: the block's cross-section is the unturned one there
    (the block reaches along its own z without end)."""
    a, px = turn
    if a == 0.0:
        return x
    return px + math.cos(a) * (x - px) - math.sin(a) * z


@dataclass(frozen=True)
class Stairs:
    """A straight staircase going down toward +x.

    Step 0 is the top one (the landing): x in [top_x - landing, top_x], at top_y.
    Step k = 1 .. count spans x in [top_x + (k - 1) depth, top_x + k depth] at
    top_y - k height. Below the last step is the floor.
    """

    top: tuple[float, float]  # the top step's front edge (nosing), m
    height: float  # rise of each step, m
    depth: float  # tread of each step, m
    count: int  # steps below the top one
    landing: float  # tread of the top step, m
    rotate: float = 0.0  # degrees about the vertical through the nosing (top x, z = 0)

    @property
    def turn(self) -> Turn:
        """The flight's turn and its pivot's x (module docstring)."""
        return (heading(self.rotate), self.top[0])

    def pieces(self) -> tuple[Block, ...]:
        """The steps as blocks side by side, none overlapping (how they are drawn)."""
        x, y = self.top
        return tuple((max(b[0], x + (k - 1) * self.depth) if k else b[0], b[1], b[2])
                     for k, b in enumerate(self.blocks()))

    def blocks(self) -> tuple[Block, ...]:
        """The steps as solid blocks for contact."""
        # Every block reaches back to the landing's far edge: the same solid, but no
        # block has a side face buried in the step above (a point sunk into a tread
        # near its back would be pushed sideways into the next step up).
        x, y = self.top
        back = x - self.landing
        steps = [(back, x, y)]
        steps += [(back, x + k * self.depth, y - k * self.height)
                  for k in range(1, self.count + 1)]
        return tuple(steps)

    def tread(self, k: int) -> tuple[float, float, float]:
        """Step k's (x0, x1, height); k = count + 1 is the floor beyond the last step."""
        x, y = self.top
        if k == 0:
            return (x - self.landing, x, y)
        x1 = x + k * self.depth if k <= self.count else math.inf
        return (x + (k - 1) * self.depth, x1, y - k * self.height)

    def step_at(self, x: float, y: float, tol: float = 0.01) -> int | None:
        """Which step (0 = top, count + 1 = the floor beyond) a point at (x, y) rests on:
        the tread under x whose height is within tol of y; None if none."""
        for k in range(self.count + 2):
            x0, x1, top = self.tread(k)
            if x0 - tol <= x <= x1 + tol and abs(y - top) <= tol:
                return k
        return None


@dataclass(frozen=True)
class World:
    """Solid ground and friction: what a Slinky's coils touch besides each other.

    mu is the Coulomb coefficient while sliding, mu_static while sticking
    (mu_static >= mu). `floor` None: no floor (and no blocks)."""

    floor: float | None = None  # m
    mu: float = 0.5
    mu_static: float = 0.5
    stairs: Stairs | None = None
    table: tuple[float, float, float] | None = None  # (edge x, top y, width), m
    table_rotate: float = 0.0  # degrees about the vertical through (edge x, z = 0)

    @property
    def turned(self) -> str:
        """'' unless a block is turned out of the model's plane; else which, as a key."""
        if self.stairs is not None and self.stairs.turn[0] != 0.0:
            return f"stairs.rotate = {self.stairs.rotate:g}"
        if self.table is not None and heading(self.table_rotate) != 0.0:
            return f"table.rotate = {self.table_rotate:g}"
        return ""

    def turns(self) -> tuple[Turn, ...]:
        """Each block's turn and pivot x (`blocks`' order; the same for `drawn`)."""
        out: tuple[Turn, ...] = ()
        if self.stairs is not None:
            out = (self.stairs.turn,) * (self.stairs.count + 1)
        if self.table is not None:
            out += ((heading(self.table_rotate), self.table[0]),)
        return out

    @property
    def solid(self) -> bool:
        """Whether there is anything to touch."""
        return self.floor is not None

    def surface(self, x: float, z: float = 0.0) -> float:
        """The height of the solid's top at (x, z) (m; -inf: no floor). Every block
        stands on the floor, so the solid there is everything below it."""
        if self.floor is None:
            return -math.inf
        blocks = zip(self.blocks(), self.turns(), strict=True)
        return max([self.floor] + [b[2] for b, t in blocks if b[0] <= local_x(x, z, t) <= b[1]])

    def blocks(self, drawn: bool = False) -> tuple[Block, ...]:
        """The solid blocks standing on the floor; drawn: side by side, not overlapping
        (the same solid)."""
        out: tuple[Block, ...] = ()
        if self.stairs is not None:
            out = self.stairs.pieces() if drawn else self.stairs.blocks()
        if self.table is not None:
            x, y, width = self.table
            out += ((x - width, x, y),)
        return out


def distance(world: World, points: np.ndarray) -> np.ndarray:
    """Signed distance (m) from each point (M, 2) in the model's plane, or (M, 3), to the
    world's solid: > 0 outside. Points in the scene's unturned frame (before its
    `rotate`). Exact outside; inside, the depth to the nearest face. The planar
    solver's compiled version (dynamics/world_geometry.py) is tested against this one."""
    x, y = points[:, 0], points[:, 1]
    z = points[:, 2] if points.shape[1] > 2 else np.zeros(len(points))
    d = np.full(len(points), np.inf) if world.floor is None else y - world.floor
    for (x0, x1, top), turn in zip(world.blocks(), world.turns(), strict=True):
        xl = local_x(x, z, turn)  # across the block, in its own frame
        dx = np.maximum(x0 - xl, xl - x1)  # > 0 beside the block
        dy = y - top  # > 0 above it
        outside = np.hypot(np.maximum(dx, 0.0), np.maximum(dy, 0.0))
        d = np.minimum(d, np.where((dx > 0) | (dy > 0), outside, np.maximum(dx, dy)))
    return d


def check_clear(ctx: Context, key: str, spec, world: World) -> None:
    """A scene's Slinky must not start inside the world (one-line error if it does)."""
    if not world.solid:
        return
    p = spec.params
    E = chain.end_points(np.asarray(spec.q0, float), p.R)
    d = distance(world, E)
    k = int(np.argmin(d))
    if d[k] < -START_INSIDE:
        ctx.fail(key, f"starts {-d[k] * 1e3:.1f} mm inside the floor or a step (end point "
                      f"{k} at x = {E[k, 0]:.3f}, y = {E[k, 1]:.3f} m): move it or the world")


def read_world(t: Table, slinkies: Sequence = ()) -> World:
    """A validated `World` from a scene's `[world]` table (absent: no world);
    `slinkies` (their SlinkySpecs) place a floor = "auto" below their initial shapes."""
    if not t.data:
        return World()
    d = World()
    mu = t.number("mu", d.mu, lo=0.0, hi=10.0)
    mu_static = t.number("mu_static", mu, lo=0.0, hi=10.0)
    if mu_static < mu:
        t.fail("mu_static", f"must be >= mu ({mu:g}): sticking holds at least as hard as "
                            f"sliding, got {mu_static:g}")
    stairs = None
    if t.has("stairs"):
        s = t.table("stairs", STAIRS_KEYS)
        for k in ("top", "height", "depth", "count"):
            if not s.has(k):
                s.fail(k, "missing: a staircase needs top, height, depth and count")
        top = s.point("top", (0.0, 0.0))
        if max(abs(top[0]), abs(top[1])) > PLACE:
            s.fail("top", f"must lie within {PLACE:g} m of the origin, got {top}")
        height = s.number("height", 0.0, lo=1e-3, hi=2.0)
        depth = s.number("depth", 0.0, lo=1e-3, hi=5.0)
        count = s.number("count", 0.0, lo=1, hi=100)
        if count != int(count):
            s.fail("count", f"must be a whole number of steps, got {count:g}")
        stairs = Stairs(top=top, height=height, depth=depth, count=int(count),
                        landing=s.number("landing", depth, lo=1e-3, hi=100.0),
                        rotate=s.number("rotate", 0.0, lo=-ROTATE_MAX, hi=ROTATE_MAX))
    table, table_rotate = None, 0.0
    if t.has("table"):
        tb = t.table("table", TABLE_KEYS)
        if not tb.has("edge"):
            tb.fail("edge", "missing: a table needs the [x, y] of its edge")
        edge = tb.point("edge", (0.0, 0.0))
        if max(abs(edge[0]), abs(edge[1])) > PLACE:
            tb.fail("edge", f"must lie within {PLACE:g} m of the origin, got {edge}")
        table = (edge[0], edge[1], tb.number("width", 1.0, lo=1e-2, hi=100.0))
        table_rotate = tb.number("rotate", 0.0, lo=-ROTATE_MAX, hi=ROTATE_MAX)
    blocks = World(stairs=stairs, table=table).blocks()
    lowest = min((b[2] for b in blocks), default=None)
    if stairs is not None:
        default_floor: float | None = stairs.top[1] - (stairs.count + 1) * stairs.height
    elif table is not None:
        default_floor = table[1] - TABLE_HEIGHT
    else:
        default_floor = None
    if t.data.get("floor") == AUTO:
        if blocks:
            t.fail("floor", f"'{AUTO}' places a bare floor; with stairs or a table give its "
                            "height (m)")
        ys = [float(chain.end_points(np.asarray(s.q0, float), s.params.R)[:, 1].min())
              for s in slinkies]
        floor: float | None = min(ys) - AUTO_GAP if ys else 0.0
    else:
        floor = t.number("floor", default_floor, lo=-PLACE, hi=PLACE)
    if floor is None:
        t.fail("floor", "missing: a world needs a floor height (m), or stairs or a table")
    if lowest is not None and not floor < lowest:
        t.fail("floor", f"must lie below every step and table top (the lowest is at "
                        f"{lowest:g} m), got {floor:g}")
    return World(floor=floor, mu=mu, mu_static=mu_static, stairs=stairs, table=table,
                 table_rotate=table_rotate)
