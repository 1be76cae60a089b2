"""``goal``: the session's goal, seen and changed from the kernel.

- ``goal.get()``: the goal as a dict (``id``, ``objective``, ``status``, ``budget``, ``used``,
  ``summary``, ``reason``), or ``None``.
- ``goal.create(objective, tokens=None, turns=None, minutes=None)``: set a goal (refused while
  another is active or paused: only the user replaces or clears a goal).
- ``await goal.complete(summary)``: mark the active goal complete, once every item of the objective
  has evidence; ``summary`` names that evidence (``await goal.complete()``, as Prime Context's
  GOAL_READY guard words it, completes without one).

Each is a request to the host, which decides; a refusal raises ``GoalError`` saying why. ``get``
and ``create`` wait for the answer synchronously (see ``host_call``); ``complete`` is awaited.
"""

from typing import Any

from .host_call import HostUnavailable, request, request_sync


class GoalError(RuntimeError):
    """The host refused the request; the message says why and what to do."""


def _answer(reply: dict[str, Any]) -> Any:
    if reply.get("status") != "ok":
        raise GoalError(str(reply.get("error", "the host refused without a reason")))
    return reply.get("goal")


class Goal:
    """The ``goal`` handle in the kernel namespace."""

    def get(self) -> dict[str, Any] | None:
        """The session's goal (any status) as a dict, or ``None``."""
        try:
            return _answer(request_sync("goal.get", {}, "goal.get()"))
        except HostUnavailable as error:
            raise GoalError(str(error)) from error

    def create(self, objective: str, **options: Any) -> dict[str, Any]:
        """Set a goal; options: ``tokens`` (input + output), ``turns``, ``minutes`` (budgets)."""
        if not isinstance(objective, str) or not objective.strip():
            raise GoalError("goal.create(objective): objective must be a non-empty string")
        try:
            reply = request_sync("goal.create", {"objective": objective, "options": options}, "goal.create()")
        except HostUnavailable as error:
            raise GoalError(str(error)) from error
        return dict(_answer(reply))

    async def complete(self, summary: str | None = None) -> dict[str, Any]:
        """Mark the active goal complete; ``summary`` says what was done and the evidence.

        ``await goal.complete()`` (Prime Context's GOAL_READY wording) completes without one.
        """
        if summary is not None and (not isinstance(summary, str) or not summary.strip()):
            raise GoalError("goal.complete(summary): summary must be a non-empty string naming the evidence")
        try:
            payload = {} if summary is None else {"summary": summary}
            reply = await request("goal.complete", payload, "goal.complete()")
        except HostUnavailable as error:
            raise GoalError(str(error)) from error
        return dict(_answer(reply))

    def __repr__(self) -> str:
        return (
            "<goal: goal.get(), goal.create(objective, tokens=None, turns=None, minutes=None), "
            "`await goal.complete(summary)` once every item of the objective has evidence>"
        )


goal = Goal()
