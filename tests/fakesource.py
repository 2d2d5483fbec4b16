"""A stand-in for the solver thread that implements the viewer's Source protocol
(runtime/source.py): it never moves, records what it is sent, and its history holds its
one snapshot over the last few seconds (so that the instant replay has a past)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from slinky3d.runtime import commands
from slinky3d.runtime.history import History
from slinky3d.runtime.simulation import Simulation


class StillSource:
    def __init__(self, scene, snap=None, seconds: float = 2.0):
        self.initial_scene = scene
        self.snap = snap if snap is not None else Simulation(scene).snapshot()
        self.sent: list = []
        self.log: list = []
        self.h_override = None
        self.paused = False
        self.steps = 0  # it never steps
        self.error = ""
        self.stopped = False
        self.history = History()
        for t in np.arange(0.0, seconds, 1 / 240):
            self.history.add(replace(self.snap, t=float(t)))

    def start(self) -> None:
        pass

    def stop(self) -> None:
        self.stopped = True

    def send(self, cmd) -> None:
        self.sent.append(cmd)
        if isinstance(cmd, commands.Load):
            self.snap = Simulation(cmd.scene).snapshot()

    def latest_pair(self):
        return self.snap, self.snap
