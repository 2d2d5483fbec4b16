"""Read-only snapshots: what the solver publishes and the renderer and recorder consume."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import numpy as np

from slinky3d.dynamics.hand import Left


@dataclass(frozen=True)
class Energy:
    """One Slinky's energy account, J (gravity's zero at y = 0). `damping` and `impacts`
    are what the joint dampers dissipated and the coil impacts took since the last reset."""

    kinetic: float = 0.0
    gravity: float = 0.0
    spring: float = 0.0
    damping: float = 0.0
    impacts: float = 0.0

    @property
    def total(self) -> float:
        """Mechanical energy plus what was dissipated: constant unless a hand does work."""
        return self.kinetic + self.gravity + self.spring + self.damping + self.impacts


@dataclass(frozen=True)
class SlinkySnapshot:
    """One Slinky at one instant, in world metres (x right, y up, z toward the viewer).

    ends[k] is end point E_{k+1}; ends[0] is the anchored end E_1, ends[-1] the far
    end. Half hoop k spans ends[k] -> ends[k+1]. In a planar snapshot (ends (N+1, 2),
    `bulge` None) it bulges to +z for even k, -z for odd k (0-based), so consecutive
    half hoops close a coil. A 3D snapshot (the 3D model, docs/model.md section 12) has
    ends (N+1, 3) and each half hoop's bulge, the unit vector from its bar's midpoint to
    its apex (chain3d's b); the planar one is that with z = 0 and b = (-1)^k z.
    """

    ends: np.ndarray  # (N+1, 2), or (N+1, 3) with `bulge`
    theta: np.ndarray  # (N,) torsion angles, rad
    contact: np.ndarray  # (N,) bool: joint k at theta_min (coils touching)
    R: float  # half-hoop radius, m
    pitch: float  # collapsed thickness of one coil (L0 / n_coils), m
    theta_min: float
    grab: np.ndarray | None = None  # (2,) grab target in world metres, if grabbed
    grab_point: np.ndarray | None = None  # (2,) the grabbed end point
    # Drawing hints (the renderer puts a holder at a held end, picks "auto" materials).
    anchor_held: bool = False  # E_1 clamped or driven
    far_held: bool = False  # E_{N+1} clamped
    preset: str = ""  # "plastic" | "steel" | "" (unknown)
    energy: Energy | None = None
    # (N,) simulated seconds since each joint's last coil impact (inf: none yet), so that
    # the viewer can flash the coils that just hit
    impact_age: np.ndarray | None = None
    asleep: bool = False  # at rest on the world and not integrated (docs/solver.md, "Sleeping")
    # Holders that let go of an end, where they let go: drawn there, open (a released
    # stand stays in the picture)
    left: tuple[Left, ...] = ()
    bulge: np.ndarray | None = None  # (N, 3) unit: a 3D snapshot's (above); None: planar

    @property
    def N(self) -> int:
        return int(self.theta.shape[0])


@dataclass(frozen=True)
class Snapshot:
    """All Slinkies of a scene at simulated time t."""

    t: float
    slinkies: tuple[SlinkySnapshot, ...]
    real_time_factor: float = 1.0  # simulated seconds per wall second, as achieved
    behind: bool = False  # True when the machine can't keep up with real time
    status: str = ""  # last solver message (e.g. a divergence roll-back)
    rollbacks: int = 0  # divergence-guard roll-backs since the run started
    extra: dict = field(default_factory=dict)


def _mix(a: Energy | None, b: Energy | None, w: float) -> Energy | None:
    if a is None or b is None:
        return b
    return Energy(*((1 - w) * getattr(a, f.name) + w * getattr(b, f.name)
                    for f in fields(Energy)))


def _mix_unit(a: np.ndarray | None, b: np.ndarray | None, w: float) -> np.ndarray | None:
    """Unit vectors between a and b (normalised linear interpolation)."""
    if a is None or b is None:
        return b
    m = (1 - w) * a + w * b
    return m / np.linalg.norm(m, axis=-1, keepdims=True)


def lerp(a: Snapshot, b: Snapshot, t: float) -> Snapshot:
    """Snapshot interpolated between a and b (a.t <= t <= b.t) for smooth frames."""
    if b.t <= a.t:
        return b
    w = min(max((t - a.t) / (b.t - a.t), 0.0), 1.0)
    out = []
    for sa, sb in zip(a.slinkies, b.slinkies, strict=True):
        if sa.N != sb.N or np.shape(sa.ends) != np.shape(sb.ends):
            return b
        out.append(
            replace(
                sb,
                ends=(1 - w) * sa.ends + w * sb.ends,
                theta=(1 - w) * sa.theta + w * sb.theta,
                contact=sb.contact if w > 0.5 else sa.contact,
                bulge=_mix_unit(sa.bulge, sb.bulge, w),
                energy=_mix(sa.energy, sb.energy, w),
                impact_age=(None if sb.impact_age is None
                            else np.maximum(sb.impact_age - (b.t - t), 0.0)),
            )
        )
    return Snapshot(t=t, slinkies=tuple(out), real_time_factor=b.real_time_factor,
                    behind=b.behind, status=b.status, rollbacks=b.rollbacks, extra=b.extra)
