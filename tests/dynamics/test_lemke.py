"""Lemke's method: its answers satisfy the complementarity conditions, on the problems
the world step poses (positive definite blocks and Stewart-Trinkle friction)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from slinky3d.dynamics.lemke import lemke


def solve(A, b):
    n = len(b)
    z = np.zeros(n)
    pivots = lemke(A, b, n, z, np.zeros((n + 1, n + 2)), np.zeros(n, np.int64),
                   np.zeros(2 * n + 1, np.int64), 10 * n + 20)
    return pivots, z


def assert_solves(A, b, z):
    w = A @ z + b
    scale = 1.0 + np.abs(b).max()
    assert z.min() >= 0.0
    assert w.min() >= -1e-9 * scale
    assert np.abs(z * w).max() <= 1e-9 * scale * (1.0 + z.max())


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 25), st.integers(0, 2**32 - 1))
def test_positive_definite_problems_are_solved(n, seed):
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(n, n))
    A = B @ B.T + 1e-3 * np.eye(n)
    b = rng.normal(size=n)
    pivots, z = solve(A, b)
    assert pivots >= 0
    assert_solves(A, b, z)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(0, 10), st.floats(0.0, 2.0), st.integers(0, 2**32 - 1))
def test_friction_problems_are_solved(contacts, joints, mu, seed):
    """Stewart and Trinkle's planar friction LCP (friction_lcp.solve's layout): per
    contact lam_n, lam_+, lam_-, beta; the sliding rate and the cone row."""
    rng = np.random.default_rng(seed)
    nb = joints + 2 * contacts
    B = rng.normal(size=(nb, nb))
    W = B @ B.T + 1e-6 * np.eye(nb)
    u = rng.normal(size=nb)
    nz = joints + 4 * contacts
    # the basis rows in the LCP's order: joints, then per contact (normal, tangent)
    norm = [*range(joints), *(joints + 2 * c for c in range(contacts))]
    znorm = [*range(joints), *(joints + 4 * c for c in range(contacts))]
    A = np.zeros((nz, nz))
    b = np.zeros(nz)
    for i, (ri, zi) in enumerate(zip(norm, znorm, strict=True)):
        for rj, zj in zip(norm, znorm, strict=True):
            A[zi, zj] = W[ri, rj]
        b[zi] = u[ri]
        del i
    for c in range(contacts):
        t, zc = joints + 2 * c + 1, joints + 4 * c
        for ri, zi in zip(norm, znorm, strict=True):
            A[zi, zc + 1], A[zi, zc + 2] = W[ri, t], -W[ri, t]
            A[zc + 1, zi], A[zc + 2, zi] = W[t, ri], -W[t, ri]
        for d in range(contacts):
            td, zd = joints + 2 * d + 1, joints + 4 * d
            A[zc + 1, zd + 1], A[zc + 1, zd + 2] = W[t, td], -W[t, td]
            A[zc + 2, zd + 1], A[zc + 2, zd + 2] = -W[t, td], W[t, td]
        A[zc + 1, zc + 3] = A[zc + 2, zc + 3] = 1.0
        b[zc + 1], b[zc + 2] = u[t], -u[t]
        A[zc + 3, zc], A[zc + 3, zc + 1], A[zc + 3, zc + 2] = mu, -1.0, -1.0
    pivots, z = solve(A, b)
    assert pivots >= 0
    assert_solves(A, b, z)
    # the friction impulse lies in the cone
    for c in range(contacts):
        zc = joints + 4 * c
        assert abs(z[zc + 1] - z[zc + 2]) <= mu * z[zc] * (1 + 1e-9) + 1e-12


def test_a_solved_problem_takes_no_pivot():
    pivots, z = solve(np.eye(3), np.array([1.0, 0.0, 2.0]))
    assert pivots == 0 and not z.any()
