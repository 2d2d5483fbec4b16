"""Contact with the world at game speed: real-time factors on a floor and on stairs.

    python benchmarks/bench_contact.py [--repeat 3] [--mujoco-dt 0.002 0.004] [--no-mujoco]
                                       [--scenes hanging-steel ...] [--solver3d]
                                       [--only-3d]

Headless, single-threaded, through the Python API, as issue 23's table has them:

* `hanging-plastic` and `hanging-steel`, released: hanging from the hand for 1 s (no
  world contact), then let go (`LetGo`): the drop and the landing on the scene's floor
  (the first 1 s after the release), then lying on the floor (the next 2 s). The lying
  figure is given twice: as the scene runs (sleeping on, docs/solver.md "Sleeping") and
  awake (sleeping off: what the contact solve itself costs); `asleep after release` is
  when it fell asleep.
* `stairs` and `stairs-steel`: walking down the stairs for a fixed simulated time.

With `--solver3d` the 3D solver's figures come beside them, with what its world solve
did per piece of a step near the world over the whole run (`pieces`, and per piece
`rounds` of the coil locks, `lcps` solved, Lemke's `pivots`, `guessed`: LCPs answered
on the step's last basis; docs/solver.md "World contact in 3D"); `--only-3d` leaves
the planar solver's out (a quick quiet run).

Each figure is a real-time factor (simulated seconds per wall second), the median over
`--repeat` runs; each run replays the same steps, and the runs must end on the same
state hash. The targets of issue 23 are printed beside the figures.

The same planar chain in MuJoCo (the optional `bench` extra, `pip install mujoco`) is
timed beside it: a planar free root (two slides and a hinge; held: a hinge on the
world), one hinge per coil joint with the Slinky's torsion stiffness and damping as
joint springs and a joint limit at theta_min for the coil contacts, a capsule per half
hoop (radius half a collapsed coil's thickness; the world shrunk by that radius, so
that the bars' centre lines touch it where the project's bars do) on the floor, steps
and blocks with the scene's friction, implicitfast, Newton, at each `--mujoco-dt`.
It starts from the project's state (the static shape, or the stairs' bent-over
shape) and is released in the same way. Without MuJoCo that column is skipped.
"""

from __future__ import annotations

import argparse
import importlib
import math
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout too

import report  # benchmarks/report.py, beside this file

from slinky3d.dynamics import world_contact3d as wc3d
from slinky3d.dynamics.solver import warm_up
from slinky3d.model.chain import BASE
from slinky3d.runtime.simulation import Simulation
from slinky3d.scene.loader import load
from slinky3d.scene.spec import Scene, SlinkySpec
from slinky3d.scene.world import World

HANG_S = 1.0  # s hanging before the release
DROP_S = 1.0  # s after the release: the drop and the landing
LIE_S = 2.0  # s after that: lying on the floor
WALK_S = 3.0  # s of walking down the stairs
# the figures that are real-time factors
FACTORS = ("hanging", "drop_landing", "lying", "lying_awake", "walking")
RELEASED = ("hanging-plastic", "hanging-steel")
WALKING = ("stairs", "stairs-steel")
# issue 23's targets (real-time factors)
TARGETS = {
    "hanging-plastic": {"drop_landing": 30.0, "lying": 60.0},
    "hanging-steel": {"drop_landing": 10.0, "lying": 30.0},
    "stairs": {"walking": 20.0},
    "stairs-steel": {"walking": 5.0},
}


# -- the project -------------------------------------------------------------------
def project_released(scene: Scene, sleep: bool = True, solver: str = "planar"
                     ) -> tuple[dict[str, float], str]:
    """Real-time factors of one hanging, release, drop and lie; and the state hash."""
    sim = Simulation(scene, sleep=sleep, solver=solver)
    wc3d.PROFILE[:] = 0
    asleep: list[float] = []
    out = {"hanging": _timed(sim, HANG_S, asleep)}
    sim.let_go(0)
    out["drop_landing"] = _timed(sim, DROP_S, asleep)
    out["lying"] = _timed(sim, LIE_S, asleep)
    if asleep:
        out["asleep_after_release_s"] = asleep[0] - HANG_S
    return out | _counts(sim), sim.state_hash()


