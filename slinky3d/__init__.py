"""slinky3d: a real-time 3D Slinky built on the torsion-spring model.

The public API for scripts and notebooks (docs/api.md has the example):
`load_scene`, `Simulation`, `SimThread`, the commands (`Grab`, `Move`, `Release`,
...), `replay`, `Snapshot` and `record`.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from slinky3d.version import __version__

# The model's matrices are small: BLAS threads only add overhead and contention
# (the static-shape solves ran 2-20x slower with them on a busy machine).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# name -> (module, attribute). Imported on first use, so that `slinky3d --help` and the
# command-line parser load neither numba nor scipy (PEP 562).
_API = {
    "load_scene": ("slinky3d.scene.loader", "load"),
    "Simulation": ("slinky3d.runtime.simulation", "Simulation"),
    "SimThread": ("slinky3d.runtime.thread", "SimThread"),
    "Snapshot": ("slinky3d.runtime.snapshot", "Snapshot"),
    "SlinkySnapshot": ("slinky3d.runtime.snapshot", "SlinkySnapshot"),
    "record": ("slinky3d.output.recording", "record"),
    "replay": ("slinky3d.runtime.commands", "replay"),
    **{name: ("slinky3d.runtime.commands", name) for name in (
        "Grab", "Move", "Release", "Reset", "Pause", "Resume", "TogglePause", "Step",
        "TimeScale", "Load", "DriveBase", "TwistBase", "LetGo", "TakeHold")},
}

__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'slinky3d' has no attribute {name!r}")
    module, attr = _API[name]
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value  # once found, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
