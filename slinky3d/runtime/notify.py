"""systemd's notify protocol (sd_notify(3)), without a package: one datagram per message
to the unix socket named by $NOTIFY_SOCKET. Without the variable every call is a no-op,
so the kiosk runs the same by hand and under `Type=notify` with a watchdog.

The kiosk says READY=1 once its first frame is drawn and WATCHDOG=1 from its frame loop
(at most every `Notifier.period` s): a frozen loop stops the pings and systemd restarts
the service after WatchdogSec.
"""

from __future__ import annotations

import os
import socket
import time

ENV = "NOTIFY_SOCKET"
DEFAULT_PERIOD = 1.0  # s between watchdog pings when systemd gives no WATCHDOG_USEC


def notify(message: str, env: dict[str, str] | os._Environ[str] | None = None) -> bool:
    """Send `message` ("READY=1", "WATCHDOG=1", "STATUS=...") to systemd; False when
    there is no $NOTIFY_SOCKET or the send failed (never raises)."""
    address = (os.environ if env is None else env).get(ENV, "")
    if not address:
        return False
    if address.startswith("@"):  # an abstract socket: its name starts with a NUL byte
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as s:
            s.connect(address)
            s.sendall(message.encode("utf-8"))
    except OSError:
        return False
    return True


def watchdog_period(env: dict[str, str] | os._Environ[str] | None = None) -> float:
    """Seconds between pings: half systemd's WatchdogSec (it passes WATCHDOG_USEC), as
    sd_watchdog_enabled(3) advises, else DEFAULT_PERIOD."""
    try:
        usec = int((os.environ if env is None else env).get("WATCHDOG_USEC", "0"))
    except ValueError:
        usec = 0
    return usec / 2e6 if usec > 0 else DEFAULT_PERIOD


class Notifier:
    """READY=1 once, WATCHDOG=1 at most every `period` s, STOPPING=1 at the end."""

    def __init__(self, env: dict[str, str] | os._Environ[str] | None = None):
        self.env = env
        self.period = watchdog_period(env)
        self.ready_sent = False
        self._last = -float("inf")

    def ready(self, status: str = "") -> None:
        if not self.ready_sent:
            self.ready_sent = True
            notify("READY=1" + (f"\nSTATUS={status}" if status else ""), self.env)

    def watchdog(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        if now - self._last >= self.period:
            self._last = now
            notify("WATCHDOG=1", self.env)

    def status(self, text: str) -> None:
        notify(f"STATUS={text}", self.env)

    def stopping(self) -> None:
        notify("STOPPING=1", self.env)