def project_walking(scene: Scene, solver: str = "planar") -> tuple[dict[str, float], str]:
    sim = Simulation(scene, solver=solver)
    wc3d.PROFILE[:] = 0
    asleep: list[float] = []
    out = {"walking": _timed(sim, WALK_S, asleep)}
    if asleep:
        out["asleep_at_s"] = asleep[0]
    return out | _counts(sim), sim.state_hash()


def _counts(sim: Simulation) -> dict[str, float]:
    """The 3D world solve's work over the run, per piece (none on the planar solver)."""
    w = getattr(getattr(sim.slinkies[0], "solver", None), "world", None)
    if w is None or not w.pieces:
        return {}
    p = wc3d.PROFILE
    return {"pieces": float(w.pieces), "rounds": w.rounds.sum() / w.pieces,
            "lcps": p[0] / w.pieces, "pivots": p[1] / w.pieces, "guessed": p[2] / w.pieces}


def _timed(sim: Simulation, seconds: float, asleep: list[float]) -> float:
    """Step sim one step at a time (as the solver thread does) for `seconds` simulated;
    the real-time factor. The time the Slinky first sleeps is added to `asleep`."""
    n = round(seconds / sim.h)
    s = sim.slinkies[0]
    t0 = time.perf_counter()
    for _ in range(n):
        sim.step(1)
        if s.asleep and not asleep:
            asleep.append(sim.t)
    return n * sim.h / (time.perf_counter() - t0)


def repeated(run: Callable[[], tuple[dict[str, float], str]], repeat: int, what: str
             ) -> dict[str, float]:
    """The median of each figure over `repeat` runs, which must agree bit for bit."""
    runs = [run() for _ in range(repeat)]
    if len({h for _, h in runs}) > 1:
        raise SystemExit(f"{what}: repeats differ: the solver is not deterministic")
    return {k: statistics.median(r[k] for r, _ in runs) for k in runs[0][0]}


# -- the MuJoCo chain --------------------------------------------------------------
def _quat(angle: float) -> str:
    """A turn by `angle` counter-clockwise in the model's x-y plane (MuJoCo's x-z, z up),
    as a MuJoCo quaternion."""
    return f"{math.cos(angle / 2):.17g} 0 {-math.sin(angle / 2):.17g} 0"


def mujoco_xml(spec: SlinkySpec, world: World, dt: float, held: bool) -> str:
    """The planar chain of half hoops as MJCF. Held: bar 1 hangs from a hinge on the
    world at the anchor (joint 1, with its spring); else its root is free in the plane.
    Joint j's angle is theta_j (its axis alternates, as the chain folds back and forth)."""
    p = spec.params
    R, r = p.R, 0.5 * p.delta
    mu = world.mu
    lines = [
        '<mujoco model="slinky">',
        '<compiler angle="radian"/>',
        f'<option timestep="{dt!r}" integrator="implicitfast" solver="Newton" '
        f'gravity="0 0 {-p.g!r}" cone="pyramidal"/>',
        "<worldbody>",
    ]
    if world.floor is not None:
        lines.append(f'<geom type="plane" size="0 0 1" pos="0 0 {world.floor - r!r}" '
                     f'contype="1" conaffinity="2" friction="{mu!r} 0.005 0.0001"/>')
        for x0, x1, top in world.blocks():
            hx, hz = 0.5 * (x1 - x0) - r, 0.5 * (top - world.floor)
            lines.append(f'<geom type="box" size="{hx!r} 0.2 {hz!r}" '
                         f'pos="{0.5 * (x0 + x1)!r} 0 {0.5 * (top + world.floor) - r!r}" '
                         f'contype="1" conaffinity="2" friction="{mu!r} 0.005 0.0001"/>')
    body = (f'<geom type="capsule" fromto="0 0 0 {2 * R!r} 0 0" size="{r!r}" '
            f'contype="2" conaffinity="1" friction="{mu!r} 0.005 0.0001"/>'
            f'<inertial pos="{R!r} 0 0" mass="{p.m!r}" diaginertia="{p.I!r} {p.I!r} {p.I!r}"/>')

    def joint(j: int) -> str:  # coil joint j (1-based): angle theta_j, limit theta_min
        axis = -1 if j % 2 else 1  # counter-clockwise by (-1)^(j+1) theta_j
        return (f'<joint type="hinge" axis="0 {axis} 0" stiffness="{p.k_coil!r}" '
                f'damping="{p.C_D!r}" limited="true" range="{p.theta_min!r} 3.1"/>')

    a = spec.anchor
    if held:
        lines.append(f'<body pos="{a.position[0]!r} 0 {a.position[1]!r}" '
                     f'quat="{_quat(a.orientation + math.pi)}">{joint(1)}{body}')
    else:
        lines.append('<body><joint type="slide" axis="1 0 0"/><joint type="slide" '
                     'axis="0 0 1"/><joint type="hinge" axis="0 -1 0"/>' + body)
    for j in range(2, p.N + 1):
        lines.append(f'<body pos="{2 * R!r} 0 0" quat="{_quat(math.pi)}">{joint(j)}{body}')
    lines += ["</body>" * p.N, "</worldbody>", "</mujoco>"]
    return "\n".join(lines)


