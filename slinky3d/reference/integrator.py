"""Reference integrator: adaptive, dense mass matrix, impacts as terminal events.

Its dense LCP and its pairwise rule are a deliberately independent yardstick for the
real-time solver, not a second copy of it: the mass matrix and forces are assembled
from the kinematics (chain.py) and solved by Cholesky; scipy's solve_ivp (DOP853,
tight tolerances) integrates between events; the impact and resting-contact
complementarity problems are solved on the dense Delassus matrix W = G M^-1 G^T.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import cho_factor, cho_solve

from slinky3d.errors import SlinkyError
from slinky3d.model import chain
from slinky3d.model.chain import BASE, RESTING_RATE, TOUCHING
from slinky3d.scene.spec import SlinkySpec


class IntegrationError(SlinkyError):
    """The reference integrator could not carry a run on (the message says why)."""


def lcp(W: np.ndarray, b: np.ndarray, max_pivots: int = 200) -> np.ndarray:
    """Solve  w = W x + b,  x >= 0,  w >= 0,  x.w = 0  for a P-matrix W.

    Block principal pivoting, falling back to Murty's least-index rule (finite).
    """
    n = b.size
    act = b < 0
    for it in range(max_pivots):
        x = np.zeros(n)
        if act.any():
            x[act] = np.linalg.solve(W[np.ix_(act, act)], -b[act])
        w = W @ x + b
        tx = 1e-12 * (np.abs(x).max() + 1e-300)
        tw = 1e-12 * (np.abs(b).max() + 1e-300)
        viol = (act & (x < -tx)) | (~act & (w < -tw))
        if not viol.any():
            return np.where(act, np.maximum(x, 0.0), 0.0)
        if it >= 10:
            first = np.flatnonzero(viol)[0]
            viol[:] = False
            viol[first] = True
        act ^= viol
    raise IntegrationError(f"reference integrator: the contact LCP over {n} joints did not "
                           f"converge in {max_pivots} pivots")


@dataclass
class RefState:
    q: np.ndarray
    qd: np.ndarray
    t: float = 0.0
    free: bool = False
    locked: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))


class ReferenceSolver:
    """Adaptive integration of one Slinky from its spec; `advance_to(t)` in steps."""

    def __init__(self, spec: SlinkySpec, rtol: float = 1e-10, atol: float = 1e-12):
        self.spec, self.p = spec, spec.params
        self.rtol, self.atol = rtol, atol
        c = spec.contact
        self.law = c.law if c.enabled else "off"
        n = self.p.N
        self.s = RefState(np.array(spec.q0, float), np.zeros(n + BASE),
                          locked=np.zeros(n + BASE, bool))
        self.impacts = 0
        self._opened: tuple[float, int] | None = None  # (t, joint) opened by tension
        self.nfev = 0
        if not spec.anchor.held_at(0.0):
            self._free_anchor()
        if self.law in ("rigid", "paper"):
            self._touching_locked()

    # -- modes -----------------------------------------------------------------
    def _free_anchor(self) -> None:
        s = self.s
        s.free = True
        chain.release_anchor(s.qd)
        s.locked[BASE] = False

    def _j0(self) -> int:
        return chain.first_joint(self.s.free)

    def _touching_locked(self) -> None:
        s, tmin, j0 = self.s, self.p.theta_min, self._j0()
        touch = s.q[j0:] <= tmin + TOUCHING
        s.q[j0:][touch] = tmin
        s.locked[j0:] = touch

    def _prescribed(self) -> np.ndarray:
        """Coordinates moved by the drive (not by the dynamics)."""
        pr = np.zeros(self.p.N + BASE, bool)
        if self.s.free:
            pr[BASE] = True
        else:
            pr[:BASE] = True
        return pr

    def _drive(self, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        a = self.spec.anchor
        pose = np.array([a.position[0], a.position[1], a.orientation])
        if a.condition == "scripted" and a.motion is not None:
            dp, dv, da = a.motion.at(t)
            return pose + dp, dv, da
        return pose, np.zeros(3), np.zeros(3)

    # -- dynamics --------------------------------------------------------------
    def forces(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        p = self.p
        Q = chain.bias_forces(p, q, qd, self.s.free) + chain.damping_forces(p, qd)
        if self.s.free:
            Q[BASE] += p.C_D * qd[BASE]  # no holder, no damping at joint 1
        if self.law == "soft":
            c = self.spec.contact
            d = c.damping if c.damping is not None else 2 * math.sqrt(c.stiffness * p.I)
            pen = p.theta_min - q[BASE:]
            f = np.where(pen > 0, c.stiffness * pen - d * qd[BASE:], 0.0)
            Q[BASE:] += np.maximum(f, 0.0)
        return Q

    def accel(self, t: float, q: np.ndarray, qd: np.ndarray, locked: np.ndarray):
        """(qdd, contact torques on locked joints) with the drive prescribed."""
        pr = self._prescribed()
        fixed = pr | locked
        qdd = np.zeros_like(q)
        if not self.s.free:
            qdd[:BASE] = self._drive(t)[2]
        M = chain.mass_matrix(self.p, q)
        Q = self.forces(q, qd)
        F = ~fixed
        rhs = Q[F] - M[np.ix_(F, fixed)] @ qdd[fixed]
        qdd[F] = cho_solve(cho_factor(M[np.ix_(F, F)]), rhs)
        if locked.any():
            lam = np.zeros_like(q)
            lam[locked] = M[locked] @ qdd - Q[locked]
        else:
            lam = np.zeros_like(q)
        return qdd, lam

    def _rhs(self, t: float, y: np.ndarray) -> np.ndarray:
        self.nfev += 1
        n = y.size // 2
        q, qd = y[:n], y[n:]
        qdd, _ = self.accel(t, q, qd, self.s.locked)
        return np.concatenate([qd, qdd])

    # -- contacts --------------------------------------------------------------
    def _impact(self) -> None:
        """e = 0 impact: all touching joints together (rigid) or pairwise (paper)."""
        s, p, j0 = self.s, self.p, self._j0()
        cand = np.zeros_like(s.locked)
        cand[j0:] = s.q[j0:] <= p.theta_min + TOUCHING
        s.q[cand] = p.theta_min
        self.impacts += 1
        if self.law == "paper":
            self._paper_impact(cand)
            return
        F = ~self._prescribed()
        M = chain.mass_matrix(p, s.q)
        Minv = np.linalg.inv(M[np.ix_(F, F)])
        idx = np.flatnonzero(cand[F])  # candidates within F
        W = Minv[np.ix_(idx, idx)]
        lam = lcp(W, s.qd[F][idx])
        dv = Minv[:, idx] @ lam
        s.qd[F] += dv
        act = np.zeros_like(cand)
        act[np.flatnonzero(F)[idx]] = lam > 0
        # zero closing rate where the impulse acts; round-off off the bound
        s.qd[act] = 0.0
        s.locked[:] = cand & (np.abs(s.qd) <= RESTING_RATE)

    def _paper_impact(self, cand: np.ndarray) -> None:
        s, n = self.s, self.p.N
        sg = chain.signs(n)
        for _ in range(200):
            closing = np.flatnonzero(cand & (s.qd < 0))
            if closing.size == 0:
                break
            k = closing[0] - BASE
            Th = s.qd[2] + np.cumsum(sg * s.qd[BASE:])
            if k == 0:
                Th[0] = s.qd[2]
            else:
                Th[k - 1] = Th[k] = 0.5 * (Th[k - 1] + Th[k])
            if s.free:
                s.qd[2], s.qd[BASE] = Th[0], 0.0
            else:
                s.qd[BASE] = Th[0] - s.qd[2]
            s.qd[BASE + 1:] = sg[1:] * np.diff(Th)
            s.qd[BASE + k] = 0.0
        s.locked[:] = cand & (np.abs(s.qd) <= RESTING_RATE)

    def _resting(self) -> None:
        """Acceleration-level LCP over the touching joints at rest."""
        s, p, j0 = self.s, self.p, self._j0()
        cand = s.locked.copy()
        cand[j0:] |= (s.q[j0:] <= p.theta_min + TOUCHING) & (np.abs(s.qd[j0:]) <= RESTING_RATE)
        if self._opened is not None and self._opened[0] == s.t:
            # a joint whose force fell to zero just now stays open: the LCP's force and
            # the tension event's, both ~0, may disagree in sign and loop without end
            cand[self._opened[1]] = False
        if not cand.any():
            s.locked[:] = False
            return
        # free accelerations with all candidates free, and their coupling W
        none = np.zeros_like(cand)
        a_free, _ = self.accel(s.t, s.q, s.qd, none)
        F = ~self._prescribed()
        M = chain.mass_matrix(p, s.q)
        Minv = np.linalg.inv(M[np.ix_(F, F)])
        idx = np.flatnonzero(cand[F])
        lam = lcp(Minv[np.ix_(idx, idx)], a_free[F][idx])
        s.locked[:] = False
        s.locked[np.flatnonzero(F)[idx[lam > 0]]] = True
        s.q[s.locked] = p.theta_min
        s.qd[s.locked] = 0.0

    # -- integration -----------------------------------------------------------
    def _events(self):
        p, n = self.p, self.p.N + BASE

        def gap(t, y):
            q = y[:n]
            free = ~self.s.locked
            free[: self._j0()] = False
            return float(np.min(q[free] - p.theta_min)) if free.any() else 1.0

        def tension(t, y):
            if not self.s.locked.any():
                return 1.0
            _, lam = self.accel(t, y[:n], y[n:], self.s.locked)
            return float(np.min(lam[self.s.locked]))

        return [Event(gap), Event(tension)] if self.law in ("rigid", "paper") else []

    def _integrate(self, t_end: float, t_eval: np.ndarray, out: list) -> None:
        """Integrate to t_end, appending (t, q, qd) at the t_eval times passed."""
        s, n = self.s, self.p.N + BASE
        guard = 0
        while s.t < t_end - 1e-15:
            guard += 1
            if guard > 100000:
                raise IntegrationError(f"reference integrator: more than 100000 events "
                                       f"before t = {t_end:g} s (at t = {s.t:g} s)")
            if self.law in ("rigid", "paper"):
                self._resting()
            te = t_eval[(t_eval > s.t + 1e-15) & (t_eval <= t_end + 1e-15)]
            sol = solve_ivp(self._rhs, (s.t, t_end), np.concatenate([s.q, s.qd]),
                            method="DOP853", rtol=self.rtol, atol=self.atol,
                            events=self._events(), dense_output=True)
            if sol.status < 0:
                raise IntegrationError(f"reference integrator failed at t = {s.t:g} s: "
                                       f"{sol.message}")
            t1 = sol.t[-1]
            for ti in te[te <= t1 + 1e-15]:
                y = sol.sol(min(ti, t1))
                out.append((ti, y[:n].copy(), y[n:].copy(), s.locked.copy()))
            y = sol.y[:, -1]
            s.q, s.qd, s.t = y[:n].copy(), y[n:].copy(), float(t1)
            if not s.free:
                s.q[:BASE], s.qd[:BASE] = self._drive(s.t)[:2]
            if sol.status == 1:
                hit_gap = len(sol.t_events[0]) > 0
                if hit_gap:
                    self._impact()
                else:
                    j = self._tension_joint()
                    s.locked[j] = False
                    self._opened = (s.t, j)

    def _tension_joint(self) -> int:
        _, lam = self.accel(self.s.t, self.s.q, self.s.qd, self.s.locked)
        idx = np.flatnonzero(self.s.locked)
        return int(idx[np.argmin(lam[idx])])

    def advance_to(self, t_end: float, t_eval: np.ndarray | None = None) -> list:
        """Integrate to t_end; returns samples (t, q, qd, locked) at t_eval."""
        out: list = []
        t_eval = np.asarray([] if t_eval is None else t_eval, float)
        far, anc = self.spec.far, self.spec.anchor
        while self.s.t < t_end - 1e-15:
            if far.held_at(self.s.t):
                # both ends held: at rest in the static shape until the far end lets go
                t1 = min(t_end, far.release_time)
                for ti in t_eval[(t_eval > self.s.t) & (t_eval <= t1)]:
                    out.append((ti, self.s.q.copy(), self.s.qd.copy(), self.s.locked.copy()))
                self.s.t = t1
                continue
            t1 = t_end
            if not self.s.free and anc.condition == "released" and anc.release_time < t_end:
                t1 = max(anc.release_time, self.s.t)
            self._integrate(t1, t_eval, out)
            if t1 < t_end:
                self._free_anchor()
        return out


@dataclass(frozen=True)
class Event:
    """A terminal event for solve_ivp: integration stops where `fun` falls through 0."""

    fun: Callable[[float, np.ndarray], float]
    terminal: bool = True
    direction: float = -1.0

    def __call__(self, t: float, y: np.ndarray) -> float:
        return self.fun(t, y)


def simulate(spec: SlinkySpec, times: np.ndarray, **kw) -> tuple[list, dict]:
    """Samples of one Slinky at `times` (first one t = 0) and run statistics."""
    r = ReferenceSolver(spec, **kw)
    t0 = time.perf_counter()
    out = [(0.0, r.s.q.copy(), r.s.qd.copy(), r.s.locked.copy())]
    out += r.advance_to(float(times[-1]), np.asarray(times[1:]))
    stats = {"wall": time.perf_counter() - t0, "impacts": r.impacts, "steps": r.nfev,
             "free": r.s.free}
    return out, stats
