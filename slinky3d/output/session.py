"""Session files: a logged interactive run, replayable bit for bit, as a trajectory .npz.

The file is a trajectory file (`trajectory.py`: the arrays `slinky3d simulate` writes,
so `figure` reads it too) sampled by replaying the log offline, plus the session itself
(scene TOML, command log with step indices, step count, final state hash, versions) as
a JSON string under SESSION_KEY.
"""

from __future__ import annotations

import math
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from slinky3d.errors import SlinkyError
from slinky3d.model.chain import BASE
from slinky3d.output import DEFAULT_FPS, REALTIME
from slinky3d.output.recording import params_json
from slinky3d.output.trajectory import save, suffix
from slinky3d.runtime.process import SimProcess
from slinky3d.runtime.session import Session, from_thread, session_from_json, session_json
from slinky3d.runtime.simulation import Simulation
from slinky3d.runtime.thread import SimThread

SESSION_KEY = "session"


def sampled(session: Session, fps: float = DEFAULT_FPS) -> tuple[dict[str, Any], str]:
    """The session's trajectory arrays (sampled every k steps, k h <= 1 / fps, over the
    session's clock: resets do not turn time back) and the replay's final state hash.
    A Load within the session changes the Slinkies: sampling stops at the first one."""
    from slinky3d.runtime.commands import replay

    h = session.h if session.h is not None else session.scene.dt
    every = max(1, math.floor(1.0 / (fps * h) + 1e-9))
    first = session.scene
    rows: list[list[tuple]] = [[] for _ in first.slinkies]
    times: list[float] = []

    def sample(k: int, sim: Simulation) -> None:
        if sim.scene is not first:  # a Load: other Slinkies
            return
        times.append(k * h)
        for i, s in enumerate(sim.slinkies):
            rows[i].append((s.ends(), s.q[BASE:].copy(), s.qd[BASE:].copy(), s.energy(),
                            s.n_contacts))

    sim = replay(session.scene, session.log, session.nsteps, session.h, every, sample)
    data: dict[str, Any] = {"t": np.array(times)}
    for i, spec in enumerate(first.slinkies):
        ends, theta, theta_dot, energy, contacts = zip(*rows[i], strict=True)
        s = suffix(i)
        data.update({"ends" + s: np.array(ends), "theta" + s: np.array(theta),
                     "theta_dot" + s: np.array(theta_dot), "energy" + s: np.array(energy),
                     "n_contacts" + s: np.array(contacts, dtype=np.int64),
                     "params" + s: params_json(spec)})
    return data, sim.state_hash()


def save_session(path: str | Path, source: SimThread | SimProcess | Session,
                 fps: float = DEFAULT_FPS) -> Path:
    """Write a session (of a solver thread or process, paused first if it runs; or a
    Session) with
    its trajectory sampled by replaying it offline. Raises SlinkyError if that replay
    does not end on the run's final state (it always should)."""
    if isinstance(source, SimProcess):
        session = source.session()
    elif isinstance(source, SimThread):
        session = from_thread(source)
    else:
        session = source
    data, final = sampled(session, fps)
    if session.final_hash and final != session.final_hash:
        raise SlinkyError(f"{path}: the session's replay did not reproduce its final state")
    session = replace(session, final_hash=final)
    data[SESSION_KEY] = session_json(session)
    meta = {"scene": session.scene.path or session.scene.title, "solver": REALTIME,
            "session": True, "steps": session.nsteps, "dt": session.h or session.scene.dt}
    return save(path, data, meta)


def load_session(path: str | Path) -> Session:
    """Read a session file written by `save_session` (one-line SlinkyError otherwise)."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            if SESSION_KEY not in z.files:
                raise SlinkyError(f"{path}: not a session log (no command log in it; a "
                                  "recording of `slinky3d simulate`?)")
            text = str(z[SESSION_KEY][()])
    except FileNotFoundError:
        raise SlinkyError(f"{path}: no such session file") from None
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise SlinkyError(f"{path}: not a readable .npz session file ({e})") from None
    return session_from_json(text, str(path))
