"""``await rlm(task, name=..., model=..., thinking=..., kernel=...)``: start a sub-agent.

The call returns at admission with a handle ``{rlm_child_id, name, session_dir, model}``; it never
waits for the child's answer. The child answers with ``agent_message.send(..., receiver_role="parent")``
or files in its ``session_dir``; a child that ends without a message produces a notice for the
parent. Its kernel runs where this one does (a Jupyter Server's kernel has its sub-agents' kernels
on the same server) unless ``kernel="local"`` asks for one on the user's machine. The host decides
everything (options, model, names, depth); the kernel only checks the depth early to fail fast.
"""

import os
from typing import Any

from .harness import harness as _harness


class RlmError(RuntimeError):
    """The host refused the request; the message says why and what to do."""


async def _request(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    try:
        from prime_kernel import HostRequestUnavailable, host_request
    except ImportError as error:
        raise RlmError("rlm needs a Prime Agent kernel; this one has no host") from error
    try:
        reply = await host_request(kind, payload)
    except HostRequestUnavailable as error:
        raise RlmError(f"the host cannot be reached ({error})") from error
    if reply.get("status") != "ok":
        raise RlmError(str(reply.get("error", "the host refused without a reason")))
    return reply


class Rlm:
    """The ``rlm`` handle in the kernel namespace."""

    #: The continual harness (``rlm.harness.create_memory(name, text)``, ...; see ``harness.py``).
    harness = _harness

    async def __call__(self, task: str, **options: Any) -> dict[str, Any]:
        """Start a sub-agent on ``task``; options: ``name``, ``model`` ("provider/id"), ``thinking``, ``spec`` (a harness sub-agent spec), ``kernel`` ("local": its kernel on the user's machine)."""
        depth = int(os.environ.get("RLM_DEPTH", "0") or 0)
        limit = os.environ.get("RLM_MAX_DEPTH")
        if limit not in (None, "") and limit.isdigit() and depth + 1 > int(limit):
            raise RlmError(
                f"rlm(): the depth limit is reached: this agent is at depth {depth} and sub-agents may go "
                f"{limit} level(s) deep. Do this work yourself."
            )
        reply = await _request("rlm.spawn", {"task": task, "options": options})
        return dict(reply["handle"])

    async def list_subagents(self) -> list[dict[str, Any]]:
        """This agent's sub-agents: name, id, status (starting, running, idle, failed, cancelled), model, folders."""
        reply = await _request("rlm.list", {})
        return list(reply.get("subagents", []))

    async def delete_subagent(self, name: str) -> dict[str, Any]:
        """Cancel a sub-agent (starting, running or idle) and shut its session and kernel down.

        Returns ``{"name": ..., "was": <its status before: starting, running, idle, failed>}``.
        """
        reply = await _request("rlm.delete", {"name": name})
        return {"name": reply.get("name"), "was": reply.get("was")}

    async def find_models(self, query: str = "") -> list[dict[str, Any]]:
        """Models whose ``provider/id`` or name contains ``query``; ``available`` says whether a key is set."""
        reply = await _request("rlm.find_models", {"query": query})
        return list(reply.get("models", []))

    def __repr__(self) -> str:
        return (
            "<rlm: `handle = await rlm(task, name=None, model=None, thinking=None, spec=None, kernel=None)` starts a sub-agent and returns at once; "
            "await rlm.list_subagents(), await rlm.delete_subagent(name), await rlm.find_models(query); rlm.harness>"
        )


rlm = Rlm()
