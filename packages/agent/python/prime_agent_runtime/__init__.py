"""Kernel-side runtime of Prime Agent.

The host puts this package on the kernel's PYTHONPATH and runs ``install()`` once the kernel is
ready, which defines the names the system prompt promises in the user namespace:

- ``edit``: ``await edit(path, old, new)`` replaces exactly one occurrence of ``old``.
- ``asyncio``: imported, since top-level ``await`` is how host calls are made.
- ``compact``: ``await compact.run(instructions)`` asks for a compaction at the next turn boundary.
- ``rlm``: ``await rlm(task, name=..., model=..., thinking=...)`` starts a sub-agent (see ``rlm.py``).
- ``agent_message``: ``await agent_message.send(text, receiver_role=...)`` writes to the family.
- ``goal``: ``goal.get()``, ``goal.create(objective)``, ``await goal.complete(summary)``.

Inside IPython it also tells the host which files each cell wrote (``written_files``).
"""

from .edit import EditError, edit
from .namespace import install

__all__ = ["EditError", "edit", "install"]
