"""Lemke's complementary pivoting: w = A z + b, w >= 0, z >= 0, w^T z = 0.

The world-contact step's problem (world_contact.py) holds Coulomb friction in the
plane as Stewart and Trinkle's LCP, whose matrix is copositive-plus but not a
P-matrix: block principal pivoting (contacts.py) may cycle on it, Lemke's method
does not (Cottle, Pang and Stone, The Linear Complementarity Problem, 4.4).

Dictionary form: each basic variable is its row's constant plus the row times the
nonbasic variables (n + 1 columns: the z0 of Lemke's method is one of them), so a
pivot costs n (n + 2) operations, half the classical tableau's. No allocation: the
caller owns the scratch arrays.
"""

from __future__ import annotations

from numba import njit

from slinky3d.dynamics.articulated_body import JIT

PIVOT_TOL = 1e-13  # relative: a coefficient below this is no pivot
RATIO_TIE = 1e-12  # relative: ratios this close tie (then z0 leaves first)


@njit(**JIT)
def lemke(A, b, n, z, T, basis, column, max_pivots):
    """Solve the LCP of the leading n x n block of A and b[:n]; z[:n] gets the answer.

    Scratch: T (>= (n + 1) x (n + 2)), basis (>= n ints: the variable basic in each row),
    column (>= 2n + 1 ints: each nonbasic variable's column, -1 when basic). Variables
    0..n-1 are w, n..2n-1 are z, 2n is z0. Returns the pivots taken, or -1 on a ray
    or when out of pivots (z then holds the last basis's values)."""
    for i in range(n):
        z[i] = 0.0
    if n == 0:
        return 0
    worst = 0
    for i in range(n):
        if b[i] < b[worst]:
            worst = i
    if b[worst] >= 0.0:
        return 0  # z = 0 solves it
    z0 = 2 * n
    rhs = n + 1
    scale = 0.0
    # w_i = b_i + sum_j A_ij z_j + z0: columns 0..n-1 hold z, column n holds z0
    for i in range(n):
        for j in range(n):
            T[i, j] = A[i, j]
            scale = max(scale, abs(A[i, j]))
        T[i, n] = 1.0
        T[i, rhs] = b[i]
        basis[i] = i
    for v in range(2 * n + 1):
        column[v] = -1
    for j in range(n):
        column[n + j] = j
    column[z0] = n
    tol = PIVOT_TOL * max(scale, 1.0)
    entering = z0
    row = worst
    pivots = 0
    ok = False
    while pivots < max_pivots:
        c = column[entering]
        leaving = basis[row]
        _exchange(T, n, row, c)
        basis[row] = entering
        column[entering] = -1
        column[leaving] = c
        pivots += 1
        if leaving == z0:
            ok = True
            break
        entering = leaving + n if leaving < n else leaving - n  # the complement
        c = column[entering]
        row = -1
        best = 0.0
        for i in range(n):
            a = -T[i, c]  # how fast row i's basic variable falls as `entering` grows
            if a > tol:
                r = T[i, rhs] / a
                if row < 0 or r < best - RATIO_TIE * abs(best) or (
                        r <= best + RATIO_TIE * abs(best) and basis[i] == z0):
                    row = i
                    best = r
        if row < 0:
            break  # a secondary ray: no solution found from here
    for i in range(n):
        v = basis[i]
        if n <= v < 2 * n:
            z[v - n] = max(T[i, rhs], 0.0)
        elif v == z0 and T[i, rhs] <= tol * 1e-3 * (1.0 + abs(b[worst])):
            ok = True  # z0 fell to zero without leaving (a degenerate tie): solved
    return pivots if ok else -1


@njit(**JIT, fastmath={"contract"})
def _exchange(T, n, r, c):
    """Make column c's nonbasic variable basic in row r, and row r's basic variable
    nonbasic in column c (the dictionary's pivot)."""
    rhs = n + 1
    p = T[r, c]
    inv = 1.0 / p
    # row r solved for the entering variable
    for j in range(n + 2):
        T[r, j] = -T[r, j] * inv
    T[r, c] = inv
    pr = T[n]  # the pivot row apart: the loop below then vectorizes (no aliasing)
    for j in range(rhs + 1):
        pr[j] = T[r, j]
    for i in range(n):
        if i != r:
            f = T[i, c]
            if f != 0.0:
                ti = T[i]
                for j in range(rhs + 1):
                    ti[j] += f * pr[j]
                ti[c] = f * inv
