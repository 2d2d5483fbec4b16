"""The compiled solver's state by name: work arrays, parameters, modes, counters.

Every kernel of this package takes the same arguments: the state (q, qd, the grab
damper sd, the contact set `locked`, the grab target), the *parameters* (floats
fixed for a Slinky), the *modes* (integers that change at run time: the anchor lets
go, a grab starts), the *work* arrays and the *counters*.

Design, and the measured reasons:
* `Work` is a NamedTuple of arrays. In compiled code a field name costs nothing over
  a tuple position, but numba passes every field's array descriptor (7-9 words) to
  every call that is not inlined: 20 more fields cost 1Pa (N = 75) ~3 %. So the
  force model, called most, takes only its part (`ForceWork`); the fixed-size
  quantities share record arrays (`small`, `drive`); and a state kept for two uses
  never live together shares one pair of arrays (`kept_q`, `kept_v`). A numba
  structref (one pointer) does not compile with the kernels' `_nrt=False` (its
  fields are reached through reference-counted memory), and reference counting
  cost 17 % of test 4S's run time.
* Parameters, modes and counters are numpy structured records, read by field name in
  the kernels (`par.theta_min`, `modes.grab`, `cnt.evaluations += 1`). A record is
  passed as a pointer into its array: SlinkySolver changes a mode in place between
  steps (a NamedTuple of scalars would be rebuilt for every change) and the kernels'
  counts land in the solver's array. `MODES` is int64 fields only: a state copies
  and hashes it as plain integers.
* From Python, numba's dispatcher types a record scalar in 1.5 us and a NamedTuple of
  33 arrays in 3 us, but a 1-element record array in 0.2 us and a plain tuple in
  1.2 us: the entry point `step.run` takes those (`plain`) and names them inside.
* Constants (contact laws, event kinds) are module-level integers, which numba folds.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from slinky3d.dynamics.articulated_body import JIT, workspace
from slinky3d.model import chain
from slinky3d.model.chain import BASE
from slinky3d.scene.spec import CONTACT_LAWS

# Contact laws (MODES.law); LAWS maps the scene file's names to them.
LAW_OFF, LAW_RIGID, LAW_PAPER, LAW_SOFT = 0, 1, 2, 3
LAWS = {"rigid": LAW_RIGID, "paper": LAW_PAPER, "soft": LAW_SOFT}
assert set(LAWS) == set(CONTACT_LAWS), "a contact law the scene files know has no code"


@njit(**JIT)
def hard(law: int) -> bool:
    """Whether contact law `law` is hard: coils stop at theta_min and hit as events
    (rigid, paper), rather than pressing into a penalty spring (soft)."""
    return law == LAW_RIGID or law == LAW_PAPER

# What ends a sub-step: nothing (the step is done), a coil reaching theta_min, a
# contact torque reaching zero; or the sub-step is redone in shorter pieces.
NO_EVENT, HIT, SEPARATION, REDO = 0, 1, 2, 3

MAX_STAGES = 12  # the most stages of a tableau (DOP853's)

PARAMETERS = np.dtype([
    ("mass", "f8"),  # m: one half hoop (kg)
    ("inertia", "f8"),  # I: about its centre (kg m^2)
    ("radius", "f8"),  # R (m)
    ("gravity", "f8"),  # g (m/s^2)
    ("stiffness", "f8"),  # k_coil: joint spring (N m/rad)
    ("damping", "f8"),  # C_D: joint damper (N m s/rad)
    ("theta_min", "f8"),  # contact angle (rad)
    ("contact_stiffness", "f8"),  # soft law (N m/rad)
    ("contact_damping", "f8"),  # soft law (N m s/rad)
    ("grab_stiffness", "f8"),  # holding spring (N/m)
    ("grab_maxwell_stiffness", "f8"),  # spring of the Maxwell element (N/m)
    ("grab_damping", "f8"),  # damper of the Maxwell element (N s/m)
    ("grab_max_force", "f8"),  # cap on the grab's force (N)
    ("anchor_x", "f8"),  # anchor pose when held (m, m, rad)
    ("anchor_y", "f8"),
    ("anchor_phi", "f8"),
    ("drive_x", "f8"),  # scripted anchor: amplitudes (m, m, rad)
    ("drive_y", "f8"),
    ("drive_phi", "f8"),
    ("drive_frequency", "f8"),  # Hz; <= 0: no drive
    ("drive_phase", "f8"),  # rad: x's (and the rotation's)
    ("drive_phase_y", "f8"),  # rad: y's (Motion.phases)
    ("drive_start", "f8"),  # s
    ("drive_rate", "f8"),  # Hz/s: a chirp's rise; 0: a plain sinusoid
    ("drive_frequency_max", "f8"),  # Hz: where the chirp stops rising
    ("drive_stop", "f8"),  # s: held where it is from then on (Motion.stop)
    # a hand moving a held anchor (DriveBase): added to the pose from hand_t0 on with
    # constant acceleration, set again by SlinkySolver before each step it changes in
    ("hand", "f8"),  # 1.0 while it is on
    ("hand_t0", "f8"),  # s
    ("hand_x", "f8"),  # offset at hand_t0 (m)
    ("hand_y", "f8"),
    ("hand_vx", "f8"),  # velocity at hand_t0 (m/s)
    ("hand_vy", "f8"),
    ("hand_ax", "f8"),  # acceleration (m/s^2)
    ("hand_ay", "f8"),
], align=True)

MODES = np.dtype([
    ("anchor_free", "i8"),  # 1: the anchored end has let go (joint 1 has no spring)
    ("law", "i8"),  # LAW_*
    ("grab", "i8"),  # 1: an end point is grabbed
    ("grab_point", "i8"),  # which end point (0 .. N)
    ("substeps", "i8"),  # sub-steps of a flow (the explicit soft law's stability)
], align=True)

COUNTERS = np.dtype([
    ("impacts", "i8"),
    ("events", "i8"),
    ("evaluations", "i8"),  # O(N) dynamics solves
    ("lcp_failures", "i8"),  # contact solves that ran out of pivots
    ("separations", "i8"),
    ("stuck", "i8"),  # chatter stopped by holding coils until the step ends
], align=True)

DRIVE = np.dtype([
    # the anchor's drive at one instant (x, y, phi)
    ("anchor_pose", "f8", (3,)),
    ("anchor_velocity", "f8", (3,)),
    ("anchor_acceleration", "f8", (3,)),
    # 1: bar_force holds a grab force (cleared lazily: it is zero without a grab)
    ("force_applied", "i8"),
], align=True)

SMALL = np.dtype([
    # the grab damper: its rate from one evaluation; at a sub-step's ends (rates) and
    # start (state); at a flow's start, kept for a retry
    ("damper_rate", "f8", (2,)),
    ("damper_rate_start", "f8", (2,)),
    ("damper_rate_end", "f8", (2,)),
    ("damper_start", "f8", (2,)),
    ("flow_start_damper", "f8", (2,)),
    # 1: qdd / joint_force hold the dynamics of the current state and contacts (the
    # end of the last step), so the next contact solve need not redo it
    ("dynamics_current", "i8"),
    # the energy account (J): dissipated by the joint dampers and taken by coil impacts
    # (kept steps only); the dampers' share of the flow being tried, kept if it is
    ("damping_loss", "f8"),
    ("impact_loss", "f8"),
    ("damping_trial", "f8"),
], align=True)


class ForceWork(NamedTuple):
    """The force model's arrays (forces.py, and the articulated-body algorithm's)."""

    aba_rows: np.ndarray  # (NROW, nj) its workspace
    ends: np.ndarray  # (N + 1, 2) end points E
    bar_axes: np.ndarray  # (N, 2) bar unit vectors U
    applied: np.ndarray  # joint forces on free joints: springs, damping, soft contact
    bar_force: np.ndarray  # (N, 3) external spatial force on each bar (the grab)
    prescribed: np.ndarray  # joints whose acceleration is given
    prescribed_acc: np.ndarray  # their accelerations
    armature: np.ndarray  # added to each joint's pivot (implicit stiffness, damping)
    joint_force: np.ndarray  # locked joints: contact torque; held base: anchor reaction
    drive: np.ndarray  # (1,) DRIVE record


class Work(NamedTuple):
    """The scratch arrays of one Slinky's solver (no kernel allocates); nj = N + BASE."""

    forces: ForceWork
    qdd: np.ndarray  # accelerations
    zeros: np.ndarray  # never written: "no offset", "at rest"
    # stages of one step (integrator.py)
    stage_q: np.ndarray  # (MAX_STAGES, nj)
    stage_v: np.ndarray  # (MAX_STAGES, nj)
    stage_damper: np.ndarray  # (MAX_STAGES, 2)
    stage_start_q: np.ndarray  # the step's start
    stage_start_v: np.ndarray
    damping_velocity: np.ndarray  # velocities the joint damping acts with in a stage
    spring_offset: np.ndarray  # added to q for a stage's springs
    # a state kept to return to: a flow's start (for a retry in shorter pieces), a
    # sub-step's end while a separation is refined (never both at once)
    kept_q: np.ndarray
    kept_v: np.ndarray
    # contacts (contacts.py)
    torque_start: np.ndarray  # contact torques of the locked joints at a sub-step's start
    torque_end: np.ndarray  # and at its end
    candidate: np.ndarray  # joints the contact solve may lock
    active: np.ndarray  # its active set
    violation: np.ndarray  # its violations
    sticky: np.ndarray  # joints held until the step ends (stopped chatter)
    velocity_after: np.ndarray  # velocities after an impact
    composite_rate: np.ndarray  # the paper's rule: composite rates Theta_k'
    # a sub-step (step.py, events.py): start state, accelerations at both ends
    substep_q: np.ndarray
    substep_v: np.ndarray
    acc_start: np.ndarray
    acc_end: np.ndarray
    impact_time: np.ndarray  # each joint's last impact (s; -inf: none)
    small: np.ndarray  # (1,) SMALL record


