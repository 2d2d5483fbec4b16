"""The compiled event-aware fixed step: coil impacts and separations are located
inside each step, the contact solves applied there, and the step finished, so the
output stays on the fixed grid.

A step is a loop of sub-steps, each from one contact state to the next event:
solve the resting contacts at its start; take a hit due within a vanishing time
on the Taylor polynomial of the start (chatter at a collapse front); otherwise
integrate the rest of the step, locate its first event and cut it there; apply the
event (an impact law, or a separation left to the next resting-contact solve).
All contacts at an instant are solved together (contacts.py). With the soft law, or
no contacts, a step is one flow.

The helpers of `step`, and the small ones of events.py, are inlined by numba
(inline="always"): as calls, each passing the whole work tuple, they measured
~3 % slower at 1Pa (N = 75), about this machine's noise.
"""

from __future__ import annotations

from numba import njit

from slinky3d.dynamics.articulated_body import JIT
from slinky3d.dynamics.contacts import impact, paper_impact, resting
from slinky3d.dynamics.events import (
    SEP_MIN,
    accelerations,
    advance_on_taylor,
    deepest_gap,
    dense,
    dense_dissipation,
    earliest_hit,
    restore_substep,
    separation_time,
    taylor_hit,
)
from slinky3d.dynamics.forces import set_base
from slinky3d.dynamics.integrator import ERR_TOL, flow, sum_of_squares
from slinky3d.dynamics.workspace import (
    HIT,
    LAW_PAPER,
    NO_EVENT,
    REDO,
    SEPARATION,
    ForceWork,
    Work,
    first_joint,
    hard,
)
from slinky3d.model.chain import BASE, TOUCHING

MAX_EVENTS = 400  # per step; a bound, never reached in practice
DT_STUCK = 1e-4  # fraction of h: hits closer than this in time are one contact event
GAP_STUCK = 1e-7  # rad, and
V_STUCK = 1e-3  # rad/s: a coil this close and slow is held with its neighbours then
# Events in the first S_DENSE of a sub-step take their state from its quintic
# Hermite (the end state's weight there, ~10 s^3, is ~1e-3); later ones integrate
# again to the event: right after an impact the stiff damping relaxes the coils'
# relative rates within ~0.1 ms, which no polynomial over the sub-step follows.
S_DENSE = 0.05
PROJ_TOL = 1e-9  # rad: overlap left to the position projection after locating a hit


@njit(**JIT)
def step(q, qd, sd, t, h, locked, target, par, modes, w, cnt):
    """Advance exactly h with events located inside the step; returns the new time."""
    if not hard(modes.law):
        flow(q, qd, sd, t, h, locked, target, par, modes, w, cnt)
        _keep_dissipation(w)
        return t + h
    for j in range(q.shape[0]):
        w.sticky[j] = False
    sm = w.small[0]
    fresh = sm.dynamics_current == 1
    sm.dynamics_current = 0
    rem = h
    nev = 0
    control = False  # a sub-step is tried once; error control only if it is kept
    while rem > 1e-12 * h:
        start_known = _start_substep(q, qd, sd, t, locked, target, par, modes, w, cnt, fresh)
        fresh = False
        can_cut = nev < MAX_EVENTS
        kind, dt = _short_range_hit(q, qd, sd, t, h, rem, locked, par, modes, w, start_known,
                                    can_cut)
        if kind == NO_EVENT:
            kind, dt = _locate_and_cut(q, qd, sd, t, rem, locked, target, par, modes, w, cnt,
                                       start_known, control, can_cut)
        if kind == REDO:  # kept as it is but not accurate enough: again, in shorter pieces
            control = True
            continue
        t += dt
        rem -= dt
        if kind == NO_EVENT:
            break
        nev += 1
        control = False
        _apply_event(kind, q, qd, t, dt <= DT_STUCK * h, locked, par, modes, w, cnt)
    return t


@njit(**JIT, inline="always")
def _keep_dissipation(w):
    """The flow just tried is kept: so is what its dampers dissipated."""
    sm = w.small[0]
    sm.damping_loss += sm.damping_trial
    sm.damping_trial = 0.0


@njit(**JIT, inline="always")
def _start_substep(q, qd, sd, t, locked, target, par, modes, w, cnt, fresh):
    """Solve the resting contacts and keep the sub-step's start; returns whether its
    accelerations (w.acc_start, w.small's damper_rate_start) are known."""
    start_known = resting(q, qd, sd, t, locked, target, par, modes, w, cnt, fresh)
    sm = w.small[0]
    if start_known:
        for j in range(q.shape[0]):
            w.acc_start[j] = w.qdd[j]
        sm.damper_rate_start[0] = sm.damper_rate[0]
        sm.damper_rate_start[1] = sm.damper_rate[1]
    for j in range(q.shape[0]):
        w.substep_q[j] = q[j]
        w.substep_v[j] = qd[j]
    sm.damper_start[0] = sd[0]
    sm.damper_start[1] = sd[1]
    return start_known


