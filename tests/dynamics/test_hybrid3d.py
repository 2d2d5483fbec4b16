"""Prescribed joints in the 3D articulated-body algorithm (hybrid dynamics,
docs/solver.md "The 3D solver"): with some joints' relative accelerations given in all
three components, and a held base's acceleration given, the free accelerations and the
forces the prescribed joints and the base need are the dense reference's equations with
those accelerations imposed as constraints (a KKT system), to round-off."""

import numpy as np
import pytest
from pieces3d import piece, pose_3d

from slinky3d.dynamics import integrator3d
from slinky3d.dynamics.solver3d import Solver3D
from slinky3d.model import chain3d
from slinky3d.reference import three_d


def _constrained_reference(ref, x, frames, v, omega, presc, acc_p, base_held):
    """The reference's M u_dot = rhs + G^T lam with G u_dot = r: the prescribed joints'
    w_dot (w_k = R_k^T (omega_k - omega_{k-1})) and, if held, E_1's acceleration.
    Returns (u_dot, lam by row block)."""
    n = frames.shape[0]
    M, rhs = ref.equations(x, frames, v, omega)
    rows, r, blocks = [], [], []
    if base_held:
        g = np.zeros((3, 3 + 3 * n))
        g[:, :3] = np.eye(3)
        rows.append(g)
        r.append(acc_p[:3])
        blocks.append(-1)
    prev = np.vstack([np.zeros(3), omega[:-1]])
    for k in np.flatnonzero(presc):
        g = np.zeros((3, 3 + 3 * n))
        g[:, 3 + 3 * k: 6 + 3 * k] = frames[k].T
        if k > 0:
            g[:, 3 * k: 3 + 3 * k] = -frames[k].T
        rows.append(g)
        # d/dt R_k^T D = R_k^T D_dot - R_k^T (omega_k x D), D = omega_k - omega_{k-1}
        r.append(acc_p[3 + 3 * k: 6 + 3 * k]
                 + frames[k].T @ np.cross(omega[k], omega[k] - prev[k]))
        blocks.append(k)
    G = np.vstack(rows)
    nc = G.shape[0]
    kkt = np.block([[M, -G.T], [G, np.zeros((nc, nc))]])
    sol = np.linalg.solve(kkt, np.concatenate([rhs, np.concatenate(r)]))
    lam = sol[3 + 3 * n:].reshape(-1, 3)
    return sol[:3 + 3 * n], dict(zip(blocks, lam, strict=True))


@pytest.mark.parametrize("anchor", chain3d.ANCHORS)
@pytest.mark.parametrize("mass", chain3d.MASS_MODELS)
def test_prescribed_joints_are_the_constrained_reference(anchor, mass):
    """At a random 3D state, joints 2, 3 and 5 of 6 prescribed with random relative
    accelerations and a held base moved at a random acceleration: the free joints'
    accelerations, the prescribed joints' constraint forces (jf - tau) and the base's
    force are the constrained dense reference's to round-off."""
    p = piece(3, C_D=2e-4)
    x, frames, holder, omega = pose_3d(p, 5)
    v = np.array([0.3, -0.2, 0.5]) if anchor == "free" else np.zeros(3)
    n = p.N
    s = Solver3D(p, x, frames, v, omega, anchor, holder, mass)
    ref = three_d.Reference3D(p, three_d.State3D(x, frames, v, omega), anchor, holder,
                              mass=mass)
    rng = np.random.default_rng(7)
    presc = np.zeros(n, bool)
    presc[[1, 2, 4]] = True
    acc_p = np.zeros(3 + 3 * n)
    acc_p[:] = 40.0 * rng.normal(size=acc_p.size)
    held = anchor != "free"
    if not held:
        acc_p[:3] = 0.0
    w = s.work
    w.presc[:] = presc
    w.acc_p[:] = acc_p
    integrator3d.accelerations(s.mode, s.q, s.u, s.H, s.par, w)
    ud, lam = _constrained_reference(ref, x, frames, v, omega, presc, acc_p, held)
    od = ud[3:].reshape(n, 3)
    prev, odp = np.vstack([np.zeros(3), omega[:-1]]), np.vstack([np.zeros(3), od[:-1]])
    wd_ref = np.einsum("kji,kj->ki", frames,
                       od - odp - np.cross(omega, omega - prev))  # R_k^T (...)
    wd = w.qdd[3:].reshape(n, 3)
    scale = np.abs(wd_ref).max()
    assert np.abs(wd - wd_ref).max() < 1e-11 * scale
    assert np.abs(w.qdd[:3] - ud[:3]).max() < 1e-11 * scale * p.R
    jf, tau = w.jf[3:].reshape(n, 3), w.tau[3:].reshape(n, 3)
    fscale = max(np.abs(lam[k]).max() for k in lam)
    for k in np.flatnonzero(presc):
        assert np.abs(jf[k] - tau[k] - lam[k]).max() < 1e-11 * fscale
    assert np.all(jf[~presc] == 0.0)
    if held:
        assert np.abs(w.jf[:3] - lam[-1]).max() < 1e-11 * np.abs(lam[-1]).max()
        assert np.abs(lam[-1]).max() > p.mass * p.g  # it carries the weight and more


