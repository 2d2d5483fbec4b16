"""The compliant couplings a solver adds to the chain: the grab (a holding spring in
parallel with a Maxwell element, docs/model.md section 10) and the soft contact law.
Their default stiffness and damping, and how finely a flow is cut while their springs
act: both are explicit in the planar step (its Rosenbrock Jacobian holds only the
joints' springs and dampers), so their fastest mode sets the sub-step; the damped 3D
step takes the grab linearly implicit, which lengthens it.
"""

from __future__ import annotations

import math

from slinky3d.scene.spec import SlinkySpec


def soft_defaults(spec: SlinkySpec) -> tuple[float, float]:
    """Soft-law stiffness and damping; damping defaults to critical for one hoop."""
    p, c = spec.params, spec.contact
    d = c.damping if c.damping is not None else 2.0 * math.sqrt(c.stiffness * p.I)
    return c.stiffness, d


GRAB_SAG = 5e-3  # m: holding the whole Slinky sags the default grab this much
# The grab's springs act on one end point explicitly: a flow is cut into sub-steps
# while grabbed so that their fastest mode (the grabbed half hoop's tip, mass 3/8 m,
# on both springs) turns at most this angle per sub-step.
GRAB_OMEGA_H = 1.0
# Linearly implicit (the damped 3D step, grab3d.implicit_forces) the springs need no
# sub-step to be stable; this many radians a sub-step keep the response accurate
# where the point nears its target fast (a one-piece step, omega h 4.3, left the
# plastic Slinky's end 11 mm off after a yank in the plane, 2 sub-steps 2.1 mm);
# 1 to 4 sub-steps of the steel drag cost the same (docs/solver.md, "The grab").
GRAB_OMEGA_H_IMPLICIT = 2.5


def grab_defaults(spec: SlinkySpec) -> tuple[float, float, float, float]:
    """(holding spring, Maxwell spring, Maxwell damper, force cap) of the grab.

    Unset in the scene, the holding spring k sags by GRAB_SAG under the Slinky's weight
    W = M g; the Maxwell element (k2 = 2 k in series with d = 2 sqrt(k M), critical
    for the mass M on k) has its time constant d / k2 = 1 / omega, omega = sqrt(k / M):
    its damping peaks at the frequency of the whole Slinky on the grab. The force is
    capped at max_force_weights W (enough to hold it and to fling it)."""
    g = spec.grab
    mass = spec.params.mass
    weight = mass * spec.params.g
    k = g.stiffness if g.stiffness is not None else weight / GRAB_SAG
    d = g.damping if g.damping is not None else 2.0 * math.sqrt(k * mass)
    if d <= 0.0:  # no damper: the series branch carries nothing (and divides by d)
        return k, 0.0, 1.0, g.max_force_weights * weight
    return k, 2.0 * k, d, g.max_force_weights * weight


def soft_substeps(stiffness: float, damping: float, inertia: float, h: float) -> int:
    """Sub-steps of h that keep the explicit soft contact at omega_c h_sub <= 0.5
    (a joint's inertia ~ I / 2)."""
    wc = math.sqrt(2.0 * stiffness / inertia) + damping / inertia
    return max(1, math.ceil(wc * h / 0.5))


def grab_substeps(stiffness: float, maxwell_stiffness: float, m: float, h: float,
                  implicit: bool = False) -> int:
    """Sub-steps of h while grabbed: the tip of the grabbed half hoop (mass 3/8 m) on
    both springs turns at most GRAB_OMEGA_H per sub-step (GRAB_OMEGA_H_IMPLICIT where
    the step takes the grab linearly implicit)."""
    omega = math.sqrt((stiffness + maxwell_stiffness) / (0.375 * m))
    most = GRAB_OMEGA_H_IMPLICIT if implicit else GRAB_OMEGA_H
    return max(1, math.ceil(omega * h / most - 1e-9))
