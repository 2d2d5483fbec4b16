"""Chain kinematics, energy and the dense equations of motion (vectorized numpy).

Generalised coordinates, always N + 3 of them:

    q = (x_A, y_A, phi_A, theta_1, ..., theta_N)

(x_A, y_A) is the anchored end E_1 and phi_A the anchor orientation; which of
these are free or prescribed is the solver's business (a clamped anchor prescribes
the first three; a free Slinky prescribes theta_1 instead, which then has no
spring, so the anchor orientation carries bar 1's rotation).

This module is the *dense* formulation (mass matrix assembled from the kinematics,
O(N^2)); it backs the reference integrator and the tests. The real-time solver uses
the O(N) recursive algorithm in `slinky3d.dynamics.articulated_body`; the two are
checked against each other.
"""

from __future__ import annotations

import numpy as np

from slinky3d.model.params import Params

BASE = 3  # x_A, y_A, phi_A
TOUCHING = 1e-10  # rad: a joint this close to theta_min is touching (in contact)
# rad/s: a touching joint this slow is at rest (a resting contact, not a hit); one value
# so that both solvers agree on which contacts rest.
RESTING_RATE = 1e-9


def first_joint(free_anchor: bool) -> int:
    """Index in q of the first torsion joint the dynamics moves (and that can touch):
    theta_1 when the anchor is held, theta_2 when it is free (theta_1 is then frozen)."""
    return BASE + 1 if free_anchor else BASE


def release_anchor(qd: np.ndarray) -> None:
    """The anchor lets go (in place): bar 1's rotation rate moves from theta_1 to phi_A,
    and theta_1, which loses its spring, stays frozen from then on."""
    qd[2] += qd[BASE]
    qd[BASE] = 0.0


def signs(n: int) -> np.ndarray:
    """s_k = (-1)^(k+1) for k = 1..n: theta_k enters Theta_k with this sign."""
    s = np.ones(n)
    s[1::2] = -1.0
    return s


def composite(theta: np.ndarray, phi_A: float) -> np.ndarray:
    """Composite angles Theta_k = phi_A + sum_{j<=k} (-1)^(j+1) theta_j."""
    return phi_A + np.cumsum(signs(theta.shape[-1]) * theta, axis=-1)


def torsion(Theta: np.ndarray, phi_A: float) -> np.ndarray:
    """Inverse of `composite`."""
    d = np.diff(Theta, prepend=phi_A)
    return signs(Theta.shape[-1]) * d


def bar_dirs(Theta: np.ndarray) -> np.ndarray:
    """Unit vectors u_k from E_k to E_{k+1}: (-1)^k (cos Theta_k, sin Theta_k)."""
    s = -signs(Theta.shape[-1])
    return s[:, None] * np.stack([np.cos(Theta), np.sin(Theta)], axis=-1)


def end_points(q: np.ndarray, R: float) -> np.ndarray:
    """(N+1, 2) end points E_1..E_{N+1}."""
    u = bar_dirs(composite(q[BASE:], q[2]))
    E = np.empty((u.shape[0] + 1, 2))
    E[0] = q[:2]
    E[1:] = q[:2] + np.cumsum(2 * R * u, axis=0)
    return E


def centres(q: np.ndarray, R: float) -> np.ndarray:
    """(N, 2) bar midpoints C_k."""
    E = end_points(q, R)
    return 0.5 * (E[:-1] + E[1:])


def theta_jacobian(n: int) -> np.ndarray:
    """d Theta / d q  (n x (n+3)): constant."""
    J = np.zeros((n, n + BASE))
    J[:, 2] = 1.0
    J[:, BASE:] = np.tril(np.ones((n, n))) * signs(n)[None, :]
    return J


