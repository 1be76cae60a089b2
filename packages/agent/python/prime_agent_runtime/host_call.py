"""Host requests for the runtime's handles: awaited, or waited for from synchronous code.

``help(module)``, ``dir(module)`` and ``skills.load(name)`` are synchronous, yet their answer comes
from the host. The cell's event loop cannot be re-entered, so the request runs on a private loop in
a helper thread: the host's reply arrives on the kernel's control thread, never through the
blocked shell thread, so waiting for it cannot deadlock.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from typing import Any


class HostUnavailable(RuntimeError):
    """The kernel has no Prime Agent host to answer (not started by Prime Agent, or it is gone)."""


async def request(kind: str, payload: dict[str, Any], what: str) -> dict[str, Any]:
    """The host's reply to ``kind``; ``{"status": "error"}`` replies are returned as they are."""
    try:
        from prime_kernel import HostRequestUnavailable, host_request
    except ImportError as error:
        raise HostUnavailable(f"{what} needs a Prime Agent kernel; this one has no host") from error
    try:
        return await host_request(kind, payload)
    except HostRequestUnavailable as error:
        raise HostUnavailable(f"{what}: the host cannot be reached ({error})") from error


def request_sync(kind: str, payload: dict[str, Any], what: str) -> dict[str, Any]:
    """``request`` from synchronous code, also while the cell's event loop is running."""
    outcome: dict[str, Any] = {}
    context = contextvars.copy_context()

    def run() -> None:
        try:
            outcome["reply"] = context.run(asyncio.run, request(kind, payload, what))
        except BaseException as error:  # handed to the waiting thread
            outcome["error"] = error

    thread = threading.Thread(target=run, name=f"host-request-{kind}", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["reply"]


def user_namespace(namespace: dict[str, Any] | None) -> dict[str, Any]:
    """``namespace``, or the running IPython's user namespace when it is None."""
    if namespace is not None:
        return namespace
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        raise RuntimeError("install() needs a namespace when not running inside IPython")
    return shell.user_ns
