"""The locked solve's pieces (docs/solver.md, "The contact solve: closed coils locked"):
guessed sliding contacts give an answer of the whole friction LCP, and the Delassus
matrix from wrench responses per rigid part, updated for a coil freed, or grown by
contacts added, is the one from a response per direction."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slinky3d.dynamics.friction_lcp import solve
from slinky3d.dynamics.impulse_response import factor, respond
from slinky3d.dynamics.workspace import COUNTERS
from slinky3d.dynamics.world_contact import new_world_work
from slinky3d.dynamics.world_solve import (
    _added_rows,
    _delassus,
    _freed_update,
    _outermost,
    basis_rates,
)
from slinky3d.model.chain import BASE
from slinky3d.runtime.simulation import Simulation
from slinky3d.scene.loader import load


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.floats(0.0, 1.5), st.integers(0, 2**32 - 1))
def test_guessed_sliding_contacts_give_an_answer_of_the_whole_lcp(contacts, mu, seed):
    """Whatever the guesses (right, wrong or none), the impulses solve Stewart and
    Trinkle's LCP over every contact, with the slack beta = |u_t|."""
    rng = np.random.default_rng(seed)
    nb = 2 * contacts
    ww = new_world_work(3, np.zeros((0, 3)))
    cnt = np.zeros(1, COUNTERS)[0]
    B = rng.normal(size=(nb, nb))
    W = B @ B.T + 1e-6 * np.eye(nb)
    ww.delassus[:nb, :nb] = W
    ww.free_rate[:nb] = rng.normal(size=nb)
    ww.target[:nb] = 0.0
    ww.mu[:contacts] = mu
    ww.slide[:contacts] = rng.choice([-1.0, 0.0, 1.0], size=contacts)
    for _ in range(contacts + 1):  # each round drops a wrong guess at least
        if solve(0, contacts, 1e-3, ww, cnt):
            break
    assert cnt["lcp_failures"] == 0
    lam = ww.impulse[:nb]
    u = ww.free_rate[:nb] + W @ lam
    ln, lt, un, ut = lam[0::2], lam[1::2], u[0::2], u[1::2]
    # to round-off, and to the regularisation the solve adds (up to 1e-6 of the largest
    # diagonal entry, when Lemke is retried)
    tol = 1e-9 * (1.0 + np.abs(ww.free_rate[:nb]).max()) + 1e-6 * W.diagonal().max() * (
        np.abs(lam).max())
    assert ln.min() >= 0.0 and un.min() >= -tol
    assert np.abs(ln * un).max() <= tol * (1.0 + ln.max())
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
    factor(q, presc, fw.armature, par["mass"], par["inertia"], R, E, U, ws)
    ms, _ = _outermost(m, presc, R, E, U, ww, 0)
    return s, q, presc, ms


def _plain(s, q, presc, ms):
    """The Delassus matrix of the first ms contacts, one response per direction, on a
    fresh factorisation with presc."""
    ww, fw, par = s.world_work, s.work.forces, s.par
    R, E, U, ws = par["radius"], fw.ends, fw.bar_axes, ww.factored
    factor(q, presc, fw.armature, par["mass"], par["inertia"], R, E, U, ws)
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


def _agrees(ww, ms, plain, guess):
    """ww.delassus's rows are plain's (a combined row: n - guess mu t)."""
    got = ww.delassus[:2 * ms, :2 * ms]
    for c in range(ms):
        want = [plain[2 * c], plain[2 * c + 1]]
        if ww.combined[c]:
            want = [plain[2 * c] - guess * ww.mu[c] * plain[2 * c + 1]]
        for r, w in enumerate(want, 2 * c):
            assert np.allclose(got[r], w, rtol=1e-9, atol=1e-9 * np.abs(plain).max())


def test_the_delassus_matrix_from_wrenches_is_the_one_from_directions(stack):
    """The wrench responses combined give each direction's response, and a guessed
    contact alone on its part the response along n - s mu t."""
    s, q, presc, ms = stack
    ww, fw, par = s.world_work, s.work.forces, s.par
    R, E, U, ws = par["radius"], fw.ends, fw.bar_axes, ww.factored
    nb = 2 * ms
    groups = list(ww.group[ww.bar[:ms]])
    assert any(groups.count(g) > 1 for g in groups)  # a part holds several contacts
    assert any(groups.count(g) == 1 for g in groups)  # and one part a single contact
    zeros = np.zeros(q.shape[0])
    plain = _plain(s, q, presc, ms)
    for guess in (0.0, 1.0, -1.0):
        ww.slide[:ms] = guess
        cnt = np.zeros(1, COUNTERS)[0]
        _delassus(ms, q, R, E, U, presc, ws, zeros, ww, cnt)
        assert cnt["evaluations"] < nb
        for c in range(ms):
            lone = groups.count(groups[c]) == 1
            assert ww.combined[c] == (lone and guess != 0.0)
        _agrees(ww, ms, plain, guess)


@pytest.mark.parametrize("guess", [0.0, 1.0])
def test_a_freed_coils_update_and_added_contacts_give_the_fresh_matrix(stack, guess):
    """Freeing a locked coil inside a part with contacts: the locked matrix plus the
    rank-one term of the freed coil's response is the freer chain's matrix; contacts
    added to it (on the same factorisation) give the whole one."""
    s, q, presc, ms = stack
    ww, fw, par = s.world_work, s.work.forces, s.par
    R, E, U, ws = par["radius"], fw.ends, fw.bar_axes, ww.factored
    zeros = np.zeros(q.shape[0])
    bars = ww.bar[:ms]
    j = int(BASE + bars.min() + 1)  # a coil between two bars with contacts, locked
    assert presc[j] and j - BASE < bars.max()
    freer = presc.copy()
    freer[j] = False
    want = _plain(s, q, freer, ms)
    old = ms - 1
    ww.slide[:ms] = guess
    cnt = np.zeros(1, COUNTERS)[0]
    factor(q, presc, fw.armature, par["mass"], par["inertia"], R, E, U, ws)
    _delassus(old, q, R, E, U, presc, ws, zeros, ww, cnt)
    factor(q, freer, fw.armature, par["mass"], par["inertia"], R, E, U, ws)
    assert _freed_update(j, old, q, R, E, U, freer, ws, zeros, ww, cnt)
    _added_rows(old, ms, q, R, E, U, freer, ws, zeros, ww, cnt)
    assert not ww.combined[old]
    _agrees(ww, ms, want, guess)
