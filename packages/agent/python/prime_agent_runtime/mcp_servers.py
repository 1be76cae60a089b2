"""MCP servers as Python modules: ``import mcp_servers.github as gh`` (or ``mcp.github``).

Every server configured in ``~/.prime/agent/mcp.json`` or ``.prime/mcp.json`` is a module whose
attributes are its tools::

    import mcp_servers.github as gh
    gh.tools()                                   # name, description and input schema of each tool
    help(gh)                                     # the same, as docstrings and signatures
    issues = await gh.search_issues(query="is:open label:bug")
    await gh.call("tool-with-dashes", {"arg": 1}, timeout=120)

The host is the MCP client: it starts a server on first use, restarts it once after a crash and
stops it with the session; ``await mcp.restart("github")`` starts one that is down again. A call
returns the tool's structured content as Python objects (dicts, lists), else its text; an image
is saved to a file and comes back as ``McpImage`` (``path``, ``mime_type``, ``size``; ``display()``
shows it), several parts as a list. Failures raise ``McpToolError`` (the tool or the server
refused: unknown tool, arguments not matching the schema), ``McpServerDown`` or ``McpTimeout``,
with the server's message. Print only what you need: a large result printed whole goes through
Prime Context like any other output.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import importlib.abc
import inspect
import json
import keyword
import os
import re
import secrets
import sys
import tempfile
import types
from typing import Any

from . import host_call

PACKAGE = "mcp_servers"
TOOLS_REQUEST = "mcp.tools"
CALL_REQUEST = "mcp.call"
RESTART_REQUEST = "mcp.restart"
#: Methods of a server module; a tool of the same name is reached with ``call(name)``.
MODULE_METHODS = ("tools", "call")


class McpError(RuntimeError):
    """A call to an MCP server failed; the message is the server's, with what to do next."""


class McpToolError(McpError):
    """The server refused or the tool failed: unknown tool, arguments not matching its schema, or its own error."""


class McpServerDown(McpError):
    """The server did not start, exited during the call, or cannot be reached."""


class McpTimeout(McpError, TimeoutError):
    """The tool did not answer in time; the call was cancelled."""


_FAILURES: dict[str, type[McpError]] = {
    "tool_error": McpToolError,
    "bad_request": McpToolError,
    "server_down": McpServerDown,
    "timeout": McpTimeout,
}


#: The suffix of a saved image by MIME type (the server's type is not trusted to name a file).
IMAGE_SUFFIXES = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "image/svg+xml": ".svg",
    "image/bmp": ".bmp",
}
#: Types IPython's frontends draw from base64 data.
DISPLAYED_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


class McpImage:
    """An image a tool returned, saved to a file: ``path``, ``mime_type``, ``size`` (bytes).

    ``display(image)`` (or the image as a cell's last line) shows it; ``open(image.path, "rb")`` reads it.
    """

    def __init__(self, path: str, mime_type: str, size: int) -> None:
        self.path = path
        self.mime_type = mime_type
        self.size = size

    def __repr__(self) -> str:
        return f"McpImage(path={self.path!r}, mime_type={self.mime_type!r}, size={self.size})"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle: dict[str, Any] = {"text/plain": repr(self)}
        if self.mime_type in DISPLAYED_TYPES:
            with contextlib.suppress(OSError):
                with open(self.path, "rb") as file:
                    bundle[self.mime_type] = base64.b64encode(file.read()).decode("ascii")
        return bundle


def _output_folder() -> str:
    """The session's output folder (the kernel's, where cut outputs go too), made 0700 if missing."""
    folder = os.environ.get("PRIME_KERNEL_OUTPUT_DIR") or os.path.join(tempfile.gettempdir(), "prime-agent-mcp")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


