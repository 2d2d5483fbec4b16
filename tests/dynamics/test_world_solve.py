"""The locked solve's pieces (docs/solver.md, "The contact solve: closed coils locked"):
guessed sliding contacts give an answer of the whole friction LCP, and the Delassus
matrix from one sweep along the chain is the one from a response per direction."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slinky3d.dynamics.friction_lcp import BY_LEMKE, FROM_LAST, LAST_VALID, solve
from slinky3d.dynamics.impulse_response import factor, respond
from slinky3d.dynamics.lemke import lemke
from slinky3d.dynamics.workspace import COUNTERS
from slinky3d.dynamics.world_contact import new_world_work
from slinky3d.dynamics.world_geometry import body_velocities
from slinky3d.dynamics.world_solve import _delassus, _outermost, basis_rates
from slinky3d.model.chain import BASE
from slinky3d.runtime.simulation import Simulation
from slinky3d.scene.loader import load


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.floats(0.0, 1.5), st.integers(0, 2**32 - 1),
       st.integers(0, 4))
def test_guessed_sliding_contacts_give_an_answer_of_the_whole_lcp(contacts, mu, seed, nrow):
    """Whatever the guesses (right, wrong or none), the impulses solve Stewart and
    Trinkle's LCP over every contact, with the slack beta = |u_t|, with coil rows before
    them (the whole LCP's layout) or none (the locked solve's)."""
    rng = np.random.default_rng(seed)
    nb = nrow + 2 * contacts
    ww = new_world_work(3, np.zeros((0, 3)))
    cnt = np.zeros(1, COUNTERS)[0]
    B = rng.normal(size=(nb, nb))
    W = B @ B.T + 1e-6 * np.eye(nb)
    ww.delassus[:nb, :nb] = W
    ww.free_rate[:nb] = rng.normal(size=nb)
    ww.target[:nb] = 0.0
    ww.mu[:contacts] = mu
    ww.slide[:contacts] = rng.choice([-1.0, 0.0, 1.0], size=contacts)
    ww.state[LAST_VALID] = 0
    for _ in range(contacts + 1):  # each round drops a wrong guess at least
        if solve(nrow, contacts, 1e-3, ww, cnt):
            break
    assert cnt["lcp_failures"] == 0
    lam = ww.impulse[:nb]
    u = ww.free_rate[:nb] + W @ lam
    lc, uc = lam[:nrow], u[:nrow]
    ln, lt, un, ut = lam[nrow::2], lam[nrow + 1::2], u[nrow::2], u[nrow + 1::2]
    # to round-off, and to the regularisation the solve adds (up to 1e-6 of the largest
    # diagonal entry, when Lemke is retried)
    tol = 1e-9 * (1.0 + np.abs(ww.free_rate[:nb]).max()) + 1e-6 * W.diagonal().max() * (
        np.abs(lam).max())
    assert ln.min() >= 0.0 and un.min() >= -tol
    assert np.abs(ln * un).max() <= tol * (1.0 + ln.max())
    if nrow:  # a coil row: its gap's rate and impulse complementary
        assert lc.min() >= 0.0 and uc.min() >= -tol
        assert np.abs(lc * uc).max() <= tol * (1.0 + lc.max())
    # Stewart and Trinkle's rows with lam_+- = max(+-lam_t, 0) and beta = |u_t|:
    # in the cone, friction opposing the sliding, sliding only at the cone's edge
    beta = np.abs(ut)
    edge = mu * ln - np.abs(lt)
    assert edge.min() >= -tol
    assert ((ut + beta) * np.maximum(lt, 0.0)).max() <= tol * (1.0 + ln.max())
    assert ((beta - ut) * np.maximum(-lt, 0.0)).max() <= tol * (1.0 + ln.max())
    # a force times a rate, as the rows above: the rate's tolerance times the force's scale
    # (beta's own scale let a nearly singular W, impulses ~1e5 and rates within tol, fail)
    assert (edge * beta).max() <= tol * (1.0 + ln.max())


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.floats(0.02, 0.25), st.integers(0, 2**32 - 1))
def test_a_later_solve_of_a_step_finds_lemkes_answer_on_the_last_basis(contacts, mu, seed):
    """A later solve of the same step starts from the last answer's basis: on a problem
    a little changed (the rates, the matrix) it finds its answer there, without Lemke's
    method, and it is the one Lemke's method finds where the answer is unique (every
    contact guessed sliding, little friction: a P-matrix)."""
    rng = np.random.default_rng(seed)
    nb = 2 * contacts
    ww = new_world_work(contacts, np.zeros((0, 3)))
    cnt = np.zeros(1, COUNTERS)[0]
    B = rng.normal(size=(nb, nb))
    W = B @ B.T + nb * np.eye(nb)
    ww.bar[:contacts] = np.arange(contacts)
    ww.normal[:contacts] = (0.0, 1.0)
    ww.mu[:contacts] = mu
    ww.target[:nb] = 0.0
    u = rng.normal(size=nb)

    def answer(W, u, slide):
        ww.delassus[:nb, :nb] = W
        ww.free_rate[:nb] = u
        ww.slide[:contacts] = slide
        for _ in range(contacts + 1):
            if solve(0, contacts, 1e-3, ww, cnt):
                break
        return ww.impulse[:nb].copy(), ww.slide[:contacts].copy()

    ww.state[LAST_VALID] = 0
    first, slide = answer(W, u, rng.choice([-1.0, 1.0], size=contacts))
    W2 = W + 1e-9 * np.diag(rng.random(nb))
    u2 = u * (1.0 + 1e-9 * rng.normal(size=nb))
    guessed, lemke_1 = ww.state[FROM_LAST], ww.state[BY_LEMKE]
    again, _ = answer(W2, u2, slide)
    # The last basis takes a contact that does not push with its friction's side from
    # its free tangential rate (friction_lcp._from_last): where the others' impulses
    # turn that rate round, the guess may fail even after its corrections (1 problem in
    # 1500 at mu = 0.25) and Lemke's method answers. Every other answer is found on the
    # last basis.
    rates = W @ first + u
    idle = (first[0::2] <= 0.0) & (slide == 0.0)
    turned = idle & (np.sign(rates[1::2]) != np.sign(u[1::2]))
    if not turned.any():
        assert ww.state[FROM_LAST] > guessed and ww.state[BY_LEMKE] == lemke_1
    assert np.allclose(again, first, rtol=1e-5, atol=1e-7 * (1 + np.abs(first).max()))
    if np.all(slide != 0.0) and mu < 0.1:
        n = contacts
        z = np.zeros(n)
        assert lemke(ww.lcp, ww.lcp_rhs, n, z, np.zeros((n + 1, n + 2)), np.zeros(n, np.int64),
                     np.zeros(2 * n + 1, np.int64), 10 * n + 20) >= 0
        assert np.allclose(ww.lcp_z[:n], z, rtol=1e-9, atol=1e-12 * (1 + np.abs(z).max()))


@pytest.fixture(scope="module")
def stack():
    """The stairs' start (a locked stack on its tread: rigid parts with several
    contacts, and parts with one), its contacts put in the locked solve's order."""
    sim = Simulation(load("stairs-steel"))
    sim.step(2)
    s = sim.slinkies[0]
    ww, fw, par = s.world_work, s.work.forces, s.par
    m = int(ww.state[1])
    q = s.q.copy()
    presc = ww.prescribed.copy()
    R, E, U, ws = par["radius"], fw.ends, fw.bar_axes, ww.factored
    factor(q, presc, fw.armature, par["mass"], par["inertia"], R, E, U, ws, ww.point)
    ms, _ = _outermost(m, presc, R, E, U, ww, 0)
    return s, q, presc, ms


