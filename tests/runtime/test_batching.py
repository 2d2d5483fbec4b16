"""How the steps are batched changes nothing: Simulation.step(n) in one call, in chunks or
one at a time ends on the same state, bit for bit (the thread steps in chunks the wall
clock decides, the recorder sample by sample, a replay one step at a time)."""

from __future__ import annotations

import pytest

from slinky3d.runtime.simulation import Simulation
from slinky3d.scene.loader import load


def _hash(name: str, chunks: list[int], overrides: tuple[str, ...]) -> str:
    sim = Simulation(load(name, overrides))
    for n in chunks:
        sim.step(n)
    return sim.state_hash()


# resonance: the drive starts at t = 1 s, a time the steps reach by adding h; drop-plastic:
# the release and the landing on the floor (the world's time-stepping pieces), awake
# throughout (a Slinky that may sleep is stepped one step at a time anyway).
@pytest.mark.parametrize("name, nsteps, overrides", [
    ("resonance", 300, ()), ("drop-plastic", 150, ("sleep=false",))])
def test_batching_of_the_steps_changes_nothing(name, nsteps, overrides):
    whole = _hash(name, [nsteps], overrides)
    assert _hash(name, [7] * (nsteps // 7) + [nsteps % 7], overrides) == whole
    assert _hash(name, [1] * nsteps, overrides) == whole
