"""The world contacts' small LCP on the locked chain, in Stewart and Trinkle's planar
friction form (normal, +-tangent, a sliding slack per contact), with the contacts sliding
fast guessed to slide on (one unknown at the cone's edge) and the answer checked
against the whole problem (docs/solver.md, "The contact solve: closed coils locked").
Its matrix comes from world_solve's sweep; Lemke's method solves it, or, after a step's
first solve, the last answer's basis (_from_last)."""

from __future__ import annotations

from numba import njit

from slinky3d.dynamics.articulated_body import JIT
from slinky3d.dynamics.lemke import lemke

REGULARIZE = 1e-9  # relative: added to the Delassus diagonal (redundant contacts)
RETRIES = 1  # solves again, more regularised, when Lemke's answer fails the check
CORRECTIONS = 3  # a basis guess's violations flipped at most this often before Lemke
PIVOT_MIN = 1e-12  # relative: a smaller pivot ends the solve on the last answer's basis
LAST_VALID, FROM_LAST, BY_LEMKE = 5, 6, 7  # ww.state: the last answer is this step's,
# and the counts of the answers found on its basis (_from_last) and by Lemke's method


@njit(**JIT)
def _rate_row(A, zi, ri, sign, nrow, m, ww):
    """Fill row zi of the LCP matrix with sign times basis row ri's rate per unit of
    each unknown (the columns of the layout in _layout). ww.delassus[k, ri] is row
    ri's rate per unit impulse along direction k."""
    D = ww.delassus
    for j in range(nrow):
        A[zi, j] = sign * D[j, ri]
    for c in range(m):
        zc = ww.zpos[c]
        n = nrow + 2 * c
        t = n + 1
        s = ww.slide[c]
        if s != 0.0:  # lam_t = -s mu lam_n
            A[zi, zc] = sign * (D[n, ri] - s * ww.mu[c] * D[t, ri])
        else:
            A[zi, zc] = sign * D[n, ri]
            A[zi, zc + 1] = sign * D[t, ri]
            A[zi, zc + 2] = -sign * D[t, ri]
            A[zi, zc + 3] = 0.0


@njit(**JIT)
def _layout(nrow, m, ww):
    """Each contact's first unknown (ww.zpos): its normal impulse, then, unless it is
    guessed sliding (ww.slide), lam_+, lam_- and the sliding slack. Returns the count."""
    nz = nrow
    for c in range(m):
        ww.zpos[c] = nz
        nz += 1 if ww.slide[c] != 0.0 else 4
    return nz


@njit(**JIT)
def _solve_once(nrow, m, ww, cnt):
    """Build the LCP over the coil impulses and the world contacts' unknowns (_layout)
    from the basis Delassus matrix, solve it by Lemke's method and put the basis
    impulses in ww.impulse (lam_t = lam_+ - lam_-, or -s mu lam_n where guessed
    sliding). Returns the pivots, or -1 when no answer solved it."""
    nb = nrow + 2 * m
    nz = _layout(nrow, m, ww)
    W = ww.delassus
    A = ww.lcp
    bq = ww.lcp_rhs
    diag = 0.0
    for r in range(nb):
        diag = max(diag, W[r, r])
    eps = REGULARIZE * diag
    for i in range(nz):
        for j in range(nz):
            A[i, j] = 0.0
    for r in range(nrow):
        _rate_row(A, r, r, 1.0, nrow, m, ww)
        A[r, r] += eps
        bq[r] = ww.free_rate[r] - ww.target[r]
    for c in range(m):
        zc = ww.zpos[c]
        n = nrow + 2 * c
        t = n + 1
        _rate_row(A, zc, n, 1.0, nrow, m, ww)
        A[zc, zc] += eps
        bq[zc] = ww.free_rate[n] - ww.target[n]
        if ww.slide[c] != 0.0:
            continue
        _rate_row(A, zc + 1, t, 1.0, nrow, m, ww)
        _rate_row(A, zc + 2, t, -1.0, nrow, m, ww)
        A[zc + 1, zc + 1] += eps
        A[zc + 2, zc + 2] += eps
        A[zc + 1, zc + 3] = 1.0
        A[zc + 2, zc + 3] = 1.0
        bq[zc + 1] = ww.free_rate[t]
        bq[zc + 2] = -ww.free_rate[t]
        A[zc + 3, zc] = ww.mu[c]
        A[zc + 3, zc + 1] = -1.0
        A[zc + 3, zc + 2] = -1.0
        bq[zc + 3] = 0.0
    z = ww.lcp_z
    if nrow == 0 and _from_last(A, bq, nz, m, ww, z):
        ww.state[FROM_LAST] += 1
        pivots = 0
    else:
        pivots = _by_lemke(A, bq, nz, nrow, m, eps, ww, z)
        ww.state[BY_LEMKE] += 1
    if nrow == 0 and pivots >= 0:
        _keep_last(m, ww, z)
    for r in range(nrow):
        ww.impulse[r] = z[r]
    for c in range(m):
        zc = ww.zpos[c]
        ww.impulse[nrow + 2 * c] = z[zc]
        if ww.slide[c] != 0.0:
            ww.impulse[nrow + 2 * c + 1] = -ww.slide[c] * ww.mu[c] * z[zc]
        else:
            ww.impulse[nrow + 2 * c + 1] = z[zc + 1] - z[zc + 2]
    return pivots


