"""Static shapes (docs/model.md section 4): a Slinky held at one end, or at both ends.

Both problems are solved in the torsion angles theta with the bounds
theta >= theta_min handled exactly (a projected Newton method), then polished by
Newton's method on the KKT system with the collapsed joints fixed at theta_min.
Written in the composite angles Theta the energy is separable (gravity) plus a chain
of springs, so its value and gradient cost O(N) and a Newton step one tridiagonal
solve (with a rank-4 Woodbury update for the far end's penalty): the whole solve is
O(N) per iteration, and the iterations do not grow with N.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import numpy as np
from scipy.linalg import solve_banded

from slinky3d.errors import SlinkyError
from slinky3d.model.chain import BASE, composite, end_points, signs
from slinky3d.model.params import Params

F = TypeVar("F", bound=Callable[..., Any])

# A joint within this of theta_min counts as collapsed (the minimiser puts it on the bound).
COLLAPSED_TOL = 1e-9
ACTIVE_ROUNDS = 20  # at most this many Newton solves per iteration to settle the bound set
# Newton iterations one static shape may take in all: a shape that is not found in them
# fails with an error rather than a silent wait (a shipped scene takes ~200, N = 10000 ~300).
ITERATION_BUDGET = 3000
TURN_MAX = 0.5  # rad: no bar turns more in one minimiser step (a trust region)
PROJECTED_TRIES = 4  # step lengths 1, 1/2, ... tried along the projection arc first
CUT_TRIES = 12  # and then along the step cut short at the bound
# Required accuracy of the far end's position (m), and what the penalty fallback aims for.
FAR_TOL = 1e-4
FAR_AIM = 1e-9
# Continuation schedule of alpha_b (units: Slinky weight per metre) and its stop.
# 30 doublings reach ~5e6 weights per metre (end error ~1e-7 m under the weight).
ALPHA0, ALPHA_FACTOR, ALPHA_STOP_ERR, ALPHA_STAGES = 0.01, 2.0, 3e-3, 30
# First alpha_b when starting from a caller's guess (keeps the guess's branch).
ALPHA_GUESS = 10.0


class EquilibriumError(SlinkyError):
    """No static shape was found; the message says why in one sentence."""


@dataclass
class _Problem:
    """Everything the objective needs, precomputed once."""

    p: Params
    phi_A: float
    anchor: np.ndarray
    s: np.ndarray  # (-1)^(k+1): sign of theta_k in Theta_k
    w: np.ndarray  # gravity weight of bar k: m g R (2 (N - k) + 1)
    targets: np.ndarray | None = None  # (2, 2): targets of E_N, E_{N+1}
    alpha: float = 0.0  # penalty stiffness alpha_b (N/m)
    iterations: int = 0  # minimiser iterations so far, against ITERATION_BUDGET

    @classmethod
    def make(cls, p: Params, anchor, phi_A: float) -> _Problem:
        k = np.arange(1, p.N + 1)
        w = p.m * p.g * p.R * (2.0 * (p.N - k) + 1.0)
        return cls(p, float(phi_A), np.asarray(anchor, float), signs(p.N), w)

    def geometry(self, theta: np.ndarray):
        Th = composite(theta, self.phi_A)
        c, sn = np.cos(Th), np.sin(Th)
        sg = -self.s  # (-1)^k: u_k = sg (cos, sin)
        u = np.stack([sg * c, sg * sn], axis=1)
        perp = np.stack([-sg * sn, sg * c], axis=1)  # d u_k / d Theta_k
        return Th, u, perp

    def fun(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """E_A (without the constant m g N y_A) and its gradient in theta."""
        p = self.p
        _, u, perp = self.geometry(theta)
        # Sum of centre heights = sum_k (2(N-k)+1) R u_ky: separable in Theta.
        f = 0.5 * p.k_coil * float(theta @ theta) + float(self.w @ u[:, 1])
        gTh = self.w * perp[:, 1]
        if self.alpha > 0.0:
            d = self._end_errors(u)
            f += self.alpha * float(np.sum(d * d))
            # E_{N+1} depends on every bar, E_N on all but the last.
            gTh = gTh + 4.0 * self.alpha * p.R * (perp @ (d[0] + d[1]))
            gTh[-1] -= 4.0 * self.alpha * p.R * float(perp[-1] @ d[0])
        g = p.k_coil * theta + self.s * np.cumsum(gTh[::-1])[::-1]
        return f, g

    def curvature(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The Hessian of `fun` in parts: (hTh, G), H = k I + J^T diag(hTh) J + 2 alpha G^T G.

        hTh (N,): the curvature diagonal in Theta (gravity, and the end errors' second
        derivatives); G (4, N): d(E_N, E_{N+1})/d theta, empty without the penalty.
        """
        p = self.p
        _, u, perp = self.geometry(theta)
        hTh = -self.w * u[:, 1]
        if self.alpha <= 0.0:
            return hTh, np.zeros((0, theta.size))
        d = self._end_errors(u)
        hTh = hTh - 4.0 * self.alpha * p.R * (u @ (d[0] + d[1]))
        hTh[-1] += 4.0 * self.alpha * p.R * float(u[-1] @ d[0])
        tail = np.cumsum((2.0 * p.R * perp)[::-1], axis=0)[::-1]
        G_last = (self.s[:, None] * tail).T  # d E_{N+1} / d theta
        G_prev = G_last - 2.0 * p.R * perp[-1][:, None] * self.s[None, :]
        return hTh, np.vstack([G_prev, G_last])

    def hessian_times(self, hTh: np.ndarray, G: np.ndarray, v: np.ndarray) -> np.ndarray:
        """H v in O(N), H from `curvature`'s parts."""
        Jv = np.cumsum(self.s * v)  # d Theta
        out = self.p.k_coil * v + self.s * np.cumsum((hTh * Jv)[::-1])[::-1]
        return out + 2.0 * self.alpha * (G.T @ (G @ v)) if G.size else out

    def _end_errors(self, u: np.ndarray) -> np.ndarray:
        E_last = self.anchor + 2.0 * self.p.R * np.sum(u, axis=0)
        E_prev = E_last - 2.0 * self.p.R * u[-1]
        assert self.targets is not None
        return np.stack([E_prev, E_last]) - self.targets


