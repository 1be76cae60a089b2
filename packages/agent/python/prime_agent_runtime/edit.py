"""``await edit(path, old, new)``: replace exactly one occurrence of ``old`` in a text file.

The file is rewritten atomically (temp file, then rename, keeping its permissions), line endings are
kept as they are, and the change is reported to the host as a unified diff so the host knows which
files changed. Outside a Prime Agent kernel the report is skipped and the edit still happens.
"""

import difflib
import os
import tempfile
from typing import Any


class EditError(ValueError):
    """The edit was refused; the file was not changed."""


async def edit(path: str, old: str, new: str) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"edit(path, old, new): path must be a string, got {type(path).__name__}")
    if not isinstance(old, str) or not isinstance(new, str):
        raise TypeError("edit(path, old, new): old and new must be strings")
    if old == "":
        raise EditError("edit(): old must not be empty; to create or rewrite a file, write it with open(path, 'w')")
    full = os.path.abspath(os.fspath(path))
    if not os.path.exists(full):
        raise FileNotFoundError(f"edit(): no file at {full}; check the path (relative paths start at {os.getcwd()})")
    if os.path.isdir(full):
        raise IsADirectoryError(f"edit(): {full} is a directory, not a file")
    with open(full, encoding="utf-8", newline="") as handle:
        before = handle.read()
    count = before.count(old)
    if count == 0:
        raise EditError(
            f"edit(): the old text was not found in {path}; nothing changed. "
            "Read the file again and copy the exact text, including indentation and line breaks."
        )
    if count > 1:
        raise EditError(
            f"edit(): the old text occurs {count} times in {path}; nothing changed. "
            "Include more surrounding lines so it matches exactly once."
        )
    if old == new:
        return f"No change: old and new are identical ({path})"
    after = before.replace(old, new, 1)
    _write_atomically(full, after)
    diff = "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{path}",
            tofile=f"b/{path}",
        )
    )
    added = sum(1 for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in diff.splitlines() if line.startswith("-") and not line.startswith("---"))
    await _report(full, diff, added, removed)
    return f"Edited {path}: +{added} -{removed} lines"


def _write_atomically(full: str, text: str) -> None:
    directory = os.path.dirname(full)
    mode = os.stat(full).st_mode & 0o7777
    fd, temp = tempfile.mkstemp(dir=directory, prefix=".edit-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(temp, mode)
        os.replace(temp, full)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


async def _report(full: str, diff: str, added: int, removed: int) -> None:
    try:
        from prime_kernel import HostRequestUnavailable, host_request
    except ImportError:
        return
    payload: dict[str, Any] = {"path": full, "diff": diff, "added": added, "removed": removed}
    try:
        await host_request("file.edit", payload)
    except HostRequestUnavailable:
        pass