def composite_rates(q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    n = q.shape[0] - BASE
    return qd[2] + np.cumsum(signs(n) * qd[BASE:])


def end_velocities(q: np.ndarray, qd: np.ndarray, R: float) -> np.ndarray:
    """(N+1, 2) velocities of the end points E_1..E_{N+1}."""
    u = bar_dirs(composite(q[BASE:], q[2]))
    w = composite_rates(q, qd)
    du = w[:, None] * np.stack([-u[:, 1], u[:, 0]], axis=-1)  # d u_k / dt
    V = np.empty((u.shape[0] + 1, 2))
    V[0] = qd[:2]
    V[1:] = qd[:2] + np.cumsum(2 * R * du, axis=0)
    return V


def centre_velocities(q: np.ndarray, qd: np.ndarray, R: float) -> np.ndarray:
    """(N, 2) velocities of the bar midpoints."""
    u = bar_dirs(composite(q[BASE:], q[2]))
    w = composite_rates(q, qd)
    du = w[:, None] * np.stack([-u[:, 1], u[:, 0]], axis=-1)  # d u_k / dt
    Ed = np.cumsum(2 * R * du, axis=0) - 2 * R * du  # velocity of E_k, minus base
    return qd[:2] + Ed + R * du


def kinetic_energy(p: Params, q: np.ndarray, qd: np.ndarray) -> float:
    w = composite_rates(q, qd)
    v = centre_velocities(q, qd, p.R)
    return 0.5 * p.I * float(w @ w) + 0.5 * p.m * float(np.sum(v * v))


def spring_mask(p: Params, free_anchor: bool) -> np.ndarray:
    """Which joints carry a torsion spring: all, except joint 1 of a free Slinky."""
    mask = np.ones(p.N)
    mask[: first_joint(free_anchor) - BASE] = 0.0
    return mask


def potential_energy(p: Params, q: np.ndarray, free_anchor: bool = False) -> float:
    th = q[BASE:]
    spring = 0.5 * p.k_coil * float(np.sum(spring_mask(p, free_anchor) * th * th))
    return spring + p.m * p.g * float(np.sum(centres(q, p.R)[:, 1]))


def energy(p: Params, q: np.ndarray, qd: np.ndarray, free_anchor: bool = False) -> float:
    return kinetic_energy(p, q, qd) + potential_energy(p, q, free_anchor)


def _centre_weights(n: int, R: float) -> np.ndarray:
    """S_ij = sum_k c_ki c_kj with c_ki = dC_k/dTheta_i magnitude (2R, R or 0)."""
    j = np.arange(1, n + 1)
    jmax = np.maximum.outer(j, j)
    S = 2 * R * R + 4 * R * R * (n - jmax)
    np.fill_diagonal(S, R * R + 4 * R * R * (n - j))
    return S


def mass_matrix(p: Params, q: np.ndarray) -> np.ndarray:
    """Dense (N+3) x (N+3) mass matrix M(q) = I J_Th^T J_Th + m sum_k J_k^T J_k."""
    n = p.N
    u = bar_dirs(composite(q[BASE:], q[2]))
    perp = np.stack([-u[:, 1], u[:, 0]], axis=-1)  # dC/dTheta_i direction
    # Theta-space block of the centres' part, O(N^2) without an N^3 product.
    MTT = p.m * (u @ u.T) * _centre_weights(n, p.R) + p.I * np.eye(n)
    # Coupling of base translation with Theta_i: m sum_{k>=i} c_ki perp_i.
    count = 2 * p.R * (n - np.arange(1, n + 1)) + p.R
    MxT = p.m * (perp * count[:, None]).T  # (2, n)
    # Theta = phi_A + L S theta (L: lower-triangular ones, S: signs), so the
    # theta block is S L^T MTT L S: two reverse cumulative sums, O(N^2) not O(N^3).
    sg = signs(n)
    X = np.cumsum(MTT[:, ::-1], axis=1)[:, ::-1]  # MTT L
    X = np.cumsum(X[::-1], axis=0)[::-1]  # L^T MTT L
    nq = n + BASE
    M = np.zeros((nq, nq))
    M[BASE:, BASE:] = sg[:, None] * X * sg[None, :]
    colsum = MTT.sum(axis=0)  # d/dphi_A couples with every Theta
    cphi = np.cumsum(colsum[::-1])[::-1] * sg  # row phi_A against theta
    M[2, BASE:] = cphi
    M[BASE:, 2] = cphi
    M[2, 2] = colsum.sum()
    # base translation against (phi_A, theta): MxT J_Theta
    a = np.cumsum(MxT[:, ::-1], axis=1)[:, ::-1] * sg  # (2, n)
    M[:2, 2] = MxT.sum(axis=1)
    M[2, :2] = M[:2, 2]
    M[:2, BASE:] = a
    M[BASE:, :2] = a.T
    M[0, 0] += p.mass
    M[1, 1] += p.mass
    return M


def bias_forces(
    p: Params, q: np.ndarray, qd: np.ndarray, free_anchor: bool = False
) -> np.ndarray:
    """Generalised forces Q(q, qd) without damping: velocity products, springs, gravity.

    M qdd = Q + damping + external. The velocity products are those of the
    centripetal accelerations of the centres, sum_{i<=k} c_ki Theta_i'^2 u_i.
    """
    n = p.N
    Th = composite(q[BASE:], q[2])
    u = bar_dirs(Th)
    perp = np.stack([-u[:, 1], u[:, 0]], axis=-1)
    w = composite_rates(q, qd)
    cen = 2 * p.R * w[:, None] ** 2 * u
    # M qdd = sum_k J_k^T m (g - Jdot_k qd); -Jdot_k qd = +sum_i c_ki Theta_i'^2 u_i.
    acc = (np.cumsum(cen, axis=0) - cen) + p.R * w[:, None] ** 2 * u
    acc[:, 1] -= p.g
    # Generalised force on Theta_i: m sum_{k>=i} c_ki perp_i . acc_k
    f = p.m * acc
    tail = np.cumsum(f[::-1], axis=0)[::-1]  # sum_{k>=i} f_k
    after = tail - f  # sum_{k>i} f_k
    QT = np.einsum("ij,ij->i", perp, 2 * p.R * after + p.R * f)
    Q = np.empty(n + BASE)
    Q[2] = QT.sum()
    Q[BASE:] = signs(n) * np.cumsum(QT[::-1])[::-1]  # J_Theta^T QT
    Q[:2] = 0.0
    Q[:2] += tail[0]
    Q[BASE:] -= p.k_coil * spring_mask(p, free_anchor) * q[BASE:]
    return Q


def potential_gradient(p: Params, q: np.ndarray, free_anchor: bool = False) -> np.ndarray:
    """dV/dq, O(N)."""
    return -bias_forces(p, q, np.zeros_like(q), free_anchor)


def damping_forces(p: Params, qd: np.ndarray) -> np.ndarray:
    """Paper's eq. 17: -C_D theta_dot_k on every joint."""
    f = np.zeros_like(qd)
    f[BASE:] = -p.C_D * qd[BASE:]
    return f


def point_jacobian(p: Params, q: np.ndarray, k: int) -> np.ndarray:
    """d E_k / dq (2 x (N+3)) for end point k = 1..N+1."""
    n = p.N
    u = bar_dirs(composite(q[BASE:], q[2]))
    perp = np.stack([-u[:, 1], u[:, 0]], axis=-1)
    JE = np.zeros((2, n))
    JE[:, : k - 1] = (2 * p.R * perp[: k - 1]).T
    J = np.zeros((2, n + BASE))
    J[:, :2] = np.eye(2)
    J += JE @ theta_jacobian(n)
    return J
