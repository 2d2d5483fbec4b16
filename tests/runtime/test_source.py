"""The viewer's Source protocol: the solver thread, the solver's process, a logged session
played again and the tests' stand-in all implement every member of it."""

import inspect

from fakesource import StillSource

from slinky3d.runtime.process import SimProcess
from slinky3d.runtime.session import Session, SessionPlayer
from slinky3d.runtime.source import Source
from slinky3d.runtime.thread import SimThread
from slinky3d.scene.loader import load


def members() -> set[str]:
    names = set(Source.__annotations__)
    names |= {n for n, v in vars(Source).items()
              if not n.startswith("_") and (inspect.isfunction(v) or isinstance(v, property))}
    return names


def test_every_source_implements_all_of_it():
    sc = load("hanging-plastic")
    thread = SimThread(sc, realtime=False)
    player = SessionPlayer(Session(scene=sc, log=(), nsteps=10), realtime=False)
    still = StillSource(sc)
    process = SimProcess(SimThread, sc, None, False)  # not started: no child
    assert {"latest_pair", "history", "send", "steps", "paused", "error"} <= members()
    for source in (thread, player, still, process):
        assert isinstance(source, Source)
        for name in members():
            assert hasattr(source, name), (type(source).__name__, name)
        first, second = source.latest_pair()
        assert first.t <= second.t
        assert len(source.history) >= 1
        assert source.error == "" and source.steps == 0
    process.stop()
