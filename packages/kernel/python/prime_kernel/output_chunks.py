"""Keep the kernel's stream messages small.

ipykernel buffers stream output and sends it every 0.2 s, so a fast loop (or one huge ``print``)
becomes a single message of any size, which the host must then hold in memory at once. Here every
write is cut into slices of at most ``CHUNK_CHARS`` characters and the stream is flushed after each
``CHUNK_CHARS`` written; ``flush`` waits for the IO thread, which also slows a runaway printer down
to the pace the messages can be sent.
"""

import sys
from typing import Any

CHUNK_CHARS = 64 * 1024


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
            pending += len(piece)
            if pending >= chunk_chars:
                pending = 0
                stream.flush()
        return len(text)

    stream.write = write


def bound_standard_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and hasattr(stream, "pub_thread"):
            bound_stream_messages(stream)
