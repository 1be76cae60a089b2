"""``await compact.run()``: ask the host to compact the conversation at the next turn boundary.

Compaction replaces the older conversation with a summary; the kernel is never touched, so every
variable stays defined. The host answers at once and compacts before its next model call.
"""

from typing import Any


class CompactionUnavailable(RuntimeError):
    """The host did not accept the request (not a Prime Agent host, or it refused)."""


class Compact:
    """The ``compact`` handle in the kernel namespace."""

    async def run(self, instructions: str | None = None) -> str:
        """Request a compaction; ``instructions`` say what the summary should focus on."""
        if instructions is not None and not isinstance(instructions, str):
            raise TypeError("compact.run(instructions): instructions must be a string or None")
        try:
            from prime_kernel import HostRequestUnavailable, host_request
        except ImportError as error:
            raise CompactionUnavailable("compact.run() needs a Prime Agent kernel; this one has no host") from error
        payload: dict[str, Any] = {} if instructions is None else {"instructions": instructions}
        try:
            reply = await host_request("compact", payload)
        except HostRequestUnavailable as error:
            raise CompactionUnavailable(f"compact.run(): the host cannot be reached ({error})") from error
        if reply.get("status") != "ok":
            raise CompactionUnavailable(f"compact.run(): the host refused: {reply.get('error', 'no reason given')}")
        return str(reply.get("message", "Compaction requested: it runs before the next model call; the kernel keeps its state."))

    def __repr__(self) -> str:
        return "<compact: `await compact.run(instructions=None)` summarises the older conversation; the kernel keeps its state>"


compact = Compact()