def _save_image(part: dict[str, Any], server: str, tool: str) -> McpImage:
    """Decode an image part into a new file (0600) named for the server and tool."""
    mime_type = str(part.get("mimeType") or "")
    try:
        data = base64.b64decode(str(part.get("data") or ""), validate=True)
    except (binascii.Error, ValueError):
        raise McpToolError(
            f"MCP server {server!r} tool {tool!r} returned an image whose data is not base64; the server sent a broken result"
        ) from None
    stem = re.sub(r"[^A-Za-z0-9_-]", "_", f"mcp-{server}-{tool}")[:80]
    path = os.path.join(_output_folder(), f"{stem}-{secrets.token_hex(4)}{IMAGE_SUFFIXES.get(mime_type, '.img')}")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    return McpImage(path, mime_type, len(data))


def _content_value(parts: list[Any], server: str, tool: str) -> Any:
    """A result of several parts: text as ``str``, an image as ``McpImage``, any other part as its dict; one image alone is the image."""
    values = [
        part.get("text", "") if part.get("type") == "text"
        else _save_image(part, server, tool) if part.get("type") == "image"
        else part
        for part in parts
        if isinstance(part, dict)
    ]
    if len(values) == 1 and isinstance(values[0], McpImage):
        return values[0]
    return values


def _check(reply: dict[str, Any], what: str) -> dict[str, Any]:
    if reply.get("status") != "ok":
        raise McpError(f"{what}: {reply.get('error', 'the host refused without a reason')}")
    failed = reply.get("failed")
    if isinstance(failed, dict):
        raise _FAILURES.get(str(failed.get("kind")), McpError)(str(failed.get("message", "no message")))
    return reply


class McpServerModule(types.ModuleType):
    """The module of one MCP server; its tools appear as attributes once listed (or when called)."""

    def __init__(self, server: dict[str, Any]) -> None:
        super().__init__(f"{PACKAGE}.{server['module']}")
        self.__server__ = server
        self.__tools__: list[dict[str, Any]] | None = None

    def _forget_tools(self) -> None:
        """After a restart the server may list other tools: they are asked for again."""
        for tool in self.__tools__ or []:
            self.__dict__.pop(tool["python_name"], None)
        self.__tools__ = None

    @property
    def __doc__(self) -> str:  # type: ignore[override]
        server = self.__server__
        head = f"MCP server {server['name']!r} ({server['transport']}: {server['target']})."
        try:
            tools = self.tools()
        except McpError as error:
            return f"{head}\n\nIts tools cannot be listed: {error}"
        lines = [head, "", f"{len(tools)} tools; call them with `await module.tool_name(arg=...)`:", ""]
        for tool in tools:
            summary = (tool.get("description") or "").strip().splitlines()
            lines.append(f"- {tool['python_name']}: {summary[0] if summary else '(no description)'}")
        return "\n".join(lines)

    def tools(self) -> list[dict[str, Any]]:
        """The server's tools: ``name``, ``python_name``, ``description``, ``input_schema`` (starts the server)."""
        if self.__tools__ is None:
            name = self.__server__["name"]
            try:
                reply = host_call.request_sync(TOOLS_REQUEST, {"server": name}, f"mcp_servers.{name}")
            except host_call.HostUnavailable as error:
                raise McpServerDown(str(error)) from None
            reply = _check(reply, f"MCP server {name!r}")
            self.__tools__ = list(reply.get("tools", []))
            for tool in self.__tools__:
                if tool["python_name"] not in MODULE_METHODS:
                    self.__dict__[tool["python_name"]] = _tool_function(self, tool)
        return [dict(tool) for tool in self.__tools__]

    async def call(self, tool: str, arguments: dict[str, Any] | None = None, timeout: float | None = None) -> Any:
        """Call ``tool`` (its MCP name or Python name) with ``arguments``; ``timeout`` in seconds overrides the config's."""
        name = self.__server__["name"]
        payload: dict[str, Any] = {"server": name, "tool": tool, "arguments": dict(arguments or {})}
        if timeout is not None:
            payload["timeout"] = float(timeout)
        try:
            reply = await host_call.request(CALL_REQUEST, payload, f"mcp_servers.{name}")
        except host_call.HostUnavailable as error:
            raise McpServerDown(str(error)) from None
        reply = _check(reply, f"MCP server {name!r} tool {tool!r}")
        if isinstance(reply.get("content"), list):
            return _content_value(reply["content"], name, tool)
        return reply.get("value")

    def __getattr__(self, attribute: str) -> Any:
        # Private names are what IPython, pydoc and pickling probe for; a tool named so is reached with call().
        if attribute.startswith("_"):
            raise AttributeError(attribute)
        module = self

        async def call(*positional: Any, **arguments: Any) -> Any:
            if positional:
                raise _positional_error(module, attribute, None)
            return await module.call(attribute, arguments)

        call.__name__ = call.__qualname__ = attribute
        call.__module__ = self.__name__
        return call

    def __dir__(self) -> list[str]:
        names = [*MODULE_METHODS]
        try:
            names += [tool["python_name"] for tool in self.tools()]
        except McpError:
            pass
        return sorted(set(names))

    def __repr__(self) -> str:
        server = self.__server__
        return f"<MCP server {server['name']!r} ({server['transport']}): help() or .tools() lists its tools>"


