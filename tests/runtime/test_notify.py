"""sd_notify against a real unix datagram socket, as systemd listens on one."""

import socket

import pytest

from slinky3d.runtime.notify import DEFAULT_PERIOD, Notifier, notify, watchdog_period


@pytest.fixture
def listener(tmp_path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = tmp_path / "notify"
    s.bind(str(path))
    s.settimeout(2.0)
    yield s, {"NOTIFY_SOCKET": str(path)}
    s.close()


def received(s) -> list[str]:
    out = []
    s.settimeout(0.05)
    while True:
        try:
            out.append(s.recv(4096).decode())
        except TimeoutError:
            return out


def test_ready_once_watchdog_paced_stopping(listener):
    s, env = listener
    n = Notifier({**env, "WATCHDOG_USEC": "10000000"})  # WatchdogSec=10: a ping every 5 s
    assert n.period == pytest.approx(5.0)
    n.ready("playing")
    n.ready()
    for now in (100.0, 101.0, 104.9, 105.0, 109.0, 110.1):
        n.watchdog(now)
    n.stopping()
    assert received(s) == ["READY=1\nSTATUS=playing", "WATCHDOG=1", "WATCHDOG=1",
                           "WATCHDOG=1", "STOPPING=1"]


def test_abstract_socket_name():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    name = f"slinky3d-test-{id(s)}"
    s.bind("\0" + name)
    try:
        assert notify("WATCHDOG=1", {"NOTIFY_SOCKET": "@" + name})
        assert received(s) == ["WATCHDOG=1"]
    finally:
        s.close()


def test_no_socket_is_a_no_op(tmp_path):
    assert not notify("READY=1", {})
    assert not notify("READY=1", {"NOTIFY_SOCKET": str(tmp_path / "nobody-listens")})
    assert watchdog_period({}) == DEFAULT_PERIOD
    assert watchdog_period({"WATCHDOG_USEC": "junk"}) == DEFAULT_PERIOD
