"""The adaptive reference integrator: conservation laws and the impact law in a run."""

import json

import numpy as np
import pytest
from runs import recorded

from slinky3d.model import chain
from slinky3d.reference import integrator
from slinky3d.scene import loader
from slinky3d.scene.spec import ContactSpec


def test_energy_conserved_without_damping_or_contacts():
    sc = loader.load("1Pb", ["slinky.C_D=0"])
    spec = sc.slinkies[0]
    times = np.linspace(0, 0.3, 7)
    out, _ = integrator.simulate(spec, times)
    E = np.array([chain.energy(spec.params, q, qd) for _, q, qd, _ in out])
    swing = max(chain.kinetic_energy(spec.params, q, qd) for _, q, qd, _ in out)
    assert swing > 1e-3  # it does move
    assert np.abs(E - E[0]).max() < 1e-8 * swing


class Spy(integrator.ReferenceSolver):
    """Records the state around every impact."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.events: list[tuple] = []

    def _impact(self):
        q, qd = self.s.q.copy(), self.s.qd.copy()
        super()._impact()
        self.events.append((q, qd, self.s.q.copy(), self.s.qd.copy()))


@pytest.mark.parametrize("name, t_end", [("3Pa", 0.25), ("drop-plastic", 0.36)])
def test_impacts_in_a_run(name, t_end):
    """No contact ends a step below theta_min - 1e-9; after an impact the touching
    joints do not close; energy never rises at an impact; a free Slinky's linear
    momentum is unchanged by impacts."""
    spec = loader.load(name).slinkies[0]
    p = spec.params
    r = Spy(spec)
    samples = r.advance_to(t_end, np.linspace(0, t_end, 26)[1:])
    assert len(r.events) >= 3
    for _, q, _, _ in samples:
        assert q[chain.BASE:].min() >= p.theta_min - 1e-9
    for q0, qd0, q1, qd1 in r.events:
        free = bool(r.s.free)
        touching = q1[chain.BASE:] <= p.theta_min + chain.TOUCHING
        assert qd1[chain.BASE:][touching].min() >= -1e-9
        assert chain.kinetic_energy(p, q1, qd1) <= chain.kinetic_energy(p, q0, qd0) + 1e-14
        if free and name == "drop-plastic":
            mom = [chain.centre_velocities(q, v, p.R).sum(axis=0) * p.m
                   for q, v in ((q0, qd0), (q1, qd1))]
            assert np.allclose(mom[0], mom[1], atol=1e-12)


def test_paper_rule_is_an_option():
    """The paper's pairwise rule also stops the touching joints, but it is not the
    rigid law: the two runs part."""
    sc = loader.load("3Pa")
    spec = sc.slinkies[0]
    paper = spec.__class__(**{**spec.__dict__, "contact": ContactSpec(law="paper")})
    times = np.linspace(0, 0.15, 4)
    a, _ = integrator.simulate(spec, times)
    b, sb = integrator.simulate(paper, times)
    assert sb["impacts"] >= 1
    assert max(np.abs(x[1] - y[1]).max() for x, y in zip(a, b, strict=True)) > 1e-6
    for _, q, _, _ in b:
        assert q[chain.BASE:].min() >= spec.params.theta_min - 1e-9


def test_recorded_npz_fields():
    d = recorded("1Pb", 0.05, "reference", 100.0)
    n = len(d["t"])
    p = json.loads(d["params"])
    assert d["ends"].shape == (n, p["N"] + 1, 2)
    assert d["theta"].shape == d["theta_dot"].shape == (n, p["N"])
    assert np.allclose(d["ends"][:, 0], 0.0)  # the anchored end E_1 is held at the origin
    for key in ("N", "m", "R", "I", "k_coil", "C_D", "g", "theta_min", "phi_A"):
        assert key in p