def _tool_function(module: McpServerModule, tool: dict[str, Any]) -> Any:
    """A real async function for ``tool``: its docstring is the description and input schema."""
    name = tool["name"]
    schema = tool.get("input_schema") or {}
    signature = _signature(schema)

    async def call(*positional: Any, **arguments: Any) -> Any:
        if positional:
            raise _positional_error(module, tool["python_name"], signature)
        return await module.call(name, arguments)

    call.__name__ = call.__qualname__ = tool["python_name"]
    call.__module__ = module.__name__
    description = (tool.get("description") or "").strip() or "(no description)"
    call.__doc__ = f"{description}\n\nMCP tool {name!r}. Input schema:\n{json.dumps(schema, indent=2)}"
    call.__signature__ = signature  # type: ignore[attr-defined]
    return call


def _positional_error(module: McpServerModule, attribute: str, signature: inspect.Signature | None) -> TypeError:
    """MCP arguments are named: a positional one has no name to send, so say how to call the tool."""
    head = f"{module.__name__}.{attribute} takes keyword arguments only, named as in its input schema"
    parameters = list(signature.parameters.values()) if signature else []
    if not parameters or parameters[0].kind is inspect.Parameter.VAR_KEYWORD:
        return TypeError(f"{head} (help() shows them)")
    return TypeError(f"{head}: {attribute}({', '.join(f'{parameter.name}=...' for parameter in parameters)})")


def _signature(schema: dict[str, Any]) -> inspect.Signature:
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    if not all(isinstance(key, str) and key.isidentifier() and not keyword.iskeyword(key) for key in properties):
        return inspect.Signature([inspect.Parameter("arguments", inspect.Parameter.VAR_KEYWORD)])
    ordered = sorted(properties, key=lambda key: key not in required)
    return inspect.Signature(
        [
            inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=inspect.Parameter.empty if key in required else None)
            for key in ordered
        ]
    )


