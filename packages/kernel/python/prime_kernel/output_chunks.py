"""Keep the kernel's stream output in small messages, at the pace the host reads them, and counted.

ipykernel buffers stream output and sends it every 0.2 s, so a fast loop (or one huge ``print``)
becomes a single message of any size, which the host must then hold in memory at once. Here every
write is cut into slices of at most ``CHUNK_CHARS`` characters and the stream is flushed after
each ``CHUNK_CHARS`` written.

Flow control: a PUB socket never blocks; it drops what its queue (1,000 messages) cannot hold, so
a host slower than the kernel (or stopped: Ctrl-Z of a terminal client) would lose output or fill
memory. Every stream message the kernel publishes is stamped (metadata ``prime_published``) with
the kernel's running totals of stream characters and messages; the host acknowledges, on the
control channel, the totals of the newest message it has read. A thread writing output waits
while more than the window of characters (``PRIME_KERNEL_OUTPUT_WINDOW``) or of messages
(``MESSAGE_WINDOW``, well under the queue's 1,000) is unacknowledged, for as long as it takes: a
host that is gone ends the kernel (see ``parent_watch``), and an interrupt ends the wait.

Because an acknowledgement names a position, not an amount, a message lost on the way (output
that bypassed the pacing: a forked child, a direct ``session.send``) cannot leave the window short
for good: a writer that has waited ``PROBE_AFTER_S`` without news publishes a probe with the
current totals, and a host that reads it acknowledges them (iopub is ordered: what came before
the probe has arrived or never will).

Accounting: stream characters are also counted per request (in UTF-16 code units, the host's
unit), and each ``execute_reply``'s metadata carries its cell's count, so the host can tell whether
anything sent never arrived and say so rather than report an incomplete output as whole.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

CHUNK_CHARS = 64 * 1024
#: Stream messages that may be unacknowledged (the iopub queue holds 1,000 of every kind).
MESSAGE_WINDOW = 400
#: How long a waiting writer goes without an acknowledgement before it sends a probe.
PROBE_AFTER_S = 0.5
#: Comm id of the host's acknowledgements (``{"chars": n, "messages": m}``) on control.
OUTPUT_CREDIT_COMM_ID = "prime.output.credit"
#: Metadata key of the totals stamped on every stream message.
STAMP_METADATA_KEY = "prime_published"
#: Message type of a probe (content: the totals), which Jupyter clients ignore.
PROBE_MSG_TYPE = "prime_output_probe"
#: Key of the cell's published stream characters in its ``execute_reply`` metadata.
PUBLISHED_METADATA_KEY = "prime_stream_published"


def utf16_units(text: str) -> int:
    """Length of ``text`` as JavaScript counts it (code points above U+FFFF count twice)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class OutputCredit:
    """Stream characters and messages published versus the position the host says it has read."""

    def __init__(self, window: int) -> None:
        self.set_window(window)
        self.chars = 0
        self.messages = 0
        self.acked_chars = 0
        self.acked_messages = 0
        self.pid = os.getpid()
        self._changed = threading.Condition()
        #: Threads that must never wait: they deliver the acknowledgements or publish the output.
        self.exempt: set[int] = set()
        #: Publishes a probe with the current totals (set once the kernel runs).
        self.send_probe: Any = None

    def set_window(self, window: int) -> None:
        """Characters that may be unacknowledged; 0 turns pacing off."""
        self.window = window
        self.enabled = window > 0

    def on_ack(self, data: Any) -> None:
        if not isinstance(data, dict):
            return
        chars, messages = data.get("chars"), data.get("messages")
        if not isinstance(chars, int) or not isinstance(messages, int):
            return
        with self._changed:
            self.acked_chars = max(self.acked_chars, min(chars, self.chars))
            self.acked_messages = max(self.acked_messages, min(messages, self.messages))
            self._changed.notify_all()

    def publish(self, chars: int) -> dict[str, int]:
        """Counts one stream message; returns the totals to stamp on it."""
        with self._changed:
            self.chars += chars
            self.messages += 1
            return {"chars": self.chars, "messages": self.messages}

    def totals(self) -> dict[str, int]:
        with self._changed:
            return {"chars": self.chars, "messages": self.messages}

    def _full(self) -> bool:
        return (
            self.chars - self.acked_chars > self.window
            or self.messages - self.acked_messages > MESSAGE_WINDOW
        )

    def wait_for_room(self) -> None:
        if not self.enabled or os.getpid() != self.pid or threading.get_ident() in self.exempt:
            return
        with self._changed:
            while self._full():
                position = (self.acked_chars, self.acked_messages)
                self._changed.wait(PROBE_AFTER_S)
                if self._full() and position == (self.acked_chars, self.acked_messages) and self.send_probe:
                    self._changed.release()
                    try:
                        self.send_probe()
                    finally:
                        self._changed.acquire()