@njit(**JIT)
def _by_lemke(A, bq, nz, nrow, m, eps, ww, z):
    """Lemke's method on the LCP (A, bq) of _solve_once: the pivots, or -1."""
    pivots = -1
    for attempt in range(RETRIES + 1):
        if attempt > 0:  # a wrong answer (round-off on a near-singular matrix): again,
            for c in range(-1, m):  # regularised a thousand times more
                lo = 0 if c < 0 else ww.zpos[c]
                hi = nrow if c < 0 else lo + (1 if ww.slide[c] != 0.0 else 3)
                for i in range(lo, hi):  # not the cone rows (no diagonal)
                    A[i, i] += 999.0 * eps
        pivots = lemke(A, bq, nz, z, ww.tableau, ww.basis, ww.column, 4 * nz + 20)
        # Lemke may end on a ray with z0 small but not zero where many contacts are
        # redundant (a locked stack on its tread: a rank-3 Delassus matrix); an answer
        # that solves the LCP is kept whatever the pivoting's own verdict
        if _solves(A, bq, z, nz):
            pivots = max(pivots, 0)
            break
        pivots = -1
    return pivots


@njit(**JIT)
def _keep_last(m, ww, z):
    """Keep the answer's basis (which unknowns are positive, per contact) for the next
    solve of this step (_from_last): the contacts by bar (ww.last_first, last_next),
    with their place, normal and layout."""
    first = ww.last_first
    for b in range(first.shape[0]):
        first[b] = -1
    for c in range(m - 1, -1, -1):
        b = ww.bar[c]
        ww.last_next[c] = first[b]
        first[b] = c
        ww.last_at[c] = ww.at[c]
        ww.last_normal[c, 0] = ww.normal[c, 0]
        ww.last_normal[c, 1] = ww.normal[c, 1]
        ww.last_slide[c] = ww.slide[c]
        zc = ww.zpos[c]
        for k in range(4):
            ww.last_basic[c, k] = k < (1 if ww.slide[c] != 0.0 else 4) and z[zc + k] > 0.0
    ww.state[LAST_VALID] = 1


@njit(**JIT)
def _from_last(A, bq, nz, m, ww, z):
    """Solve the LCP (A, bq) on the basis of this step's last answer: its contacts (the
    same bar, normal and place) positive where they were, a new contact pushing where
    it approaches (bq < 0), the rest zero; the unknowns so guessed positive from
    A_PP z_P = -bq_P (_on_basis), its violations corrected (_corrected). Returns whether
    that solves the LCP, to the tolerance Lemke's answers are held to (_solves); z has
    it. A contact's layout may have changed since (its sliding guess made or dropped):
    a contact sliding with sign s is plain lam_n, lam_-+ (against s) and beta. A plain
    contact not pushing still has its friction rows: beta = |u_t| and the friction
    against u_t (zero, on the basis)."""
    if ww.state[LAST_VALID] == 0:
        return False
    idx = ww.basis
    p = 0
    for c in range(m):
        zc = ww.zpos[c]
        s = ww.slide[c]
        d = ww.last_first[ww.bar[c]]
        while d >= 0 and not (ww.last_normal[d, 0] == ww.normal[c, 0]
                              and ww.last_normal[d, 1] == ww.normal[c, 1]
                              and abs(ww.last_at[d] - ww.at[c]) < 0.25):
            d = ww.last_next[d]
        pushed = bq[zc] < 0.0 if d < 0 else ww.last_basic[d, 0]  # new: if it approaches
        if pushed:
            idx[p] = zc
            p += 1
        if s != 0.0:
            continue
        was = ww.last_slide[d] if d >= 0 else 1.0
        if pushed and d >= 0 and was == 0.0:
            for k in range(1, 4):
                if ww.last_basic[d, k]:
                    idx[p] = zc + k
                    p += 1
            continue
        # sliding (or, not pushing, its rows still to hold): the friction against the
        # tangential rate (its sign when it slid, else the free rate's) and beta = |u_t|
        sg = was if pushed and d >= 0 else bq[zc + 1]
        idx[p] = zc + (2 if sg > 0.0 else 1)
        idx[p + 1] = zc + 3
        p += 2
    return _corrected(A, bq, nz, p, idx, ww.tableau, z, ww.column)