def new_work(n: int) -> Work:
    """Work arrays for a chain of n half hoops."""
    nj = n + BASE

    def joints(dtype: type = np.float64) -> np.ndarray:
        return np.zeros(nj, dtype=dtype)

    forces = ForceWork(
        aba_rows=workspace(n), ends=np.zeros((n + 1, 2)), bar_axes=np.zeros((n, 2)),
        applied=joints(), bar_force=np.zeros((n, 3)), prescribed=joints(np.bool_),
        prescribed_acc=joints(), armature=joints(), joint_force=joints(),
        drive=np.zeros(1, DRIVE))
    return Work(
        forces=forces, qdd=joints(), zeros=joints(),
        stage_q=np.zeros((MAX_STAGES, nj)), stage_v=np.zeros((MAX_STAGES, nj)),
        stage_damper=np.zeros((MAX_STAGES, 2)), stage_start_q=joints(),
        stage_start_v=joints(), damping_velocity=joints(), spring_offset=joints(),
        kept_q=joints(), kept_v=joints(),
        torque_start=joints(), torque_end=joints(), candidate=joints(np.bool_),
        active=joints(np.bool_), violation=joints(np.bool_), sticky=joints(np.bool_),
        velocity_after=joints(), composite_rate=joints(),
        substep_q=joints(), substep_v=joints(), acc_start=joints(), acc_end=joints(),
        impact_time=np.full(nj, -np.inf), small=np.zeros(1, SMALL))


def plain(work: Work) -> tuple:
    """The work as plain tuples, as `step.run` takes it from Python."""
    return (tuple(work.forces),) + tuple(work)[1:]


def zeroed_record(dtype: np.dtype) -> np.void:
    """A zeroed record of `dtype`, as the kernels take it (a view of a 1-element array:
    writes through either reach the same memory)."""
    rec: np.void = np.zeros(1, dtype)[0]
    return rec


_first_joint_compiled = njit(**JIT)(chain.first_joint)


@njit(**JIT)
def first_joint(modes):
    """`chain.first_joint` for the kernels, from the modes record."""
    return _first_joint_compiled(modes.anchor_free != 0)
