"""Keep the kernel's stream output in small messages, at the pace the host reads them, and counted.

ipykernel buffers stream output and sends it every 0.2 s, so a fast loop (or one huge ``print``)
becomes a single message of any size, which the host must then hold in memory at once. Here every
write is cut into slices of at most ``CHUNK_CHARS`` characters and the stream is flushed after
each ``CHUNK_CHARS`` written.

Flow control: a PUB socket never blocks, and drops what its queue cannot hold, so a host slower
than the kernel (or stopped: Ctrl-Z of a terminal client) would either fill memory or lose output.
When the host sets ``PRIME_KERNEL_OUTPUT_WINDOW`` it acknowledges, on the control channel, how many
characters of stream output it has read; a thread writing output then waits while more than that
window is unacknowledged, for as long as it takes. It is never switched off: a host that is gone
ends the kernel (see ``parent_watch``), and an interrupt ends the wait.

Accounting: every stream message the kernel publishes is counted (in UTF-16 code units, the
host's unit) under the request it answers, and each ``execute_reply``'s metadata carries its cell's
count, so the host can tell whether anything sent never arrived and say so rather than report an
incomplete output as whole.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

CHUNK_CHARS = 64 * 1024
#: How often a waiting writer wakes to check again (an interrupt ends the wait at once anyway).
WAIT_SLICE_S = 1.0
#: Comm id of the host's acknowledgements (``{"consumed": <characters read>}``) on control.
OUTPUT_CREDIT_COMM_ID = "prime.output.credit"
#: Key of the cell's published stream characters in its ``execute_reply`` metadata.
PUBLISHED_METADATA_KEY = "prime_stream_published"


def utf16_units(text: str) -> int:
    """Length of ``text`` as JavaScript counts it (code points above U+FFFF count twice)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class OutputCredit:
    """Characters written versus characters the host says it has read."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.enabled = window > 0
        self.sent = 0
        self.acknowledged = 0
        self._pid = os.getpid()
        self._changed = threading.Condition()
        #: Threads that must never wait: they deliver the acknowledgements or publish the output.
        self.exempt: set[int] = set()

    def on_ack(self, consumed: Any) -> None:
        if not isinstance(consumed, int):
            return
        with self._changed:
            if consumed > self.acknowledged:
                self.acknowledged = consumed
                self._changed.notify_all()

    def add(self, chars: int) -> None:
        with self._changed:
            self.sent += chars

    def wait_for_room(self) -> None:
        if not self.enabled or os.getpid() != self._pid or threading.get_ident() in self.exempt:
            return
        with self._changed:
            while self.sent - self.acknowledged > self.window:
                self._changed.wait(WAIT_SLICE_S)


class PublishedTally:
    """Stream characters handed to the iopub socket, per parent request (the cell they belong to)."""

    #: Parents remembered at most: output of old cells (from background threads) must not grow it.
    MAX_PARENTS = 1000

    def __init__(self) -> None:
        self._by_parent: dict[str, int] = {}
        self._lock = threading.Lock()

    def count(self, msg_or_type: Any, content: Any, parent: Any) -> None:
        if isinstance(msg_or_type, dict):
            header = msg_or_type.get("header") or {}
            if header.get("msg_type") != "stream":
                return
            content = msg_or_type.get("content")
            parent = msg_or_type.get("parent_header")
        elif msg_or_type != "stream":
            return
        text = content.get("text") if isinstance(content, dict) else None
        parent_id = _msg_id(parent)
        if not isinstance(text, str) or parent_id is None:
            return
        with self._lock:
            if parent_id not in self._by_parent and len(self._by_parent) >= self.MAX_PARENTS:
                self._by_parent.pop(next(iter(self._by_parent)))
            self._by_parent[parent_id] = self._by_parent.get(parent_id, 0) + utf16_units(text)

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
            original_write(piece)
            credit.add(utf16_units(piece))
            pending += len(piece)
            if pending >= chunk_chars:
                pending = 0
                stream.flush()
                credit.wait_for_room()
        return len(text)

    stream.write = write


def bound_standard_streams() -> None:
    global credit
    window = os.environ.get("PRIME_KERNEL_OUTPUT_WINDOW", "")
    credit = OutputCredit(int(window) if window.isdigit() else 0)
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and hasattr(stream, "pub_thread"):
            bound_stream_messages(stream)


def account_published_output(kernel: Any) -> None:
    """Counts the stream messages ``kernel`` publishes per cell and reports each cell's count in its reply."""
    session = kernel.session
    original_send = session.send

    def send(stream: Any, msg_or_type: Any, content: Any = None, parent: Any = None, *args: Any, **kwargs: Any) -> Any:
        published.count(msg_or_type, content, parent)
        return original_send(stream, msg_or_type, content, parent, *args, **kwargs)

    session.send = send
    original_finish = kernel.finish_metadata

    def finish_metadata(parent: Any, metadata: Any, reply_content: Any) -> Any:
        metadata = original_finish(parent, metadata, reply_content)
        if isinstance(metadata, dict):
            metadata[PUBLISHED_METADATA_KEY] = published.take(parent)
        return metadata

    kernel.finish_metadata = finish_metadata


def exempt_kernel_threads(kernel: Any) -> None:
    """The control and iopub threads never wait for room: they carry the acks and the output."""
    for thread in (getattr(kernel, "control_thread", None), getattr(kernel, "iopub_thread", None)):
        inner = getattr(thread, "thread", thread)
        ident = getattr(inner, "ident", None)
        if isinstance(ident, int):
            credit.exempt.add(ident)
