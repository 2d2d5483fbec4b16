"""The stage: where the floor goes and how big it is, fixed for a whole run."""

from __future__ import annotations

from dataclasses import dataclass

from slinky3d.runtime.snapshot import Snapshot
from slinky3d.scene.look import Look
from slinky3d.viewer.helix import bounds


@dataclass(frozen=True)
class Stage:
    """What stays put during a run: the floor height and the region the floor is built on."""

    floor_y: float
    centre_x: float
    size: float  # m, the scene's extent; sets the floor's size, fade and tiles


def stage_for(look: Look, snap: Snapshot, reach: float | None = None) -> Stage:
    """The stage for a scene, from its look and its first snapshot.

    reach: the lowest y the Slinkies are expected to get to (e.g. hanging from a held
    end after a release); the automatic floor goes below that too.
    """
    lo, hi = bounds(snap, pad=0.0)
    if reach is not None:
        lo[1] = min(lo[1], reach)
    for x0, x1, _ in look.stairs:
        lo[0], hi[0] = min(lo[0], x0), max(hi[0], x1)
    size = float(max(hi[0] - lo[0], hi[1] - lo[1], 0.3))
    floor_y = look.floor_y
    if floor_y is None:
        floor_y = float(lo[1] - max(0.08, 0.1 * (hi[1] - lo[1])))
    return Stage(float(floor_y), 0.5 * float(lo[0] + hi[0]), size)
