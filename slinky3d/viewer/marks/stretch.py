"""Coils coloured by stretch (numpy only, no GL): a colour per half hoop from how far
its joints are opened, through the renderer's per-hoop tint.

A joint's stretch is its angle's place between closed and hanging:

    s = (theta - theta_min) / (theta_hang - theta_min),  clipped to [0, 1]

0 where the coils touch, 1 at the top of the Slinky hanging at rest, where the joint
bears the whole weight. theta_hang is the small-angle hanging angle of that top joint,
m g R N / k_coil (the moment of the whole weight on its spring; static_shape starts its
solve there, and it lies within 7 % of the solved shape's largest angle for both
presets), so no static solve runs in the viewer; a weightless scene (g = 0) takes
Earth's. A half hoop spans joints k and k+1 and takes the mean stretch of those that
carry a spring: the far end E_{N+1} is no joint, and a free Slinky's joint 0 (to the
holder) carries none.
"""

from __future__ import annotations

import numpy as np

from slinky3d.runtime.snapshot import SlinkySnapshot

EARTH_G = 9.81  # m/s^2: the scale of a weightless scene
# Colour stops (display colours) from closed (0) to the hanging maximum (1).
STOPS = np.array([0.0, 0.35, 0.7, 1.0])
COLOURS = np.array([(0.12, 0.30, 0.95),  # closed: blue
                    (0.10, 0.80, 0.85),  # cyan
                    (0.98, 0.85, 0.15),  # yellow
                    (0.95, 0.18, 0.12)])  # hanging maximum: red


def hanging_angle(m: float, g: float, R: float, N: int, k_coil: float) -> float:
    """theta_hang, rad: the top joint of the Slinky hanging at rest, small-angle."""
    return m * (g if g > 0.0 else EARTH_G) * R * N / k_coil


def joint_stretch(theta: np.ndarray, theta_min: float, theta_hang: float) -> np.ndarray:
    """(N,) stretch of each joint in [0, 1] (see the module's docstring)."""
    span = max(theta_hang - theta_min, 1e-6 * max(theta_min, 1e-3))
    return np.clip((np.asarray(theta, float) - theta_min) / span, 0.0, 1.0)


def hoop_stretch(sl: SlinkySnapshot, theta_hang: float) -> np.ndarray:
    """(N,) stretch of each half hoop: the mean over its joints that carry a spring."""
    s = joint_stretch(sl.theta, sl.theta_min, theta_hang)
    if sl.N == 1:
        return s.copy()
    if not sl.anchor_held:
        s = s.copy()
        s[0] = s[1]  # joint 0 of a free Slinky carries no spring: its neighbour's
    nxt = np.r_[s[1:], s[-1]]  # the far end is no joint: the last hoop takes its own
    return 0.5 * (s + nxt)


def colour(s: np.ndarray) -> np.ndarray:
    """(..., 3) display colours of stretches s in [0, 1]."""
    s = np.clip(np.asarray(s, float), 0.0, 1.0)
    return np.stack([np.interp(s, STOPS, COLOURS[:, i]) for i in range(3)], axis=-1)


def tints(sl: SlinkySnapshot, theta_hang: float) -> np.ndarray:
    """(N, 4) float32 per-hoop tints for the renderer: colour by stretch, fully applied."""
    out = np.ones((sl.N, 4), "f4")
    out[:, :3] = colour(hoop_stretch(sl, theta_hang))
    return out
