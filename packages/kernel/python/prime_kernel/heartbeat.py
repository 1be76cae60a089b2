"""End a kernel on a Jupyter Server when its host has been gone for a while.

A local kernel has a guard process that watches the host's pid (``parent_watch``). A kernel on a
server has no host process to watch: the host sends a ``comm_msg`` with comm id
``HEARTBEAT_COMM_ID`` on control every few seconds, and this thread ends the kernel (its whole
process group when it leads one, so whatever the cells started goes too) when none came for the
timeout. The server then reports it dead, or restarts it; either way a host that was SIGKILLed
leaves no kernel holding variables and memory on the server.

A long C call that holds the GIL stops the control thread and this one alike; once it returns,
the beats queued meanwhile are read. So a watcher that finds itself starved (its sleep took far
longer than asked) starts the count again instead of blaming a host it could not hear.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time

HEARTBEAT_COMM_ID = "prime.host.heartbeat"
POLL_S = 1.0
#: A sleep this much longer than POLL_S means this thread (and control) did not run meanwhile.
STARVED_S = 5.0

_last_beat = time.monotonic()
_watching = False


def beat() -> None:
    global _last_beat
    _last_beat = time.monotonic()


def watch(timeout_s: float, cleanup_dir: str | None = None) -> None:
    """Starts the watcher once; the count starts now."""
    global _watching
    beat()
    if _watching:
        return
    _watching = True
    threading.Thread(
        target=_watch, args=(timeout_s, cleanup_dir), name="prime-host-heartbeat", daemon=True
    ).start()


def _watch(timeout_s: float, cleanup_dir: str | None) -> None:
    poll = min(POLL_S, timeout_s / 4)
    tick = time.monotonic()
    while True:
        time.sleep(poll)
        now = time.monotonic()
        if now - tick > poll + STARVED_S:
            beat()
        tick = now
        if now - _last_beat > timeout_s:
            _end(cleanup_dir)
            return


def _end(cleanup_dir: str | None) -> None:
    if cleanup_dir:
        shutil.rmtree(cleanup_dir, ignore_errors=True)
    pid = os.getpid()
    try:
        if os.getpgrp() == pid:
            os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    os.kill(pid, signal.SIGKILL)
