"""End a kernel on a Jupyter Server when its host has been gone for a while.

A local kernel has a guard process that watches the host's pid (``parent_watch``). A kernel on a
server has no host process to watch: the host sends a ``comm_msg`` with comm id
``HEARTBEAT_COMM_ID`` on control every few seconds, and this thread ends the kernel (its whole
process group when it leads one, so whatever the cells started goes too) when none came for the
timeout. A host that was SIGKILLed so leaves no kernel holding variables and memory there.

The server does not know why its kernel exited and restarts it. A stock kernelspec comes back as
an empty kernel (the host's next start, or ``prime-agent doctor``, deletes it through the API); a
kernel launched by our own kernelspec finds the tombstone this writes and exits at once, so the
server gives up after its restart limit and forgets the kernel by itself.

A long C call that holds the GIL stops the control thread and this one alike; once it returns,
the beats queued meanwhile are read. So a watcher that finds itself starved (its sleep took far
longer than asked) starts the count again instead of blaming a host it could not hear.
"""

from __future__ import annotations

import os
import shutil
import hashlib
import signal
import tempfile
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


def tombstone_path(connection_file: str) -> str:
    """The file that tells a restart of this kernel (same connection file) that its host is gone."""
    digest = hashlib.sha256(os.path.abspath(connection_file).encode()).hexdigest()[:32]
    return os.path.join(tempfile.gettempdir(), f"prime-kernel-ended-{digest}")


def host_gone_before(connection_file: str | None) -> bool:
    """True when this kernel is a server's restart of one whose host was gone (see the module)."""
    return bool(connection_file) and os.path.exists(tombstone_path(connection_file))


def watch(timeout_s: float, cleanup_dir: str | None = None, connection_file: str | None = None) -> None:
    """Starts the watcher once; the count starts now."""
    global _watching
    beat()
    if _watching:
        return
    _watching = True
    threading.Thread(
        target=_watch, args=(timeout_s, cleanup_dir, connection_file), name="prime-host-heartbeat", daemon=True
    ).start()


def _watch(timeout_s: float, cleanup_dir: str | None, connection_file: str | None) -> None:
    poll = min(POLL_S, timeout_s / 4)
    tick = time.monotonic()
    while True:
        time.sleep(poll)
        now = time.monotonic()
        if now - tick > poll + STARVED_S:
            beat()
        tick = now
        if now - _last_beat > timeout_s:
            _end(cleanup_dir, connection_file)
            return


def _end(cleanup_dir: str | None, connection_file: str | None) -> None:
    if cleanup_dir:
        shutil.rmtree(cleanup_dir, ignore_errors=True)
    if connection_file:
        try:
            with open(tombstone_path(connection_file), "w", encoding="ascii") as mark:
                mark.write(f"host gone {time.time():.0f}\n")
        except OSError:
            pass
    pid = os.getpid()
    try:
        if os.getpgrp() == pid:
            os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    os.kill(pid, signal.SIGKILL)