def mujoco_state(q: np.ndarray, qd: np.ndarray, held: bool) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo's qpos and qvel of the project's (q, qd). Free: (x, y, bar 1's direction
    angle, theta_2 ..), bar 1 pointing along -(cos Theta_1, sin Theta_1)."""
    if held:
        return q[BASE:].copy(), qd[BASE:].copy()
    pos = np.concatenate([q[:2], [q[2] + q[BASE] + math.pi], q[BASE + 1:]])
    vel = np.concatenate([qd[:2], [qd[2] + qd[BASE]], qd[BASE + 1:]])
    return pos, vel


class MujocoChain:
    """One Slinky of a scene as a MuJoCo chain, held or free."""

    def __init__(self, mj: Any, spec: SlinkySpec, world: World, dt: float, held: bool):
        self.mj, self.held, self.spec = mj, held, spec
        self.model = mj.MjModel.from_xml_string(mujoco_xml(spec, world, dt, held))
        self.data = mj.MjData(self.model)

    def set_state(self, q: np.ndarray, qd: np.ndarray) -> None:
        self.data.qpos[:], self.data.qvel[:] = mujoco_state(q, qd, self.held)
        self.mj.mj_forward(self.model, self.data)

    def timed(self, seconds: float) -> float:
        n = round(seconds / self.model.opt.timestep)
        t0 = time.perf_counter()
        self.mj.mj_step(self.model, self.data, nstep=n)
        return n * self.model.opt.timestep / (time.perf_counter() - t0)

    def released(self, world: World, dt: float) -> MujocoChain:
        """The same chain let go: free, from this one's state (its anchor at rest)."""
        out = MujocoChain(self.mj, self.spec, world, dt, held=False)
        a = self.spec.anchor
        q = np.concatenate([[a.position[0], a.position[1], a.orientation], self.data.qpos])
        qd = np.concatenate([np.zeros(BASE), self.data.qvel])
        out.set_state(q, qd)
        return out

    def lowest(self) -> float:
        """The lowest point of the bars' centre lines, m (model y)."""
        return float(self.data.xpos[1:, 2].min())

    def fastest(self) -> float:
        """The largest joint rate, rad/s."""
        return float(np.abs(self.data.qvel[BASE if not self.held else 0:]).max())


def mujoco_released(mj: Any, scene: Scene, dt: float) -> dict[str, float]:
    s, w = scene.slinkies[0], scene.world
    c = MujocoChain(mj, s, w, dt, held=True)
    c.set_state(np.asarray(s.q0, float), np.zeros(len(s.q0)))
    out = {"hanging": c.timed(HANG_S)}
    c = c.released(w, dt)
    out["drop_landing"] = c.timed(DROP_S)
    out["lying"] = c.timed(LIE_S)
    assert w.floor is not None
    out["into_floor_m"] = max(0.0, w.floor - c.lowest())
    out["fastest_joint_lying"] = c.fastest()
    return out


def mujoco_walking(mj: Any, scene: Scene, dt: float) -> dict[str, float]:
    s = scene.slinkies[0]
    c = MujocoChain(mj, s, scene.world, dt, held=False)
    c.set_state(np.asarray(s.q0, float), np.zeros(len(s.q0)))
    return {"walking": c.timed(WALK_S)}


def mujoco_repeated(run: Callable[[], dict[str, float]], repeat: int) -> dict[str, float]:
    runs = [run() for _ in range(repeat)]
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


