"""The Slinky in three dimensions: half hoops as semicircular arcs (docs/model.md section 12).

A pose is the anchored end point E_1 (3,) and the frames of the N half hoops, (N, 3, 3),
each a rotation matrix whose columns are the half hoop's unit vectors (d, b, a):

* d, the diameter direction, from E_k to E_{k+1}: E_{k+1} = E_k + 2R d_k;
* b, the bulge: the arc's apex is at the diameter's midpoint plus R b; at both end
  points the wire's tangent is along b;
* a = d x b, the coil's axis there.

The holder frame (3, 3) is that of a "half hoop 0" to which joint 1 joins half hoop 1.
Joint k's rotation is the rotation vector phi_k = log((R_{k-1} FLIP)^T R_k), in the
frame of half hoop k, components (about d, about b, about a): opening, the paper's
torsion theta, twist. FLIP, half a turn about a, is the joint's rest (theta = 0): a
collapsed coil, consecutive half hoops folded flat onto each other.

This is the dense formulation, plain numpy, for the 3D reference integrator and the
tests; it shares no code with the planar chain (chain.py) beyond the parameters.
"""

from __future__ import annotations

import math

import numpy as np

from slinky3d.model.params import Params

UP = np.array([0.0, 1.0, 0.0])  # gravity along -y, as in the planar model
FLIP = np.diag([-1.0, -1.0, 1.0])  # half a turn about a: the joint at rest
# How each kind of anchored end is held: "clamped" (position and holder frame fixed,
# joint 1 a spring), "pivot" (position fixed, half hoop 1 turns freely about E_1, as
# on a string), "free" (no holder: position and half hoop 1 free).
ANCHORS = ("clamped", "pivot", "free")
# Where a half hoop's mass is (docs/model.md section 12): "arc", the thin semicircular
# wire itself; "ring", the paper's model, the same inertia about the circle's centre
# with the centroid there (as if the half hoop's mass were spread round the whole coil).
MASS_MODELS = ("arc", "ring")

# Young's modulus over shear modulus, E / G = 2 (1 + nu), and the density, per preset;
# spring steel (nu = 0.29, 7850 kg/m^3) and a polypropylene-like plastic
# (nu = 0.42, 905 kg/m^3). Only the ratio of the joint's stiffnesses depends on them.
MATERIALS: dict[str, tuple[float, float]] = {
    "steel": (0.29, 7850.0),
    "plastic": (0.42, 905.0),
    "custom": (0.29, 7850.0),
}


def centroid_offset(R: float, mass: str = "arc") -> float:
    """Distance of the centroid from the circle's centre along b: 2R/pi for the thin
    semicircular arc, 0 for the paper's mass model (the ring, below)."""
    if mass not in MASS_MODELS:
        raise ValueError(f"unknown mass model {mass!r} (known: {', '.join(MASS_MODELS)})")
    return 2.0 * R / math.pi if mass == "arc" else 0.0


def body_centroid(R: float, mass: str = "arc") -> np.ndarray:
    """The centroid in the half hoop's frame (d, b, a), from E_k: R d + offset b."""
    return np.array([R, centroid_offset(R, mass), 0.0])


def inertia_centre(p: Params) -> np.ndarray:
    """Inertia about the circle's centre, in (d, b, a): m R^2 / 2 about d and b, m R^2
    about a (the coil's axis); no products of inertia. The same for both mass models."""
    mr2 = p.m * p.R**2
    return np.diag([mr2 / 2, mr2 / 2, mr2])


def inertia_centroid(p: Params, mass: str = "arc") -> np.ndarray:
    """Inertia about the centroid, in (d, b, a): the centre's, less m s^2 on the axes
    normal to the centroid's offset s b (parallel axis)."""
    s2 = centroid_offset(p.R, mass) ** 2
    return inertia_centre(p) - p.m * s2 * np.diag([1.0, 0.0, 1.0])


def ribbon(p: Params) -> tuple[float, float]:
    """(width, thickness) of the wire's flat ribbon, m. The thickness along the coil's
    axis is a collapsed coil's, Delta = L0 / n_coils; the width (radial) follows from
    the mass: M = density * width * Delta * (wire length 2 pi R n_coils)."""
    _, rho = MATERIALS.get(p.preset, MATERIALS["custom"])
    t = p.delta
    return p.mass / (rho * t * 2 * math.pi * p.R * p.n_coils), t