def _theta_hessian(pb: _Problem, hTh: np.ndarray) -> np.ndarray:
    """k I + J^T diag(hTh) J with J = dTheta/dtheta (lower triangular of signs)."""
    n = hTh.size
    tail = np.cumsum(hTh[::-1])[::-1]  # sum_{i >= j} hTh_i
    idx = np.arange(n)
    H = tail[np.maximum.outer(idx, idx)] * np.outer(pb.s, pb.s)
    H[idx, idx] += pb.p.k_coil
    return H


def _solve_free(pb: _Problem, hTh: np.ndarray, fr: np.ndarray, b: np.ndarray,
                convex: bool = False) -> np.ndarray:
    """H_FF^{-1} b in O(N), H = k I + J^T diag(hTh) J restricted to the free joints.

    With the collapsed joints fixed, H_FF = S L^T (k T + D) L S: S the signs, L the
    lower-triangular ones (n x n), D the curvature summed over the bars between
    consecutive free joints, T = L^-T L^-1 tridiagonal; so one tridiagonal solve.
    With convex, D is clipped at 0: k T + D, hence H_FF, is then positive definite.
    (Rejected: a dense LU of H_FF, whose multithreaded BLAS crawls on a busy machine.)
    """
    n = int(fr.sum())
    if n == 0:  # every joint collapsed: nothing to solve for
        return np.zeros((0, *b.shape[1:]))
    t = np.cumsum(hTh[::-1])[::-1][fr]  # curvature of all bars from each free joint on
    d = t - np.r_[t[1:], 0.0]
    if convex:
        d = np.maximum(d, 0.0)
    k = pb.p.k_coil
    ab = np.zeros((3, n))
    ab[0, 1:] = -k
    ab[1] = 2.0 * k + d
    ab[1, -1] -= k  # T's last diagonal entry is 1
    ab[2, :-1] = -k
    s = pb.s[fr].reshape((n,) + (1,) * (b.ndim - 1))
    y = s * b
    y = y - np.concatenate([y[1:], np.zeros_like(y[:1])])  # L^-T
    z = solve_banded((1, 1), ab, y)
    return s * np.diff(z, axis=0, prepend=np.zeros_like(z[:1]))  # S L^-1


