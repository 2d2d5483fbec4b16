"""What the overlay is shown: the energy plot's rows gathered incrementally are the
history's own, through new steps, the ring dropping its oldest, and a reset."""

from dataclasses import replace

import numpy as np

from slinky3d.runtime.history import History
from slinky3d.runtime.simulation import Simulation
from slinky3d.runtime.snapshot import Energy
from slinky3d.scene.loader import load
from slinky3d.viewer.app.views import EnergyRows


def test_energy_rows_gathered_incrementally_are_the_historys():
    base = Simulation(load("hanging-plastic")).snapshot()
    rng = np.random.default_rng(1)
    history, rows = History(seconds=0.2, period=0.01), EnergyRows()

    def at(t):
        sl = [replace(s, energy=Energy(*rng.normal(size=5))) for s in base.slinkies]
        return replace(base, t=t, slinkies=sl)

    times = list(np.arange(0.0, 0.5, 0.004)) + list(np.arange(0.0, 0.3, 0.007))  # a reset
    for n, t in enumerate(times):
        history.add(at(float(t)))
        if n % 3 == 0:  # gathered now and then, as the plot does
            np.testing.assert_array_equal(rows.gather(history), history.energy_rows())
    history.clear()
    assert rows.gather(history).shape == (0, 6)
