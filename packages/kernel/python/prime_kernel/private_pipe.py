"""Keep the subprocess output pipe off TCP when the kernel's channels are Unix sockets.

ipykernel's IOPub thread listens on a random loopback TCP port for output from forked
subprocesses (``multiprocessing``). With the channels on IPC sockets in the kernel's private
folder, that port would be the one thing left on the network: put the pipe in the same folder.
"""

from __future__ import annotations

import json
import os
from typing import Any


def subprocess_pipe_address(connection_file: str | None) -> str | None:
    """The IPC address for the pipe, or None when the connection file is not IPC (leave it as is)."""
    if not connection_file:
        return None
    try:
        with open(connection_file, encoding="utf-8") as file:
            info = json.load(file)
    except (OSError, ValueError):
        return None
    if info.get("transport") != "ipc" or not isinstance(info.get("ip"), str):
        return None
    return f"ipc://{info['ip']}-pipe"


def keep_subprocess_pipe_private(address: str) -> None:
    """Makes every IOPub thread created from now on use ``address`` for its subprocess pipe."""
    import zmq
    from ipykernel.iostream import IOPubThread
    from zmq.eventloop.zmqstream import ZMQStream

    def setup_pipe_in(self: Any) -> None:
        # Children prove their messages come from this kernel with this token.
        self._pipe_uuid = os.urandom(16)
        pipe_in = self.socket.context.socket(zmq.PULL)
        pipe_in.linger = 0
        pipe_in.bind(address)
        self._pipe_in = ZMQStream(pipe_in, self.io_loop)
        self._pipe_in.on_recv(self._handle_pipe_msg)

    def setup_pipe_out(self: Any) -> tuple[Any, Any]:
        # Runs in a forked child: a new context, as ipykernel's own does.
        ctx = zmq.Context()
        pipe_out = ctx.socket(zmq.PUSH)
        pipe_out.linger = 3000
        pipe_out.connect(address)
        return ctx, pipe_out

    IOPubThread._setup_pipe_in = setup_pipe_in
    IOPubThread._setup_pipe_out = setup_pipe_out
