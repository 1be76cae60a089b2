"""Take the kernel and everything it started down when its host, or the kernel itself, is gone.

The watch runs in a small guard process forked before ipykernel starts, not in a thread of the
kernel: a thread cannot run while a long C call holds the GIL, so a host killed with SIGKILL
during ``numpy`` work would leave the kernel alive until the call returned. The kernel leads its
process group; the guard kills that whole group when

- the host is gone (SIGKILL of the host included), after removing the connection file, or
- the kernel is gone (a crash): whatever the kernel started must not run on as an orphan.

The guard leads a process group of its own, then exits. It must stay out of the kernel's group:
ipykernel's shutdown terminates every process in that group and waits, up to 30 s, until none is
listed (a terminated guard would stay listed, a zombie its kernel never reaps), so a guard in it
would be the first thing a shutdown kills, and a host killed during that shutdown would leave the
kernel running for those 30 s.

The host pid is watched directly: an orphan may be re-parented to a subreaper rather than to pid 1,
so ``getppid() == 1`` is not a reliable sign that the host died.
"""

from __future__ import annotations

import os
import signal
import time

POLL_S = 0.25


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
    folder = os.path.dirname(path)
    try:
        os.unlink(path)
        if os.path.basename(folder).startswith("prime-kernel-"):
            # The host's private folder: the channel sockets are in it too.
            for name in os.listdir(folder):
                os.unlink(os.path.join(folder, name))
        os.rmdir(folder)
    except OSError:
        pass


def _guard(host_pid: int, kernel_pid: int, connection_file: str | None) -> None:
    while True:
        if not host_alive(host_pid):
            _remove_connection_file(connection_file)
            break
        if os.getppid() != kernel_pid:
            break  # the kernel exited: its children go with it
        time.sleep(POLL_S)
    try:
        os.killpg(kernel_pid, signal.SIGKILL)
    except OSError:
        pass


def start_guard(host_pid: int, connection_file: str | None = None) -> None:
    """Forks the guard; call before any thread starts (a fork copies only the calling thread)."""
    kernel_pid = os.getpid()
    try:
        if os.getpgid(0) != kernel_pid:
            os.setpgid(0, 0)  # lead a group of our own, so the guard's kill cannot reach the host
    except OSError:
        pass
    if os.fork() != 0:
        return
    try:
        os.setpgid(0, 0)  # out of reach of the kernel's shutdown (see the module's note)
    except OSError:
        pass
    try:
        # Let go of the host's pipes: they should close when the kernel exits, not when the guard does.
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # interrupts are for the kernel's cells
        _guard(host_pid, kernel_pid, connection_file)
    finally:
        os._exit(0)
