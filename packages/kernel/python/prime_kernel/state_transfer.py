"""State snapshots of a kernel that does not share the host's filesystem, moved over the kernel channel.

A kernel on a Jupyter Server (or Enterprise Gateway, which has no Contents API) may run on another
machine, so the snapshot's files travel as host requests (``host_request``: comm messages on the
WebSocket) to and from the host's snapshot folder, which stays the only snapshot of record.

A save pickles into a mirror folder private to this kernel (``state.save``), asks the host which of
the variable files it lacks (they are named by their SHA-256, so an unchanged value never travels
again), sends those, then the manifest; the host installs the manifest last, so a kernel lost
mid-transfer leaves the host's previous snapshot whole. A restore pulls the manifest and the
variable files the mirror lacks, then restores from the mirror (``state.restore`` checks every file
against its checksum). Files travel in chunks of CHUNK_BYTES: the server refuses a message from the
host past ~10 MB. The host checks every name it is sent; this side is not trusted.

The calls are made by the host (``saveKernelState``/``restoreKernelState``), with ``transfer`` the
host request type it answers for the length of that one call.
"""

from __future__ import annotations

import atexit
import base64
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from typing import Any

from . import state
from .host_request import host_request

# 4 MiB once in base64: well under the ~10 MB a Jupyter Server accepts in one message from its client.
CHUNK_BYTES = 3 * 1024 * 1024
_VAR_FILE = re.compile(r"^[0-9a-f]{64}\.pkl$")
_own_root: str | None = None


class StateTransferError(RuntimeError):
    """The host refused a step of the transfer (its reply says why)."""


def mirror_dir() -> str:
    """The kernel's private copy of the snapshot: in the runtime folder the host's bootstrap made
    (removed with the kernel), else in a folder of its own removed at exit."""
    global _own_root
    root = os.environ.get("PRIME_KERNEL_RUNTIME_DIR")
    if not root:
        if _own_root is None:
            _own_root = tempfile.mkdtemp(prefix="prime-kernel-state-")
            atexit.register(shutil.rmtree, _own_root, True)
        root = _own_root
    return os.path.join(root, "state-mirror")


async def _request(transfer: str, op: str, **fields: Any) -> dict[str, Any]:
    reply = await host_request(transfer, {**fields, "op": op})
    if reply.get("status") != "ok":
        raise StateTransferError(f"the host refused the state {op}: {reply.get('error')}")
    return reply


async def _send(transfer: str, name: str, path: str) -> None:
    """Send one file of the mirror as `name` (its path in the snapshot folder), chunk by chunk."""
    size = os.path.getsize(path)
    offset = 0
    with open(path, "rb") as handle:
        while True:
            data = handle.read(CHUNK_BYTES)
            final = offset + len(data) >= size
            encoded = base64.b64encode(data).decode("ascii")
            await _request(transfer, "put", name=name, offset=offset, data=encoded, final=final)
            offset += len(data)
            if final:
                return


async def _send_all(transfer: str, files: list[tuple[str, str]]) -> None:
    """Send files (name in the snapshot folder, path in the mirror): small ones several to a request
    (one round trip per file made 3,000 small variables take minutes), large ones chunk by chunk."""
    batch: list[dict[str, str]] = []
    batch_bytes = 0
    for name, path in files:
        size = os.path.getsize(path)
        if size > CHUNK_BYTES:
            await _send(transfer, name, path)
            continue
        if batch and batch_bytes + size > CHUNK_BYTES:
            await _request(transfer, "put", files=batch)
            batch, batch_bytes = [], 0
        with open(path, "rb") as handle:
            batch.append({"name": name, "data": base64.b64encode(handle.read()).decode("ascii")})
        batch_bytes += size
    if batch:
        await _request(transfer, "put", files=batch)