@njit(**JIT)
def _corrected(A, bq, nz, p, idx, T, z, inb):
    """The LCP (A, bq) solved on the guessed basis idx[:p] (_on_basis), its violations
    flipped all at once (an unknown of the basis negative leaves it, a rate w of one
    outside it negative enters it) at most CORRECTIONS times. Returns whether the
    answer, clipped at zero, solves the LCP to Lemke's tolerance (_solves); z has it."""
    scale = 0.0
    for i in range(nz):
        scale = max(scale, abs(bq[i]))
    tol = 1e-9 * (1.0 + scale)
    for attempt in range(CORRECTIONS + 1):
        if not _on_basis(A, bq, nz, p, idx, T, z):
            return False
        zmax = 0.0
        for k in range(p):
            zmax = max(zmax, abs(z[idx[k]]))
        for i in range(nz):
            inb[i] = 0
        for k in range(p):
            inb[idx[k]] = 1
        flips = 0
        for i in range(nz):
            if inb[i] == 1:
                if z[i] < -1e-12 * (1.0 + zmax):
                    inb[i] = 0
                    flips += 1
            else:
                w = bq[i]
                for j in range(nz):
                    w += A[i, j] * z[j]
                if w < -tol:
                    inb[i] = 1
                    flips += 1
        for i in range(nz):
            z[i] = max(z[i], 0.0)
        if flips == 0 or attempt == CORRECTIONS:
            break
        p = 0
        for i in range(nz):
            if inb[i] == 1:
                idx[p] = i
                p += 1
    return _solves(A, bq, z, nz)


@njit(**JIT)
def _on_basis(A, bq, nz, p, idx, T, z):
    """z with A_PP z_P = -bq_P on the p unknowns idx (Gaussian elimination with partial
    pivoting in T), negative values put to zero, the others zero; False where a pivot
    is too small."""
    scale = 0.0
    for a in range(p):
        for b in range(p):
            T[a, b] = A[idx[a], idx[b]]
            scale = max(scale, abs(T[a, b]))
        T[a, p] = -bq[idx[a]]
    tol = PIVOT_MIN * scale
    for k in range(p):
        piv = k
        for a in range(k + 1, p):
            if abs(T[a, k]) > abs(T[piv, k]):
                piv = a
        if not abs(T[piv, k]) > tol:
            return False
        if piv != k:
            for b in range(k, p + 1):
                T[k, b], T[piv, b] = T[piv, b], T[k, b]
        inv = 1.0 / T[k, k]
        for a in range(k + 1, p):
            f = T[a, k] * inv
            if f != 0.0:
                for b in range(k + 1, p + 1):
                    T[a, b] -= f * T[k, b]
    for i in range(nz):
        z[i] = 0.0
    for k in range(p - 1, -1, -1):
        v = T[k, p]
        for b in range(k + 1, p):
            v -= T[k, b] * T[b, p]
        T[k, p] = v / T[k, k]
        z[idx[k]] = T[k, p]
    return True


@njit(**JIT)
def solve(nrow, m, h, ww, cnt):
    """The LCP (coil impulses, then per contact lam_n, lam_+, lam_-, beta: Stewart and
    Trinkle's form) solved, its basis impulses in ww.impulse and its pivots in
    ww.state[3] (-1: failed). Contacts guessed sliding (ww.slide = the sign of their
    tangential rate, 0: no guess) enter with their friction at the cone's edge,
    lam_t = -s mu lam_n: one unknown instead of four. Returns whether the answer
    stands: a guessed contact pushing with its tangential rate against the guess is
    no longer guessed (False: solve again), and Lemke
    failing with guesses drops them all. An answer with every guess held solves the
    whole LCP (its slack beta = |u_t|) to the tolerance Lemke's own answers are held
    to (_solves)."""
    nb = nrow + 2 * m
    p = _solve_once(nrow, m, ww, cnt)
    ww.state[3] = p
    guessed = False
    for c in range(m):
        guessed = guessed or ww.slide[c] != 0.0
    if not guessed:
        if p < 0:
            cnt.lcp_failures += 1
        return True
    if p < 0:
        for c in range(m):
            ww.slide[c] = 0.0
        return False
    scale = 0.0  # the whole LCP's right-hand side, as _solves has it
    for r in range(nb):
        scale = max(scale, abs(ww.free_rate[r] - ww.target[r]))
    tol = 1e-9 * (1.0 + scale)
    D = ww.delassus
    held = True
    for c in range(m):
        s = ww.slide[c]
        n = nrow + 2 * c
        if s == 0.0 or ww.impulse[n] <= 0.0:
            continue
        t = n + 1
        ut = ww.free_rate[t]
        for k in range(nrow):
            ut += D[k, t] * ww.impulse[k]
        for d in range(m):
            nd = nrow + 2 * d
            ut += D[nd, t] * ww.impulse[nd] + D[nd + 1, t] * ww.impulse[nd + 1]
        if s * ut < -tol:
            ww.slide[c] = 0.0
            held = False
    return held


@njit(**JIT)
def _solves(A, b, z, n):
    """Whether z solves the LCP: w = A z + b >= 0 and w z = 0, to round-off."""
    scale = 0.0
    for i in range(n):
        scale = max(scale, abs(b[i]))
    tol = 1e-9 * (1.0 + scale)
    for i in range(n):
        w = b[i]
        for j in range(n):
            w += A[i, j] * z[j]
        if w < -tol or abs(w * z[i]) > tol * (1.0 + abs(z[i])):
            return False
    return True
