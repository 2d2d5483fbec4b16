"""Runs shared by several tests (the reference integrator is slow: run each once)."""

from functools import cache

import numpy as np

from slinky3d.output.recording import record
from slinky3d.runtime.commands import (
    Step,
)
from slinky3d.scene import loader


@cache
def recorded(name: str, duration: float, solver: str, fps: float = 100.0,
             overrides: tuple[str, ...] = ()) -> dict:
    sc = loader.load(name, list(overrides))
    data, stats = record(sc, duration, fps, solver=solver)
    data = dict(data)
    data["stats"] = stats
    return data


def end_error(a: dict, b: dict) -> np.ndarray:
    """Largest end-point distance between two recordings, per sample (m)."""
    return np.linalg.norm(a["ends"] - b["ends"], axis=-1).max(axis=-1)


def drive(th, script, nsteps: int, timeout: float = 30) -> None:
    """Deterministic thread run: Step(n) up to each command's step, then the command."""
    k = 0
    for step, cmd in script:
        if step > k:
            th.send(Step(step - k))
            k = step
        th.send(cmd)
    th.send(Step(nsteps - k))
    assert th.drain(timeout)
