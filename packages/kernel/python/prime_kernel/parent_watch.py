"""Exit the kernel when its host process is gone.

The host pid is watched directly: an orphan may be re-parented to a subreaper rather than to pid 1,
so ``getppid() == 1`` is not a reliable sign that the host died.
"""

from __future__ import annotations

import os
import signal
import threading
import time


def host_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A dead host not yet reaped by its own parent is a zombie: still signalable, but gone.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError):
        return True


def _remove_connection_file(path: str | None) -> None:
    # The host that would have removed it is gone; leave no key lying in the temp directory.
    if not path:
        return
    try:
        os.unlink(path)
        os.rmdir(os.path.dirname(path))
    except OSError:
        pass


def _exit_with_group() -> None:
    pid = os.getpid()
    try:
        if os.getpgid(0) == pid:
            # The kernel leads its own process group: take its subprocesses down with it.
            os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    os._exit(1)


def watch_host(pid: int, connection_file: str | None = None, interval: float = 0.5) -> threading.Thread:
    def run() -> None:
        while host_alive(pid):
            time.sleep(interval)
        _remove_connection_file(connection_file)
        _exit_with_group()

    thread = threading.Thread(target=run, name="prime-kernel-host-watch", daemon=True)
    thread.start()
    return thread
