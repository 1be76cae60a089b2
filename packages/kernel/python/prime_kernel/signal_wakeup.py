"""Wake the kernel's event loop when a signal arrives, so an interrupt reaches an awaiting cell.

While a cell awaits (``await asyncio.sleep(20)``, a host request, a subprocess), the main thread
sleeps in the event loop's selector. ipykernel's SIGINT handler only schedules the cancellation
on that loop (``add_callback`` from the main thread does not wake the selector), and the selector
call is retried after the handler with its old timeout, so the cell would run on until its timer
fired. With a wakeup fd registered on the loop, the C-level signal handler writes a byte that
the selector sees at once; the loop then runs the scheduled cancellation.
"""

from __future__ import annotations

import asyncio
import signal
import socket

_sockets: tuple[socket.socket, socket.socket] | None = None


def _drain(reader: socket.socket) -> None:
    try:
        while reader.recv(4096):
            pass
    except (BlockingIOError, InterruptedError):
        pass


def install_signal_wakeup(loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Registers a wakeup fd on ``loop`` (the main thread's running loop); call from the main thread."""
    global _sockets
    if _sockets is not None:
        return
    loop = loop or asyncio.get_running_loop()
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    loop.add_reader(reader.fileno(), _drain, reader)
    _sockets = (reader, writer)
