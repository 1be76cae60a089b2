"""Define the names promised by the system prompt in the kernel's user namespace."""

import asyncio
from typing import Any

from . import written_files
from .agent_message import agent_message
from .compact import compact
from .edit import edit
from .goal import goal
from .heartbeat import rlm_heartbeat
from .rlm import rlm


def install(namespace: dict[str, Any] | None = None) -> None:
    """Inject the runtime names into ``namespace`` (default: the running IPython user namespace).

    The host never saves these with the kernel state (its ``INJECTED_HANDLES`` lists them), since
    every kernel gets them again. Inside IPython, the files each cell writes are reported to the host as well.
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
    namespace["rlm"] = rlm
    namespace["agent_message"] = agent_message
    namespace["goal"] = goal
    namespace["rlm_heartbeat"] = rlm_heartbeat
    if shell is not None:
        written_files.watch(shell)
