"""Runs shared by several tests (the reference integrator is slow: run each once)."""

from functools import cache

import numpy as np

from slinky3d import scene, sim


@cache
def recorded(name: str, duration: float, solver: str, fps: float = 100.0,
             overrides: tuple[str, ...] = ()) -> dict:
    sc = scene.load(name, list(overrides))
    data, stats = sim.record(sc, duration, fps, solver=solver)
    data = dict(data)
    data["stats"] = stats
    return data


def end_error(a: dict, b: dict) -> np.ndarray:
    """Largest end-point distance between two recordings, per sample (m)."""
    return np.linalg.norm(a["ends"] - b["ends"], axis=-1).max(axis=-1)
