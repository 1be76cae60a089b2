"""``rlm.harness``: the continual harness from the kernel.

Four kinds of entry (``prompt_note``, ``memory``, ``procedure``, ``subagent``), each with
``create_<kind>(name, text, global_=False)``, ``update_<kind>(name, text)``, ``delete_<kind>(name)``,
``get_<kind>(name)`` (the full text; counts a use) and ``list_<kind>s()`` (``list_memories()`` too).
Entries live in the session's store (``<session folder>/harness/harness.json``) unless
``global_=True`` puts them in the agent home's (``harness/harness.json``), shared by every session.

The stores are the same JSON files the host reads: each change is a read-modify-write under a
lock directory (``harness.json.lock``, which the host takes too), written atomically (temporary
file, then rename) with user-only permissions. The host sees a change at its next model call.
"""

from __future__ import annotations

import errno
import json
import os
import re
import sys
import time
import uuid
import warnings
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any, Iterator

KINDS = ("prompt_note", "memory", "procedure", "subagent")
# A kind's name before it was renamed, as older stores hold it (the host reads it the same way).
# Skills are the Python packages of ``skills.load``; the harness's text procedures are not called that.
_LEGACY_KINDS = {"skill": "procedure"}
BASE_SYSTEM_PROMPT = "base_system_prompt"
NAME_CHARS = 64
TEXT_CHARS = 20_000
SUMMARY_CHARS = 180
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
# C0 controls and DEL, except tab, line feed and carriage return (the host refuses the same).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_STALE_LOCK_S = 10.0
_LOCK_WAIT_S = 5.0

_dirs: dict[str, str | None] = {"local": None, "global": None}


class HarnessError(ValueError):
    """A harness request that cannot be done; the message says why and what to do."""


class HarnessWarning(UserWarning):
    """A store that could not be read while the other one could: what was readable is still returned."""


def _warn(message: str) -> None:
    """Warn at the first caller outside this module (the cell), so the warning names the model's line."""
    frame = sys._getframe(1)
    level = 2
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back
        level += 1
    warnings.warn(message, HarnessWarning, stacklevel=level)


def configure(local_dir: str, global_dir: str) -> None:
    """Set the two store folders (the host does this in every kernel it starts)."""
    _dirs["local"] = local_dir
    _dirs["global"] = global_dir


def _now() -> str:
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _store_path(scope: str) -> str:
    folder = _dirs.get(scope)
    if not folder:
        raise HarnessError("rlm.harness needs a Prime Agent session; this kernel was not started by one.")
    return os.path.join(folder, "harness.json")


@contextmanager
def _locked(path: str) -> Iterator[None]:
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    lock = path + ".lock"
    deadline = time.monotonic() + _LOCK_WAIT_S
    while True:
        try:
            os.mkdir(lock, 0o700)
            break
        except FileExistsError:
            try:
                age = time.time() - os.stat(lock).st_mtime
            except FileNotFoundError:
                continue
            if age > _STALE_LOCK_S and _break_stale_lock(lock):
                continue
            if time.monotonic() > deadline:
                raise HarnessError(
                    f"{lock} has been held for more than {_LOCK_WAIT_S:g} s; if no prime-agent is writing the harness, remove that folder."
                ) from None
            time.sleep(0.01)
    try:
        yield
    finally:
        _unlock(lock)


def _age(path: str) -> float:
    try:
        return time.time() - os.stat(path).st_mtime
    except FileNotFoundError:
        return 0.0


def _break_stale_lock(lock: str) -> bool:
    """Remove a lock left by a dead process under ``<lock>.break``, as the host does (False: another is at it)."""
    breaker = lock + ".break"
    try:
        os.mkdir(breaker, 0o700)
    except FileExistsError:
        if _age(breaker) > _STALE_LOCK_S:
            _unlock(breaker)
        return False
    try:
        if _age(lock) > _STALE_LOCK_S:
            _unlock(lock)
    finally:
        _unlock(breaker)
    return True


