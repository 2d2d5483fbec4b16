"""Impulse responses of the chain at rest from one factorisation: the articulated-body
algorithm's inertia pass done once, then any number of right-hand sides at O(N) each.

An impulse response (zero velocities, no gravity) depends on q, the prescribed set
and the armature only through the articulated inertias of pass 2; its loads (joint
impulses, bar impulses, the prescribed joints' velocity changes) enter only through
the bias recursion of pass 2 and through pass 3. `factor` computes and keeps the
inertia part; `respond` then costs a fraction of a full `articulated_body.aba` call.
The world step's contact solve needs the velocity changes of unit wrenches at its
contacts, all with the same joints locked: `delassus` gives them all, the contacts'
Delassus matrix, in one sweep of the same factorisation (docs/solver.md, "The Delassus
matrix in one sweep").
"""

from __future__ import annotations

from numba import njit

from slinky3d.dynamics.articulated_body import (
    CO,
    EX,
    EY,
    FM,
    I00,
    I01,
    I02,
    I11,
    I12,
    I22,
    JIT,
    P0,
    P1,
    P2,
    S0,
    S1,
    S2,
    SN,
    UD,
    Y0,
    Y1,
    Y2,
    kinematics,
)
from slinky3d.model.chain import BASE

DI = 18  # free joints: 1 / D (a row of the workspace that aba leaves unused)


@njit(**JIT, fastmath=FM)
def factor(q, presc, armature, m, I, R, E, U, ws, point):  # noqa: E741
    """The inertia part of pass 2 with the joints `presc` prescribed, kept in ws (an
    `articulated_body.workspace`): the motion subspaces; per free joint Y = I^A S / D
    and 1 / D; per prescribed joint its articulated inertia. Fills E, U.

    point = (bar, mass, x, y): a point mass added to that bar at (x, y) (world; the
    implicit grab's stiffness, world_contact.py); bar < 0: none."""
    pb = int(point[0]) + BASE
    pm = point[1]
    px = point[2]
    py = point[3]
    nj = q.shape[0]
    kinematics(q, R, E, U, ws)
    ws[S0, 0], ws[S1, 0], ws[S2, 0] = 0.0, 1.0, 0.0
    ws[S0, 1], ws[S1, 1], ws[S2, 1] = 0.0, 0.0, 1.0
    ws[S0, 2], ws[S1, 2], ws[S2, 2] = 1.0, E[0, 1], -E[0, 0]
    for k in range(nj - BASE):  # no recurrence: vectorized
        j = k + BASE
        sg = 1 - 2 * (k & 1)
        ws[S0, j] = sg
        ws[S1, j] = sg * ws[EY, k]
        ws[S2, j] = -sg * ws[EX, k]
    b00 = b01 = b02 = b11 = b12 = b22 = 0.0
    for j in range(nj - 1, -1, -1):
        s0 = ws[S0, j]
        s1 = ws[S1, j]
        s2 = ws[S2, j]
        if j >= BASE:
            k = j - BASE
            cx = ws[EX, k] + R * ws[CO, k]
            cy = ws[EY, k] + R * ws[SN, k]
            m00 = I + m * (cx * cx + cy * cy)
            m01 = -m * cy
            m02 = m * cx
            m11 = m
            if j == pb:
                m00 += pm * (px * px + py * py)
                m01 -= pm * py
                m02 += pm * px
                m11 += pm
        else:
            m00 = m01 = m02 = m11 = 0.0
        a00 = b00 + m00
        a01 = b01 + m01
        a02 = b02 + m02
        a11 = b11 + m11
        a12 = b12
        a22 = b22 + m11
        if presc[j]:
            ws[I00, j] = a00
            ws[I01, j] = a01
            ws[I02, j] = a02
            ws[I11, j] = a11
            ws[I12, j] = a12
            ws[I22, j] = a22
            b00, b01, b02, b11, b12, b22 = a00, a01, a02, a11, a12, a22
        else:
            x0 = a00 * s0 + a01 * s1 + a02 * s2
            x1 = a01 * s0 + a11 * s1 + a12 * s2
            x2 = a02 * s0 + a12 * s1 + a22 * s2
            di = 1.0 / (s0 * x0 + s1 * x1 + s2 * x2 + armature[j])
            ws[Y0, j] = x0 * di
            ws[Y1, j] = x1 * di
            ws[Y2, j] = x2 * di
            ws[DI, j] = di
            b00 = a00 - (x0 * x0) * di
            b01 = a01 - (x0 * x1) * di
            b02 = a02 - (x0 * x2) * di
            b11 = a11 - (x1 * x1) * di
            b12 = a12 - (x1 * x2) * di
            b22 = a22 - (x2 * x2) * di