@njit(**JIT, inline="always")
def _short_range_hit(q, qd, sd, t, h, rem, locked, par, modes, w, start_known, can_cut):
    """A hit due within DT_STUCK h (chatter at a collapse front, a coil a hair away)
    is found and reached on the Taylor polynomial of the exact start state: no
    sub-step is integrated only to be cut at once. Returns (HIT or NO_EVENT, time)."""
    tmax = min(DT_STUCK * h, rem)
    dt = 2.0 * tmax
    if start_known:
        dt = taylor_hit(q, qd, w.acc_start, locked, first_joint(modes), par.theta_min, tmax)
    if dt <= tmax and can_cut:
        # the dampers over dt <= 1e-4 h: the rectangle rule
        w.small[0].damping_loss += dt * par.damping * sum_of_squares(qd, BASE)
        advance_on_taylor(q, qd, sd, w.acc_start, w.small[0].damper_rate_start, dt)
        set_base(q, qd, t + dt, par, modes, w.forces)
        return HIT, dt
    return NO_EVENT, dt


@njit(**JIT, inline="always")
def _locate_and_cut(q, qd, sd, t, rem, locked, target, par, modes, w, cnt, start_known,
                    control, can_cut):
    """Integrate the rest of the step, find its first event and end the state there.

    Returns (kind, time advanced): HIT or SEPARATION with the state at the event;
    NO_EVENT with the state at the step's end; REDO with the state back at the
    start, when the flow needs error control (`control` then set by the caller).
    """
    err = flow(q, qd, sd, t, rem, locked, target, par, modes, w, cnt, control)
    kind, s, dynamics_current = _first_event(q, qd, sd, t, rem, locked, target, par, modes,
                                             w, cnt, start_known)
    if not can_cut:
        kind = NO_EVENT
    if kind == NO_EVENT:
        if err > ERR_TOL and not control:
            restore_substep(q, qd, sd, w)
            return REDO, 0.0
        if dynamics_current:
            w.small[0].dynamics_current = 1
        _keep_dissipation(w)
        return NO_EVENT, rem
    return kind, _cut(q, qd, sd, t, rem, s, kind, locked, target, par, modes, w, cnt)


@njit(**JIT, inline="always")
def _first_event(q, qd, sd, t, rem, locked, target, par, modes, w, cnt, start_known):
    """The first event of a sub-step of length rem (q, qd, sd: its end): (kind,
    fraction of rem, whether w's dynamics are still those of the end)."""
    nj = q.shape[0]
    j0 = first_joint(modes)
    tmin = par.theta_min
    has_locked = False
    for j in range(j0, nj):
        if locked[j]:
            has_locked = True
            break
    hit = deepest_gap(q, locked, j0, tmin) < -1e-12  # a free coil ends inside
    sm = w.small[0]
    if hit and not start_known:
        accelerations(w.substep_q, w.substep_v, sm.damper_start, t, locked, target, par, modes,
                      w, cnt, w.acc_start, sm.damper_rate_start)
    if has_locked or hit:  # last, so that joint_force holds the end's contact torques
        accelerations(q, qd, sd, t + rem, locked, target, par, modes, w, cnt, w.acc_end,
                      sm.damper_rate_end)
    best = 2.0
    kind = NO_EVENT
    stale = False  # w's dynamics are no longer the end's
    if hit:
        best = earliest_hit(q, qd, w, rem, locked, j0, tmin)
        kind = HIT if best <= 1.0 else NO_EVENT
    if has_locked:
        s_sep = _separation_estimate(locked, j0, w)
        if s_sep < best:
            # acc_start is set: a locked joint made the contact solve evaluate the start
            s_sep = separation_time(q, qd, sd, t, rem, s_sep, locked, target, par, modes, w,
                                    cnt)
            stale = True
            if s_sep >= SEP_MIN and s_sep < best:
                best = s_sep
                kind = SEPARATION
    return kind, best, has_locked and not stale


