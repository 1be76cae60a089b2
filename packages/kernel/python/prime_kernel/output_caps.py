"""Cut errors, displays and execution results at the source, before they are serialised.

A message is JSON-encoded, then UTF-8 encoded, then copied into ZeroMQ: a 100 MB traceback or
display costs the kernel several times its size, and the host as much again to decode it. Here
every ``error``, ``display_data``, ``update_display_data``, ``execute_result`` and error
``execute_reply`` is bounded before it is encoded, and what is cut is written to a file in the
host's output folder (``PRIME_KERNEL_OUTPUT_DIR``):

- An error is cut as the host shows it (``capError`` in ``src/output/format.ts``: ``evalue`` at
  ``CAP_CHARS``, each traceback line at a quarter of that, then the first and last lines), and
  its whole text (the traceback lines, or ``ename: evalue``) goes to a file the host copies into
  the cell's complete-output file.
- An execution result keeps its ``text/plain`` cut at ``CAP_CHARS`` (ending with
  ``TRUNCATION_MARKER``), the whole text going to the complete-output file the same way; its
  other representations are left out (the host reads only ``text/plain`` of a result).
- A display keeps its ``text/plain`` cut the same way; each representation too large to send
  is saved to a file of its own (an image as the image file, decoded from base64) and named in a
  line added to the ``text/plain``, with its type and size.

The message carries what was cut in ``content[CUT_KEY]``: ``{"path", "bytes"}`` of the whole text
(errors, results), ``{"saved": [{"mime", "chars", "path", "bytes"}]}`` for a display; ``error``
(``ENOSPC: No space left on device, '<path>'``) in place of ``path`` when a file could not be
written: the cut part is then gone, and the message says so.

IPython also keeps every printed string, every result's text and every error's traceback in its
history (``%notebook`` reads them), so a cell printing 100 MB would leave 100 MB behind: those
records are not kept (``keep_no_output_history``).
"""

from __future__ import annotations

import base64
import contextlib
import errno
import json
import os
import secrets
import tempfile
import threading
from typing import Any, Callable

#: Characters of each visible part (the host's ``VISIBLE_OUTPUT_CAP``).
CAP_CHARS = 65_536
#: The line ending a cut ``text/plain`` (the host's ``TRUNCATION_MARKER``).
TRUNCATION_MARKER = f"[... output truncated at {CAP_CHARS} chars ...]"
#: Content key naming what was cut and where it went.
CUT_KEY = "prime_cut"

#: Representations sent as base64 text and saved as the bytes they encode.
BINARY_TYPES = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp", "application/pdf": ".pdf"}
TEXT_TYPES = {
    "text/plain": ".txt",
    "text/html": ".html",
    "text/markdown": ".md",
    "text/latex": ".tex",
    "text/csv": ".csv",
    "image/svg+xml": ".svg",
    "application/javascript": ".js",
    "application/json": ".json",
}

_DISPLAY_TYPES = ("display_data", "update_display_data")


def cap_text(text: str, cap: int, marker: str) -> tuple[str, bool]:
    """``text`` cut to ``cap`` characters and ended with ``marker`` on its own line (``capText``)."""
    if len(text) <= cap:
        return text, False
    head = text[:cap]
    return f"{head}{'' if head.endswith(chr(10)) else chr(10)}{marker}", True