def _newton_direction(pb: _Problem, hTh: np.ndarray, G: np.ndarray, g: np.ndarray,
                      fr: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Newton's step: v (N,) on the joints not in fr (their given displacement), on the
    free joints fr the minimiser of the quadratic model given it, in O(N).

    H_FF = A_FF + 2 alpha_b G_F^T G_F: A the spring and the curvature diagonal in Theta
    (one tridiagonal solve, `_solve_free`), G the end errors' Jacobian (`curvature`;
    Woodbury: a 4 x 4 solve). The exact Hessian first; where its step is not a descent
    direction of positive curvature, the convexified one (negative curvature clipped).
    """
    r = (g + pb.hessian_times(hTh, G, v))[fr]
    U = math.sqrt(2.0 * pb.alpha) * G[:, fr].T if G.size else np.zeros((r.size, 0))
    step = v.copy()
    for convex in (False, True):
        try:
            X = _solve_free(pb, hTh, fr, np.column_stack([r, U]), convex)
            C = np.eye(U.shape[1]) + U.T @ X[:, 1:]
            step[fr] = -(X[:, 0] - X[:, 1:] @ np.linalg.solve(C, U.T @ X[:, 0]))
        except (np.linalg.LinAlgError, ValueError):  # singular, or not finite
            continue
        if convex or (g @ step < 0.0 and step @ pb.hessian_times(hTh, G, step) > 0.0):
            if np.all(np.isfinite(step)):
                return step
    step[fr] = -r / pb.p.k_coil  # steepest descent, scaled (not reached in practice)
    return step


def _minimize(pb: _Problem, theta0: np.ndarray, gtol: float, maxiter: int = 500) -> np.ndarray:
    """min pb.fun over theta >= theta_min by a projected Newton method, O(N) an iteration.

    Joints on the bound and pushed into it stay there, and so do those that Newton's step
    would push through it from the bound; the others take Newton's step
    (`_newton_direction`). Near the minimum the bound set settles and the convergence
    is quadratic. `_search` finds the step's length. Stops when the projected gradient
    is below gtol (torque, N m) or no step lowers the energy (round-off). (Rejected:
    L-BFGS-B, whose iteration count grows with N: the shape of a 10000 half-hoop Slinky
    held at both ends took minutes.)
    """
    lo = pb.p.theta_min
    theta = np.maximum(np.asarray(theta0, float), lo)
    f, g = pb.fun(theta)
    if not (math.isfinite(f) and np.all(np.isfinite(g))):
        raise EquilibriumError("the energy is not a finite number (the parameters are "
                               "too far apart in magnitude for the static solve).")
    def projected(theta: np.ndarray, g: np.ndarray) -> float:
        return float(np.max(np.abs(np.where((theta <= lo) & (g > 0.0), 0.0, g)), initial=0.0))

    for _ in range(maxiter):
        at = theta <= lo
        if projected(theta, g) <= gtol:
            break
        pb.iterations += 1
        if pb.iterations > ITERATION_BUDGET:
            raise EquilibriumError(
                f"not found in {ITERATION_BUDGET} Newton iterations (N = {pb.p.N} half "
                "hoops): fewer coils or a far end closer to the hanging shape may help.")
        hTh, G = pb.curvature(theta)
        held, zero = at & (g > 0.0), np.zeros_like(theta)
        for _ in range(ACTIVE_ROUNDS):
            step = _newton_direction(pb, hTh, G, g, ~held, zero)
            # Freeing such a joint only for the projection to put it back would make
            # the bound set zigzag.
            through = ~held & at & (step < 0.0)
            if not through.any():
                break
            held |= through
        found = None
        if -float(g @ step) > 1e-14 * abs(f):  # a decrease the energy can resolve
            found = _search(pb, theta, f, g, step, hTh, G, held)
        if found is None:
            # The energy's changes are at its round-off: only the gradient still tells
            # how far the minimum is. Newton's full step while it shrinks the gradient.
            trial = np.maximum(theta + step, lo)
            ft, gt = pb.fun(trial)
            if not projected(trial, gt) < projected(theta, g):
                break  # converged to round-off
            found = trial, ft, gt
        theta, f, g = found
    return theta


def _search(pb: _Problem, theta: np.ndarray, f: float, g: np.ndarray, step: np.ndarray,
            hTh: np.ndarray, G: np.ndarray, held: np.ndarray
            ) -> tuple[np.ndarray, float, np.ndarray] | None:
    """The next point: Armijo backtracking along the projection arc of Newton's step; if
    that fails, along the face step, where the joints the step pushes through the bound
    are put on it and the others solved again given theirs (many joints can close in one
    iteration: a long Slinky); else the step cut short where the first joint reaches the
    bound, which puts that joint on it. Every step is shortened so that no bar turns
    by more than TURN_MAX (a trust region: the continuation keeps to its branch instead
    of jumping to another winding). None when nothing lowers the energy."""
    lo = pb.p.theta_min

    def bounded(d: np.ndarray) -> np.ndarray:
        turn = float(np.max(np.abs(np.cumsum(pb.s * d)), initial=0.0))
        return d * (TURN_MAX / turn) if turn > TURN_MAX else d

    def armijo(d: np.ndarray) -> tuple[np.ndarray, float, np.ndarray] | None:
        d = bounded(d)
        for i in range(PROJECTED_TRIES):
            new = np.maximum(theta + 0.5**i * d, lo)
            slope = float(g @ (new - theta))
            f_new, g_new = pb.fun(new)
            if slope < 0.0 and f + 1e-4 * slope >= f_new > -math.inf:
                return new, f_new, g_new
        return None

    found = armijo(step)
    if found is not None:
        return found
    face, fixed, v = step, held.copy(), np.zeros_like(theta)
    for _ in range(ACTIVE_ROUNDS):
        cross = ~fixed & (theta + face < lo)
        if not cross.any():
            break
        fixed |= cross
        v[cross] = lo - theta[cross]
        face = _newton_direction(pb, hTh, G, g, ~fixed, v)
    if face is not step and float(g @ face) < 0.0:
        found = armijo(face)
        if found is not None:
            return found
    step = bounded(step)
    down = np.flatnonzero(step < 0.0)
    if down.size == 0:
        return None
    gaps = (theta[down] - lo) / -step[down]
    first = int(np.argmin(gaps))
    s = min(1.0, float(gaps[first]))
    for _ in range(CUT_TRIES):
        new = np.maximum(theta + s * step, lo)
        if s == gaps[first]:
            new[down[first]] = lo  # exactly on the bound, not a rounding error above it
        f_new, g_new = pb.fun(new)
        if f + 1e-4 * float(g @ (new - theta)) >= f_new > -math.inf:
            return new, f_new, g_new
        s *= 0.5
    return None


def _end_jacobian(pb: _Problem, theta: np.ndarray) -> np.ndarray:
    """(3, N): rows d E_{N+1} / d theta (x, y) and d Theta_N / d theta."""
    _, _, perp = pb.geometry(theta)
    tail = np.cumsum((2.0 * pb.p.R * perp)[::-1], axis=0)[::-1]
    return np.vstack([(pb.s[:, None] * tail).T, pb.s])


def _newton_kkt(
    pb: _Problem, theta: np.ndarray, far: np.ndarray | None, Theta_B: float | None,
    iters: int = 200,
) -> tuple[np.ndarray, np.ndarray]:
    """Newton on the KKT system of min V s.t. E_{N+1} = far, Theta_N = Theta_B, with the
    collapsed set fixed; the set is updated (free joints that cross the bound are
    clamped, clamped ones whose multiplier turns negative are freed, one at a time: a
    long Slinky may free tens of them, hence the iterations) until consistent."""
    p, lo = pb.p, pb.p.theta_min
    saved = pb.alpha
    pb.alpha = 0.0  # the exact constraints replace the penalty here
    held = far is not None
    theta = theta.copy()
    act = theta <= lo + COLLAPSED_TOL
    theta[act] = lo
    lam = None
    try:
        for _ in range(iters):
            _, g = pb.fun(theta)
            Th, u, _ = pb.geometry(theta)
            G = _end_jacobian(pb, theta) if held else np.zeros((0, theta.size))
            fr = ~act
            if lam is None:  # first multipliers: least squares on the free joints
                lam = np.linalg.lstsq(G[:, fr].T, g[fr], rcond=None)[0]
            # Lagrangian L = V - lam . c; its Theta-space curvature is diagonal.
            hTh = -pb.w * u[:, 1]
            if held:
                hTh = hTh + 2.0 * p.R * (u @ lam[:2])
                c = np.r_[end_points(np.r_[pb.anchor, pb.phi_A, theta], p.R)[-1] - far,
                          Th[-1] - Theta_B]
            else:
                c = np.zeros(0)
            # KKT step H dth - Gf^T dlam = -r1, Gf dth = -c via the 3 x 3 Schur complement.
            r1 = (g - G.T @ lam)[fr]
            Gf = G[:, fr]
            X = _solve_free(pb, hTh, fr, np.column_stack([r1, Gf.T]))
            dlam = np.linalg.solve(Gf @ X[:, 1:], Gf @ X[:, 0] - c) if held else lam
            dth = X[:, 1:] @ dlam - X[:, 0]
            theta[fr] += dth
            lam = lam + dlam
            step = np.r_[dth, dlam]
            # Active-set update: clamp free joints pushed through the bound.
            below = fr & (theta < lo)
            if below.any():
                theta[below] = lo
                act |= below
                continue
            if np.max(np.abs(step), initial=0.0) < 1e-13:
                _, g = pb.fun(theta)
                mu = (g - G.T @ lam)[act] if held else g[act]
                if mu.size and mu.min() < -1e-12 * p.k_coil:
                    # A collapsed joint pulled open: release the worst one.
                    act[np.flatnonzero(act)[np.argmin(mu)]] = False
                    continue
                break
    finally:
        pb.alpha = saved
    return theta, np.zeros(0) if lam is None else lam


def _initial_hanging(p: Params) -> np.ndarray:
    # Small-angle hanging shape: joint k carries the moment m g R (N - k + 1) of the
    # weight below it; a good start makes L-BFGS-B converge in few iterations.
    # (Clipped at pi: a fold beyond it is no start for anything.)
    k = np.arange(1, p.N + 1)
    return np.clip(p.m * p.g * p.R * (p.N - k + 1) / p.k_coil, p.theta_min, math.pi)


def _quiet(solve: F) -> F:
    """Run a static solve with numpy's floating-point warnings off: parameters many
    orders of magnitude apart overflow or divide by zero on the way, and the solve then
    fails with one EquilibriumError line instead of warnings and a traceback."""

    @functools.wraps(solve)
    def run(*args: Any, **kw: Any) -> Any:
        try:
            with np.errstate(all="ignore"):
                return solve(*args, **kw)
        except (ArithmeticError, ValueError, np.linalg.LinAlgError) as e:
            raise EquilibriumError(f"the numbers broke down ({type(e).__name__}: {e}); the "
                                   "parameters are too far apart in magnitude.") from None

    return cast(F, run)


@_quiet
def hanging(p: Params, anchor=(0.0, 0.0), phi_A: float = 0.0) -> np.ndarray:
    """q (N+3,) of a Slinky held at its anchored end E_1 only, at rest.

    Minimises V over theta with theta >= theta_min (L-BFGS-B with the analytic
    gradient, then Newton with the collapsed joints fixed). The bottom joints of a
    hanging Slinky come out collapsed at theta_min.
    """
    pb = _Problem.make(p, anchor, phi_A)
    theta = _minimize(pb, _initial_hanging(p), gtol=1e-10 * p.k_coil)
    theta, _ = _newton_kkt(pb, theta, None, None)
    q = np.r_[pb.anchor, pb.phi_A, theta]
    r = residuals(p, q, far_held=False)
    if r["stationarity"] > 1e-6 or r["bound_multiplier_min"] < -1e-6:
        raise EquilibriumError(f"no hanging shape found (KKT residual {r['stationarity']:.1e}).")
    return q


def _targets(p: Params, far: np.ndarray, phi_B: float) -> np.ndarray:
    """Targets of E_N and E_{N+1} for Theta_N = phi_B (docs/model.md section 4)."""
    last = (-1) ** p.N * np.array([math.cos(phi_B), math.sin(phi_B)])
    return np.stack([far - 2.0 * p.R * last, far])


@_quiet
def both_ends(
    p: Params,
    anchor=(0.0, 0.0),
    phi_A: float = 0.0,
    far=None,
    phi_B: float = math.pi,
    theta_guess=None,
) -> np.ndarray:
    """q of the Slinky held at both ends: E_1 at anchor (phi_A), E_{N+1} at far, Theta_N = phi_B.

    Minimises E_A = V + alpha_b sum_{k=N,N+1} |E_k - E_k^target|^2 by L-BFGS-B with
    theta >= theta_min as exact bounds (instead of the alpha_min penalty, so no joint
    ends below theta_min). Continuation: from the hanging shape (alpha_b = 0) alpha_b
    starts at ALPHA0 Slinky weights per metre and doubles, each stage warm-started,
    until both end errors are < 3 mm; then Newton on the exact constraints
    (E_{N+1} = far, Theta_N = phi_B + 2 pi n, n as found) brings the far end to ~1e-15 m.
    With theta_guess the continuation starts from it at ALPHA_GUESS weights per metre,
    staying on the guess's branch. Raises EquilibriumError when no shape is found.
    """
    if far is None:
        raise TypeError("both_ends() needs the far end's position far=(x, y)")
    pb = _Problem.make(p, anchor, phi_A)
    far = np.asarray(far, float)
    reach = 2.0 * p.R * p.N
    dist = float(np.linalg.norm(far - pb.anchor))
    if not np.all(np.isfinite(far)) or not math.isfinite(phi_B):
        raise EquilibriumError("the far end's position and orientation must be finite.")
    if dist > reach * (1.0 - 1e-3):
        raise EquilibriumError(
            f"the far end is {dist:.3f} m from the anchor, out of reach of a Slinky "
            f"{reach:.3f} m long when stretched straight."
        )
    pb.targets = _targets(p, far, phi_B)
    W = p.mass * p.g
    if theta_guess is None:
        theta = _minimize(pb, _initial_hanging(p), gtol=1e-8 * p.k_coil)
        alpha = ALPHA0 * W
    else:
        theta = np.asarray(theta_guess, float).copy()
        if theta.shape != (p.N,):
            raise EquilibriumError(f"theta_guess must have N = {p.N} angles.")
        # A weak first pull would let the guess fall back towards the hanging shape.
        alpha = ALPHA_GUESS * W
    theta, alpha, err = _continue(pb, theta, alpha, ALPHA_STOP_ERR)
    q = _polish(pb, theta, far, phi_B)
    if q is None:
        # Newton failed (singular or inconsistent active set): shifted penalty instead.
        theta, err = _shifted_penalty(pb, theta, alpha)
        q = np.r_[pb.anchor, pb.phi_A, theta]
        # L-BFGS-B's line search stalls near 1e-6 relative gradient (round-off in V).
        if not _acceptable(p, q, far, phi_B, dir_tol=FAR_TOL / (2 * p.R), kkt_tol=1e-5):
            raise EquilibriumError(
                f"no shape held at both ends found: the continuation from the hanging shape "
                f"leaves the far end {err:.1e} m off target (a collapsed stack can block it "
                f"when the far end is close to the anchor)."
            )
    return q


def _continue(
    pb: _Problem, theta: np.ndarray, alpha: float, stop: float
) -> tuple[np.ndarray, float, float]:
    """Raise alpha_b geometrically, warm-starting each stage, until both end errors < stop."""
    err, hist = math.inf, []
    for _ in range(ALPHA_STAGES):
        pb.alpha = alpha
        theta = _minimize(pb, theta, gtol=1e-7 * pb.p.k_coil)
        _, u, _ = pb.geometry(theta)
        err = float(np.max(np.linalg.norm(pb._end_errors(u), axis=1)))
        hist.append(err)
        if err < stop:
            break
        # Once the pull exceeds the weight the error should fall ~1/alpha_b; if four
        # doublings do not halve it, the shape is stuck against the bounds: give up.
        if alpha > pb.p.mass * pb.p.g and len(hist) > 4 and err > 0.5 * hist[-5]:
            break
        alpha *= ALPHA_FACTOR
    return theta, alpha, err


def _shifted_penalty(pb: _Problem, theta: np.ndarray, alpha: float) -> tuple[np.ndarray, float]:
    """Powell's shifted penalty: keep alpha_b, move the targets against the remaining
    error until the true targets are met (rejected: raising alpha_b further, whose
    ill-conditioning stalls L-BFGS-B before the KKT residual is small)."""
    assert pb.targets is not None
    true, err = pb.targets.copy(), math.inf
    pb.alpha = alpha
    try:
        for _ in range(100):
            theta = _minimize(pb, theta, gtol=1e-11 * pb.p.k_coil)
            _, u, _ = pb.geometry(theta)
            d = pb._end_errors(u) + pb.targets - true
            err = float(np.max(np.linalg.norm(d, axis=1)))
            if err < FAR_AIM:
                break
            pb.targets = pb.targets - d
    finally:
        pb.targets = true
    return theta, err


def _polish(pb: _Problem, theta: np.ndarray, far: np.ndarray, phi_B: float):
    """Exact constraints by Newton, keeping the winding the continuation found; None if it fails."""
    Theta_N = float(composite(theta, pb.phi_A)[-1])
    Theta_B = phi_B + 2 * math.pi * round((Theta_N - phi_B) / (2 * math.pi))
    try:
        th, _ = _newton_kkt(pb, theta, far, Theta_B)
    except np.linalg.LinAlgError:
        return None
    q = np.r_[pb.anchor, pb.phi_A, th]
    return q if _acceptable(pb.p, q, far, phi_B, dir_tol=1e-9, kkt_tol=1e-8) else None


def _acceptable(
    p: Params, q: np.ndarray, far: np.ndarray, phi_B: float, dir_tol: float, kkt_tol: float
) -> bool:
    r = residuals(p, q, far_held=True, far=far, phi_B=phi_B)
    return bool(
        r["far_error"] < FAR_TOL and r["direction_error"] < dir_tol
        and r["stationarity"] < kkt_tol and r["bound_multiplier_min"] > -kkt_tol
        and r["bound_violation"] <= COLLAPSED_TOL
    )


def residuals(
    p: Params, q: np.ndarray, far_held: bool, far=None, phi_B: float | None = None,
    second_order: bool = False,
) -> dict:
    """KKT residuals of a static shape q.

    stationarity: max |dV/dtheta - G^T lam| over the free joints (G: rows of
    d E_N / d theta and d E_{N+1} / d theta when the far end is held, lam by least
    squares), relative to the largest spring torque k_coil max theta.
    bound_multiplier_min: min of the same on the collapsed joints, relative likewise
    (>= 0: they push into the bound). Also far_error (m), direction_error (rad,
    modulo 2 pi), bound_violation (rad), n_collapsed, winding (Theta_N - phi_A), lam,
    and with second_order curvature_min (smallest eigenvalue of the Hessian of the
    Lagrangian on the free joints' feasible directions / k_coil; > 0: a strict minimum).
    """
    pb = _Problem.make(p, q[:2], q[2])
    theta = q[BASE:]
    _, g = pb.fun(theta)
    act = theta <= p.theta_min + COLLAPSED_TOL
    fr = ~act
    Th = composite(theta, q[2])
    out: dict = {"n_collapsed": int(act.sum()), "winding": float(Th[-1] - q[2]),
                 "bound_violation": float(max(0.0, p.theta_min - theta.min()))}
    scale = p.k_coil * float(np.max(np.abs(theta)))
    if far_held:
        G3 = _end_jacobian(pb, theta)
        _, _, perp = pb.geometry(theta)
        # d E_N = d E_{N+1} - 2R perp_N d Theta_N
        GN = G3[:2] - 2.0 * p.R * perp[-1][:, None] * G3[2][None, :]
        G = np.vstack([GN, G3[:2]])
        lam = np.linalg.lstsq(G[:, fr].T, g[fr], rcond=None)[0]
        rest = g - G.T @ lam
        out["lam"] = lam
        # Curvature of the Lagrangian V - lam . (E_N, E_{N+1}): diagonal in Theta.
        _, u, _ = pb.geometry(theta)
        hTh = -pb.w * u[:, 1] + 2.0 * p.R * (u @ (lam[:2] + lam[2:]))
        hTh[-1] -= 2.0 * p.R * float(u[-1] @ lam[:2])
        Gf = G[:, fr]
        if far is not None:
            E = end_points(q, p.R)
            out["far_error"] = float(np.linalg.norm(E[-1] - np.asarray(far, float)))
        if phi_B is not None:
            d = (Th[-1] - phi_B + math.pi) % (2 * math.pi) - math.pi
            out["direction_error"] = abs(float(d))
    else:
        rest = g
        hTh = -pb.w * pb.geometry(theta)[1][:, 1]
        Gf = np.zeros((0, int(fr.sum())))
    if second_order:
        # The Hessian on the free joints' directions that keep the ends where they are.
        H = _theta_hessian(pb, hTh)[np.ix_(fr, fr)]
        _, sv, Vt = np.linalg.svd(Gf) if Gf.size else (None, np.zeros(0), np.eye(len(H)))
        Z = Vt[int(np.sum(sv > 1e-10 * max(sv.max(initial=0.0), 1.0))):].T
        ev = np.linalg.eigvalsh(Z.T @ H @ Z)
        out["curvature_min"] = float(ev.min(initial=np.inf)) / p.k_coil
    out["stationarity"] = float(np.max(np.abs(rest[fr]), initial=0.0)) / scale
    out["bound_multiplier_min"] = float(np.min(rest[act], initial=np.inf)) / scale
    return out
