"""Define the names promised by the system prompt in the kernel's user namespace."""

import asyncio
from typing import Any

from . import written_files
from .compact import compact
from .edit import edit

# Handles injected by the runtime; a state snapshot never saves these (they are injected again).
INJECTED_NAMES = ("edit", "asyncio", "compact")


def install(namespace: dict[str, Any] | None = None) -> None:
    """Inject the runtime names into ``namespace`` (default: the running IPython user namespace).

    Inside IPython, the files each cell writes are reported to the host as well.
    """
    shell = None
    if namespace is None:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None:
            raise RuntimeError("install() needs a namespace when not running inside IPython")
        namespace = shell.user_ns
    namespace["edit"] = edit
    namespace["asyncio"] = asyncio
    namespace["compact"] = compact
    if shell is not None:
        written_files.watch(shell)