def joint_stiffness(p: Params) -> np.ndarray:
    """Stiffnesses of a joint about (d, b, a), N m/rad (docs/model.md section 12).

    A half hoop under an end moment M stores int M_t^2/2GJ + M_n^2/2EI_1 + M_a^2/2EI_2
    ds. A moment in the arc's plane (about d or b) is torsion at the ends and bending
    at the apex; over half a turn both shares average 1/2, so the arc is equally
    compliant about d and b: k_d = k_b = k_coil (the paper's calibrated torsion spring,
    and a round stack). A moment about a bends the ribbon across its width, so
    k_a / k_coil = (E I_2 / 2) (1/GJ + 1/E I_1).
    """
    nu, _ = MATERIALS.get(p.preset, MATERIALS["custom"])
    w, t = ribbon(p)
    lo, hi = min(w, t), max(w, t)
    # torsion constant of a rectangle (Roark): J = hi lo^3 (1/3 - 0.21 r (1 - r^4 / 12))
    r = lo / hi
    beta = 1.0 / 3.0 - 0.21 * r * (1.0 - r**4 / 12.0)
    J = beta * hi * lo**3
    I1 = w * t**3 / 12  # about the radial axis: the ribbon's easy way
    I2 = t * w**3 / 12  # about the coil's axis: across its width
    e_over_g = 2 * (1 + nu)
    ratio = 0.5 * I2 * (e_over_g / J + 1.0 / I1)
    return p.k_coil * np.array([1.0, 1.0, ratio])


def skew(v: np.ndarray) -> np.ndarray:
    """[v]x for (..., 3) vectors: [v]x w = v x w."""
    z = np.zeros(v.shape[:-1])
    x, y, w = v[..., 0], v[..., 1], v[..., 2]
    return np.stack([np.stack([z, -w, y], -1), np.stack([w, z, -x], -1),
                     np.stack([-y, x, z], -1)], -2)


def cross(u: np.ndarray, w: np.ndarray) -> np.ndarray:
    """u x w over the last axis (np.cross costs ~50 us a call, this ~5)."""
    i, j = [1, 2, 0], [2, 0, 1]
    return u[..., i] * w[..., j] - u[..., j] * w[..., i]


def end_points(x: np.ndarray, frames: np.ndarray, R: float) -> np.ndarray:
    """(N+1, 3) end points E_1..E_{N+1}."""
    E = np.empty((frames.shape[0] + 1, 3))
    E[0] = x
    E[1:] = x + np.cumsum(2 * R * frames[:, :, 0], axis=0)
    return E


def centroids(x: np.ndarray, frames: np.ndarray, R: float, mass: str = "arc") -> np.ndarray:
    """(N, 3) centroids of the half hoops."""
    return end_points(x, frames, R)[:-1] + frames @ body_centroid(R, mass)


def apexes(x: np.ndarray, frames: np.ndarray, R: float) -> np.ndarray:
    """(N, 3) apexes: the diameter's midpoint plus R b."""
    return end_points(x, frames, R)[:-1] + R * (frames[:, :, 0] + frames[:, :, 1])


def joint_rotations(frames: np.ndarray, holder: np.ndarray | None) -> np.ndarray:
    """(N, 3) joint rotation vectors phi_k, in half hoop k's (d, b, a); row 0 (joint 1)
    is zero when there is no holder."""
    prev = np.empty_like(frames)
    prev[1:] = frames[:-1]
    prev[0] = holder if holder is not None else frames[0] @ FLIP.T
    rel = np.einsum("kji,kjl->kil", prev @ FLIP, frames)
    return log_map(rel)


def log_map(rot: np.ndarray) -> np.ndarray:
    """Rotation vectors of (..., 3, 3) rotation matrices with angles below pi (a joint
    turned by pi or more is outside the model)."""
    v = np.stack([rot[..., 2, 1] - rot[..., 1, 2], rot[..., 0, 2] - rot[..., 2, 0],
                  rot[..., 1, 0] - rot[..., 0, 1]], axis=-1)  # 2 sin(angle) axis
    s = 0.5 * np.linalg.norm(v, axis=-1)
    c = 0.5 * (np.trace(rot, axis1=-2, axis2=-1) - 1.0)
    ang = np.arctan2(s, c)
    small = s < 1e-6
    scale = np.where(small, 0.5 + ang**2 / 12.0, ang / (2 * np.where(small, 1.0, s)))
    return scale[..., None] * v


