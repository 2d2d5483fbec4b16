"""A synthetic hanging Slinky for the viewer's tests: a plausible shape without physics."""

import numpy as np

from slinky3d.model import chain
from slinky3d.model.params import preset
from slinky3d.runtime.snapshot import SlinkySnapshot, Snapshot


def hanging_snapshot(preset_name: str = "steel", stretch: float = 0.12, t: float = 0.0,
                     anchor=(0.0, 0.0), phi_A: float | None = None) -> Snapshot:
    """Torsion angles at theta_min in the bottom quarter, growing linearly toward the
    anchor by up to `stretch` rad. phi_A None tilts the anchor by -theta_1/2 so that the
    odd and even bars lean symmetrically."""
    p = preset(preset_name)
    k = np.arange(p.N)
    theta = p.theta_min + stretch * np.clip(1.0 - k / (0.75 * p.N), 0.0, None)
    q = np.r_[anchor, -0.5 * theta[0] if phi_A is None else phi_A, theta]
    sl = SlinkySnapshot(
        ends=chain.end_points(q, p.R), theta=theta,
        contact=theta <= p.theta_min + chain.TOUCHING, R=p.R, pitch=p.delta,
        theta_min=p.theta_min, anchor_held=True, preset=preset_name,
    )
    return Snapshot(t=t, slinkies=(sl,))


def point_line_distance(p, a, b):
    """Distance of points p (..., 2) from the line through a and b."""
    d = (b - a) / np.linalg.norm(b - a)
    r = p - a
    return np.abs(r[..., 0] * d[1] - r[..., 1] * d[0])