@njit(**JIT, fastmath=FM)
def respond(tau, presc, dv_p, fext, ws, dv, force):
    """The velocity change dv (all joints) for joint impulses tau on the free joints,
    bar impulses fext (N, 3) (world, about O) and the prescribed joints' velocity
    changes dv_p; force gets the impulse each prescribed joint takes (0 elsewhere).
    `factor` with the same presc must come first."""
    nj = dv.shape[0]
    r0 = r1 = r2 = 0.0
    for j in range(nj - 1, -1, -1):
        if j >= BASE:
            k = j - BASE
            r0 -= fext[k, 0]
            r1 -= fext[k, 1]
            r2 -= fext[k, 2]
        if presc[j]:
            ws[P0, j] = r0
            ws[P1, j] = r1
            ws[P2, j] = r2
            e = dv_p[j]
            e0 = ws[S0, j] * e
            e1 = ws[S1, j] * e
            e2 = ws[S2, j] * e
            r0 += ws[I00, j] * e0 + ws[I01, j] * e1 + ws[I02, j] * e2
            r1 += ws[I01, j] * e0 + ws[I11, j] * e1 + ws[I12, j] * e2
            r2 += ws[I02, j] * e0 + ws[I12, j] * e1 + ws[I22, j] * e2
        else:
            u = tau[j] - (ws[S0, j] * r0 + ws[S1, j] * r1 + ws[S2, j] * r2)
            ws[UD, j] = u * ws[DI, j]
            r0 += ws[Y0, j] * u
            r1 += ws[Y1, j] * u
            r2 += ws[Y2, j] * u
    a0 = a1 = a2 = 0.0
    for j in range(nj):
        if presc[j]:
            x = dv_p[j]
        else:
            x = ws[UD, j] - (ws[Y0, j] * a0 + ws[Y1, j] * a1 + ws[Y2, j] * a2)
        dv[j] = x
        a0 += ws[S0, j] * x
        a1 += ws[S1, j] * x
        a2 += ws[S2, j] * x
        if presc[j]:
            f0 = ws[I00, j] * a0 + ws[I01, j] * a1 + ws[I02, j] * a2 + ws[P0, j]
            f1 = ws[I01, j] * a0 + ws[I11, j] * a1 + ws[I12, j] * a2 + ws[P1, j]
            f2 = ws[I02, j] * a0 + ws[I12, j] * a1 + ws[I22, j] * a2 + ws[P2, j]
            force[j] = ws[S0, j] * f0 + ws[S1, j] * f1 + ws[S2, j] * f2
        else:
            force[j] = 0.0


@njit(**JIT, fastmath=FM)
def delassus(nr, order, bar, G, presc, ws, X, D):
    """D[r, s] = g_s^T Mh^-1 g_r for nr unit wrenches g_r = G[r] (moment about O, f_x,
    f_y) on bars bar[r], from `factor`'s factorisation, in O(N + nr^2) (plus 6
    operations per joint and row between its bar and the last): the inverse
    operational-space inertia of the chain, without one response per row.

    With A_j = I - Y_j S_j^T (how a free joint passes a load toward the base in
    `respond`) and K_j = S_j S_j^T / D_j, a unit wrench at bar b moves bar c <= b
    by Omega_c Phi(c + 1, b) with Phi(i, k) = A_i ... A_k, where
    Omega_j = A_j^T Omega_{j-1} A_j + K_j (prescribed joints: A = I, K = 0) is a bar's
    own response. One sweep from the base carries Omega and, for each row met, g_r^T
    Omega_b times the A's since (a rank-one update a joint). `order` lists the rows by
    bar (ascending); X is scratch (3, >= nr). D is filled whole, exactly symmetric."""
    if nr == 0:
        return
    nj = presc.shape[0]
    o00 = o01 = o02 = o11 = o12 = o22 = 0.0
    x0 = X[0]
    x1 = X[1]
    x2 = X[2]
    nact = 0
    k = 0
    jend = BASE + bar[order[nr - 1]]
    for j in range(min(jend + 1, nj)):
        if not presc[j]:
            s0 = ws[S0, j]
            s1 = ws[S1, j]
            s2 = ws[S2, j]
            y0 = ws[Y0, j]
            y1 = ws[Y1, j]
            y2 = ws[Y2, j]
            for i in range(nact):  # x^T A_j
                d = x0[i] * y0 + x1[i] * y1 + x2[i] * y2
                x0[i] -= d * s0
                x1[i] -= d * s1
                x2[i] -= d * s2
            w0 = o00 * y0 + o01 * y1 + o02 * y2  # Omega Y
            w1 = o01 * y0 + o11 * y1 + o12 * y2
            w2 = o02 * y0 + o12 * y1 + o22 * y2
            a = y0 * w0 + y1 * w1 + y2 * w2 + ws[DI, j]
            o00 += (a * s0 - 2.0 * w0) * s0
            o01 += a * s0 * s1 - s0 * w1 - w0 * s1
            o02 += a * s0 * s2 - s0 * w2 - w0 * s2
            o11 += (a * s1 - 2.0 * w1) * s1
            o12 += a * s1 * s2 - s1 * w2 - w1 * s2
            o22 += (a * s2 - 2.0 * w2) * s2
        if j < BASE:
            continue
        b = j - BASE
        start = k
        while k < nr and bar[order[k]] == b:
            k += 1
        if k == start:
            continue
        for p in range(start, k):  # with the rows of the bars before
            r = order[p]
            g0 = G[r, 0]
            g1 = G[r, 1]
            g2 = G[r, 2]
            for i in range(nact):
                v = x0[i] * g0 + x1[i] * g1 + x2[i] * g2
                D[order[i], r] = v
                D[r, order[i]] = v
        for p in range(start, k):  # this bar's rows: g^T Omega
            r = order[p]
            g0 = G[r, 0]
            g1 = G[r, 1]
            g2 = G[r, 2]
            i = nact + p - start
            x0[i] = o00 * g0 + o01 * g1 + o02 * g2
            x1[i] = o01 * g0 + o11 * g1 + o12 * g2
            x2[i] = o02 * g0 + o12 * g1 + o22 * g2
        for p in range(start, k):
            r = order[p]
            i = nact + p - start
            for p2 in range(start, p + 1):
                r2 = order[p2]
                v = x0[i] * G[r2, 0] + x1[i] * G[r2, 1] + x2[i] * G[r2, 2]
                D[r, r2] = v
                D[r2, r] = v
        nact += k - start
