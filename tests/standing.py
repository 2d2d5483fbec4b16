"""The collapsed plastic Slinky standing on the floor on its first bar: the scene text
shared by the world-contact and the sleeping tests."""

import math

from slinky3d.model.params import preset

THETA_MIN = preset("plastic").theta_min
UPRIGHT = math.pi - THETA_MIN  # orientation of a collapsed stack standing on its end bar


def standing_text(tilt=0.0, mu=0.5, mu_static=None, height=0.0, anchor="free", extra="",
                  x=0.0, floor="floor = 0.0") -> str:
    """Tilted by `tilt` rad about its anchored end, `height` above the floor (y = 0)."""
    mu_static = mu if mu_static is None else mu_static
    return f"""
[slinky]
preset = "plastic"
C_D = 2e-3
[slinky.anchor]
position = [{x}, {height}]
orientation = {UPRIGHT + tilt}
condition = "{anchor}"
[slinky.far]
condition = "free"
[slinky.shape]
kind = "angles"
theta = {THETA_MIN}
[world]
{floor}
mu = {mu}
mu_static = {mu_static}
{extra}
"""
