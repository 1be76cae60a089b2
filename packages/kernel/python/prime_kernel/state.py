"""Save the user namespace to a folder with dill, one file per variable, and restore it later.

One object that cannot be pickled loses only its own name. The folder holds ``manifest.json`` (the
latest save) and ``vars/<sha256>.pkl``; a variable file is named by its content, so an unchanged
value is not written again, and the manifest is replaced atomically last, so a crash mid-save
leaves the previous snapshot whole. Everything is private to the user (folders 0700, files 0600).

A save labelled with a session entry also keeps ``entries/<entry>.json``, the same manifest, so
the state as of any earlier point of the session can be restored (a branch, a fork). Manifests
share the variable files, so a cell that changes one small variable adds one small file and one
small manifest. Variable files no manifest names are removed at once while no entry manifest is
kept; once the history passes its bound (bytes of variable files, or number of entry manifests),
the oldest entry manifests go until it is back under half the bound, then the files none names.

Never saved: IPython's own names (output history ``_``, ``Out``, ``In``, ``_i*``, ``_oh``, ``_dh``,
``exit``, ``quit``, ``get_ipython``, dunder names, anything IPython put there itself), the names the
caller excludes, and modules, which are recorded by import name and imported again on restore.

Functions and classes defined in cells are pickled by value with dill. Other values go through the
C pickler when it can (fast; ``__main__`` classes by reference), else through dill with ``__main__``
classes by reference, else entirely by value. Definitions are restored first, so restored instances
belong to the restored class (``isinstance`` keeps working); an instance of a class defined again
since it was made comes back as an instance of the current definition. Functions are pickled without
``recurse``: their globals are then the live namespace after restore, as they were before (with
``recurse`` they would hold a stale copy of the globals they use).
"""

import hashlib
import importlib
import io
import json
import os
import pickle
import re
import tempfile
import time
import types
import warnings
from typing import Any

import dill

MANIFEST = "manifest.json"
VARS = "vars"
ENTRIES = "entries"
# What an entry manifest may be named by (a session entry id); anything else is refused.
_ENTRY_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_HISTORY_BYTES = 256 * 1024 * 1024
MAX_HISTORY_ENTRIES = 1000
FORMAT = 1
MAX_VARIABLE_BYTES = 16 * 1024 * 1024
MAX_TOTAL_BYTES = 256 * 1024 * 1024

_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython", "_ih", "_oh", "_dh"})
# `_`, `__`, `___`, `_i`, `_ii`, `_iii`, `_5`, `_i5`, and dunder names such as `__builtins__`.
_IPYTHON_PATTERN = re.compile(r"^(_+|_i{1,3}|_i?\d+|__.*__)$")


class _TooLarge(Exception):
    pass


class _CappedBuffer(io.BytesIO):
    """Stops a pickle as soon as it passes the cap, so a huge object never fills memory."""

    def __init__(self, cap: int) -> None:
        super().__init__()
        self.cap = cap

    def write(self, data: Any) -> int:  # type: ignore[override]
        if self.tell() + len(data) > self.cap:
            raise _TooLarge()
        return super().write(data)