def cap_error(evalue: str, traceback: list[str], cap: int = CAP_CHARS) -> tuple[str, list[str], bool]:
    """The error as the host shows it (``capError``): (evalue, traceback lines, whether anything was cut)."""
    shown_evalue, truncated = cap_text(evalue, cap, f"[... {len(evalue) - cap} chars truncated ...]")
    line_cap = cap // 4
    lines = []
    for line in traceback:
        if len(line) > line_cap:
            truncated = True
            line = cap_text(line, line_cap, f"[... {len(line) - line_cap} chars truncated ...]")[0]
        lines.append(line)
    if sum(len(line) + 1 for line in lines) > cap:
        truncated = True
        head: list[str] = []
        tail: list[str] = []
        used, i, j = 0, 0, len(lines) - 1
        while i <= j:
            take_tail = len(tail) <= len(head)
            line = lines[j] if take_tail else lines[i]
            if used + len(line) + 1 > cap:
                break
            used += len(line) + 1
            if take_tail:
                tail.insert(0, line)
                j -= 1
            else:
                head.append(line)
                i += 1
        lines = [*head, f"[... {len(lines) - len(head) - len(tail)} traceback lines truncated ...]", *tail]
    return shown_evalue, lines, truncated


class OutputFiles:
    """Files for what was cut, in the host's output folder, each created new (0600)."""

    def __init__(self, folder: str | None) -> None:
        self._folder = folder
        self._lock = threading.Lock()

    def folder(self) -> str:
        with self._lock:
            if not self._folder:
                self._folder = tempfile.mkdtemp(prefix="prime-kernel-output-")
            # Made again each time, as the host does: a folder removed while the kernel runs comes back.
            os.makedirs(self._folder, mode=0o700, exist_ok=True)
            return self._folder

    def write(self, kind: str, suffix: str, write: Callable[[Any], None]) -> tuple[str, int]:
        """(path, bytes) of a new file ``kernel-<random>.<kind><suffix>`` filled by ``write(binary file)``."""
        path = os.path.join(self.folder(), f"kernel-{secrets.token_hex(4)}.{kind}{suffix}")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            with os.fdopen(fd, "wb") as file:
                write(file)
                size = file.tell()
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(path)
            raise
        return path, size


#: Characters encoded at a time when writing a file: a 100 MB text is not copied whole to bytes.
WRITE_BLOCK_CHARS = 1 << 20


def _write_text(file: Any, text: str) -> None:
    for start in range(0, len(text), WRITE_BLOCK_CHARS):
        block = text[start : start + WRITE_BLOCK_CHARS]
        try:
            # Bytes that were not UTF-8 (decoded with surrogateescape) are written back as they were.
            file.write(block.encode("utf-8", "surrogateescape"))
        except UnicodeEncodeError:
            file.write(block.encode("utf-8", "replace"))  # a lone surrogate is no text: not worth losing the rest


def _error_text_writer(ename: str, evalue: str, traceback: list[str]) -> Callable[[Any], None]:
    """Writes the error's whole text as the host lays it out (``errorText``)."""

    def write(file: Any) -> None:
        if not traceback:
            _write_text(file, ename)
            if evalue:
                _write_text(file, ": ")
                _write_text(file, evalue)
            return
        for i, line in enumerate(traceback):
            if i > 0:
                file.write(b"\n")
            _write_text(file, line)

    return write


def _text_writer(text: str) -> Callable[[Any], None]:
    return lambda file: _write_text(file, text)


def _reason(error: BaseException) -> str:
    """An OSError as Node says it (``ENOSPC: No space left on device, '/path'``), else its type and text."""
    if isinstance(error, OSError) and error.errno:
        where = f", '{error.filename}'" if error.filename else ""
        return f"{errno.errorcode.get(error.errno, error.errno)}: {error.strerror}{where}"
    return f"{type(error).__name__}: {error}"