@njit(**JIT, inline="always")
def _separation_estimate(locked, j0, w):
    """Keep the contact torques at the sub-step's end (w.torque_end) and return the
    earliest linear estimate of a contact torque reaching zero (2.0 if none)."""
    lam0 = w.torque_start
    lam1 = w.torque_end
    torque = w.forces.joint_force
    s_sep = 2.0
    for j in range(j0, locked.shape[0]):
        lam1[j] = torque[j] if locked[j] else 0.0
        if locked[j] and lam1[j] < 0.0 and lam0[j] > 0.0:
            s = lam0[j] / (lam0[j] - lam1[j])
            # The contact torque goes to zero continuously, so a separation found
            # again right at the start of the sub-step (the previous location was
            # good) is left to the next step's contact solve: refining it further
            # would only repeat the sub-step.
            if s >= SEP_MIN and s < s_sep:
                s_sep = s
    return s_sep


@njit(**JIT, inline="always")
def _cut(q, qd, sd, t, rem, s, kind, locked, target, par, modes, w, cnt):
    """End the sub-step at fraction s of rem (q, qd, sd: its end on entry); returns
    the time advanced."""
    dt = s * rem
    if s <= S_DENSE:
        w.small[0].damping_loss += dense_dissipation(q, qd, w, s, rem, par.damping)
        dense(q, qd, sd, w, s, rem)
        set_base(q, qd, t + dt, par, modes, w.forces)
        return dt
    restore_substep(q, qd, sd, w)
    flow(q, qd, sd, t, dt, locked, target, par, modes, w, cnt)
    # The root is approximate: if a coil still ends inside, locate again within the
    # shorter interval (on the cubic: no acceleration at its end) rather than
    # project a deep overlap away, which would jolt the chain.
    j0 = first_joint(modes)
    tmin = par.theta_min
    for _ in range(8):
        if kind != HIT or deepest_gap(q, locked, j0, tmin) >= -PROJ_TOL:
            break
        dt *= min(earliest_hit(q, qd, w, dt, locked, j0, tmin, False), 1.0)
        restore_substep(q, qd, sd, w)
        w.small[0].damping_trial = 0.0
        if dt > 0.0:
            flow(q, qd, sd, t, dt, locked, target, par, modes, w, cnt)
    _keep_dissipation(w)
    return dt


@njit(**JIT, inline="always")
def _apply_event(kind, q, qd, t, quick, locked, par, modes, w, cnt):
    """Apply a located event: a hit runs the impact law; a separation is left to the
    resting-contact solve at the next sub-step's start, which decides with all
    contacts together which coils separate. quick: the event came within DT_STUCK h."""
    nj = q.shape[0]
    j0 = first_joint(modes)
    tmin = par.theta_min
    cnt.events += 1
    for j in range(j0, nj):
        if locked[j]:
            q[j] = tmin
            qd[j] = 0.0
    if kind != HIT:
        cnt.separations += 1
        return
    if quick:
        # Coils pressing in again within a vanishing time (a Zeno-like chatter at
        # the collapse front): stop the touching, slow ones by impulse and hold
        # them until this step ends, so it makes progress.
        cnt.stuck += 1
        for j in range(j0, nj):
            if not locked[j] and q[j] <= tmin + GAP_STUCK and qd[j] <= V_STUCK:
                w.sticky[j] = True
                q[j] = tmin
    # position projection onto the bound; velocities untouched
    for j in range(j0, nj):
        if not locked[j] and q[j] < tmin + TOUCHING:
            q[j] = tmin
    if modes.law == LAW_PAPER:
        paper_impact(q, qd, locked, par, modes, w, cnt, t)
    else:
        impact(q, qd, locked, par, modes, w, cnt, t)


@njit(**JIT)
def run(q, qd, sd, t, h, nsteps, locked, target, parameters, modes, work, counters):
    """nsteps fixed steps of h; returns the final time. The entry point from Python:
    it takes the records as their 1-element arrays and the work as a plain tuple
    (workspace.plain), which numba's dispatcher types in C, where a record costs 1.5 us a
    call and a NamedTuple of arrays 3 us (1Pa calls this every 10 steps, 140 us)."""
    par = parameters[0]
    md = modes[0]
    cnt = counters[0]
    w = Work(ForceWork(*work[0]), *work[1:])
    t0 = t
    for i in range(nsteps):
        t = step(q, qd, sd, step_start(t0, h, i, t), h, locked, target, par, md, w, cnt)
    return t


@njit(**JIT)
def step_start(t0, h, i, t):
    """The start time of a run's i-th step: (k0 + i) h when the run starts on the grid
    (t0 = k0 h), so that the drive sees the same times however the steps are batched
    (t0 + h + h + ... drifts off the grid, and a drive's start at t = 1 s fell a step
    early or late with the batching); t, the sum so far, off the grid."""
    k0 = round(t0 / h)
    if k0 * h == t0:
        return (k0 + i) * h
    return t
