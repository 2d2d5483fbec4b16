"""Static shapes: KKT conditions, end conditions, winding and the paper's set-ups."""

import math

import numpy as np
import pytest

from slinky3d.errors import SlinkyError
from slinky3d.model import chain, static_shape
from slinky3d.model.params import preset

PI = math.pi
# The paper's tests (docs/model.md section 7): far end offset in units of R, phi_B = pi for all.
PAPER = {"1P": ("plastic", -5, 0), "2P": ("plastic", -10, 0), "3P": ("plastic", -2, 5),
         "4S": ("steel", -2, 5)}


@pytest.fixture(scope="module", params=["plastic", "steel"])
def hung(request):
    p = preset(request.param)
    return p, static_shape.hanging(p)


def far_of(p, dx, dy):
    return np.array([dx * p.R, dy * p.R])


_cache: dict = {}


def held(name, dx, dy, phi_B=PI):
    """both_ends for a set-up, computed once per test session."""
    key = (name, dx, dy, phi_B)
    if key not in _cache:
        p = preset(name)
        far = far_of(p, dx, dy)
        _cache[key] = p, far, static_shape.both_ends(p, far=far, phi_B=phi_B)
    return _cache[key]


def axis_angle(q):
    """Bisector of consecutive composite angles: the Slinky axis' direction up to pi/2."""
    Th = chain.composite(q[chain.BASE:], q[2])
    return 0.5 * (Th[:-1] + Th[1:])


@pytest.mark.parametrize("name", ["plastic", "steel"])
def test_objective_matches_chain(name):
    p = preset(name)
    rng = np.random.default_rng(1)
    q = np.r_[0.1, -0.2, 0.3, p.theta_min + rng.uniform(0, 0.4, p.N)]
    pb = static_shape._Problem.make(p, q[:2], q[2])
    f, g = pb.fun(q[chain.BASE:])
    assert np.isclose(f + p.N * p.m * p.g * q[1], chain.potential_energy(p, q), rtol=0,
                      atol=1e-14)
    assert np.allclose(g, chain.potential_gradient(p, q)[chain.BASE:], rtol=1e-12, atol=1e-15)


def test_penalty_gradient_and_hessian_fd():
    p = preset("plastic")
    rng = np.random.default_rng(2)
    th = p.theta_min + rng.uniform(0, 0.4, p.N)
    pb = static_shape._Problem.make(p, (0, 0), 0.0)
    pb.targets, pb.alpha = static_shape._targets(p, np.array([-0.2, 0.05]), PI), 5.0
    h = 1e-6
    E = np.eye(p.N)
    fd = np.array([(pb.fun(th + h * e)[0] - pb.fun(th - h * e)[0]) / (2 * h) for e in E])
    assert np.allclose(pb.fun(th)[1], fd, rtol=1e-6, atol=1e-10)
    # Hessian of V alone: spring + gravity curvature, diagonal in Theta.
    pb.alpha = 0.0
    _, u, _ = pb.geometry(th)
    H = static_shape._theta_hessian(pb, -pb.w * u[:, 1])
    fdH = np.array([(pb.fun(th + h * e)[1] - pb.fun(th - h * e)[1]) / (2 * h) for e in E])
    assert np.allclose(H, fdH, rtol=1e-5, atol=1e-9)


def test_structured_solve_matches_dense():
    p = preset("steel")
    rng = np.random.default_rng(3)
    pb = static_shape._Problem.make(p, (0, 0), 0.0)
    hTh = rng.normal(size=p.N) * p.k_coil
    fr = rng.uniform(size=p.N) > 0.3
    b = rng.normal(size=(int(fr.sum()), 4))
    H = static_shape._theta_hessian(pb, hTh)[np.ix_(fr, fr)]
    assert np.allclose(H @ static_shape._solve_free(pb, hTh, fr, b), b, atol=1e-9)