def _plain(s, q, presc, ms):
    """The Delassus matrix of the first ms contacts, one response per direction, on a
    fresh factorisation with presc."""
    ww, fw, par = s.world_work, s.work.forces, s.par
    R, E, U, ws = par["radius"], fw.ends, fw.bar_axes, ww.factored
    factor(q, presc, fw.armature, par["mass"], par["inertia"], R, E, U, ws, ww.point)
    nb = 2 * ms
    zeros = np.zeros(q.shape[0])
    plain = np.zeros((nb, nb))
    loads = np.zeros_like(ww.loads)
    out = np.zeros(q.shape[0])
    row = np.zeros(ww.delassus.shape[0])
    for r in range(nb):
        c = r // 2
        b = ww.bar[c]
        p = E[b] + 2 * R * ww.at[c] * U[b]
        nx, ny = ww.normal[c]
        fx, fy = (nx, ny) if r % 2 == 0 else (ny, -nx)
        loads[b] = (p[0] * fy - p[1] * fx, fx, fy)
        respond(zeros, presc, zeros, loads, ws, out, np.zeros(q.shape[0]))
        loads[b] = 0.0
        basis_rates(0, ms, out, q, R, E, U, ww, row)
        plain[r] = row[:nb]
    return plain


@pytest.mark.parametrize("lock", ["stack", "free", "some"])
def test_the_delassus_matrix_from_one_sweep_is_the_one_from_directions(stack, lock):
    """The sweep along the chain (impulse_response.delassus) gives each direction's
    response, with the stack's coils locked, all free, or every third locked, and an
    exactly symmetric matrix; it counts as one evaluation."""
    s, q, presc, ms = stack
    ww, fw, par = s.world_work, s.work.forces, s.par
    R, E, U, ws = par["radius"], fw.ends, fw.bar_axes, ww.factored
    groups = list(ww.group[ww.bar[:ms]])
    assert any(groups.count(g) > 1 for g in groups)  # a part holds several contacts
    assert any(groups.count(g) == 1 for g in groups)  # and one part a single contact
    p = presc.copy()
    if lock != "stack":
        p[BASE + 1:] = False
    if lock == "some":
        p[BASE + 1::3] = True
    want = _plain(s, q, p, ms)
    nb = 2 * ms
    cnt = np.zeros(1, COUNTERS)[0]
    ww.delassus[:nb, :nb] = np.nan
    _delassus(ms, R, E, U, p, ws, ww, cnt)
    got = ww.delassus[:nb, :nb]
    assert cnt["evaluations"] == 1
    assert np.array_equal(got, got.T)
    assert np.allclose(got, want, rtol=1e-9, atol=1e-12 * np.abs(want).max())


