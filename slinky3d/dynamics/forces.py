"""The force model of the compiled solver: joint springs and damping, the soft contact
law, the grab, the anchor's drive, and the accelerations they cause (one O(N)
articulated-body solve).

Coils in resting contact are *locked* joints, prescribed at zero acceleration, so
they stay exactly at theta_min and the force that holds them comes out of the same
solve as the contact torque; a held or scripted anchor is prescribed the same way.
The joint springs and damping can be made implicit through the articulated body's
armature (a Rosenbrock stage's linear solve, integrator.py) at no extra cost.
"""

from __future__ import annotations

import math

from numba import njit

from slinky3d.dynamics.articulated_body import JIT, aba, kinematics, point_force
from slinky3d.dynamics.workspace import LAW_SOFT
from slinky3d.model.chain import BASE


@njit(**JIT)
def anchor_motion(par, t, pose, vel, acc):
    """Anchor pose, velocity and acceleration (x, y, phi) for a held/scripted anchor."""
    pose[0] = par.anchor_x
    pose[1] = par.anchor_y
    pose[2] = par.anchor_phi
    for i in range(3):
        vel[i] = 0.0
        acc[i] = 0.0
    if not (t <= par.drive_start or par.drive_frequency <= 0.0):
        # Motion.at's law (scene/spec.py), compiled: a sinusoid, or a chirp; held where
        # it was at drive_stop from then on
        tau = min(t, par.drive_stop) - par.drive_start
        amps = (par.drive_x, par.drive_y, par.drive_phi)
        phases = (par.drive_phase, par.drive_phase_y, par.drive_phase)  # Motion.phases
        if par.drive_rate <= 0.0:
            w = 2.0 * math.pi * par.drive_frequency
            for i in range(3):
                a = w * tau + phases[i]
                pose[i] += amps[i] * (math.sin(a) - math.sin(phases[i]))
                vel[i] = amps[i] * w * math.cos(a)
                acc[i] = -amps[i] * w * w * math.sin(a)
        else:
            rate = par.drive_rate
            f0 = par.drive_frequency
            sweep = max(par.drive_frequency_max - f0, 0.0) / rate
            ts = min(tau, sweep)
            cycles = (f0 + 0.5 * rate * ts) * ts
            if tau > ts:  # past the sweep: on at frequency_max
                cycles += par.drive_frequency_max * (tau - ts)
            w = 2.0 * math.pi * (f0 + rate * ts)
            wd = 2.0 * math.pi * rate if tau < sweep else 0.0
            for i in range(3):
                a = 2.0 * math.pi * cycles + phases[i]
                pose[i] += amps[i] * (math.sin(a) - math.sin(phases[i]))
                vel[i] = amps[i] * w * math.cos(a)
                acc[i] = amps[i] * (wd * math.cos(a) - w * w * math.sin(a))
        if t > par.drive_stop:
            for i in range(3):
                vel[i] = 0.0
                acc[i] = 0.0
    if par.hand != 0.0:
        # a hand's piecewise-constant acceleration (SlinkySolver.drive)
        tau = t - par.hand_t0
        pose[0] += par.hand_x + tau * (par.hand_vx + 0.5 * tau * par.hand_ax)
        pose[1] += par.hand_y + tau * (par.hand_vy + 0.5 * tau * par.hand_ay)
        vel[0] += par.hand_vx + tau * par.hand_ax
        vel[1] += par.hand_vy + tau * par.hand_ay
        acc[0] += par.hand_ax
        acc[1] += par.hand_ay


