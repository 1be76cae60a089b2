"""Define the names promised by the system prompt in the kernel's user namespace."""

import asyncio
from typing import Any

from .compact import compact
from .edit import edit

# Handles injected by the host; a later state snapshot must never save these (they are re-injected).
INJECTED_NAMES = ("edit", "asyncio", "compact", "prime_context")


def install(namespace: dict[str, Any] | None = None) -> None:
    """Inject the runtime names into ``namespace`` (default: the running IPython user namespace)."""
    if namespace is None:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None:
            raise RuntimeError("install() needs a namespace when not running inside IPython")
        namespace = shell.user_ns
    namespace["edit"] = edit
    namespace["asyncio"] = asyncio
    namespace["compact"] = compact
