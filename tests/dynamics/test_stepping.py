"""The step scheme itself: its order with springs and damping implicit, the error
control that sub-steps violent states, and the event interpolant."""

import numpy as np

from slinky3d.dynamics.events import first_root, quintic, taylor_hit
from slinky3d.dynamics.integrator import flow
from slinky3d.dynamics.workspace import COUNTERS, zeroed_record
from slinky3d.model import chain
from slinky3d.model.chain import BASE
from slinky3d.runtime.simulation import Simulation
from slinky3d.scene import loader as scene


def far_end_after(sc, h: float, seconds: float) -> np.ndarray:
    sim = Simulation(sc, h)
    sim.step(round(seconds / h))
    s = sim.slinkies[0]
    return chain.end_points(s.q, s.p.R)[-1]


def test_order_of_the_rosenbrock_step():
    """3Pb (damped, no contacts): halving h cuts the far end's error by about 2^3
    (order 3; the springs and the damping are both in the W-method's Jacobian)."""
    sc = scene.load("3Pb")
    ref = far_end_after(sc, 0.25e-3, 0.6)
    e4, e2, e1 = (np.linalg.norm(far_end_after(sc, h, 0.6) - ref)
                  for h in (4e-3, 2e-3, 1e-3))
    assert e4 < 1e-4  # m: a tenth of a millimetre at the default step
    assert e4 / e2 > 5.0 and e2 / e1 > 5.0


def violent(name: str = "hanging-steel"):
    """A damped steel Slinky, contacts off, its joints flung at ~30 rad/s."""
    sim = Simulation(scene.load(name, ["slinky.contact.enabled=false"]))
    s = sim.slinkies[0]
    s.qd[BASE:] = np.random.default_rng(3).normal(0.0, 30.0, s.p.N)
    return s


def one_flow(s, h, control, pieces=1):
    q, qd, sd = s.q.copy(), s.qd.copy(), s.sd.copy()
    cnt = zeroed_record(COUNTERS)
    for i in range(pieces):
        flow(q, qd, sd, i * h / pieces, h / pieces, s.locked, s.target, s.par, s.modes,
             s.work, cnt, control)
    return q, qd, int(cnt["evaluations"])


def test_error_control_substeps_a_violent_state():
    """Where the embedded estimate is over the tolerance the flow is halved: it is
    then much closer to a fine solution, and only then does it cost more."""
    s = violent()
    h = s.h
    qf, vf, _ = one_flow(s, h, False, pieces=64)
    q1, v1, n1 = one_flow(s, h, False)
    qc, vc, nc = one_flow(s, h, True)
    assert n1 == 4 and nc > 4
    assert np.abs(qc - qf).max() < 0.25 * np.abs(q1 - qf).max()
    # a calm state is not sub-stepped
    calm = Simulation(scene.load("hanging-steel")).slinkies[0]
    assert one_flow(calm, h, True)[2] == 4


def test_quintic_interpolant_and_its_first_root():
    """The event interpolant reproduces any quintic (values and slopes), and the
    root finder returns the first of two crossings, or none before a bound."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        P = np.polynomial.Polynomial(rng.normal(size=6))
        d1, d2 = P.deriv(), P.deriv(2)
        ends = (P(0), d1(0), d2(0), P(1), d1(1), d2(1))
        for s in rng.uniform(0, 1, 5):
            p, dp = quintic(s, *ends)
            assert abs(p - P(s)) < 1e-12 and abs(dp - d1(s)) < 1e-11
    # crossing zero at 0.3 (down), 0.6 (up) and 0.9 (down)
    P = np.polynomial.Polynomial.fromroots([0.3, 0.6, 0.9]) * -1.0
    d1, d2 = P.deriv(), P.deriv(2)
    ends = (P(0), d1(0), d2(0), P(1), d1(1), d2(1))
    assert P(0) > 0 and P(1) < 0
    assert abs(first_root(*ends, 2.0) - 0.3) < 1e-12
    assert first_root(*ends, 0.2) == 2.0  # a root is already known before 0.2


def test_taylor_hit_is_the_first_root_of_the_quadratic():
    """The short-range hit finder returns the first time a free coil's quadratic
    gap g + v t + a t^2 / 2 reaches 0 within the bound, for an approaching coil,
    one that leaves the bound and is pulled back, and none for locked, resting or
    receding ones."""
    tmin, tmax = 0.05, 1e-6
    j0 = BASE
    cases = [  # (gap, rate, acceleration), expected first root or None
        ((2e-8, -0.37, 50.0), None),
        ((0.0, 1e-6, -40.0), 2 * 1e-6 / 40.0),
        ((1e-9, 2e-3, 3.0), None),  # receding, speeding away
        ((0.0, 0.0, 1.0), None),  # resting, pulled off the bound
        ((0.0, 0.0, -1.0), 0.0),  # resting but pressed in: at once
    ]
    for (g, v, a), want in cases:
        q = np.full(j0 + 3, tmin + 1.0)  # the other coils far from the bound
        qd = np.zeros(j0 + 3)
        acc = np.zeros(j0 + 3)
        q[j0 + 1], qd[j0 + 1], acc[j0 + 1] = tmin + g, v, a
        locked = np.zeros(j0 + 3, dtype=np.bool_)
        t = taylor_hit(q, qd, acc, locked, j0, tmin, tmax)
        g = q[j0 + 1] - tmin  # the gap as stored
        if want is None and g > 0.0:  # approaching: the exact root of the quadratic
            want = np.min([r.real for r in np.roots([a / 2, v, g])
                           if abs(r.imag) < 1e-30 and r.real >= 0], initial=np.inf)
            want = want if want <= tmax else None
        if want is None:
            assert t > tmax, (g, v, a, t)
        else:
            assert abs(t - want) <= 1e-12 * max(want, 1e-12), (g, v, a, t, want)
            gap = g + v * t + 0.5 * a * t * t
            assert abs(gap) < 1e-18
        locked[j0 + 1] = True  # a locked coil is never a hit
        assert taylor_hit(q, qd, acc, locked, j0, tmin, tmax) > tmax
