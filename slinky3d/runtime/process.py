"""The solver in its own process: a `thread.SimThread` (or a subclass) run in a child
process, seen by the window through the same `Source` interface.

Why a process: in one process the solver thread and the window share Python's lock, and
moderngl holds it through its calls, also while a software rasterizer waits for the
picture. Dragged along its floor, the steel Slinky's solver then got a third to a half of
a core and fell behind real time however fast it stepped (docs/app.md, "The solver's
process"). In its own process it has its own lock.

The child runs the thread unchanged. Each time the thread publishes (its newest
snapshot recorded in its history), the child sends the pair, the history's changes since
the last message and the thread's state through a pipe; a receiving thread here keeps
them. Commands go the other way through a queue whose feeder thread never blocks the
caller. The log stays in the child (it is the run's record) and is asked for when it is
read (a clip, a saved session); when the process stops it sends its final session.
"""

from __future__ import annotations

import itertools
import multiprocessing as mp
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from slinky3d.dynamics.solver import warm_up
from slinky3d.errors import SlinkyError, error_line
from slinky3d.runtime.commands import Command, LogEntry
from slinky3d.runtime.history import History
from slinky3d.runtime.session import Session, from_thread
from slinky3d.runtime.snapshot import Snapshot
from slinky3d.runtime.thread import SimThread

# The app's solver process runs this much nicer than the window: a solver that keeps
# real time needs a third of a core, and takes it in the picture's idle time, so the
# frames that coincide with its steps are no longer drawn on one core (frame interval
# p95 1.4-3.3 ms lower, docs/app.md "Frames on the grid"). One that falls behind gets
# the cores first again when the window yields (YIELD_NICE, more than this).
SOLVER_NICE = 5
YIELD_NICE = 10  # how much this process's threads yield the CPU to the solver's
YIELD_AFTER = 1.0  # wall s the solver stays behind real time before they do
# Behind means losing simulated time: the real-time factor below this share of the
# time scale. The behind flag alone (a batch 20 ms late, held 0.5 s) rises now and then
# in a drag the solver keeps up with, and yielding then only costs the picture frames.
YIELD_BELOW = 0.95
START_TIMEOUT = 120.0  # s for the child to answer a request (a first run compiles)
PARENT_POLL = 0.5  # s between the child's looks at whether its parent is alive
STOP_TIMEOUT = 5.0  # s for the child to stop and send its final session


@dataclass(frozen=True)
class _State:
    """What the child sends each time its thread publishes."""

    pair: tuple[Snapshot, Snapshot]
    ops: tuple[Snapshot | None, ...]  # history changes, in order (None: cleared)
    steps: int
    paused: bool
    scale: float
    error: str
    status: str


class _RelayHistory(History):
    """The child thread's history: records what changed and sends it with the pair when
    the thread records the newest snapshot of its pair (the last thing every publish
    does, see thread.SimThread)."""

    def __init__(self, source: SimThread, send: Callable[[object], None]):
        super().__init__(source.history.seconds, source.history.period)
        self._source, self._send = source, send
        self._ops: list[Snapshot | None] = []
        for snap in source.history.snapshots():
            super().add(snap)

    def add(self, snap: Snapshot) -> None:
        super().add(snap)
        self._ops.append(snap)
        src = self._source
        if snap is src.latest_pair()[1]:
            ops, self._ops = tuple(self._ops), []
            self._send(_State(src.latest_pair(), ops, src.steps, src.paused, src.scale,
                              src.error, src.status))

    def clear(self) -> None:
        super().clear()
        self._ops = [None]


