"""Slinky presets (Cumber's Table 1) and the parameters derived from them.

All values SI. `Params` is immutable: a run never changes its model.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

G = 9.81

# Table 1 of the paper; k_coil there was calibrated to the hanging length.
PRESETS: dict[str, dict[str, float]] = {
    "plastic": {"n_coils": 37.5, "mass": 0.039, "R": 0.0315, "L0": 0.067, "k_coil": 2.572e-2},
    "steel": {"n_coils": 78.5, "mass": 0.192, "R": 0.034, "L0": 0.053, "k_coil": 0.1582},
}

# Keys a scene may override; I and theta_min default to derived values when None.
OVERRIDABLE = ("n_coils", "mass", "R", "L0", "k_coil", "C_D", "g", "I", "theta_min")


@dataclass(frozen=True)
class Params:
    """Model parameters of one Slinky.

    n_coils may be fractional (37.5); N = 2 n_coils half hoops, each a rigid bar of
    length 2R with mass m at its midpoint and moment of inertia I about z.
    """

    n_coils: float
    mass: float
    R: float
    L0: float
    k_coil: float
    C_D: float = 0.0
    g: float = G
    I_override: float | None = field(default=None, repr=False)
    theta_min_override: float | None = field(default=None, repr=False)
    preset: str = "custom"

    @property
    def N(self) -> int:
        return int(round(2 * self.n_coils))

    @property
    def m(self) -> float:
        return self.mass / self.N

    @property
    def I(self) -> float:  # noqa: E743 - the model's symbol
        # Semicircular wire in a plane containing the bar and z (docs/model.md section 1).
        return self.I_override if self.I_override is not None else self.m * self.R**2 / 2

    @property
    def delta(self) -> float:
        """Collapsed thickness of one coil, L0 / n_coils."""
        return self.L0 / self.n_coils

    @property
    def theta_min(self) -> float:
        if self.theta_min_override is not None:
            return self.theta_min_override
        return math.atan(self.delta / (2 * self.R))

    def with_(self, **kw: Any) -> Params:
        """A copy with some values replaced (I and theta_min go to their overrides)."""
        if "I" in kw:
            kw["I_override"] = kw.pop("I")
        if "theta_min" in kw:
            kw["theta_min_override"] = kw.pop("theta_min")
        return replace(self, **kw)

    def resolved(self) -> dict[str, Any]:
        """Every parameter, derived ones included, as plain JSON-able values."""
        d = asdict(self)
        d.pop("I_override")
        d.pop("theta_min_override")
        d.update(N=self.N, m=self.m, I=self.I, theta_min=self.theta_min, delta=self.delta)
        return d


def preset(name: str, **overrides: Any) -> Params:
    """The named preset with scene overrides applied."""
    if name not in PRESETS:
        raise KeyError(f"unknown preset {name!r} (known: {', '.join(PRESETS)})")
    return Params(preset=name, **PRESETS[name]).with_(**overrides)
