"""The solver thread: commands in, read-only snapshots out, paced against wall time.

The UI thread `send`s commands (`slinky3d.runtime.commands`) into a queue that never
blocks it; the solver thread dequeues them between whole steps of h, stamps each with
the step index at which it takes effect and logs `(step, command)`, which
`commands.replay` reproduces bit-identically offline (docs/solver.md, "The solver thread").
"""

from __future__ import annotations

import math
import queue
import threading
import time
from collections import deque
from collections.abc import MutableSequence
from dataclasses import dataclass, replace

from slinky3d.errors import error_line
from slinky3d.runtime.commands import (
    PACING_COMMANDS,
    SCALE_MAX,
    SCALE_MIN,
    SIMULATION_COMMANDS,
    Command,
    Fault,
    Load,
    LogEntry,
    Move,
    Pause,
    Reset,
    Resume,
    Step,
    TimeScale,
    TogglePause,
    apply,
    bad_target,
    checkpoint,
    restore,
)
from slinky3d.runtime.history import History
from slinky3d.runtime.simulation import Simulation
from slinky3d.runtime.snapshot import Snapshot
from slinky3d.scene.spec import Scene

MAX_STEP_CMD = 1_000_000  # most steps one Step command may ask for


@dataclass(frozen=True)
class _Sync:
    """Internal barrier: set once every command queued before it is done."""

    event: threading.Event


