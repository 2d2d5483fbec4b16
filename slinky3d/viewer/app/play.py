"""`slinky3d run` (the scene played in the app's window) and `slinky3d replay` (a logged
session played in it). slinky3d.cli declares their options and calls them."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from slinky3d.dynamics.solver import COMPILING, kernels_ready
from slinky3d.errors import note
from slinky3d.output.paths import check_output
from slinky3d.output.session import load_session, save_session
from slinky3d.output.trajectory import EXTENSION
from slinky3d.runtime.process import SimProcess
from slinky3d.runtime.session import SessionPlayer
from slinky3d.runtime.thread import SimThread
from slinky3d.scene.loader import load
from slinky3d.viewer.app.window import Viewer
from slinky3d.viewer.jobs import look_and_hint, need_display, parse_camera_option, parse_size


def run(args: argparse.Namespace) -> int:
    """`slinky3d run` (and `slinky3d` alone): the app, until its window closes."""
    size = parse_size(args.size)
    parse_camera_option(args.camera)
    log = args.log_state
    if log is not None:
        check_output(log, "--log-state", (EXTENSION,), "session")
    need_display()
    sc = load(args.scene, args.set)
    say_compiling()
    look, hint = look_and_hint(sc, args)
    solver = solver_source(args, SimThread, sc)
    v = Viewer(sc, look, hint, size, quality=args.quality, max_frames=args.frames,
               save_frame=args.save_frame, source=solver,
               dynamic_resolution=not args.no_dynamic_resolution)
    rc = v.run()
    if log is not None:
        save_session(log, solver)
        print(f"session written to {log}")
    return rc


def solver_source(args: argparse.Namespace, make: Callable[..., SimThread],
                  *a: object) -> SimThread | SimProcess:
    """The solver thread `make(*a)`, in a process of its own unless --solver-thread
    (docs/app.md, "The solver's process"); the app's own threads then yield the CPU to it."""
    if args.solver_thread:
        return make(*a)
    return SimProcess(make, *a, yield_to_solver=True)


def say_compiling() -> None:
    """The first run's note on stderr: the solver's thread compiles the kernels while
    the window shows "preparing"."""
    if not kernels_ready():
        note(COMPILING)


def replay(args: argparse.Namespace) -> int:
    """`slinky3d replay FILE.npz`: a logged session played in a window."""
    size = parse_size(args.size)
    need_display()
    session = load_session(args.log)
    sc = session.scene
    say_compiling()
    source = solver_source(args, SessionPlayer, session)
    v = Viewer(sc, sc.look, sc.camera, size, quality=args.quality, max_frames=args.frames,
               save_frame=args.save_frame, source=source, live=False,
               dynamic_resolution=not args.no_dynamic_resolution)
    return v.run()
