"""Light and colour on the CPU, as the shaders compute them: the key light, display
colour to linear light, the tone map, and the floor's colours in light and shadow."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from slinky3d.scene.look import Look

Colour = tuple[float, float, float]

LIGHT_DIR = np.array([0.35, 1.0, 0.55]) / np.linalg.norm([0.35, 1.0, 0.55])
KEY = np.array([1.0, 0.96, 0.90]) * 2.4  # as in shaders/common.glsl


def lin(rgb: Iterable[float]) -> Colour:
    """Display colour -> linear light, gamma 2 (the shaders' tonemap ends with a sqrt)."""
    r, g, b = (float(c) ** 2 for c in rgb)
    return r, g, b


def tonemap(c: np.ndarray) -> np.ndarray:
    """shaders/common.glsl's tonemap, on the CPU."""
    c = np.clip((c * (2.51 * c + 0.03)) / (c * (2.43 * c + 0.59) + 0.14), 0.0, 1.0)
    return np.sqrt(c)


def floor_colours(look: Look) -> tuple[Colour, Colour]:
    """Display colours of the matte floor in full key light and in shadow."""
    a = np.array(lin(look.floor_colour))
    amb = np.array(lin(look.background_top)) * 0.6 + 0.08  # ambient() facing up
    out = []
    for sh in (1.0, 0.0):
        c = a * (KEY * LIGHT_DIR[1] * (0.25 + 0.75 * sh) * 0.55 + amb * 0.8)
        r, g, b = (float(v) for v in tonemap(c))
        out.append((r, g, b))
    return out[0], out[1]
