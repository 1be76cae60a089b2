"""``await agent_message.send(text, receiver_role="parent", receiver_name=None)``: write to family.

Only the parent, siblings and children can be reached. The host fills in the sender from the
session whose kernel sent it (it cannot be set here), queues the message for the receiver's model
and answers at once: it never waits for the receiver, so two busy agents writing to each other
cannot deadlock. At most 16,384 characters a message and 20 unread messages per receiver.
"""

from typing import Any

from .rlm import RlmError, _request


class AgentMessageError(RlmError):
    """The host refused the message; the text says why and what to do."""


class AgentMessages:
    """The ``agent_message`` handle in the kernel namespace."""

    async def send(self, text: str, receiver_role: str = "parent", receiver_name: str | None = None, **extra: Any) -> dict[str, Any]:
        """Send ``text`` to the parent, a sibling or a child (``receiver_name`` for the last two)."""
        payload: dict[str, Any] = {"text": text, "receiver_role": receiver_role, **extra}
        if receiver_name is not None:
            payload["receiver_name"] = receiver_name
        try:
            reply = await _request("agent_message.send", payload)
        except RlmError as error:
            raise AgentMessageError(str(error)) from None
        return {"id": reply.get("id"), "receiver": reply.get("receiver"), "receiver_role": reply.get("receiver_role")}

    async def inbox(self) -> list[dict[str, Any]]:
        """Messages received, oldest first: id, from_role, from_name, text, sent_at, delivered."""
        reply = await _request("agent_message.inbox", {})
        return list(reply.get("messages", []))

    def __repr__(self) -> str:
        return (
            '<agent_message: `await agent_message.send(text, receiver_role="parent"|"sibling"|"child", receiver_name=None)`; '
            "`await agent_message.inbox()`>"
        )


agent_message = AgentMessages()