@pytest.mark.parametrize("bar", [0, 40, -1])
def test_a_point_mass_in_the_factorisation_is_the_implicit_grab_s_stiffness(stack, bar):
    """factor's point mass m at a bar's point (the implicit grab, world_contact.py): the
    response dv to an impulse P there solves (Mh + J^T m J) dv = J^T P, i.e. it is the
    plain factorisation's response to P - m J dv, with the stack's coils locked."""
    s, q, presc, _ = stack
    ww, fw, par = s.world_work, s.work.forces, s.par
    R, E, U, ws = par["radius"], fw.ends, fw.bar_axes, ww.factored
    nj = q.shape[0]
    b = bar % (nj - BASE)
    pm = 0.37 * par["mass"] * 156  # a fifth of the Slinky's mass or so
    factor(q, presc, fw.armature, par["mass"], par["inertia"], R, E, U, ws, ww.point)
    px, py = E[b + 1] if bar == -1 else E[b]
    zeros = np.zeros(nj)
    loads = np.zeros_like(ww.loads)

    def point_rate(v):
        body = np.zeros((3, nj - BASE))
        body_velocities(q, v, E, body)
        return np.array([body[1, b] - body[0, b] * py, body[2, b] + body[0, b] * px])

    def response(point, imp):
        factor(q, presc, fw.armature, par["mass"], par["inertia"], R, E, U, ws, point)
        loads[b] = (px * imp[1] - py * imp[0], imp[0], imp[1])
        out = np.zeros(nj)
        respond(zeros, presc, zeros, loads, ws, out, np.zeros(nj))
        loads[b] = 0.0
        return out

    imp = np.array([0.03, -0.02])
    dv = response(np.array([b, pm, px, py], float), imp)
    plain = response(np.array([-1.0, 0.0, 0.0, 0.0]), imp - pm * point_rate(dv))
    assert np.allclose(dv, plain, rtol=1e-9, atol=1e-12 * np.abs(dv).max())
    assert np.abs(point_rate(dv)).max() > 0.0


def test_near_the_world_the_grab_asks_no_sub_steps():
    """The world step takes the grab implicitly: a steel Slinky on its floor, its far
    end grabbed and pulled along it, is advanced in the pieces H_WORLD and MAX_TURN ask
    (2 a step of 4 ms at rest), not the grab's 7 sub-steps; the pull still moves it."""
    sim = Simulation(load("hanging-steel"))
    s = sim.slinkies[0]
    sim.advance_to(0.4)
    sim.let_go(0)
    sim.advance_to(1.2)  # landed
    n = s.p.N
    e0 = sim.snapshot().slinkies[0].ends[n].copy()
    sim.grab(0, n, (float(e0[0]), float(e0[1])))
    assert s.modes["substeps"] == 7
    free = s.cnt["evaluations"]
    sim.step(1)
    assert s.world_work.state[0] == 1  # in the world scheme
    assert s.cnt["evaluations"] - free <= 2 * 12  # two pieces, a few evaluations each
    sim.move_grab(0, (float(e0[0]) + 0.05, float(e0[1])))
    sim.advance_to(sim.t + 0.3)
    assert sim.snapshot().slinkies[0].ends[n][0] > e0[0] + 0.02