def test_prescribed_at_the_free_acceleration_changes_nothing():
    """Prescribing every joint at the accelerations it has when free returns those
    accelerations and, as force, exactly its spring and damper (no constraint force)."""
    p = piece(3, C_D=2e-4)
    x, frames, holder, omega = pose_3d(p, 3)
    s = Solver3D(p, x, frames, None, omega, "clamped", holder)
    w = s.work
    integrator3d.accelerations(s.mode, s.q, s.u, s.H, s.par, w)
    free = w.qdd.copy()
    w.presc[:] = True
    w.acc_p[:] = free
    integrator3d.accelerations(s.mode, s.q, s.u, s.H, s.par, w)
    scale = np.abs(w.tau).max()
    assert np.abs(w.jf[3:] - w.tau[3:]).max() < 1e-11 * scale
    assert np.abs(w.qdd - free).max() == 0.0


@pytest.mark.parametrize("anchor", chain3d.ANCHORS)
def test_passes_after_the_kinematics_are_the_fused_solve(anchor):
    """`aba` computes pass 1 inside the kinematics' loop; `kinematics` then `passes`
    with bias (pass 1 from the stored kinematics) gives the same accelerations and
    prescribed forces, with some joints prescribed and an armature on."""
    from slinky3d.dynamics import articulated_body3d as ab

    p = piece(3, C_D=2e-4)
    x, frames, holder, omega = pose_3d(p, 9)
    v = np.array([0.3, -0.2, 0.5]) if anchor == "free" else np.zeros(3)
    s = Solver3D(p, x, frames, v, omega, anchor, holder, "arc")
    w = s.work
    rng = np.random.default_rng(3)
    w.presc[[1, 4]] = True
    w.acc_p[:] = 30.0 * rng.normal(size=w.acc_p.size)
    w.tau[:] = rng.normal(size=w.tau.size)
    a = rng.normal(size=w.arm.shape) * 1e-6
    w.arm[:] = a + a.transpose(0, 2, 1)
    ab.aba(s.mode, s.q, s.u, s.H, w.tau, w.arm, s.par, w.presc, w.acc_p, w.qdd, w.jf,
           w.frames, w.ws, w.scr, w.tmp, w.d9)
    fused = w.qdd.copy(), w.jf.copy()
    w.ws[:] = 0.0
    ab.kinematics(s.q, s.u, s.H, p.R, w.frames, w.ws, w.tmp)
    ab.passes(s.mode, w.tau, w.arm, s.par, w.presc, w.acc_p, w.qdd, w.jf, w.frames, w.ws,
              w.scr, w.tmp, w.d9, True)
    for got, want in zip((w.qdd, w.jf), fused, strict=True):
        assert np.abs(got - want).max() <= 1e-13 * np.abs(want).max()