def _unlock(lock: str) -> None:
    try:
        os.rmdir(lock)
    except OSError as error:
        if error.errno != errno.ENOENT:
            raise


def _read(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except FileNotFoundError:
        return {"version": 1, "entries": []}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise HarnessError(f"{path} is not valid JSON ({error}); fix it by hand or move it aside.") from None
    if not isinstance(data, dict) or data.get("version") != 1 or not isinstance(data.get("entries"), list):
        raise HarnessError(f"{path} is not a harness store (version 1 with an \"entries\" list); fix it or move it aside.")
    data["entries"] = [_entry(entry, path) for entry in data["entries"]]
    return data


def _entry(entry: Any, path: str) -> dict[str, Any]:
    """An entry as stored; one written by hand without times or counts reads as never written or used."""
    if isinstance(entry, dict) and isinstance(entry.get("kind"), str):
        entry["kind"] = _LEGACY_KINDS.get(entry["kind"], entry["kind"])
    if (
        not isinstance(entry, dict)
        or entry.get("kind") not in KINDS
        or not isinstance(entry.get("name"), str)
        or not isinstance(entry.get("text"), str)
    ):
        raise HarnessError(f"{path} holds an entry that is not {{kind, name, text, ...}}; fix it or move it aside.")
    uses = entry.get("uses")
    # A file edited by hand (or by an older version) may hold control characters; they never
    # reach a listing or the system prompt (the host drops the same ones).
    fields = {
        "kind": entry["kind"],
        "name": _CONTROL.sub("", entry["name"]),
        "text": _CONTROL.sub("", entry["text"]),
        "createdAt": entry["createdAt"] if isinstance(entry.get("createdAt"), str) else "",
        "updatedAt": entry["updatedAt"] if isinstance(entry.get("updatedAt"), str) else "",
        "uses": uses if isinstance(uses, int) and not isinstance(uses, bool) else 0,
        "lastUsedAt": entry["lastUsedAt"] if isinstance(entry.get("lastUsedAt"), str) else None,
    }
    return fields | {key: value for key, value in entry.items() if key not in fields}


def _write(path: str, data: dict[str, Any]) -> None:
    # The host writes the same bytes for the same entries (tab indent, entries in kind then name order).
    data["entries"].sort(key=lambda entry: (KINDS.index(entry["kind"]), entry["name"]))
    temp = f"{path}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(json.dumps(data, indent="\t", ensure_ascii=False) + "\n")
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise


def _check_name(name: Any) -> str:
    if name == BASE_SYSTEM_PROMPT:
        raise HarnessError(
            "the base system prompt is not part of the harness and cannot be edited; add a prompt note instead "
            "(it is shown after the base prompt)."
        )
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise HarnessError(
            f"{name!r} is not a valid entry name; use letters, digits, '.', '_' and '-', starting with a letter or digit."
        )
    if len(name) > NAME_CHARS:
        raise HarnessError(f"the name has {len(name)} characters; at most {NAME_CHARS} are allowed.")
    return name


def _check_text(text: Any) -> str:
    if not isinstance(text, str) or not text.strip():
        raise HarnessError("the text must be a non-empty string.")
    if len(text) > TEXT_CHARS:
        raise HarnessError(
            f"the text has {len(text)} characters; at most {TEXT_CHARS} are allowed. "
            "Keep the entry short and put details in a file it names."
        )
    control = _CONTROL.search(text)
    if control:
        raise HarnessError(
            f"the text holds a control character (U+{ord(control.group()):04X} at character {control.start() + 1}); "
            "remove it (tabs and line breaks are fine)."
        )
    return text


def _lister(kind: str) -> str:
    return "list_memories" if kind == "memory" else f"list_{kind}s"


def _summary(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SUMMARY_CHARS else flat[: SUMMARY_CHARS - 1] + "…"


def _find(kind: str, name: str, scope: str | None) -> str:
    """The scope holding the entry: ``scope`` when given, else local before global."""
    for where in (scope,) if scope else ("local", "global"):
        entries = _read(_store_path(where))["entries"]
        if any(entry["kind"] == kind and entry["name"] == name for entry in entries):
            return where
    where_text = f" in the {scope} store" if scope else ""
    raise HarnessError(f"no {kind} named {name!r}{where_text}; rlm.harness.{_lister(kind)}() lists them.")


def _exists(kind: str, name: str, scope: str | None) -> bool:
    """Whether a store holds that entry (``scope``, else either); a store that cannot be read holds none."""
    for where in (scope,) if scope else ("local", "global"):
        try:
            entries = _read(_store_path(where))["entries"]
        except HarnessError:
            continue
        if any(entry["kind"] == kind and entry["name"] == name for entry in entries):
            return True
    return False


def _scope_arg(global_: bool | None) -> str | None:
    if global_ is None:
        return None
    if not isinstance(global_, bool):
        raise HarnessError("global_ must be True, False or None.")
    return "global" if global_ else "local"


class Harness:
    """The ``rlm.harness`` handle: entries of the continual harness, read and written from cells."""

    def _change(self, kind: str, name: str, scope: str, change: Any) -> dict[str, Any] | None:
        path = _store_path(scope)
        with _locked(path):
            data = _read(path)
            entries = data["entries"]
            index = next((i for i, entry in enumerate(entries) if entry["kind"] == kind and entry["name"] == name), None)
            current = entries[index] if index is not None else None
            after = change(current)
            if after is None:
                entries.pop(index)
            elif index is None:
                entries.append(after)
            else:
                entries[index] = after
            _write(path, data)
            return after if after is not None else current

    def create(self, kind: str, name: str, text: str, global_: bool = False) -> dict[str, Any]:
        kind = self._kind(kind)
        name, text = _check_name(name), _check_text(text)
        if not isinstance(global_, bool):
            raise HarnessError("global_ must be True or False.")
        scope = "global" if global_ else "local"

        def change(current: dict[str, Any] | None) -> dict[str, Any]:
            if current is not None:
                raise HarnessError(f"a {kind} named {name!r} already exists ({scope}); use update_{kind}({name!r}, text).")
            at = _now()
            return {"kind": kind, "name": name, "text": text, "createdAt": at, "updatedAt": at, "uses": 0, "lastUsedAt": None}

        return self._public(self._change(kind, name, scope, change), scope)

    def update(self, kind: str, name: str, text: str, global_: bool | None = None) -> dict[str, Any]:
        kind = self._kind(kind)
        name, text = _check_name(name), _check_text(text)
        scope = _find(kind, name, _scope_arg(global_))
        return self._public(self._change(kind, name, scope, lambda current: self._present(current, kind, name, scope) | {"text": text, "updatedAt": _now()}), scope)

    def delete(self, kind: str, name: str, global_: bool | None = None) -> dict[str, Any]:
        kind = self._kind(kind)
        scope_arg = _scope_arg(global_)
        # An entry written by hand may have a name no create accepts: it can still be deleted.
        if not (isinstance(name, str) and name and _exists(kind, name, scope_arg)):
            name = _check_name(name)
        scope = _find(kind, name, scope_arg)

        def change(current: dict[str, Any] | None) -> None:
            self._present(current, kind, name, scope)
            return None

        return self._public(self._change(kind, name, scope, change), scope)

    def get(self, kind: str, name: str, global_: bool | None = None) -> str:
        """The entry's full text; counts a use (shown by ``/harness``)."""
        kind = self._kind(kind)
        name = _check_name(name)
        scope = _find(kind, name, _scope_arg(global_))
        entry = self._change(
            kind,
            name,
            scope,
            lambda current: self._present(current, kind, name, scope) | {"uses": current["uses"] + 1, "lastUsedAt": _now()},
        )
        return entry["text"] if entry else ""

    def list(self, kind: str | None = None) -> list[dict[str, Any]]:
        """Entries of both stores (local first): kind, name, scope, uses, last_used_at, updated_at, summary.

        A store that cannot be read is a ``HarnessWarning`` naming the file; the other store's
        entries are still listed.
        """
        kind = self._kind(kind) if kind is not None else None
        found = []
        for scope in ("local", "global"):
            path = _store_path(scope)
            try:
                entries = _read(path)["entries"]
            except HarnessError as error:
                _warn(f"the {scope} store could not be read, so its entries are left out: {error}")
                continue
            for entry in entries:
                if kind is None or entry["kind"] == kind:
                    found.append(self._public(entry, scope, full=False))
        return found

    def _kind(self, kind: Any) -> str:
        if kind == BASE_SYSTEM_PROMPT:
            _check_name(kind)
        if kind not in KINDS:
            raise HarnessError(f"{kind!r} is not a harness kind; use one of {', '.join(KINDS)}.")
        return kind

    @staticmethod
    def _present(current: dict[str, Any] | None, kind: str, name: str, scope: str) -> dict[str, Any]:
        if current is None:
            raise HarnessError(f"no {kind} named {name!r} in the {scope} store (it was removed meanwhile).")
        return dict(current)

    @staticmethod
    def _public(entry: dict[str, Any] | None, scope: str, full: bool = True) -> dict[str, Any]:
        if entry is None:
            return {}
        public = {
            "kind": entry["kind"],
            "name": entry["name"],
            "scope": scope,
            "uses": entry.get("uses", 0),
            "last_used_at": entry.get("lastUsedAt"),
            "updated_at": entry.get("updatedAt"),
        }
        if full:
            public["text"] = entry["text"]
        else:
            public["summary"] = _summary(entry["text"])
        return public

    def __getattr__(self, name: str) -> Any:
        # The kind was called "skill" before; say what it is called now instead of a bare AttributeError.
        if name.endswith("_skill") or name == "list_skills":
            renamed = name.replace("skills", "procedures").replace("_skill", "_procedure")
            raise AttributeError(
                f"rlm.harness.{name} is now rlm.harness.{renamed} (a harness procedure is a text entry; "
                "skills are the Python packages of skills.load(name))."
            )
        raise AttributeError(f"rlm.harness has no attribute {name!r}; repr(rlm.harness) lists what it has.")

    def __repr__(self) -> str:
        return (
            "<rlm.harness: create_<kind>(name, text, global_=False), update_<kind>(name, text), delete_<kind>(name), "
            "get_<kind>(name) (full text), list_<kind>s(); kinds: prompt_note, memory, procedure, subagent>"
        )


def _define(kind: str) -> None:
    def create(self: Harness, name: str, text: str, global_: bool = False) -> dict[str, Any]:
        return self.create(kind, name, text, global_)

    def update(self: Harness, name: str, text: str, global_: bool | None = None) -> dict[str, Any]:
        return self.update(kind, name, text, global_)

    def delete(self: Harness, name: str, global_: bool | None = None) -> dict[str, Any]:
        return self.delete(kind, name, global_)

    def get(self: Harness, name: str, global_: bool | None = None) -> str:
        return self.get(kind, name, global_)

    def listing(self: Harness) -> list[dict[str, Any]]:
        return self.list(kind)

    create.__doc__ = f"Create a {kind} in this session's store (global_=True: the store every session shares)."
    update.__doc__ = f"Replace the text of a {kind} (the local one first, else the global one; global_ picks)."
    delete.__doc__ = f"Delete a {kind} (the local one first, else the global one; global_ picks)."
    get.__doc__ = f"The full text of a {kind}; counts a use."
    listing.__doc__ = f"Every {kind}: name, scope, uses, last_used_at, updated_at, summary (the first {SUMMARY_CHARS} characters)."
    for prefix, function in (("create", create), ("update", update), ("delete", delete), ("get", get)):
        function.__name__ = f"{prefix}_{kind}"
        setattr(Harness, function.__name__, function)
    listing.__name__ = f"list_{kind}s"
    setattr(Harness, listing.__name__, listing)
    if kind == "memory":
        setattr(Harness, "list_memories", listing)


for _kind in KINDS:
    _define(_kind)

harness = Harness()