def _user_namespace(namespace: dict[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The namespace and IPython's hidden names (empty outside IPython)."""
    if namespace is not None:
        return namespace, {}
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None:
        raise RuntimeError("prime_kernel.state needs a namespace when not running inside IPython")
    return shell.user_ns, shell.user_ns_hidden


def _is_definition(value: Any) -> bool:
    """A class or function defined in a cell: it must be pickled by value."""
    return isinstance(value, (type, types.FunctionType)) and getattr(value, "__module__", None) == "__main__"


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


def _pickle(value: Any, cap: int) -> bytes:
    """Pickle one value: plain data with the C pickler (fast, `__main__` classes by reference),
    else with dill keeping `__main__` classes by reference, else with dill entirely by value."""
    attempts = ["dill-by-value"] if _is_definition(value) else ["pickle", "dill-by-reference", "dill-by-value"]
    error: Exception | None = None
    for attempt in attempts:
        buffer = _CappedBuffer(cap)
        try:
            if attempt == "pickle":
                pickle.dump(value, buffer, protocol=pickle.HIGHEST_PROTOCOL)
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    dill.dump(value, buffer, byref=attempt == "dill-by-reference", recurse=False)
            return buffer.getvalue()
        except _TooLarge:
            raise
        except Exception as caught:  # noqa: BLE001 - any pickling failure makes the name unsaveable
            error = caught
    assert error is not None
    raise error


def _describe(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= 300 else text[:297] + "..."


def _private_dir(path: str) -> None:
    os.makedirs(path, mode=0o700, exist_ok=True)
    os.chmod(path, 0o700)


def _write_atomically(path: str, data: bytes, durable: bool = False) -> None:
    """Temp file then rename. `durable` also syncs to disk; variable files skip that (a sync per
    file made a 3,000-name save take seconds) since restore checks each file against its checksum."""
    fd, temp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def save(
    directory: str,
    exclude: list[str] | tuple[str, ...] = (),
    namespace: dict[str, Any] | None = None,
    max_variable_bytes: int = MAX_VARIABLE_BYTES,
    max_total_bytes: int = MAX_TOTAL_BYTES,
    entry: str | None = None,
    max_history_bytes: int = MAX_HISTORY_BYTES,
    max_history_entries: int = MAX_HISTORY_ENTRIES,
) -> dict[str, Any]:
    """Snapshot the namespace into `directory`; returns a report (the manifest plus `written`).
    With `entry`, the manifest is also kept as ``entries/<entry>.json``."""
    began = time.monotonic()
    if entry is not None and not _ENTRY_PATTERN.match(entry):
        raise ValueError(f"not a session entry id: {entry!r}")
    ns, hidden = _user_namespace(namespace)
    excluded = set(exclude)
    vars_dir = os.path.join(directory, VARS)
    _private_dir(directory)
    _private_dir(vars_dir)

    variables: list[dict[str, Any]] = []
    unsaveable: list[dict[str, str]] = []
    imports: dict[str, str] = {}
    total = 0
    written = 0
    for name, value in list(ns.items()):
        if name in excluded or name in _IPYTHON_NAMES or _IPYTHON_PATTERN.match(name):
            continue
        if name in hidden and hidden[name] is value:
            continue
        type_name = type(value).__name__
        if isinstance(value, types.ModuleType):
            imports[name] = value.__name__
            continue
        try:
            data = _pickle(value, max_variable_bytes)
        except _TooLarge:
            reason = f"larger than the {_mib(max_variable_bytes)} cap per variable"
            unsaveable.append({"name": name, "type": type_name, "reason": reason})
            continue
        except Exception as error:  # noqa: BLE001
            unsaveable.append({"name": name, "type": type_name, "reason": _describe(error)})
            continue
        if total + len(data) > max_total_bytes:
            reason = f"{_mib(len(data))} would pass the {_mib(max_total_bytes)} cap for the whole snapshot"
            unsaveable.append({"name": name, "type": type_name, "reason": reason})
            continue
        total += len(data)
        digest = hashlib.sha256(data).hexdigest()
        file_name = f"{digest}.pkl"
        path = os.path.join(vars_dir, file_name)
        if not os.path.exists(path):
            _write_atomically(path, data)
            written += 1
        variables.append(
            {
                "name": name,
                "file": file_name,
                "bytes": len(data),
                "type": type_name,
                "definition": _is_definition(value),
            }
        )

    manifest: dict[str, Any] = {
        "format": FORMAT,
        "saved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "total_bytes": total,
        "variables": variables,
        "imports": imports,
        "unsaveable": unsaveable,
    }
    if entry is not None:
        manifest["entry"] = entry
    data = json.dumps(manifest, indent=1).encode("utf-8")
    entries_dir = os.path.join(directory, ENTRIES)
    if entry is not None:
        _private_dir(entries_dir)
        _write_atomically(os.path.join(entries_dir, f"{entry}.json"), data, durable=True)
    _write_atomically(os.path.join(directory, MANIFEST), data, durable=True)
    # Only now may files no manifest names go (the old manifest needed them).
    pruned = _collect_garbage(directory, max_history_bytes, max_history_entries, keep_entry=entry)
    return {
        **manifest,
        "written": written,
        "pruned_entries": pruned,
        "duration_ms": round((time.monotonic() - began) * 1000, 1),
    }


def _manifest_files(path: str) -> set[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            return {str(item["file"]) for item in json.load(handle).get("variables", [])}
    except Exception:  # noqa: BLE001 - an unreadable manifest names nothing (its restore reports it)
        return set()


def _collect_garbage(directory: str, max_bytes: int, max_entries: int, keep_entry: str | None) -> list[str]:
    """Remove the variable files no manifest names: at once without entry manifests, else only once
    the history passes a bound, after dropping its oldest entry manifests. Returns the entries dropped."""
    vars_dir = os.path.join(directory, VARS)
    entries_dir = os.path.join(directory, ENTRIES)
    sizes = {item.name: item.stat().st_size for item in os.scandir(vars_dir) if item.is_file()}
    entries = []
    if os.path.isdir(entries_dir):
        entries = [item for item in os.scandir(entries_dir) if item.name.endswith(".json")]
    if entries and sum(sizes.values()) <= max_bytes and len(entries) <= max_entries:
        return []
    keep = _manifest_files(os.path.join(directory, MANIFEST))
    dropped: list[str] = []
    # Newest first: a manifest is kept while the files of those kept fit in half the bound.
    ordered = sorted(entries, key=lambda item: item.stat().st_mtime_ns, reverse=True)
    for index, item in enumerate(ordered):
        name = item.name.removesuffix(".json")
        files = _manifest_files(item.path)
        grown = keep | files
        fits = sum(sizes.get(file, 0) for file in grown) <= max_bytes // 2 and index < max(1, max_entries // 2)
        if fits or name == keep_entry:
            keep = grown
            continue
        for stale in (item.path, os.path.join(entries_dir, f"{name}.seal")):
            try:
                os.unlink(stale)
            except OSError:
                pass
        dropped.append(name)
    for name in sizes:
        if name not in keep:
            try:
                os.unlink(os.path.join(vars_dir, name))
            except OSError:
                pass
    return dropped


def restore(directory: str, namespace: dict[str, Any] | None = None, entry: str | None = None) -> dict[str, Any]:
    """Load a snapshot into the namespace: the latest save, or the one kept for `entry`. Never
    raises for a bad snapshot: it is reported."""
    ns, _hidden = _user_namespace(namespace)
    report: dict[str, Any] = {"restored": [], "imports": [], "failed": [], "unsaveable": []}
    if entry is not None and not _ENTRY_PATTERN.match(entry):
        report["corrupt"] = f"not a session entry id: {entry!r}"
        return report
    manifest_path = os.path.join(directory, MANIFEST)
    if entry is not None:
        manifest_path = os.path.join(directory, ENTRIES, f"{entry}.json")
    if not os.path.exists(manifest_path):
        report["missing"] = True
        return report
    try:
        with open(manifest_path, encoding="utf-8") as handle:
            manifest = json.load(handle)
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise ValueError(f"unknown manifest format {manifest.get('format') if isinstance(manifest, dict) else '?'}")
        variables = list(manifest.get("variables", []))
        imports = dict(manifest.get("imports", {}))
        report["unsaveable"] = list(manifest.get("unsaveable", []))
    except Exception as error:  # noqa: BLE001 - a broken manifest means an empty start, reported
        report["corrupt"] = f"{manifest_path}: {_describe(error)}"
        return report

    for name, module_name in imports.items():
        try:
            ns[name] = importlib.import_module(module_name)
            report["imports"].append(name)
        except Exception as error:  # noqa: BLE001
            report["failed"].append({"name": name, "reason": f"import {module_name} failed: {_describe(error)}"})

    # Cell-defined classes and functions first: other values refer to them by name.
    ordered = [v for v in variables if v.get("definition")] + [v for v in variables if not v.get("definition")]
    for entry in ordered:
        name = str(entry.get("name"))
        try:
            path = os.path.join(directory, VARS, os.path.basename(str(entry["file"])))
            with open(path, "rb") as handle:
                data = handle.read()
            if hashlib.sha256(data).hexdigest() != str(entry["file"]).removesuffix(".pkl"):
                raise ValueError("the file does not match its checksum (damaged snapshot)")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ns[name] = dill.loads(data)
            report["restored"].append(name)
        except Exception as error:  # noqa: BLE001 - one bad variable loses only its own name
            report["failed"].append({"name": name, "reason": _describe(error)})
    return report


def write_report(report: dict[str, Any], path: str) -> None:
    """Hand the report to the host in a new private file (stdout is capped; a report may be long)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(report, handle, separators=(",", ":"))
