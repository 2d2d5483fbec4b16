"""Snapshots of the 3D solver (dynamics/solver3d.py): what the renderer draws of a 3D
Slinky, each half hoop from its own frame (SlinkySnapshot.bulge, runtime/snapshot.py).

The 3D solver is not behind `Simulation` yet (docs/solver.md, "The 3D solver"); this is
how its motion is drawn meanwhile (tests, `screenshot`-like pictures).
"""

from __future__ import annotations

import numpy as np

from slinky3d.dynamics.solver3d import Solver3D
from slinky3d.model import chain3d
from slinky3d.runtime.snapshot import Energy, SlinkySnapshot, Snapshot


def slinky_snapshot(s: Solver3D) -> SlinkySnapshot:
    """One 3D Slinky now: its end points (N + 1, 3) and bulges; theta, the joints'
    torsion (phi about b: the paper's theta in a planar state); contact, the joints
    locked closed; its kinetic, gravity and spring energy (chain3d's)."""
    p = s.p
    x, frames, v, omega = s.pose()
    holder = s.H if s.anchor == "clamped" else None
    phi = s.q[3:].reshape(-1, 3)
    kinetic = chain3d.kinetic_energy(p, frames, v, omega, s.mass)
    gravity = chain3d.gravity_energy(p, x, frames, s.mass)
    spring = chain3d.spring_energy(p, frames, holder, s.K)
    return SlinkySnapshot(
        ends=chain3d.end_points(x, frames, p.R), theta=phi[:, 1].copy(),
        contact=s.locked, R=p.R, pitch=p.delta, theta_min=p.theta_min,
        anchor_held=s.anchor != "free", preset=p.preset,
        energy=Energy(kinetic, gravity, spring, 0.0, float(s.impact_loss[0])),
        bulge=np.ascontiguousarray(frames[:, :, 1]))


def snapshot(*solvers: Solver3D) -> Snapshot:
    """The 3D Slinkies at their (common) time."""
    return Snapshot(t=solvers[0].t if solvers else 0.0,
                    slinkies=tuple(slinky_snapshot(s) for s in solvers))
