"""Record a whole run, sampled on a time grid: what `slinky3d simulate` and `figure` use.

A real-time solver (planar or 3D) or the reference integrator; the arrays are the ones the
trajectory file (`trajectory.py`) stores.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from slinky3d.dynamics.engine3d import SlinkySolver3D
from slinky3d.dynamics.engine3d import warm_up as warm_up3d
from slinky3d.dynamics.solver import warm_up
from slinky3d.engines import ENGINES, THREE_D
from slinky3d.errors import SlinkyError
from slinky3d.model import chain
from slinky3d.output import DEFAULT_FPS, DEFAULT_SOLVER, REALTIME, REFERENCE, SOLVERS
from slinky3d.output.trajectory import suffix
from slinky3d.reference import integrator
from slinky3d.runtime.simulation import Simulation, grid_step
from slinky3d.scene.spec import Scene, SlinkySpec


def params_json(spec: SlinkySpec) -> str:
    d = spec.params.resolved()
    d.update(phi_A=spec.anchor.orientation, anchor=spec.anchor.condition,
             far=spec.far.condition, contact=spec.contact.law if spec.contact.enabled else "off",
             name=spec.name)
    return json.dumps(d)


def _free(spec: SlinkySpec, t: np.ndarray) -> list[bool]:
    """Whether the anchor is free at each time."""
    return [not spec.anchor.held_at(ti) for ti in t]


def _track(spec: SlinkySpec, t: np.ndarray, qs: Sequence[np.ndarray],
           qds: Sequence[np.ndarray], contacts: Sequence[int]) -> dict[str, Any]:
    p = spec.params
    free = _free(spec, t)
    return {
        "ends": np.array([chain.end_points(q, p.R) for q in qs]),
        "theta": np.array([q[chain.BASE:] for q in qs]),
        "theta_dot": np.array([qd[chain.BASE:] for qd in qds]),
        "energy": np.array([chain.energy(p, q, qd, f) for q, qd, f in zip(qs, qds, free,
                                                                          strict=True)]),
        "n_contacts": np.array(contacts, dtype=np.int64),
        "params": params_json(spec),
    }


def _track3d(spec: SlinkySpec, samples: Sequence[tuple]) -> dict[str, Any]:
    """A 3D-solver Slinky's samples (engine3d: ends (N+1, 3), the joints' torsion and
    its rate, the mechanical energy, the locked joints) as `_track`'s arrays."""
    ends, theta, theta_dot, energy, contacts = zip(*samples, strict=True)
    return {"ends": np.array(ends), "theta": np.array(theta),
            "theta_dot": np.array(theta_dot), "energy": np.array(energy),
            "n_contacts": np.array(contacts, dtype=np.int64), "params": params_json(spec)}


def record(scene: Scene, duration: float, fps: float = DEFAULT_FPS,
           solver: str = DEFAULT_SOLVER, say: Callable[[str], object] | None = None
           ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Sample a run at t = 0, 1/fps, ... <= duration.  Returns (arrays, stats); stats'
    "solver" is the one that ran (REALTIME: the scene's engine). `say` is told when the
    real-time solver's kernels must be compiled first."""
    if solver not in SOLVERS:
        raise SlinkyError(f"unknown solver {solver!r} (known: {', '.join(SOLVERS)})")
    if solver == REFERENCE and scene.needs_3d:
        raise SlinkyError(f"{scene.title}: the reference integrator is planar and this "
                          "scene needs the 3D solver (turned by rotate, or moved along z)")
    engine = scene.solver if solver == REALTIME else solver
    n = int(math.floor(duration * fps + 1e-9)) + 1
    times = np.arange(n) / fps
    data: dict[str, Any] = {"t": times}
    stats: dict[str, Any] = {"sim_time": float(times[-1]), "steps": 0, "impacts": 0,
                             "energy_change": 0.0, "solver": engine}
    if engine in ENGINES:
        warm_up(say)
    if engine == THREE_D:
        warm_up3d(say)
    t0 = time.perf_counter()
    if engine in ENGINES:
        h, per = grid_step(scene.dt, 1.0 / fps)
        sim = Simulation(scene, h, solver=engine)
        samples: list[list] = [[] for _ in sim.slinkies]
        for k in range(n):
            if k > 0:
                sim.step(per)
            for i, s in enumerate(sim.slinkies):
                if isinstance(s, SlinkySolver3D):
                    samples[i].append((s.ends(), *s.torsion(), s.energy(), s.n_contacts))
                else:
                    samples[i].append((s.q.copy(), s.qd.copy(), s.n_contacts))
        for i, (spec, s) in enumerate(zip(scene.slinkies, sim.slinkies, strict=True)):
            if isinstance(s, SlinkySolver3D):
                track = _track3d(spec, samples[i])
            else:
                qs, qds, cs = zip(*samples[i], strict=True)
                track = _track(spec, times, qs, qds, cs)
            data.update({k + suffix(i): v for k, v in track.items()})
            stats["impacts"] += s.impacts
        stats.update(steps=(n - 1) * per, dt=h, rollbacks=sim.rollbacks,
                     evals=sum(s.evals for s in sim.slinkies))
    else:
        for i, spec in enumerate(scene.slinkies):
            out, st = integrator.simulate(spec, times)
            ref_q = [o[1] for o in out]
            ref_qd = [o[2] for o in out]
            tmin = spec.params.theta_min
            ref_contacts = [
                int(np.count_nonzero(q[chain.first_joint(f):] <= tmin + chain.TOUCHING))
                for q, f in zip(ref_q, _free(spec, times), strict=True)]
            track = _track(spec, times, ref_q, ref_qd, ref_contacts)
            data.update({k + suffix(i): v for k, v in track.items()})
            stats["impacts"] += st["impacts"]
            stats["steps"] += st["steps"]
    stats["wall"] = time.perf_counter() - t0
    stats["energy_change"] = float(sum(
        data["energy" + suffix(i)][-1] - data["energy" + suffix(i)][0]
        for i in range(len(scene.slinkies))))
    return data, stats