def exp_map(phi: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) of rotation vectors (..., 3) (Rodrigues)."""
    th = np.linalg.norm(phi, axis=-1)[..., None, None]
    small = th < 1e-6
    ths = np.where(small, 1.0, th)
    a = np.where(small, 1.0 - th**2 / 6.0, np.sin(ths) / ths)
    b = np.where(small, 0.5 - th**2 / 24.0, (1.0 - np.cos(ths)) / ths**2)
    S = skew(phi)
    return np.eye(3) + a * S + b * (S @ S)


def right_jacobian_inv(phi: np.ndarray) -> np.ndarray:
    """(..., 3, 3) inverse right Jacobian of SO(3): phi_dot = J_r^-1(phi) omega_body."""
    th = np.linalg.norm(phi, axis=-1)[..., None, None]
    S = skew(phi)
    small = th < 1e-4
    ths = np.where(small, 1.0, th)
    c = np.where(small, 1.0 / 12.0 + th**2 / 720.0,
                 1.0 / ths**2 - (1 + np.cos(ths)) / (2 * ths * np.sin(ths)))
    return np.eye(3) + 0.5 * S + c * (S @ S)


def spring_energy(p: Params, frames: np.ndarray, holder: np.ndarray | None,
                  stiffness: np.ndarray | None = None) -> float:
    """sum_k 1/2 phi_k^T K phi_k over the joints with a spring (joint 1 only if held)."""
    K = joint_stiffness(p) if stiffness is None else stiffness
    phi = joint_rotations(frames, holder)
    return 0.5 * float(np.sum(K * phi * phi))


def gravity_energy(p: Params, x: np.ndarray, frames: np.ndarray, mass: str = "arc") -> float:
    """sum_k m g y of the centroids (zero at y = 0)."""
    return p.m * p.g * float(np.sum(centroids(x, frames, p.R, mass) @ UP))


def potential_energy(p: Params, x: np.ndarray, frames: np.ndarray,
                     holder: np.ndarray | None, stiffness: np.ndarray | None = None,
                     mass: str = "arc") -> float:
    return gravity_energy(p, x, frames, mass) + spring_energy(p, frames, holder, stiffness)


def centroid_velocities(R: float, frames: np.ndarray, v: np.ndarray,
                        omega: np.ndarray, mass: str = "arc") -> np.ndarray:
    """(N, 3) centroid velocities from E_1's velocity v and the half hoops' angular
    velocities omega (N, 3, world)."""
    rho = frames @ body_centroid(R, mass)
    step = cross(omega, 2 * R * frames[:, :, 0])  # d/dt of 2R d_j
    before = np.cumsum(step, axis=0) - step
    return v + before + cross(omega, rho)


def kinetic_energy(p: Params, frames: np.ndarray, v: np.ndarray, omega: np.ndarray,
                   mass: str = "arc") -> float:
    """T = sum_k 1/2 m |v_c|^2 + 1/2 omega^T I_c omega (I_c about the centroid)."""
    vc = centroid_velocities(p.R, frames, v, omega, mass)
    w_body = np.einsum("kji,kj->ki", frames, omega)
    Ic = inertia_centroid(p, mass)
    return 0.5 * p.m * float(np.sum(vc * vc)) + 0.5 * float(
        np.einsum("ki,ij,kj->", w_body, Ic, w_body))


def linear_momentum(p: Params, frames: np.ndarray, v: np.ndarray,
                    omega: np.ndarray, mass: str = "arc") -> np.ndarray:
    return p.m * centroid_velocities(p.R, frames, v, omega, mass).sum(axis=0)


def angular_momentum(p: Params, x: np.ndarray, frames: np.ndarray, v: np.ndarray,
                     omega: np.ndarray, about: np.ndarray, mass: str = "arc") -> np.ndarray:
    """Angular momentum about the point `about` (world)."""
    c = centroids(x, frames, p.R, mass)
    vc = centroid_velocities(p.R, frames, v, omega, mass)
    Iw = frames @ inertia_centroid(p, mass) @ np.swapaxes(frames, 1, 2)
    spin = np.einsum("kij,kj->i", Iw, omega)
    return p.m * cross(c - about, vc).sum(axis=0) + spin


def centre_of_mass(p: Params, x: np.ndarray, frames: np.ndarray, mass: str = "arc") -> np.ndarray:
    return centroids(x, frames, p.R, mass).mean(axis=0)


def from_planar(q: np.ndarray, R: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, frames, holder) of a planar pose q = (x_A, y_A, phi_A, theta_1..theta_N):
    d_k the bar's direction (-1)^k (cos Theta_k, sin Theta_k), b_k = (-1)^(k+1) z
    (half hoop 1 bulges toward +z), a_k = d_k x b_k. The holder is half hoop 0:
    d_0 = (cos phi_A, sin phi_A), b_0 = -z."""
    n = q.shape[0] - 3
    sg = np.ones(n)
    sg[1::2] = -1.0
    Th = q[2] + np.cumsum(sg * q[3:])
    k = np.arange(n + 1)  # half hoops 0..N
    ang = np.concatenate([[q[2]], Th])
    sign = np.where(k % 2 == 0, 1.0, -1.0)  # (-1)^k
    d = sign[:, None] * np.stack([np.cos(ang), np.sin(ang), np.zeros(n + 1)], -1)
    b = np.zeros((n + 1, 3))
    b[:, 2] = -sign
    F = np.stack([d, b, np.cross(d, b)], axis=-1)
    return np.array([q[0], q[1], 0.0]), F[1:], F[0]


def in_space(points) -> np.ndarray:
    """Points (..., 2) of the planar model, or (..., 3) already, as (..., 3): the plane
    is z = 0 (as `from_planar` puts it)."""
    p = np.asarray(points, float)
    return p if p.shape[-1] == 3 else np.concatenate([p, np.zeros(p.shape[:-1] + (1,))], -1)


def turn_about_vertical(angle: float) -> np.ndarray:
    """Rotation matrix of `angle` (rad) about the vertical (y)."""
    return exp_map(angle * UP)
