"""A stand-in for `recording.record` (same signature and output), for CLI and figure plumbing.

Every Slinky keeps its initial shape and falls freely from t = 0, so frames differ.
"""

from __future__ import annotations

import json
import math

import numpy as np

from slinky3d.model import chain
from slinky3d.output import DEFAULT_SOLVER
from slinky3d.output.trajectory import suffix

CALLS: list[dict] = []


def record(scene, duration: float, fps: float, solver: str = DEFAULT_SOLVER):
    CALLS.append({"scene": scene, "duration": duration, "fps": fps, "solver": solver})
    n = math.floor(duration * fps + 1e-9) + 1
    t = np.arange(n) / fps
    data: dict = {"t": t}
    for i, s in enumerate(scene.slinkies):
        p, sfx = s.params, suffix(i)
        E0 = chain.end_points(s.q0, p.R)
        drop = -0.5 * p.g * t**2
        ends = np.repeat(E0[None], n, axis=0)
        ends[:, :, 1] += drop[:, None]
        theta = np.repeat(s.q0[chain.BASE:][None], n, axis=0)
        data["ends" + sfx] = ends
        data["theta" + sfx] = theta
        data["theta_dot" + sfx] = np.zeros_like(theta)
        data["energy" + sfx] = np.full(n, 1.0)
        data["n_contacts" + sfx] = np.sum(theta <= p.theta_min + chain.TOUCHING, axis=1)
        contact = s.contact.law if s.contact.enabled else "off"
        data["params" + sfx] = json.dumps({**p.resolved(), "phi_A": float(s.q0[2]),
                                           "contact": contact})
    stats = {"steps": 10 * (n - 1), "impacts": 3, "wall": 0.5, "sim_time": t[-1],
             "energy_change": -1.5e-3}
    return data, stats
