"""Short pieces of the plastic Slinky and poses out of the plane, shared by the tests of
the 3D model, its reference integrator and its solver."""

import numpy as np
from scipy.spatial.transform import Rotation

from slinky3d.model import chain3d, static_shape
from slinky3d.model.params import preset

COILS = 2  # 4 half hoops keep the dense reference runs quick


def piece(coils: float = COILS, C_D: float = 0.0, soft: float = 1.0):
    """`coils` coils of the paper's plastic Slinky, with its mass and thickness per coil;
    `soft` divides k_coil (slower spring modes: fewer steps for the same laws)."""
    p = preset("plastic")
    return p.with_(n_coils=coils, mass=p.mass * coils / p.n_coils, L0=p.L0 * coils / p.n_coils,
                   C_D=C_D, k_coil=p.k_coil / soft)


def planar_pose(p, seed: int, phi_A: float = 0.3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.concatenate([[0.0, 0.0, phi_A], rng.uniform(0.2, 1.2, p.N)])


def pose_3d(p, seed: int):
    """A pose out of the plane with spinning half hoops: (x, frames, holder, omega)."""
    x, frames, holder = chain3d.from_planar(planar_pose(p, seed), p.R)
    rng = np.random.default_rng(seed + 100)
    frames = Rotation.from_rotvec(0.4 * rng.normal(size=(p.N, 3))).as_matrix() @ frames
    return x, frames, holder, 3.0 * rng.normal(size=(p.N, 3))


def stretched_swing(coils: float, stretch: float, tilt: float, spin: float, C_D: float = 2e-4):
    """A piece at its hanging shape with its open joints opened `stretch` times as far
    from theta_min (it springs up and its coils shut on each other), tilted by `tilt`
    about x (towards the viewer: it swings out of the plane) and spun at `spin` rad/s
    about the vertical: (p, x, frames, holder, omega)."""
    p = piece(coils, C_D=C_D)
    q = static_shape.hanging(p)
    q[3:] = p.theta_min + stretch * (q[3:] - p.theta_min)
    x, frames, holder = chain3d.from_planar(q, p.R)
    turn = chain3d.exp_map(np.array([tilt, 0.0, 0.0]))
    return p, x, turn @ frames, turn @ holder, np.tile([0.0, spin, 0.0], (p.N, 1))


def beside_planar(spec, h: float, chunks: int, contact: bool = False, each=None):
    """The 3D solver (ring mass model, clamped) and the planar solver run side by side
    from `spec`'s planar state, `chunks` times 25 steps of h: the 3D one asserted in the
    plane after each, `each(planar, solver3d)` called there too. Returns the largest
    distance between their end points, and both solvers."""
    from slinky3d.dynamics.solver import SlinkySolver
    from slinky3d.dynamics.solver3d import Solver3D
    from slinky3d.model import chain

    p = spec.params
    planar = SlinkySolver(spec, h)
    x, frames, holder = chain3d.from_planar(np.asarray(spec.q0), p.R)
    s = Solver3D(p, x, frames, anchor="clamped", holder=holder, mass="ring", h=h,
                 contact=contact)
    worst = 0.0
    for _ in range(chunks):
        planar.advance(25)
        s.advance(25)
        E = s.end_points()
        worst = max(worst, np.abs(E[:, :2] - chain.end_points(planar.q, p.R)).max())
        assert np.abs(E[:, 2]).max() < 1e-12
        if each is not None:
            each(planar, s)
    return worst, planar, s
