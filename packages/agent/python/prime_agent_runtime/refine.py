"""``await refine.run(instructions=None)``: distil this session into the continual harness.

The host reads the session's trajectory, asks the model for a JSON list of edits (thinking off),
validates each edit and applies it atomically; a failing edit is recorded and the others go on.
``await refine.rollback(id)`` undoes a refinement from its snapshots with no model call (and is
itself recorded); ``refine.list()`` reads the session's refinement log.
"""

from __future__ import annotations

import json
import os
from typing import Any

from . import harness as _harness
from .rlm import RlmError, _request


class RefineError(RlmError):
    """The host refused or could not run the refinement; the message says why."""


class Refine:
    """The ``refine`` handle in the kernel namespace."""

    async def run(self, instructions: str | None = None) -> dict[str, Any]:
        """Refine now; returns ``{"id", "status", "report"}`` (the report lists each edit and any failure)."""
        if instructions is not None and not isinstance(instructions, str):
            raise TypeError("refine.run(instructions): instructions must be a string or None")
        payload = {} if instructions is None else {"instructions": instructions}
        return self._answer(await self._call("harness.refine", payload))

    async def rollback(self, id: str) -> dict[str, Any]:
        """Undo refinement ``id`` (see ``refine.list()``); itself recorded, so it can be rolled back too."""
        return self._answer(await self._call("harness.rollback", {"id": id}))

    def list(self) -> list[dict[str, Any]]:
        """This session's refinements, oldest first: id, at, trigger, status, summary, edits."""
        folder = _harness._dirs.get("local")
        if not folder:
            raise RefineError("refine needs a Prime Agent session; this kernel was not started by one.")
        path = os.path.join(folder, "refinements.json")
        try:
            with open(path, encoding="utf-8") as file:
                log = json.load(file)
        except FileNotFoundError:
            return []
        except json.JSONDecodeError as error:
            raise RefineError(f"{path} is not valid JSON ({error}); fix it by hand or move it aside.") from None
        if not isinstance(log, dict) or not isinstance(log.get("refinements"), list):
            raise RefineError(f"{path} is not a refinement log (a \"refinements\" list); fix it or move it aside.")
        return [
            {key: refinement.get(key) for key in ("id", "at", "trigger", "status", "summary", "rollbackOf", "edits")}
            for refinement in log.get("refinements", [])
        ]

    @staticmethod
    async def _call(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        try:
            return await _request(kind, payload)
        except RlmError as error:
            raise RefineError(str(error)) from None

    @staticmethod
    def _answer(reply: dict[str, Any]) -> dict[str, Any]:
        return {"id": reply.get("id"), "status": reply.get("refinement_status"), "report": reply.get("report")}

    def __repr__(self) -> str:
        return "<refine: `await refine.run(instructions=None)`, `await refine.rollback(id)`, `refine.list()`>"


refine = Refine()