def test_hanging_kkt(hung):
    p, q = hung
    th = q[chain.BASE:]
    r = static_shape.residuals(p, q, far_held=False, second_order=True)
    assert r["stationarity"] < 1e-10  # relative to the largest spring torque
    assert r["bound_violation"] == 0.0 and th.min() >= p.theta_min
    # Collapsed joints push into the bound, and form one run ending at the bottom.
    col = np.flatnonzero(th <= p.theta_min + static_shape.COLLAPSED_TOL)
    assert col.size >= 1 and r["bound_multiplier_min"] > 0
    assert np.array_equal(col, np.arange(p.N - col.size, p.N))
    assert r["curvature_min"] > 0  # a strict minimum, not a saddle
    # Hangs straight down: the free end is the lowest point, well below the anchor.
    E = chain.end_points(q, p.R)
    assert np.argmin(E[:, 1]) >= p.N - 1 and E[-1, 1] < -10 * p.R
    assert np.all(np.abs(E[:, 0] + p.R) < 1.3 * p.R)
    # Tension grows towards the top: below the holder's end effect (the first few
    # joints alternate) the fold angles never decrease upwards.
    assert np.all(np.diff(th[p.N // 4:]) <= 1e-12)


def test_hanging_plastic_has_collapsed_bottom():
    p = preset("plastic")
    r = static_shape.residuals(p, static_shape.hanging(p), far_held=False)
    assert r["n_collapsed"] >= 2


def test_a_slinky_too_weak_to_lift_any_coil_hangs_fully_collapsed():
    """Tiny hoops make theta_min so large that the springs' pre-tension carries the
    whole Slinky: every joint rests on its bound, and that is still a KKT point."""
    p = preset("plastic", R=1e-4)
    q = static_shape.hanging(p)
    r = static_shape.residuals(p, q, far_held=False)
    assert r["n_collapsed"] == p.N and r["bound_multiplier_min"] >= 0.0
    assert np.all(q[chain.BASE:] == p.theta_min)


def test_hanging_anchor_pose(hung):
    p, q = hung
    # Moving the anchor translates the shape.
    q2 = static_shape.hanging(p, anchor=(0.3, 1.2))
    E, E2 = chain.end_points(q, p.R), chain.end_points(q2, p.R)
    assert np.allclose(E2 - [0.3, 1.2], E, atol=1e-10)
    # Turning it is no symmetry (joint 1's spring acts against the holder), but the
    # shape is still a KKT point.
    q3 = static_shape.hanging(p, phi_A=0.2)
    assert static_shape.residuals(p, q3, far_held=False)["stationarity"] < 1e-10
    assert not np.allclose(q3[chain.BASE:], q[chain.BASE:])


def test_residuals_detect_non_equilibrium(hung):
    p, q = hung
    q = q.copy()
    q[chain.BASE + p.N // 2] += 1e-3
    assert static_shape.residuals(p, q, far_held=False)["stationarity"] > 1e-4


@pytest.mark.parametrize("case", PAPER)
def test_both_ends_kkt(case):
    p, far, q = held(*PAPER[case])
    r = static_shape.residuals(p, q, far_held=True, far=far, phi_B=PI, second_order=True)
    assert r["far_error"] < 1e-9  # brief: < 1e-4 m; Newton gets machine precision
    assert r["direction_error"] < 1e-9
    # Last bar from E_N to E_{N+1} points along (-1)^N (cos phi_B, sin phi_B).
    E = chain.end_points(q, p.R)
    assert np.allclose((E[-1] - E[-2]) / (2 * p.R), (-1) ** p.N * np.array([-1.0, 0.0]),
                       atol=1e-9)
    # grad V in the span of the end constraints' rows on the free joints.
    assert r["stationarity"] < 1e-10
    assert r["bound_violation"] == 0.0 and q[chain.BASE:].min() >= p.theta_min
    assert r["bound_multiplier_min"] > 0 and r["curvature_min"] > 0
    # No spurious turn: Theta_N - phi_A = -pi (not -3 pi), the axis turns at most ~pi.
    assert np.isclose(r["winding"], -PI, atol=1e-9)
    # The axis turns by about pi overall (the J's rising arm leans a little past
    # vertical); a spurious full turn would add 2 pi.
    psi = axis_angle(q)
    assert psi.max() - psi.min() < 1.25 * PI


@pytest.mark.parametrize("case", ["1P", "2P"])
def test_U_shape(case):
    p, far, q = held(*PAPER[case])
    E = chain.end_points(q, p.R)
    # A clean U: the axis turns monotonically, the bottom is far below both ends and
    # lies between them, near the middle of the chain.
    assert np.all(np.diff(axis_angle(q)) < 0)
    k = int(np.argmin(E[:, 1]))
    assert E[k, 1] < -3 * p.R and far[0] - 2 * p.R < E[k, 0] < 2 * p.R
    assert abs(k - p.N / 2) < p.N / 4


@pytest.mark.parametrize("case", ["3P", "4S"])
def test_J_shape(case):
    p, far, q = held(*PAPER[case])
    E = chain.end_points(q, p.R)
    assert far[1] > 0  # far end above the anchor
    assert E[:, 1].min() < -p.R  # lowest point below both ends
    # Down from the anchor first, then the last bars rise to the far end.
    # (every other end point: one per coil, free of the zigzag)
    assert E[p.N // 8, 1] < 0 and np.all(np.diff(E[-9::2, 1]) > 0)


@pytest.mark.parametrize("name", ["plastic", "steel"])
def test_phi_B_zero_is_a_twisted_fan(name):
    p, far, q0 = held(name, -5, 0, 0.0)
    r0 = static_shape.residuals(p, q0, far_held=True, far=far, phi_B=0.0, second_order=True)
    assert r0["far_error"] < 1e-9 and r0["stationarity"] < 1e-10
    assert r0["curvature_min"] > 0 and r0["bound_violation"] == 0.0
    assert abs(r0["winding"]) < 1e-9  # no full turn either way
    pu, _, qu = held(name, -5, 0, PI)
    ru = static_shape.residuals(pu, qu, far_held=True, far=far, phi_B=PI)
    # Distinct shapes: the fan collapses many more coils and its axis folds back.
    assert r0["n_collapsed"] > ru["n_collapsed"] + 10
    assert np.diff(axis_angle(q0)).max() > 0.05
    assert np.abs(chain.end_points(q0, p.R) - chain.end_points(qu, p.R)).max() > 2 * p.R


def test_theta_guess_stays_on_its_branch():
    p, far, q = held(*PAPER["1P"])
    q2 = static_shape.both_ends(p, far=far, phi_B=PI, theta_guess=q[chain.BASE:])
    assert np.allclose(q2, q, atol=1e-9)


def test_penalty_fallback_when_newton_fails(monkeypatch):
    def broken(*a, **k):
        raise np.linalg.LinAlgError("singular")

    monkeypatch.setattr(static_shape, "_newton_kkt", broken)
    p = preset("plastic")
    far = far_of(p, -5, 0)
    q = static_shape.both_ends(p, far=far, phi_B=PI)
    r = static_shape.residuals(p, q, far_held=True, far=far, phi_B=PI)
    assert r["far_error"] < static_shape.FAR_TOL and r["bound_violation"] == 0.0
    # The penalty's minimum is stationary for V plus end forces: still KKT.
    assert r["stationarity"] < 1e-5 and np.isclose(r["winding"], -PI, atol=1e-6)


def test_out_of_reach():
    p = preset("plastic")
    with pytest.raises(static_shape.EquilibriumError, match="out of reach") as ei:
        static_shape.both_ends(p, far=(2 * p.R * p.N + 0.01, 0.0))
    assert isinstance(ei.value, SlinkyError) and "\n" not in str(ei.value)
    with pytest.raises(static_shape.EquilibriumError):
        static_shape.both_ends(p, far=(math.nan, 0.0))
    with pytest.raises(static_shape.EquilibriumError):
        static_shape.both_ends(p, far=(-0.1, 0.0), theta_guess=np.zeros(3))


def test_penalty_hessian_matches_fd():
    # The minimiser's Newton steps use this Hessian (spring, curvature in Theta, the
    # end errors' Gauss-Newton and second-order terms): it must be the true one.
    p = preset("plastic")
    rng = np.random.default_rng(4)
    th = p.theta_min + rng.uniform(0, 0.4, p.N)
    pb = static_shape._Problem.make(p, (0, 0), 0.0)
    pb.targets, pb.alpha = static_shape._targets(p, np.array([-0.2, 0.05]), PI), 5.0
    h, E = 1e-6, np.eye(p.N)
    fdH = np.array([(pb.fun(th + h * e)[1] - pb.fun(th - h * e)[1]) / (2 * h) for e in E])
    hTh, G = pb.curvature(th)
    H = np.array([pb.hessian_times(hTh, G, e) for e in E])
    assert np.allclose(H, fdH, rtol=1e-6, atol=1e-8)


def test_minimiser_respects_the_bound_and_is_stationary():
    p = preset("steel")
    pb = static_shape._Problem.make(p, (0, 0), 0.0)
    pb.targets, pb.alpha = static_shape._targets(p, far_of(p, -5, 0), PI), 50.0
    th = static_shape._minimize(pb, static_shape._initial_hanging(p), gtol=1e-9 * p.k_coil)
    _, g = pb.fun(th)
    at = th <= p.theta_min
    assert th.min() >= p.theta_min and at.any()
    assert np.all(g[at] >= 0)  # bound joints push into the bound
    assert np.max(np.abs(g[~at])) < 1e-8 * p.k_coil


@pytest.mark.parametrize("kind", ["hanging", "both_ends"])
def test_cost_grows_linearly_with_n(kind):
    # A 10000 half-hoop Slinky takes seconds, not minutes: the solve is O(N). Timed as
    # best of runs so a busy machine does not fail it; 5x the half hoops may cost at
    # most 15x (O(N^2) would be 25x, and L-BFGS-B was worse).
    import time

    def cost(n):
        p = preset("steel", n_coils=n / 2)
        best = math.inf
        for _ in range(3):
            t = time.perf_counter()
            if kind == "hanging":
                q = static_shape.hanging(p)
            else:
                q = static_shape.both_ends(p, far=far_of(p, -5, 0), phi_B=PI)
            best = min(best, time.perf_counter() - t)
        far = far_of(p, -5, 0) if kind == "both_ends" else None
        r = static_shape.residuals(p, q, far_held=far is not None, far=far, phi_B=PI)
        assert r["stationarity"] < 1e-9
        return best

    assert cost(2000) < 15 * cost(400)


def test_a_solve_that_runs_out_of_iterations_fails_in_one_line(monkeypatch):
    # Never a silent wait: past the budget the solve stops with one line.
    monkeypatch.setattr(static_shape, "ITERATION_BUDGET", 5)
    p = preset("plastic")
    with pytest.raises(static_shape.EquilibriumError, match="5 Newton iterations") as ei:
        static_shape.both_ends(p, far=far_of(p, -5, 0), phi_B=PI)
    assert "\n" not in str(ei.value)


def test_numbers_that_break_down_fail_in_one_line():
    # Parameters many orders of magnitude apart: an EquilibriumError, no warnings.
    import warnings

    p = preset("plastic").with_(k_coil=1e-300, mass=1e300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(static_shape.EquilibriumError) as ei:
            static_shape.both_ends(p, far=far_of(p, -5, 0), phi_B=PI)
    assert "\n" not in str(ei.value)
