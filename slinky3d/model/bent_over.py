"""The start of a walk down stairs: the Slinky bent over the top step's edge.

A stack of collapsed coils stands on the top step against its front edge; a tight turn
of TURN_BARS half hoops goes over its top; the rest hangs down to the next step in the
spacing of the static hanging shape (section 4), stretched by the factor that puts its
lowest point on that step's tread. The split is chosen so that the factor is nearest
STRETCH: the hanging leg is then close to its own equilibrium, and released it pours
its coils over the top into the lower stack instead of snapping shut (a leg of evenly
opened coils snaps in ~0.06 s and lifts the light lower end off the step).
docs/model.md section 11 says why this start walks.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from slinky3d.errors import SlinkyError
from slinky3d.model import chain
from slinky3d.model.chain import BASE
from slinky3d.model.params import Params

TURN_BARS = 10  # half hoops in the turn over the stack's top
TURN_OPENING = 0.25  # rad: each turn bar's tilt out of the plane of the coil
STRETCH = 0.95  # the hanging leg's spacing, as a multiple of the static hanging shape's
CLEARANCE = 0.005  # m: the lower stack stops this far short of the next step's edge
LEAST_STACK = 14  # half hoops: the fewest in the standing stack


@functools.lru_cache(maxsize=8)
def _hanging_sines(p: Params) -> np.ndarray:
    """sin of each bar's tilt in the static hanging shape (the leg's spacing)."""
    from slinky3d.model import static_shape  # lazily: scipy only where it is used

    E = chain.end_points(static_shape.hanging(p), p.R)
    u = np.diff(E, axis=0) / (2.0 * p.R)
    return np.clip(-u[:, 1], -1.0, 1.0)


def _build(p: Params, stack: int, stretch: float) -> np.ndarray:
    """q with the anchored end at the origin: `stack` bars standing, the turn, the leg."""
    n, tm = p.N, p.theta_min
    leg = n - stack - TURN_BARS
    alternate = np.where(np.arange(n) % 2 == 0, 0.0, tm)  # a collapsed stack's tilts
    psi = np.empty(n)  # the local axis direction of each bar
    beta = np.empty(n)  # each bar's tilt along that axis
    psi[:stack], beta[:stack] = math.pi / 2, alternate[:stack]
    u = (np.arange(TURN_BARS) + 0.5) / TURN_BARS
    psi[stack:stack + TURN_BARS] = math.pi / 2 - math.pi * u
    beta[stack:stack + TURN_BARS] = TURN_OPENING
    sines = _hanging_sines(p)[n - leg:]
    open_ = sines > math.sin(tm) * 1.01  # stretch the open coils, not the collapsed ones
    psi[n - leg:] = -math.pi / 2
    beta[n - leg:] = np.arcsin(np.where(open_, np.minimum(sines * stretch, 0.999), sines))
    side = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    ux = side * np.cos(psi - math.pi / 2) * np.cos(beta) + np.cos(psi) * np.sin(beta)
    uy = side * np.sin(psi - math.pi / 2) * np.cos(beta) + np.sin(psi) * np.sin(beta)
    # bar k's direction is (-1)^k (cos Theta_k, sin Theta_k), k from 1 (chain.bar_dirs)
    Theta = np.unwrap(np.arctan2(uy, ux) - (np.arange(n) + 1) * math.pi)
    phi_A = Theta[0] - tm  # theta_1 = theta_min: a free anchor freezes it there
    return np.r_[0.0, 0.0, phi_A, chain.torsion(Theta, phi_A)]


def _lowest(p: Params, q: np.ndarray) -> float:
    return float(chain.end_points(q, p.R)[-2:, 1].min())


def _fit(p: Params, stack: int, drop: float) -> tuple[np.ndarray, float] | None:
    """The leg's stretch that puts its lowest point `drop` below the stack's foot."""
    lo, hi = 0.3, 3.0
    if _lowest(p, _build(p, stack, lo)) < -drop or _lowest(p, _build(p, stack, hi)) > -drop:
        return None
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if _lowest(p, _build(p, stack, mid)) > -drop:
            lo = mid
        else:
            hi = mid
    return _build(p, stack, hi), hi


def bent_over(p: Params, nosing: tuple[float, float], height: float, depth: float,
              landing: float) -> np.ndarray:
    """q of the Slinky bent over the edge `nosing` of the top step (tread `landing`),
    its leg resting on the next step (rise `height`, tread `depth`); at rest."""
    best = None
    for stack in range(LEAST_STACK, p.N - TURN_BARS - 20, 2):
        fit = _fit(p, stack, height)
        if fit is not None and (best is None or abs(fit[1] - STRETCH) < abs(best[1] - STRETCH)):
            best = fit
    if best is None:
        raise SlinkyError(f"the steps are {height:g} m high: too high for the Slinky to "
                          f"reach the next one bent over its edge")
    q = best[0]
    E = chain.end_points(q, p.R)
    # the lower stack ends CLEARANCE short of the next step's front edge, or, on deep
    # steps, the standing stack stands CLEARANCE back from the top step's
    dx = min(nosing[0] + depth - CLEARANCE - E[-2:, 0].max(),
             nosing[0] - CLEARANCE - E[:2, 0].max())
    q[0], q[1] = dx, nosing[1]
    E = chain.end_points(q, p.R)
    x0 = E[:2, 0].min()
    if x0 < nosing[0] - landing:
        raise SlinkyError(f"the top step is {landing:g} m deep: too shallow for the Slinky "
                          f"({2 * p.R:g} m wide) to stand on it")
    if E[-2:, 0].min() < nosing[0]:
        raise SlinkyError(f"the steps are {depth:g} m deep: too shallow for the Slinky's "
                          f"lower end ({2 * p.R:g} m wide) to stand on the next one")
    if q[BASE + 1:].min() < p.theta_min - 1e-12:
        raise SlinkyError("no bent-over shape without coils passing through each other")
    return q
