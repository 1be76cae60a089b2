"""``await host_request(type, payload)``: ask the host process something and await its reply."""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any

from .control import current_kernel, forget_pending, register_pending

HOST_REQUEST_TARGET = "host.request"


class HostRequestUnavailable(RuntimeError):
    """Raised when the kernel was not started by a host that answers requests."""


class HostRequestTimeout(TimeoutError):
    """Raised when the host sent no reply at all in time (it is stopped, or stuck)."""


def _default_timeout() -> float | None:
    # Set by the host: its own handler timeout plus a margin, so its error reply normally comes first.
    try:
        seconds = float(os.environ.get("PRIME_KERNEL_HOST_REQUEST_TIMEOUT_S", ""))
    except ValueError:
        return None
    return seconds if seconds > 0 else None


#: Prefix of the comm id of a notification: the host runs the handler and sends no reply.
NOTIFY_PREFIX = "notify-"


def _open_request(kernel: Any, comm_id: str, type: str, payload: dict[str, Any] | None) -> None:
    if not isinstance(type, str) or not type:
        raise ValueError("host request type must be a non-empty string")
    kernel.session.send(
        kernel.iopub_socket,
        "comm_open",
        {"comm_id": comm_id, "target_name": HOST_REQUEST_TARGET, "data": {**(payload or {}), "type": type}},
        parent=kernel.get_parent("shell"),
        ident=b"comm_open",
    )


def _kernel() -> Any:
    kernel = current_kernel()
    if kernel is None:
        raise HostRequestUnavailable(
            "host_request needs a kernel started by prime-agent-kernel (prime_kernel_launch.py); "
            "this kernel was started some other way"
        )
    return kernel


def notify_host(type: str, payload: dict[str, Any] | None = None) -> None:
    """Send ``{**payload, "type": type}`` to the host's handler without waiting: no reply comes back.

    For what the host only needs to know (from synchronous code too, such as an IPython hook).
    """
    _open_request(_kernel(), NOTIFY_PREFIX + uuid.uuid4().hex, type, payload)


async def host_request(type: str, payload: dict[str, Any] | None = None, timeout: float | None = None) -> dict[str, Any]:
    """Send ``{**payload, "type": type}`` to the host and return its reply.

    The reply is ``{"status": "ok", ...}`` or ``{"status": "error", "error": message}``; it is
    returned as-is. ``type`` is written last so a payload key cannot reroute the request.
    Safe to run from many tasks at once and from tasks that outlive the cell that started them.
    ``timeout`` (seconds; default: the host's handler timeout plus 30 s) bounds the wait for any
    reply: past it, ``HostRequestTimeout`` is raised.
    """
    kernel = _kernel()
    comm_id = uuid.uuid4().hex
    loop = asyncio.get_running_loop()
    future: asyncio.Future[dict[str, Any]] = loop.create_future()
    register_pending(comm_id, loop, future)
    wait = timeout if timeout is not None else _default_timeout()
    try:
        _open_request(kernel, comm_id, type, payload)
        try:
            return await asyncio.wait_for(future, wait)
        except asyncio.TimeoutError:
            raise HostRequestTimeout(
                f"the host sent no reply to request {type!r} within {wait:g} s; it may be stopped or busy. "
                "Retry, or pass a longer timeout= to host_request."
            ) from None
    finally:
        forget_pending(comm_id)