@njit(**JIT)
def derivatives(q, qd, sd, t, locked, target, par, modes, fw, out_qdd, out_sd, vdamp, qx,
                armh, grab):
    """Accelerations of the system with `locked` joints held; returns nothing.

    Fills out_qdd and out_sd (grab damper rate); fw.joint_force holds, for locked
    joints, the contact torque, for prescribed base joints the anchor reaction. The
    joint damping acts with the velocities `vdamp` and the springs with the angles
    q + qx (qd and 0 for the true dynamics; a Rosenbrock stage's combinations
    otherwise), implicit through the armature armh (integrator.py). grab False leaves
    the grab's force out (the world step applies it implicitly, world_contact.py).
    """
    tau = fw.applied
    presc = fw.prescribed
    qdd_p = fw.prescribed_acc
    arm = fw.armature
    fext = fw.bar_force
    drive = fw.drive[0]
    nj = q.shape[0]
    n = nj - BASE
    free = modes.anchor_free != 0
    k = par.stiffness
    tmin = par.theta_min
    law = modes.law
    cd = par.damping
    # Loops from 0, with no branches, vectorize; a loop from BASE became gathers
    # (numba's negative-index wraparound hides that the indices are contiguous).
    for j in range(nj):
        presc[j] = locked[j]
        qdd_p[j] = 0.0
        tau[j] = -k * (q[j] + qx[j]) - cd * vdamp[j]
        arm[j] = armh
    for j in range(BASE):
        tau[j] = 0.0
        arm[j] = 0.0
    if free:
        tau[BASE] = 0.0  # a free Slinky has no holder: no spring at joint 1
        arm[BASE] = 0.0
        presc[BASE] = True
    else:
        acc = drive.anchor_acceleration
        anchor_motion(par, t, drive.anchor_pose, drive.anchor_velocity, acc)
        for i in range(BASE):
            presc[i] = True
            qdd_p[i] = acc[i]
    if law == LAW_SOFT:
        kc = par.contact_stiffness
        dc = par.contact_damping
        for j in range(BASE, nj):
            pen = tmin - q[j]
            if pen > 0.0:
                f = kc * pen - dc * qd[j]
                if f > 0.0:
                    tau[j] += f
    if drive.force_applied != 0:  # a grab force was applied last time
        for i in range(n):
            fext[i, 0] = 0.0
            fext[i, 1] = 0.0
            fext[i, 2] = 0.0
        drive.force_applied = 0
    out_sd[0] = 0.0
    out_sd[1] = 0.0
    if grab and modes.grab != 0:
        E = fw.ends
        kinematics(q, par.radius, E, fw.bar_axes, fw.aba_rows)
        kp = modes.grab_point
        ex = target[0] - E[kp, 0]
        ey = target[1] - E[kp, 1]
        # holding spring in parallel with a Maxwell element (spring k2 + damper d)
        mx = par.grab_maxwell_stiffness * (ex - sd[0])
        my = par.grab_maxwell_stiffness * (ey - sd[1])
        fx = par.grab_stiffness * ex + mx
        fy = par.grab_stiffness * ey + my
        fn = math.sqrt(fx * fx + fy * fy)
        if fn > par.grab_max_force:
            fx *= par.grab_max_force / fn
            fy *= par.grab_max_force / fn
        out_sd[0] = mx / par.grab_damping
        out_sd[1] = my / par.grab_damping
        point_force(E, kp, fx, fy, fext)
        drive.force_applied = 1
    force = fw.joint_force
    aba(q, qd, tau, presc, qdd_p, fext, arm, par.mass, par.inertia, par.radius, par.gravity,
        out_qdd, force, fw.ends, fw.bar_axes, fw.aba_rows)
    # contact torque of locked joints = needed torque minus the spring's
    for j in range(nj):  # base joints are never locked
        force[j] = force[j] - tau[j] if locked[j] else force[j]


@njit(**JIT)
def set_base(q, qd, t, par, modes, fw):
    """Put a held/scripted anchor exactly on its motion (no drift from RK sums)."""
    if modes.anchor_free == 0:
        drive = fw.drive[0]
        pose = drive.anchor_pose
        vel = drive.anchor_velocity
        anchor_motion(par, t, pose, vel, drive.anchor_acceleration)
        for i in range(BASE):
            q[i] = pose[i]
            qd[i] = vel[i]
    else:
        qd[BASE] = 0.0