# -- the thread ------------------------------------------------------------------------
class SimThread:
    """A Simulation stepped in a daemon thread, paced to wall time x time scale.

    realtime=False: no clock; it starts paused and moves only by Step(n) (Resume runs
    it flat out), which makes a threaded run deterministic in tests and benchmarks.
    """

    max_lag = 0.1  # wall s behind before the backlog is dropped (re-sync)
    behind_lag = 0.02  # wall s behind that counts as not keeping up...
    behind_for = 0.1  # ...when it lasts this long (a late wake-up caught up at once does not)
    batch_wall = 1 / 60  # wall s of stepping at most between two publishes
    min_period = 1 / 500  # wall s between wake-ups at least (fast time scales batch)
    hold = 0.5  # s the behind flag stays up, so that it does not flicker
    window = 0.5  # s over which the real-time factor is measured
    duty_window = 0.25  # wall s over which the duty is measured

    def __init__(self, scene: Scene, h: float | None = None, realtime: bool = True):
        self.h_override = h
        self.realtime = realtime
        self.sim = Simulation(scene, h)
        self.scene = scene  # the one running (a Load replaces it)
        self.initial_scene = scene  # the one the log starts from
        self.error = ""
        self.status = ""
        self._q: queue.SimpleQueue = queue.SimpleQueue()
        # a list; a subclass may bound it (a deque with maxlen: kiosk.KioskThread)
        self._log: MutableSequence[LogEntry] = []
        self._steps = 0
        self._pending = 0
        self._paused = not realtime
        self._scale = 1.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._sync: tuple[float, int] | None = None  # (wall, step) of the last re-sync
        self._behind_at = -math.inf
        self._late_since: float | None = None  # wall s: the backlog over behind_lag since
        self._rate: deque[tuple[float, float]] = deque()
        self._simsec = 0.0  # simulated seconds stepped, over loads and resets
        # The share of wall time the real-time loop spends stepping, over the last
        # duty_window (0: idle, 1: stepping without a pause), waits for Python's lock
        # included: how near the solver is to falling behind (bench_app.py prints it).
        self.duty = 0.0
        self._busy = (0.0, time.perf_counter())  # (stepping s, since) of this window
        self._seen_rollbacks = 0
        self.history = History()
        """The last 10 s of snapshots (thread-safe reads): instant replay, the energy plot."""
        first = self._snap(self._steps)
        self._pair = (first, first)
        self.history.add(first)

    # -- UI side ------------------------------------------------------------------
    def start(self) -> None:
        """Start the thread (once; after `stop` it stays stopped)."""
        if self._thread is None and not self._stop.is_set():
            self._thread = threading.Thread(target=self._run, name="slinky3d-solver",
                                            daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop and join the thread; safe to call again."""
        self._stop.set()
        self._q.put(None)  # wake it from a wait
        t = self._thread
        if t is not None and t.is_alive() and t is not threading.current_thread():
            t.join(timeout)

    def send(self, cmd: Command) -> None:
        """Queue a command; returns at once."""
        self._q.put(cmd)

    def drain(self, timeout: float = 10.0) -> bool:
        """Wait until every command sent so far is done (Step's steps included)."""
        t = self._thread
        if t is None or not t.is_alive():
            return False
        ev = threading.Event()
        self._q.put(_Sync(ev))
        return ev.wait(timeout)

    def latest_pair(self) -> tuple[Snapshot, Snapshot]:
        """The two newest snapshots on the step grid (for `snapshot.lerp`)."""
        return self._pair

    @property
    def log(self) -> list[LogEntry]:
        """(step, command) for every command taken, in order, and Fault markers."""
        return list(self._log)

    @property
    def steps(self) -> int:
        """Steps taken since the start, over resets and loads: the log's clock."""
        return self._steps

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def scale(self) -> float:
        return self._scale

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- solver side --------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._loop()
            except Exception as e:  # noqa: BLE001 - last resort: stay up, paused
                self.error = f"solver thread: {error_line(e)}"
                self.status = self.error + "; paused"
                self._paused = True
                time.sleep(0.05)  # if publishing fails too, do not spin
                try:
                    self._publish()
                except Exception:  # noqa: BLE001 - the last pair stays up
                    pass

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._take_commands()
            if self._stop.is_set():
                return
            if self._pending:
                n = self._batch(self._pending, time.perf_counter() + self.batch_wall)
                self._pending = max(0, self._pending - n) if n else 0
                continue
            if self._paused:
                self._wait(0.25)
                continue
            if not self.realtime:
                self._batch(1 << 30, time.perf_counter() + self.batch_wall)
                time.sleep(0)  # let the UI thread have the GIL
                continue
            self._paced()

    def _paced(self) -> None:
        """One iteration of the real-time loop (MuJoCo viewer's _physics_loop)."""
        now = time.perf_counter()
        per = self.sim.h / self._scale  # wall s per step
        if self._sync is None:
            self._sync = (now, self._steps)
        w0, k0 = self._sync
        due = k0 + math.floor((now - w0) / per + 1e-9) - self._steps
        if due * per > self.max_lag:
            # too far behind: drop the backlog instead of running to catch up
            self._sync = (now - per, self._steps)
            self._behind_at = now
            due = 1
        if due > 0:
            self._batch(due, now + self.batch_wall)
            self._count_busy(now)
            if self._sync is None:  # a command inside the batch re-synced: start over
                return
            t = time.perf_counter()
            lag = (k0 + (t - w0) / per - self._steps) * per
            if self._sync[0] != w0 or lag <= self.behind_lag:
                self._late_since = None
            elif self._late_since is None:
                self._late_since = t
            elif t - self._late_since >= self.behind_for:
                self._behind_at = t
        w0, k0 = self._sync
        wake = max(w0 + (self._steps + 1 - k0) * per, now + self.min_period)
        wait = wake - time.perf_counter()
        if wait > 0:
            self._wait(wait)
        else:
            time.sleep(0)  # behind: still let the UI thread have the GIL

    def _count_busy(self, start: float) -> None:
        busy, since = self._busy
        end = time.perf_counter()
        busy += end - start
        if end - since >= self.duty_window:
            self.duty = min(busy / (end - since), 1.0)
            busy, since = 0.0, end
        self._busy = (busy, since)

    def _wait(self, timeout: float) -> None:
        try:
            cmd = self._q.get(timeout=timeout)
        except queue.Empty:
            return
        self._handle(cmd)

    def _take_commands(self) -> None:
        # a Step's steps come before any later command
        while not self._pending and not self._stop.is_set():
            try:
                cmd = self._q.get_nowait()
            except queue.Empty:
                return
            self._handle(cmd)

    def _resync(self) -> None:
        self._sync = None
        self._rate.clear()

    def _record(self, cmd: Command | Fault) -> None:
        last = self._log[-1] if self._log else None
        if (isinstance(cmd, Move) and last is not None and last[0] == self._steps
                and isinstance(last[1], Move) and last[1].slinky == cmd.slinky
                and not bad_target(cmd.target) and not bad_target(last[1].target)):
            # moves within one step: only the last one has any effect
            self._log[-1] = (self._steps, cmd)
        else:
            self._log.append((self._steps, cmd))

    def _handle(self, cmd: object) -> None:
        if cmd is None:
            return
        if isinstance(cmd, _Sync):
            cmd.event.set()
            return
        if not isinstance(cmd, SIMULATION_COMMANDS + PACING_COMMANDS):
            self.status = f"unknown command ignored: {type(cmd).__name__}"
            self._publish()
            return
        self._record(cmd)
        before = self.status
        if isinstance(cmd, Pause | Resume | TogglePause):
            paused = {Pause: True, Resume: False}.get(type(cmd), not self._paused)
            if self._paused and not paused:
                self._resync()
            self._paused = paused
        elif isinstance(cmd, Step):
            try:
                n = int(cmd.n)
            except (TypeError, ValueError, OverflowError):
                n = 0
            self._paused = True
            if 1 <= n <= MAX_STEP_CMD:
                self._pending = n
            else:
                self.status = f"step ignored: n = {cmd.n!r} not in 1..{MAX_STEP_CMD}"
        elif isinstance(cmd, TimeScale):
            try:
                s = float(cmd.scale)
            except (TypeError, ValueError):
                s = math.nan
            if math.isnan(s):
                self.status = f"time scale ignored: {cmd.scale!r}"
            else:
                self._scale = min(max(s, SCALE_MIN), SCALE_MAX)
                self._resync()
        else:
            sim, msg = apply(self.sim, cmd, self.h_override)
            if msg:
                self.status = msg
            elif isinstance(cmd, Reset | Load):
                self.status = self.error = ""
                self._resync()
            if sim is not self.sim or isinstance(cmd, Reset):
                self.sim = sim
                self.scene = sim.scene
                self._seen_rollbacks = sim.rollbacks
                first = self._snap(self._steps)
                self._pair = (first, first)
                self.history.clear()
                self.history.add(first)
                return
        if self._paused or self.status != before:
            # running, the next batch shows it; publishing now would cut the pair short
            self._publish()

    def _batch(self, n: int, deadline: float) -> int:
        """Up to n steps (at least one) until the deadline, then publish the snapshots
        before and after the last one. Returns the steps taken (0 after a fault)."""
        sim = self.sim
        cp = checkpoint(sim)
        called = 0
        history = self.history
        kept: list[Snapshot] = []  # for the history, added once the batch stands
        try:
            while called < n - 1 and time.perf_counter() < deadline:
                called += 1
                sim.step(1)
                if history.due(sim.t) and (not kept or sim.t - kept[-1].t
                                            >= history.period * (1 - 1e-9)):
                    kept.append(self._snap(self._steps + called))
            prev = self._snap(self._steps + called) if called else self._pair[1]
            called += 1
            sim.step(1)
            cur = self._snap(self._steps + called)
        except Exception as e:  # noqa: BLE001 - report, keep running paused
            restore(sim, cp)
            msg = error_line(e)
            self._record(Fault(msg, called))
            self.error = f"solver raised at step {self._steps + called}: {msg}"
            self.status = self.error + "; state put back, paused"
            self._paused = True
            self._pending = 0
            self._publish()
            return 0
        self._steps += called
        self._simsec += called * sim.h
        self._pair = (prev, cur)
        for snap in kept:
            history.add(snap)
        history.add(cur)
        return called

    def _publish(self) -> None:
        s = self._snap(self._steps)
        self._pair = (s, s)
        self.history.add(s)

    def _snap(self, step: int) -> Snapshot:
        now = time.perf_counter()
        running = not self._paused or self._pending > 0
        rtf = self._rtf(now) if running else 0.0
        behind = running and self.realtime and now - self._behind_at < self.hold
        sim = self.sim
        if sim.rollbacks != self._seen_rollbacks:
            self._seen_rollbacks = sim.rollbacks
            self.status = sim.status
        snap = sim.snapshot(rtf, behind)
        if self.status and snap.status != self.status:
            snap = replace(snap, status=self.status, extra={})
        snap.extra.update(step=step, paused=self._paused, scale=self._scale, wall=now,
                          duty=self.duty if running and self.realtime else 0.0)
        return snap

    def _rtf(self, now: float) -> float:
        """Simulated seconds per wall second over the last `window` seconds."""
        r = self._rate
        r.append((now, self._simsec))
        while len(r) > 2 and now - r[1][0] >= self.window:
            r.popleft()
        w, s = r[0]
        if now - w < 0.05:
            return self._scale if self.realtime else 0.0
        return (self._simsec - s) / (now - w)
