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


def snapshot3d(sl, x, frames):
    """`sl` with the 3D pose (x, frames) of chain3d: its end points and bulges."""
    from dataclasses import replace

    from slinky3d.model import chain3d

    return replace(sl, ends=chain3d.end_points(x, frames, sl.R), bulge=frames[:, :, 1])


def swung(sl):
    """The planar state of `sl` turned, twisted and opened out of its plane: every half
    hoop's frame rotated by its own small rotation, then chained again (chain3d)."""
    from slinky3d.model import chain3d

    q = np.r_[sl.ends[0], 0.0, sl.theta]
    # phi_A: the holder's angle, whence the first bar's d_1 = -(cos, sin)(phi_A + theta_1)
    q[2] = np.arctan2(*(sl.ends[1] - sl.ends[0])[::-1]) - sl.theta[0] - np.pi
    x, frames, _ = chain3d.from_planar(q, sl.R)
    rng = np.random.default_rng(5)
    turn = chain3d.turn_about_vertical(0.7)
    out = np.array([turn @ f @ chain3d.exp_map(0.2 * rng.standard_normal(3)) for f in frames])
    return turn @ x, out