def _serve(make: Callable[..., SimThread], args: tuple, commands: Any, out: Connection,
           nice: int = 0, parent: int | None = None) -> None:
    """The child process: the thread, fed commands and answering requests until None;
    `nice`: how much nicer than its parent it runs; `parent`: its parent's pid (given,
    not asked: a parent killed while the child starts has already handed it on)."""
    if nice:
        yield_cpu(nice)
    _die_with(os.getppid() if parent is None else parent)
    lock = threading.Lock()

    def send(msg: object) -> None:
        with lock:
            try:
                out.send(msg)
            except (BrokenPipeError, OSError):  # the parent has gone: nothing to tell
                pass

    src = make(*args)
    src.history = _RelayHistory(src, send)
    warm_up()  # the kernels loaded (or compiled) while the parent builds its window
    try:
        while True:
            msg = commands.get()
            if msg is None:
                break
            tag, key, payload = msg
            if tag == "cmd":
                src.send(payload)
            elif tag == "start":
                src.start()
            elif tag == "drain":
                send(("reply", key, src.drain(payload)))
            elif tag == "log":
                send(("reply", key, tuple(src.log)))
            elif tag == "session":
                try:
                    send(("reply", key, from_thread(src, payload)))
                except SlinkyError as e:
                    send(("reply", key, e))
    finally:
        if src.alive:
            src.drain(STOP_TIMEOUT / 2)  # the commands sent before the stop are taken
        src.stop()
        try:
            final: Session | SlinkyError = from_thread(src)
        except SlinkyError as e:
            final = e
        send(("final", 0, final))
        out.close()