async def _fetch_all(transfer: str, names: list[str]) -> dict[str, bytes | None]:
    """Files of the host's snapshot folder (None for one it lacks): small ones several to a reply,
    large ones chunk by chunk."""
    found: dict[str, bytes | None] = {}
    pending = list(names)
    while pending:
        reply = await _request(transfer, "read", names=pending)
        for name, data in dict(reply.get("files", {})).items():
            found[str(name)] = None if data is None else base64.b64decode(str(data))
        for name in reply.get("large", []):
            found[str(name)] = await _fetch(transfer, str(name))
        left = [name for name in pending if name not in found]
        if len(left) == len(pending):
            raise StateTransferError("the host sent none of the files asked for")
        pending = left
    return found


async def _fetch(transfer: str, name: str) -> bytes | None:
    """One file of the host's snapshot folder, chunk by chunk; None when the host has none."""
    parts: list[bytes] = []
    offset = 0
    while True:
        reply = await _request(transfer, "read", name=name, offset=offset)
        if reply.get("missing"):
            return None
        data = base64.b64decode(str(reply.get("data", "")))
        parts.append(data)
        offset += len(data)
        if offset >= int(reply.get("size", 0)) or not data:
            return b"".join(parts)


async def save_to_host(
    transfer: str,
    exclude: list[str] | tuple[str, ...] = (),
    max_variable_bytes: int = state.MAX_VARIABLE_BYTES,
    max_total_bytes: int = state.MAX_TOTAL_BYTES,
) -> None:
    """Save the namespace into the mirror, then send the host what it lacks; the host answers the
    commit with its report (the host keeps the entries and prunes its own history)."""
    began = time.monotonic()
    mirror = mirror_dir()
    # No entry here: the mirror keeps only the latest state (files no manifest names go at once).
    report = state.save(mirror, exclude, max_variable_bytes=max_variable_bytes, max_total_bytes=max_total_bytes)
    files = sorted({str(variable["file"]) for variable in report["variables"]})
    missing = (await _request(transfer, "want", files=files)).get("missing", [])
    paths = [(f"{state.VARS}/{name}", os.path.join(mirror, state.VARS, os.path.basename(str(name)))) for name in missing]
    await _send_all(transfer, [*paths, (state.MANIFEST, os.path.join(mirror, state.MANIFEST))])
    await _request(transfer, "commit", written=len(missing), duration_ms=round((time.monotonic() - began) * 1000, 1))


async def restore_from_host(transfer: str, manifest_name: str) -> None:
    """Pull the manifest `manifest_name` and the variable files the mirror lacks, restore from the
    mirror, and send the host the report."""
    mirror = mirror_dir()
    vars_dir = os.path.join(mirror, state.VARS)
    state._private_dir(mirror)
    state._private_dir(vars_dir)
    manifest_path = os.path.join(mirror, state.MANIFEST)
    manifest = await _fetch(transfer, manifest_name)
    damaged: list[str] = []
    if manifest is None:
        if os.path.exists(manifest_path):
            os.unlink(manifest_path)
    else:
        state._write_atomically(manifest_path, manifest)
        try:
            names = {str(variable["file"]) for variable in json.loads(manifest).get("variables", [])}
        except Exception:  # noqa: BLE001 - state.restore reports the unreadable manifest
            names = set()
        wanted = sorted(name for name in names if _VAR_FILE.match(name) and not os.path.exists(os.path.join(vars_dir, name)))
        fetched = await _fetch_all(transfer, [f"{state.VARS}/{name}" for name in wanted])
        for name in wanted:
            data = fetched.get(f"{state.VARS}/{name}")
            if data is None:
                continue
            path = os.path.join(vars_dir, name)
            # A damaged file is kept for this restore only, so it reports the checksum as a local one does.
            if hashlib.sha256(data).hexdigest() != name.removesuffix(".pkl"):
                damaged.append(path)
            state._write_atomically(path, data)
    try:
        report = state.restore(mirror)
    finally:
        for path in damaged:
            os.unlink(path)
    await _request(transfer, "report", report=report, mirror=mirror)