class PublishedTally:
    """Stream characters handed to the iopub socket, per parent request (the cell they belong to)."""

    #: Parents remembered at most: output of old cells (from background threads) must not grow it.
    MAX_PARENTS = 1000

    def __init__(self) -> None:
        self._by_parent: dict[str, int] = {}
        self._lock = threading.Lock()

    def add(self, parent: Any, chars: int) -> None:
        parent_id = _msg_id(parent)
        if parent_id is None:
            return
        with self._lock:
            if parent_id not in self._by_parent and len(self._by_parent) >= self.MAX_PARENTS:
                self._by_parent.pop(next(iter(self._by_parent)))
            self._by_parent[parent_id] = self._by_parent.get(parent_id, 0) + chars

    def take(self, parent: Any) -> int:
        with self._lock:
            return self._by_parent.pop(_msg_id(parent) or "", 0)


def _msg_id(message: Any) -> str | None:
    """The msg_id of a message or of a bare header."""
    if not isinstance(message, dict):
        return None
    header = message.get("header") if isinstance(message.get("header"), dict) else message
    msg_id = header.get("msg_id")
    return msg_id if isinstance(msg_id, str) and msg_id else None


credit = OutputCredit(0)
published = PublishedTally()


def bound_stream_messages(stream: Any, chunk_chars: int = CHUNK_CHARS) -> None:
    original_write = stream.write
    pending = 0

    def write(text: str) -> int | None:
        nonlocal pending
        if not isinstance(text, str) or len(text) == 0:
            return original_write(text)
        for start in range(0, len(text), chunk_chars):
            piece = text[start : start + chunk_chars]
            # Before each piece: many small flushed writes fill the message window, not the characters'.
            credit.wait_for_room()
            original_write(piece)
            pending += len(piece)
            if pending >= chunk_chars:
                pending = 0
                stream.flush()
        return len(text)

    stream.write = write


def bound_standard_streams() -> None:
    window = os.environ.get("PRIME_KERNEL_OUTPUT_WINDOW", "")
    # The same ``credit`` object, never a new one: a kernel attached on a server wires its probe and
    # its exempt threads to it before its streams are bounded (see ``attach``), and a writer without
    # the probe would wait forever for output a Jupyter Server's rate limit dropped.
    credit.set_window(int(window) if window.isdigit() else 0)
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and hasattr(stream, "pub_thread"):
            bound_stream_messages(stream)


def _stream_parts(msg_or_type: Any, content: Any, parent: Any) -> tuple[str, Any] | None:
    """(text, parent) of a stream message in either form ``session.send`` takes, else None."""
    if isinstance(msg_or_type, dict):
        if (msg_or_type.get("header") or {}).get("msg_type") != "stream":
            return None
        content = msg_or_type.get("content")
        parent = msg_or_type.get("parent_header")
    elif msg_or_type != "stream":
        return None
    text = content.get("text") if isinstance(content, dict) else None
    return (text, parent) if isinstance(text, str) else None


def account_published_output(kernel: Any) -> None:
    """Stamps and counts every stream message ``kernel`` publishes; reports each cell's count in its reply."""
    session = kernel.session
    original_send = session.send

    def send(stream: Any, msg_or_type: Any, content: Any = None, parent: Any = None, *args: Any, **kwargs: Any) -> Any:
        parts = _stream_parts(msg_or_type, content, parent) if os.getpid() == credit.pid else None
        if parts is not None:
            text, owner = parts
            units = utf16_units(text)
            published.add(owner, units)
            stamp = credit.publish(units)
            if isinstance(msg_or_type, dict):
                msg_or_type.setdefault("metadata", {})[STAMP_METADATA_KEY] = stamp
            elif len(args) < 5:  # metadata is send()'s ninth parameter; passed by keyword in practice
                metadata = dict(kwargs.get("metadata") or {})
                metadata[STAMP_METADATA_KEY] = stamp
                kwargs["metadata"] = metadata
        return original_send(stream, msg_or_type, content, parent, *args, **kwargs)

    session.send = send
    original_finish = kernel.finish_metadata

    def finish_metadata(parent: Any, metadata: Any, reply_content: Any) -> Any:
        metadata = original_finish(parent, metadata, reply_content)
        if isinstance(metadata, dict):
            metadata[PUBLISHED_METADATA_KEY] = published.take(parent)
        return metadata

    kernel.finish_metadata = finish_metadata

    def send_probe() -> None:
        original_send(kernel.iopub_socket, PROBE_MSG_TYPE, credit.totals(), ident=b"prime_output_probe")

    credit.send_probe = send_probe


def exempt_kernel_threads(kernel: Any) -> None:
    """The control and iopub threads never wait for room: they carry the acks and the output."""
    for thread in (getattr(kernel, "control_thread", None), getattr(kernel, "iopub_thread", None)):
        inner = getattr(thread, "thread", thread)
        ident = getattr(inner, "ident", None)
        if isinstance(ident, int):
            credit.exempt.add(ident)