class McpNamespace:
    """The ``mcp`` handle: ``mcp.github`` is ``mcp_servers.github`` (``mcp["my-server"]`` by config name); ``mcp.servers()`` lists them, ``await mcp.restart(name)`` starts one again."""

    def __init__(
        self,
        modules: dict[str, McpServerModule],
        config_files: list[str],
        problem: str | None = None,
        off: dict[str, str] | None = None,
    ) -> None:
        self._modules = modules
        self._files = config_files
        self._problem = problem
        self._off = off or {}

    def servers(self) -> list[dict[str, Any]]:
        """Configured servers: ``name``, ``module``, ``transport``, ``target``."""
        return [dict(module.__server__) for module in self._modules.values()]

    async def restart(self, name: str) -> str:
        """Stop the server ``name`` (config or module name) if it runs and start it now, also after a second crash; says its state.

        Raises ``McpServerDown`` with the reason when it does not start.
        """
        try:
            module = self.__getattr__(name)
        except AttributeError as error:
            raise McpError(str(error)) from None
        server = module.__server__["name"]
        try:
            reply = await host_call.request(RESTART_REQUEST, {"server": server}, f"mcp.restart({server!r})")
        except host_call.HostUnavailable as error:
            raise McpServerDown(str(error)) from None
        module._forget_tools()  # the restarted server may list other tools
        return str(_check(reply, f"MCP server {server!r}").get("message", ""))

    def __getattr__(self, name: str) -> McpServerModule:
        if name.startswith("_"):
            raise AttributeError(name)
        found = self._modules.get(name) or next((m for m in self._modules.values() if m.__server__["name"] == name), None)
        if found is None:
            raise AttributeError(self._off.get(name) or _unknown(name, self._modules, self._files, self._problem))
        return found

    def __getitem__(self, name: str) -> McpServerModule:
        try:
            return self.__getattr__(name)
        except AttributeError as error:
            raise KeyError(str(error)) from None

    def __dir__(self) -> list[str]:
        return sorted([*self._modules, "restart", "servers"])

    def __repr__(self) -> str:
        if self._problem:
            return f"<mcp: {self._problem}>"
        if not self._modules and self._off:
            return f"<mcp: no server runs ({', '.join(sorted(self._off))}); import one to see why>"
        if not self._modules:
            return f"<mcp: no MCP servers configured (add them to {' or '.join(self._files)})>"
        return f"<mcp: servers {', '.join(sorted(self._modules))}; `import mcp_servers.NAME as m`, then m.tools()>"


def _unknown(name: str, modules: dict[str, Any], files: list[str], problem: str | None = None) -> str:
    if problem:
        return f"no MCP server named {name!r}: {problem} Fix the file, then start a new session."
    known = ", ".join(sorted(modules)) or "none"
    return f"no MCP server named {name!r} (configured: {known}); servers are configured in {' or '.join(files)}"


class _UnknownServerFinder(importlib.abc.MetaPathFinder):
    """Makes ``import mcp_servers.nope`` fail with the configured names instead of a bare ModuleNotFoundError."""

    def __init__(
        self, modules: dict[str, McpServerModule], files: list[str], problem: str | None, off: dict[str, str]
    ) -> None:
        self.modules = modules
        self.files = files
        self.problem = problem
        self.off = off

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname.startswith(PACKAGE + "."):
            name = fullname[len(PACKAGE) + 1 :]
            message = self.off.get(name) or _unknown(name, self.modules, self.files, self.problem)
            raise ModuleNotFoundError(message, name=fullname)
        return None


def install(
    servers: list[dict[str, Any]],
    config_files: list[str],
    problem: str | None = None,
    namespace: dict[str, Any] | None = None,
    off: dict[str, str] | None = None,
) -> None:
    """Register ``mcp_servers`` and one module per server, and put ``mcp`` in ``namespace`` (default: IPython's).

    ``problem``: why there are no servers (a config file that does not parse), said by ``mcp`` and failed imports.
    ``off``: the configured servers that do not run (turned off, a bad entry, the project's and not approved), by module name: why, said by their import.
    """
    off = off or {}
    package = types.ModuleType(PACKAGE, "MCP servers configured for this session, one module each (see `mcp`).")
    package.__path__ = []  # a package, so `import mcp_servers.name` is looked up at all
    modules: dict[str, McpServerModule] = {}
    for server in servers:
        module = McpServerModule(server)
        modules[server["module"]] = module
        setattr(package, server["module"], module)
        sys.modules[module.__name__] = module
    sys.modules[PACKAGE] = package
    sys.meta_path[:] = [finder for finder in sys.meta_path if not isinstance(finder, _UnknownServerFinder)]
    sys.meta_path.append(_UnknownServerFinder(modules, config_files, problem, off))
    namespace = host_call.user_namespace(namespace)
    namespace["mcp"] = McpNamespace(modules, config_files, problem, off)