def _die_with(parent: int) -> None:
    """End this process when `parent` has gone (killed, crashed: it could not stop us),
    instead of stepping its scene for ever with nobody to see it: a watch thread
    notices being handed to another parent."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL)
        os._exit(0)

    threading.Thread(target=watch, name="slinky3d-parent-watch", daemon=True).start()


def yield_cpu(nice: int) -> None:
    """Raise the nice value of every thread of this process (those it starts later
    inherit it) by `nice`: where cores are short, the solver, which must keep real time,
    gets them before the picture, which drops frames or scale instead. Unprivileged
    processes can raise, never lower, their nice value: this cannot be undone."""
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:  # not Linux: the process as a whole, where that is a thing
        tids = [0]
    for tid in tids:
        try:
            now = os.getpriority(os.PRIO_PROCESS, tid)
            os.setpriority(os.PRIO_PROCESS, tid, min(now + nice, 19))
        except (OSError, AttributeError):  # gone, or not supported here
            pass


class SimProcess:
    """A solver thread in a child process, with the `Source` interface.

    yield_to_solver: the app's policy for two jobs on few cores. The solver runs
    SOLVER_NICE nicer than the window while it keeps real time; when it falls behind,
    this process's threads yield the CPU to it (a picture can drop frames or scale,
    the physics must not fall behind).

    make(*args) builds the thread: SimThread (scene, h, realtime), a subclass, or
    runtime.session.SessionPlayer (session, realtime). It is built here too, not
    started, for the first snapshot, so that a window has a picture before the child
    has started (a few seconds: it imports the package and loads the kernels).
    """

    def __init__(self, make: Callable[..., SimThread] = SimThread, *args: Any,
                 yield_to_solver: bool = False):
        local = make(*args)
        self._yield = yield_to_solver
        self.yielded = False  # this process's threads yielded the CPU to the solver
        self._behind_since: float | None = None  # wall s: behind real time since then
        self.initial_scene = local.initial_scene
        self.h_override = local.h_override
        self.realtime = local.realtime
        self.history = History(local.history.seconds, local.history.period)
        for snap in local.history.snapshots():
            self.history.add(snap)
        self.error = ""
        self.status = ""
        self._pair = local.latest_pair()
        self._steps, self._paused, self._scale = local.steps, local.paused, local.scale
        self._make, self._args = make, args
        ctx = mp.get_context("spawn")  # fork is unsafe under a GL context and threads
        self._commands = ctx.Queue()
        self._recv, child_out = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_serve, args=(make, args, self._commands, child_out,
                                                       SOLVER_NICE if yield_to_solver else 0,
                                                       os.getpid()),
                                 name="slinky3d-solver", daemon=True)
        self._keys = itertools.count(1)
        self._replies: dict[int, object] = {}
        self._cond = threading.Condition()
        self._final: Session | SlinkyError | None = None
        self._started = self._stopped = False
        self._dead = False  # the child ended without being stopped
        # The child starts now, so that its imports and kernels load while the caller
        # builds its window; it steps from `start` on.
        self._proc.start()
        child_out.close()  # the child's end, kept open by the child alone
        self._receiver = threading.Thread(target=self._receive, name="slinky3d-solver-relay",
                                          daemon=True)
        self._receiver.start()

    # -- Source ----------------------------------------------------------------------
    def start(self) -> None:
        """Start stepping (once; after `stop` it stays stopped)."""
        if self._started or self._stopped:
            return
        self._started = True
        self._commands.put(("start", 0, None))

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop the child, keeping its final session; safe to call again."""
        if self._stopped:
            return
        self._stopped = True
        self._commands.put(None)
        with self._cond:
            self._cond.wait_for(lambda: self._final is not None or not self._proc.is_alive(),
                                timeout)
        self._proc.join(timeout)
        if self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(timeout)
        self._receiver.join(timeout)
        self._commands.cancel_join_thread()  # a dead child reads nothing more
        self._commands.close()

    def send(self, cmd: Command) -> None:
        """Queue a command; returns at once."""
        if not (self._stopped or self._dead):
            self._commands.put(("cmd", 0, cmd))

    def latest_pair(self) -> tuple[Snapshot, Snapshot]:
        return self._pair

    @property
    def steps(self) -> int:
        return self._steps

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def scale(self) -> float:
        return self._scale

    @property
    def pid(self) -> int | None:
        """The child's process id."""
        return self._proc.pid

    @property
    def alive(self) -> bool:
        return self._started and not self._stopped and self._proc.is_alive()

    @property
    def log(self) -> Sequence[LogEntry]:
        """The child's log so far (asked of it), or its final one once stopped."""
        if self.alive and not self._dead:
            answer = self._request("log", None, START_TIMEOUT)
            if isinstance(answer, tuple):
                return answer
        return self.session().log

    # -- requests --------------------------------------------------------------------
    def drain(self, timeout: float = 10.0) -> bool:
        """Wait until every command sent so far is done (Step's steps included) and
        their snapshots are here."""
        if not self.alive or self._dead:
            return False
        answer = self._request("drain", timeout, timeout)
        return answer is True

    def session(self, timeout: float = 10.0) -> Session:
        """The session so far (runtime.session.from_thread): a running child is paused
        first. After `stop`, the final one. Raises SlinkyError when there is none."""
        if self.alive:
            answer = self._request("session", timeout, timeout + 1.0)
        else:
            answer = self._final
        if isinstance(answer, Session):
            return answer
        if isinstance(answer, SlinkyError):
            raise answer
        if not self._started:  # nothing has run
            return Session(scene=self.initial_scene, log=(), nsteps=0, h=self.h_override)
        raise SlinkyError(self.error or "the solver process did not answer: no session")

    def _request(self, tag: str, payload: object, timeout: float) -> object:
        key = next(self._keys)
        self._commands.put((tag, key, payload))
        with self._cond:
            self._cond.wait_for(lambda: key in self._replies or not self.alive, timeout)
            return self._replies.pop(key, None)

    # -- the receiving thread --------------------------------------------------------
    def _receive(self) -> None:
        while True:
            try:
                msg = self._recv.recv()
            except (EOFError, OSError):
                break
            except Exception as e:  # noqa: BLE001 - a message that does not unpickle
                self._fail(f"solver process: {error_line(e)}")
                continue
            if isinstance(msg, _State):
                self._take(msg)
                continue
            tag, key, payload = msg
            with self._cond:
                if tag == "final":
                    self._final = payload
                else:
                    self._replies[key] = payload
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()
        if not self._stopped:
            code = self._proc.exitcode
            self._fail("the solver process ended unexpectedly"
                       + (f" (exit code {code})" if code is not None else ""))

    def _take(self, s: _State) -> None:
        for op in s.ops:
            if op is None:
                self.history.clear()
            else:
                self.history.add(op)
        self._steps, self._paused, self._scale = s.steps, s.paused, s.scale
        self.error, self.status = s.error, s.status
        self._pair = s.pair
        if self._yield:
            snap = s.pair[1]
            self._yield_when_behind(snap.behind
                                    and snap.real_time_factor < YIELD_BELOW * s.scale)

    def _yield_when_behind(self, behind: bool) -> None:
        """The first time the solver stays behind real time for YIELD_AFTER s, this
        process's threads yield the CPU to it (for good: see yield_cpu). A solver that
        keeps up leaves the picture the whole CPU it gets."""
        now = time.perf_counter()
        if not behind:
            self._behind_since = None
        elif self._behind_since is None:
            self._behind_since = now
        elif now - self._behind_since >= YIELD_AFTER:
            self._yield = False
            self.yielded = True
            yield_cpu(YIELD_NICE)

    def _fail(self, msg: str) -> None:
        self._dead = True
        self.error = msg
        self.status = msg + "; paused"
        self._paused = True
