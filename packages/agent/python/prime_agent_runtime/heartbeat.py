"""``rlm_heartbeat``: the session's heartbeat, set from the kernel.

- ``await rlm_heartbeat()``: every 5 minutes, with the default text.
- ``await rlm_heartbeat("90s", "check the build")``: an interval (``"30s"``, ``"5m"``, ``"1h"``, or
  seconds as a number; at least 10 s) and the text the heartbeat prompt carries.
- ``await rlm_heartbeat(None)``: stop it.

Heartbeats run in background sessions (the daemon's workers); the host refuses the request in a
session that runs inside a terminal command with ``PRIME_AGENT_IN_PROCESS``. Each firing is a
follow-up message (queued for the next turn, or a turn of its own when the session is idle), and a
session with a heartbeat is never evicted for being idle.
"""

from typing import Any

_DEFAULT = object()


class HeartbeatError(RuntimeError):
    """The host refused the request; the message says why and what to do."""


async def rlm_heartbeat(interval: Any = _DEFAULT, text: str | None = None) -> dict[str, Any]:
    """Set (or with ``None``, stop) the session's heartbeat; returns what the host set."""
    try:
        from prime_kernel import HostRequestUnavailable, host_request
    except ImportError as error:
        raise HeartbeatError("rlm_heartbeat needs a Prime Agent kernel; this one has no host") from error
    if interval is None:
        payload: dict[str, Any] = {"stop": True}
    else:
        payload = {} if interval is _DEFAULT else {"interval": interval}
        if text is not None:
            payload["text"] = str(text)
    try:
        reply = await host_request("schedules.heartbeat", payload)
    except HostRequestUnavailable as error:
        raise HeartbeatError(f"the host cannot be reached ({error})") from error
    if reply.get("status") != "ok":
        error = str(reply.get("error", "the host refused without a reason"))
        if "no host handler" in error:
            error = "heartbeats run in background sessions (the daemon); this session runs in-process"
        raise HeartbeatError(error)
    return {key: value for key, value in reply.items() if key != "status"}
