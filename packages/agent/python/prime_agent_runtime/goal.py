"""``goal``: the session's goal, seen and changed from the kernel.

- ``await goal.get()``: the goal as a dict (``id``, ``objective``, ``status``, ``budget``, ``used``,
  ``summary``, ``reason``), or ``None``.
- ``await goal.create(objective, tokens=None, turns=None, minutes=None)``: set a goal (refused while
  another is active or paused: only the user replaces or clears a goal).
- ``await goal.complete(summary)``: mark the active goal complete, once every item of the objective
  has evidence; ``summary`` names that evidence.

Each is a request to the host, which decides; a refusal raises ``GoalError`` saying why.
"""

from typing import Any


class GoalError(RuntimeError):
    """The host refused the request; the message says why and what to do."""


async def _request(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    try:
        from prime_kernel import HostRequestUnavailable, host_request
    except ImportError as error:
        raise GoalError("goal needs a Prime Agent kernel; this one has no host") from error
    try:
        reply = await host_request(kind, payload)
    except HostRequestUnavailable as error:
        raise GoalError(f"the host cannot be reached ({error})") from error
    if reply.get("status") != "ok":
        raise GoalError(str(reply.get("error", "the host refused without a reason")))
    return reply


class Goal:
    """The ``goal`` handle in the kernel namespace."""

    async def get(self) -> dict[str, Any] | None:
        """The session's goal (any status) as a dict, or ``None``."""
        reply = await _request("goal.get", {})
        return reply.get("goal")

    async def create(self, objective: str, **options: Any) -> dict[str, Any]:
        """Set a goal; options: ``tokens`` (input + output), ``turns``, ``minutes`` (budgets)."""
        if not isinstance(objective, str) or not objective.strip():
            raise GoalError("goal.create(objective): objective must be a non-empty string")
        reply = await _request("goal.create", {"objective": objective, "options": options})
        return dict(reply["goal"])

    async def complete(self, summary: str) -> dict[str, Any]:
        """Mark the active goal complete; ``summary`` says what was done and the evidence."""
        if not isinstance(summary, str) or not summary.strip():
            raise GoalError("goal.complete(summary): summary must be a non-empty string naming the evidence")
        reply = await _request("goal.complete", {"summary": summary})
        return dict(reply["goal"])

    def __repr__(self) -> str:
        return (
            "<goal: `await goal.get()`, `await goal.create(objective, tokens=None, turns=None, minutes=None)`, "
            "`await goal.complete(summary)` once every item of the objective has evidence>"
        )


goal = Goal()
