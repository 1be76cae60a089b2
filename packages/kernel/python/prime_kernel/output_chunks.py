"""Keep the kernel's stream output in small messages, and at the pace the host can read them.

ipykernel buffers stream output and sends it every 0.2 s, so a fast loop (or one huge ``print``)
becomes a single message of any size, which the host must then hold in memory at once. Here every
write is cut into slices of at most ``CHUNK_CHARS`` characters and the stream is flushed after
each ``CHUNK_CHARS`` written.

Flow control: a PUB socket never blocks, so a host slower than the kernel would queue unbounded
output in memory. When the host sets ``PRIME_KERNEL_OUTPUT_WINDOW`` it acknowledges, on the control
channel, how many characters of stream output it has read; the main thread then pauses writing
while more than that window is unacknowledged. A host that stops acknowledging (for longer than
``ACK_TIMEOUT_S``) turns flow control off rather than stalling the kernel.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

CHUNK_CHARS = 64 * 1024
ACK_TIMEOUT_S = 10.0
#: Comm id of the host's acknowledgements (``{"consumed": <characters read>}``) on control.
OUTPUT_CREDIT_COMM_ID = "prime.output.credit"


class OutputCredit:
    """Characters written versus characters the host says it has read."""

    def __init__(self, window: int) -> None:
        self.window = window
        self.enabled = window > 0
        self.sent = 0
        self.acknowledged = 0
        self._pid = os.getpid()
        self._changed = threading.Condition()

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
        # Only the kernel's main thread waits: control (which delivers the acks) and IO must never.
        if not self.enabled or threading.current_thread() is not threading.main_thread() or os.getpid() != self._pid:
            return
        with self._changed:
            if self.sent - self.acknowledged <= self.window:
                return
            if not self._changed.wait_for(lambda: self.sent - self.acknowledged <= self.window, ACK_TIMEOUT_S):
                self.enabled = False


credit = OutputCredit(0)


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
            credit.add(len(piece))
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