def _size(value: Any) -> int:
    """Characters ``value`` takes in the message (its JSON length for anything but a string)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (bytes, bytearray)):
        return (len(value) + 2) // 3 * 4
    try:
        return len(json.dumps(value, default=str))
    except (TypeError, ValueError):
        return 0


class OutputCaps:
    """Bounds the messages listed in the module doc; the whole of what is cut goes to ``files``."""

    def __init__(self, files: OutputFiles, cap: int = CAP_CHARS) -> None:
        self.files = files
        self.cap = cap
        #: The last error cut, by the request it belongs to: its execute_reply carries the same
        #: traceback, which is cut alike and written once.
        self._last_error: tuple[str, dict[str, Any]] | None = None

    def bound(self, msg_type: str, content: Any, parent: Any) -> Any:
        """``content`` as it may be sent: the same object when nothing needs cutting."""
        if not isinstance(content, dict):
            return content
        if msg_type == "error" or (msg_type == "execute_reply" and content.get("status") == "error"):
            return self._bound_error(content, _parent_id(parent))
        if msg_type == "execute_result":
            return self._bound_result(content)
        if msg_type in _DISPLAY_TYPES:
            return self._bound_display(content)
        return content

    def _bound_error(self, content: dict[str, Any], parent_id: str) -> dict[str, Any]:
        ename = str(content.get("ename", ""))
        evalue = content.get("evalue")
        evalue = evalue if isinstance(evalue, str) else ""
        traceback = content.get("traceback")
        traceback = [str(line) for line in traceback] if isinstance(traceback, list) else []
        if self._last_error and self._last_error[0] == parent_id and self._last_error[1]["ename"] == ename:
            return {**content, **self._last_error[1]}
        shown_evalue, lines, truncated = cap_error(evalue, traceback, self.cap)
        if not truncated:
            return content
        cut = self._save("error", ".txt", _error_text_writer(ename, evalue, traceback))
        bounded = {"ename": ename, "evalue": shown_evalue, "traceback": lines, CUT_KEY: cut}
        self._last_error = (parent_id, bounded)
        return {**content, **bounded}

    def _bound_result(self, content: dict[str, Any]) -> dict[str, Any]:
        data = content.get("data")
        if not isinstance(data, dict) or sum(_size(value) for value in data.values()) <= self.cap:
            return content
        plain = data.get("text/plain")
        kept: dict[str, Any] = {}
        cut: dict[str, Any] = {}
        if isinstance(plain, str):
            kept["text/plain"], truncated = cap_text(plain, self.cap, TRUNCATION_MARKER)
            if truncated:
                cut = self._save("result", ".txt", _text_writer(plain))
        return {**content, "data": kept, "metadata": {}, **({CUT_KEY: cut} if cut else {})}

    def _bound_display(self, content: dict[str, Any]) -> dict[str, Any]:
        data = content.get("data")
        metadata = content.get("metadata")
        small_metadata = _size(metadata) <= self.cap
        if not isinstance(data, dict) or (sum(_size(value) for value in data.values()) <= self.cap and small_metadata):
            return content
        saved: list[dict[str, Any]] = []
        notes: list[str] = []
        shown = ""
        for mime, value in data.items():
            if mime == "text/plain" and isinstance(value, str):
                shown, truncated = cap_text(value, self.cap, TRUNCATION_MARKER)
                if not truncated:
                    continue
            entry = self._save_representation(mime, value)
            saved.append(entry)
            notes.append(_saved_note(entry))
        text = "\n".join([shown, *notes] if shown else notes)
        return {
            **content,
            "data": {"text/plain": text} if text else {},
            "metadata": metadata if small_metadata else {},
            CUT_KEY: {"saved": saved},
        }

    def _save_representation(self, mime: str, value: Any) -> dict[str, Any]:
        """Saves one representation of a display; returns what the note says about it."""
        chars = _size(value)
        if mime in BINARY_TYPES and isinstance(value, (str, bytes, bytearray)):
            try:
                raw = value if isinstance(value, (bytes, bytearray)) else base64.b64decode(value, validate=False)
                return {"mime": mime, "chars": chars, **self._save("display", BINARY_TYPES[mime], lambda file: file.write(raw))}
            except ValueError:  # binascii.Error
                pass  # Not base64 after all: saved as the text it is.
        if isinstance(value, str):
            suffix, writer = TEXT_TYPES.get(mime, ".txt"), _text_writer(value)
        else:
            suffix = ".json"

            def writer(file: Any) -> None:
                file.write(json.dumps(value, default=str, ensure_ascii=False).encode("utf-8", "surrogateescape"))

        return {"mime": mime, "chars": chars, **self._save("display", suffix, writer)}

    def _save(self, kind: str, suffix: str, write: Callable[[Any], None]) -> dict[str, Any]:
        """``{"path", "bytes"}`` of the file written, or ``{"error"}`` saying why there is none."""
        try:
            path, size = self.files.write(kind, suffix, write)
            return {"path": path, "bytes": size}
        except Exception as error:  # noqa: BLE001 - a full disk must not lose the message itself
            return {"error": _reason(error)}


def _saved_note(entry: dict[str, Any]) -> str:
    mime = entry["mime"]
    if "error" in entry:
        return f"[... {mime} of {entry['chars']} characters, too large to show, could not be saved ({entry['error']}) ...]"
    binary = mime in BINARY_TYPES and entry["path"].endswith(BINARY_TYPES[mime])
    size = f"{entry['bytes']} bytes" if binary else f"{entry['chars']} characters"
    return f"[... {mime} of {size}, too large to show, saved to {entry['path']} ...]"


def _parent_id(parent: Any) -> str:
    if not isinstance(parent, dict):
        return ""
    header = parent.get("header") if isinstance(parent.get("header"), dict) else parent
    msg_id = header.get("msg_id")
    return msg_id if isinstance(msg_id, str) else ""


def cap_published_output(kernel: Any) -> None:
    """Bounds every message ``kernel`` sends (see the module doc), in either form ``session.send`` takes."""
    caps = OutputCaps(OutputFiles(os.environ.get("PRIME_KERNEL_OUTPUT_DIR") or None))
    session = kernel.session
    original_send = session.send
    pid = os.getpid()

    def send(stream: Any, msg_or_type: Any, content: Any = None, parent: Any = None, *args: Any, **kwargs: Any) -> Any:
        if os.getpid() != pid:  # a forked child's output goes through its own pipe
            return original_send(stream, msg_or_type, content, parent, *args, **kwargs)
        if isinstance(msg_or_type, dict):
            msg_type = (msg_or_type.get("header") or {}).get("msg_type")
            inner = msg_or_type.get("content")
            bounded = caps.bound(msg_type, inner, msg_or_type.get("parent_header"))
            if bounded is not inner:
                msg_or_type = {**msg_or_type, "content": bounded}
        else:
            content = caps.bound(msg_or_type, content, parent)
            if msg_or_type == "execute_reply" and isinstance(content, dict) and CUT_KEY in content:
                # ipykernel keeps the formatted traceback until the next error: the whole of it is on disk.
                kernel.shell._last_traceback = None
        return original_send(stream, msg_or_type, content, parent, *args, **kwargs)

    session.send = send


def keep_no_output_history(shell: Any) -> None:
    """IPython's history keeps every printed string, each result's text and each error's formatted
    traceback (for ``%notebook``): a cell printing 100 MB would hold 100 MB until the kernel ends,
    and each error would be formatted twice. None of it is recorded."""
    if hasattr(shell, "_tee"):
        shell._tee = lambda channel: contextlib.nullcontext()
    if hasattr(shell, "_format_exception_for_storage"):
        shell._format_exception_for_storage = lambda *args, **kwargs: {}
    history = getattr(shell, "history_manager", None)
    if history is None:
        return

    def forget(*_args: Any) -> None:
        for records in (getattr(history, "outputs", None), getattr(history, "exceptions", None)):
            if hasattr(records, "clear"):
                records.clear()
        reprs = getattr(history, "output_hist_reprs", None)
        if isinstance(reprs, dict):
            for count, text in list(reprs.items()):
                if isinstance(text, str) and len(text) > CAP_CHARS:
                    reprs[count] = cap_text(text, CAP_CHARS, TRUNCATION_MARKER)[0]

    shell.events.register("post_run_cell", forget)