# -- output ------------------------------------------------------------------------
def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3g}x"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mujoco-dt", type=float, nargs="+", default=[0.002, 0.004],
                    help="MuJoCo time steps, s (issue 23: 1-4 ms)")
    ap.add_argument("--no-mujoco", action="store_true", help="skip the MuJoCo column")
    ap.add_argument("--scenes", nargs="+", default=list(RELEASED + WALKING),
                    choices=RELEASED + WALKING,
                    help="a part of the table, for a quick look (its figures are not written)")
    ap.add_argument("--only-3d", action="store_true",
                    help="the 3D solver's figures alone (implies --solver3d, --no-mujoco)")
    ap.add_argument("--solver3d", action="store_true",
                    help="the 3D solver's figures beside the planar one's, in the same run "
                         "(its figures are not written)")
    args = ap.parse_args()
    if args.only_3d:
        args.solver3d = args.no_mujoco = True
    mj = None
    if not args.no_mujoco:
        try:
            mj = importlib.import_module("mujoco")
        except ImportError:
            print("MuJoCo is not installed (pip install mujoco, or the `bench` extra): "
                  "its column is skipped")
    warm_up()
    Simulation(load("stairs")).step(3)  # the world kernels too: compilation is never timed
    if args.solver3d:
        Simulation(load("hanging-plastic"), solver="3d").step(3)

    released: dict[str, dict[str, Any]] = {}
    walking: dict[str, dict[str, Any]] = {}
    for name in args.scenes:
        scene = load(name)
        kind = "released" if name in RELEASED else "walking"
        run = project_released if kind == "released" else project_walking
        row: dict[str, Any] = {} if args.only_3d else dict(
            repeated(partial(run, scene), args.repeat, name))
        if kind == "released" and not args.only_3d:
            row["lying_awake"] = repeated(partial(project_released, scene, False),
                                          args.repeat, name)["lying"]
        if args.solver3d:
            row.update({f"solver3d_{k}": v for k, v in repeated(
                partial(run, scene, solver="3d"), args.repeat, name).items()})
        row = {f"{k}_x" if k.removeprefix("solver3d_") in FACTORS else k: v
               for k, v in row.items()}
        row.update({f"target_{k}_x": v for k, v in TARGETS[name].items()})
        for dt in args.mujoco_dt if mj is not None else ():
            f = mujoco_released if kind == "released" else mujoco_walking
            tag = f"mujoco_{dt * 1e3:g}ms"
            for k, v in mujoco_repeated(partial(f, mj, scene, dt), args.repeat).items():
                row[f"{tag}_{k}" + ("_x" if k in FACTORS else "")] = v
        (released if kind == "released" else walking)[name] = row
        print(f"{name}: " + ", ".join(
            f"{k} {v:.3g}" + ("x" if k.endswith("_x") else "") for k, v in row.items()))
    figures: dict[str, Any] = {
        "repeats": args.repeat, "hang_s": HANG_S, "drop_s": DROP_S, "lie_s": LIE_S,
        "walk_s": WALK_S,
        "mujoco": (f"{mj.__version__}, implicitfast, Newton, pyramidal cone" if mj is not None
                   else "not installed"),
        "released": released, "walking": walking,
    }
    _summary(released, walking)
    if set(args.scenes) == set(RELEASED + WALKING) and not args.solver3d:
        report.write("bench_contact", figures)
    else:
        print("a part of the table: figures not written")


def _summary(released: dict[str, dict[str, Any]], walking: dict[str, dict[str, Any]]) -> None:
    print()
    print(f"{'scene':<18}{'figure':<14}{'project':>10}{'target':>9} {'':<6} MuJoCo")
    for name, row in (released | walking).items():
        figs = ("hanging", "drop_landing", "lying", "lying_awake") if name in released \
            else ("walking",)
        for f in figs:
            if f"{f}_x" not in row:
                continue
            tgt = row.get(f"target_{f}_x")
            mj = ", ".join(f"{k.split('_')[1]} {fmt(v)}" for k, v in row.items()
                           if k.startswith("mujoco_") and k.endswith(f"_{f}_x"))
            ok = "" if tgt is None else ("met" if row[f"{f}_x"] >= tgt else "below")
            print(f"{name:<18}{f:<14}{fmt(row[f'{f}_x']):>10}{fmt(tgt):>9} {ok:<6} {mj}")


if __name__ == "__main__":
    main()
