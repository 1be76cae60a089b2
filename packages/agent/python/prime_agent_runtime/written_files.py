"""Tell the host which files each cell wrote, so compaction can list them as modified.

Before a cell the time is noted; after it, the working directory is walked for files changed
since then. That sees what Python code, ``%%bash`` cells and the programs they ran wrote, not
only literal ``open()`` calls. The list is a memory aid for the summary, not an audit: the walk
skips tool folders (``.git``, ``node_modules``, virtual environments, caches) and stops after
``MAX_FILES_WALKED`` files so a huge tree costs a bounded time after each cell.
"""

from __future__ import annotations

import os
import time
from typing import Any

REQUEST_TYPE = "files.written"
SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)
MAX_FILES_WALKED = 5_000
MAX_REPORTED = 200
# File times come from a coarse clock (a few ms per tick): a write right after the cell started can
# carry a time slightly before the one noted here.
CLOCK_SLACK_NS = 50_000_000

_started_ns: int | None = None
# What the previous cell reported, with the times seen: within the slack a file it wrote looks new again.
_reported: dict[str, int] = {}


def changed_since(root: str, since_ns: int, known: dict[str, int] | None = None) -> tuple[dict[str, int], bool]:
    """Files under ``root`` (absolute path to modification time) changed at or after ``since_ns``,
    leaving out those ``known`` with the same time; and whether the walk stopped early."""
    found: dict[str, int] = {}
    walked = 0
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(name for name in subdirs if name not in SKIPPED_DIRS)
        for name in files:
            walked += 1
            if walked > MAX_FILES_WALKED:
                return found, True
            path = os.path.join(directory, name)
            try:
                modified = os.stat(path, follow_symlinks=False).st_mtime_ns
            except OSError:
                continue
            if modified >= since_ns and (known or {}).get(path) != modified:
                found[path] = modified
    return found, False


def _before_cell(_info: Any = None) -> None:
    global _started_ns
    _started_ns = time.time_ns() - CLOCK_SLACK_NS


def _after_cell(_result: Any = None) -> None:
    global _reported
    if _started_ns is None:
        return
    found, partial = changed_since(os.getcwd(), _started_ns, _reported)
    _reported = found
    paths = list(found)
    if paths:
        _notify({"paths": sorted(paths)[:MAX_REPORTED], "partial": partial or len(paths) > MAX_REPORTED})


def _notify(payload: dict[str, Any]) -> None:
    """Tell the host without waiting for a reply (the hook runs synchronously, after the cell)."""
    try:
        from prime_kernel import HostRequestUnavailable, notify_host
    except ImportError:
        return  # not a Prime Agent kernel: nobody to tell
    try:
        notify_host(REQUEST_TYPE, payload)
    except HostRequestUnavailable:
        pass  # no host: the report is skipped, the cell is unaffected


def watch(shell: Any) -> None:
    """Report the files each cell of ``shell`` writes (bookkeeping cells run silently and are not watched)."""
    shell.events.register("pre_run_cell", _before_cell)
    shell.events.register("post_run_cell", _after_cell)
