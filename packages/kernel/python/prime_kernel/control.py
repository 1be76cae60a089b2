"""Accept host replies on the control channel.

A cell that awaits ``host_request`` keeps the shell channel busy, so the host answers with a
``comm_msg`` on the control channel instead. Stock ipykernel only routes comm messages on shell;
this installs a control handler that resolves the awaiting future. ipykernel 7 runs control in its
own thread, so the future is resolved on its own event loop with ``call_soon_threadsafe``.
The same handler takes the host's output acknowledgements (see ``output_chunks``).
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from . import heartbeat, output_chunks

_pending: dict[str, tuple[asyncio.AbstractEventLoop, "asyncio.Future[dict[str, Any]]"]] = {}
_pending_lock = threading.Lock()
_kernel: Any = None


def current_kernel() -> Any:
    return _kernel


def register_pending(comm_id: str, loop: asyncio.AbstractEventLoop, future: "asyncio.Future[dict[str, Any]]") -> None:
    with _pending_lock:
        _pending[comm_id] = (loop, future)


def forget_pending(comm_id: str) -> None:
    with _pending_lock:
        _pending.pop(comm_id, None)


def _resolve(future: "asyncio.Future[dict[str, Any]]", data: dict[str, Any]) -> None:
    if not future.done():
        future.set_result(data)


def _on_control_comm_msg(_stream: Any, _ident: Any, msg: dict[str, Any]) -> None:
    content = msg.get("content") or {}
    comm_id = content.get("comm_id")
    data = content.get("data")
    if comm_id == output_chunks.OUTPUT_CREDIT_COMM_ID:
        output_chunks.credit.on_ack(data)
        return
    if comm_id == heartbeat.HEARTBEAT_COMM_ID:
        heartbeat.beat()
        return
    if not isinstance(data, dict):
        data = {"status": "error", "error": "host reply carried no data object"}
    with _pending_lock:
        entry = _pending.get(comm_id) if isinstance(comm_id, str) else None
    if entry is None:
        return  # the awaiting task gave up (cancelled); nothing to resolve
    loop, future = entry
    try:
        loop.call_soon_threadsafe(_resolve, future, data)
    except RuntimeError:
        pass  # the loop is closed: the kernel is shutting down


def install_control_handler(kernel: Any) -> None:
    global _kernel
    _kernel = kernel
    kernel.control_handlers["comm_msg"] = _on_control_comm_msg
