"""``prime_context``: Prime Context's recovery actions inside the kernel.

The same actions as the model's ``prime_context`` tool (list, read, search, status, update, with
the same caps), answered by the host, plus ``text(id)``, which returns an archived observation's
exact text as a Python string so it can be sliced with code instead of printed whole::

    log = await prime_context.text("obs_000001")
    print([line for line in log.splitlines() if "FAILED" in line][:20])

Every call is a host request: ``await`` it. Without the Prime Context extension (or with a kernel
not started by Prime Agent) a call raises ``PrimeContextUnavailable`` saying so.
"""

from typing import Any


class PrimeContextUnavailable(RuntimeError):
    """The host does not answer Prime Context requests (extension not loaded, or no host)."""


class PrimeContextError(RuntimeError):
    """The host refused the call (unknown id, bad arguments); the message says what is allowed."""


REQUEST_TYPE = "prime_context"


async def _call(payload: dict[str, Any]) -> dict[str, Any]:
    try:
        from prime_kernel import HostRequestUnavailable, host_request
    except ImportError as error:
        raise PrimeContextUnavailable("prime_context needs a Prime Agent kernel; this one has no host") from error
    try:
        reply = await host_request(REQUEST_TYPE, payload)
    except HostRequestUnavailable as error:
        raise PrimeContextUnavailable(f"prime_context: the host cannot be reached ({error})") from error
    if reply.get("status") != "ok":
        message = str(reply.get("error", "no reason given"))
        if message.startswith("no host handler for request type"):
            raise PrimeContextUnavailable(
                "prime_context: the host has no Prime Context; turn it on with `/pc mode on` or check the extension"
            )
        raise PrimeContextError(message)
    return reply


async def _action(action: str, **arguments: Any) -> str:
    payload = {"action": action, **{key: value for key, value in arguments.items() if value is not None}}
    reply = await _call(payload)
    if reply.get("isError"):
        raise PrimeContextError(str(reply.get("text", "")))
    return str(reply.get("text", ""))


async def list(limit: int | None = None, child: str | None = None) -> str:  # noqa: A001 - the action's name
    """Recent observations, newest first (at most 20): ids, tools, sizes; never their bodies.

    ``child="name"`` lists a sub-agent's observations instead (likewise for read, search and text).
    """
    return await _action("list", limit=limit, child=child)


async def read(id: str, start_line: int | None = None, end_line: int | None = None, child: str | None = None) -> str:  # noqa: A002
    """Exact lines ``start_line..end_line`` (1-based, inclusive, at most 80) with their numbers."""
    return await _action("read", id=id, startLine=start_line, endLine=end_line, child=child)


async def search(
    query: str,
    id: str | None = None,  # noqa: A002
    context_lines: int | None = None,
    match_offset: int | None = None,
    max_matches: int | None = None,
    limit: int | None = None,
    child: str | None = None,
) -> str:
    """Case-insensitive fixed-text search in one observation, or the newest ``limit`` (20)."""
    return await _action(
        "search",
        query=query,
        id=id,
        contextLines=context_lines,
        matchOffset=match_offset,
        maxMatches=max_matches,
        limit=limit,
        child=child,
    )


async def status() -> str:
    """Broker metrics, configuration, archive size and the task snapshot."""
    return await _action("status")


async def update(
    focus: str | None = None,
    add: "list[str] | str | None" = None,
    complete: "list[str] | str | None" = None,
    pin: "list[str] | str | None" = None,
    unpin: "list[str] | str | None" = None,
    clear_focus: bool = False,
) -> str:
    """Change the task snapshot: set (or ``clear_focus``) the focus, add or complete items, pin or unpin ids."""
    as_list = lambda value: [value] if isinstance(value, str) else value  # noqa: E731
    payload: dict[str, Any] = {
        "add": as_list(add),
        "complete": as_list(complete),
        "pin": as_list(pin),
        "unpin": as_list(unpin),
    }
    if clear_focus:
        payload["focus"] = ""
    elif focus is not None:
        payload["focus"] = focus
    return await _action("update", **payload)


async def text(id: str, child: str | None = None) -> str:  # noqa: A002
    """The observation's exact text as one string (every line, no numbering, no cap on lines)."""
    if not isinstance(id, str):
        raise TypeError("prime_context.text(id): id must be a string such as 'obs_000001'")
    payload: dict[str, Any] = {"action": "text", "id": id}
    if child is not None:
        payload["child"] = child
    reply = await _call(payload)
    if reply.get("isError"):
        raise PrimeContextError(str(reply.get("text", "")))
    return str(reply.get("text", ""))

