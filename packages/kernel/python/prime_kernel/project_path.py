"""The project folder is on ``sys.path`` for the user's code, never ahead of what is installed.

``python -m`` (and ``-c``) put the current directory first on ``sys.path``, so a repository holding
``zmq.py`` would run it in place of the real module while the kernel starts. The kernel is started
from a script in our own folder instead (``prime_kernel_launch.py``), IPython is told not to add the
current directory, and once startup is done ``add_project_folder`` adds it (as ``''``, so it follows
``%cd``) at the end of ``sys.path``: a cell's ``import mymodule`` finds the project's file, and a
module the kernel imports later (``dill`` on a state save, IPython's lazy imports) is always the
installed one. A standard-library module missing from this build (``_lzma``, ``readline``,
``_tkinter``) and an optional module the kernel's own packages try are never taken from the
project either, though nothing installed has that name (``_ProjectFolderFinder``).

Unlike plain IPython, which puts the current directory before site-packages, a project file named
like an installed module does not replace it: that is exactly how a repository would take over.
"""

from __future__ import annotations

import os
import sys
from typing import Any

# Optional modules the kernel's own packages try to import; when none is installed, a project file
# must not stand in. Some are tried late, from a cell that never named them (asttokens tries
# `astroid` on the first traceback).
# Read from the optional imports of ipykernel 7, IPython 9, jupyter_client, traitlets, asttokens,
# jedi and dill; the GUI toolkits and the debugger's are left out, reached only by naming them.
_RUNTIME_OPTIONAL = frozenset(
    {
        "appnope",
        "argcomplete",
        "astroid",
        "black",
        "colorama",
        "curio",
        "docrepr",
        "jedi",
        "msgpack",
        "numpydoc",
        "orjson",
        "parso",
        "pygments",
        "storemagic",
        "trio",
        "yapf",
    }
)

# Our own packages: on PYTHONPATH ahead of the project, and never taken from it if missing.
_OURS = frozenset({"prime_kernel", "prime_kernel_launch", "prime_agent_runtime", "prime_skills"})


def _never_from_project(fullname: str) -> bool:
    top = fullname.partition(".")[0]
    if top in _RUNTIME_OPTIONAL or top in _OURS:
        return True
    # A standard module missing from this build (`_lzma`, `readline`) has no stand-in either; but
    # `test`, the interpreter's own test suite (rarely installed), is a common project package.
    return top in sys.stdlib_module_names and top != "test"


class _ProjectFolderFinder:
    """The finder of a ``sys.path`` entry that is the current directory: it finds the user's
    modules there, but never one named like a standard-library, runtime or one of our modules."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def find_spec(self, fullname: str, target: Any = None) -> Any:
        if _never_from_project(fullname):
            return None
        return self._inner.find_spec(fullname, target)

    def invalidate_caches(self) -> None:
        self._inner.invalidate_caches()

    def iter_modules(self, prefix: str = "") -> Any:
        # `pkgutil.iter_modules` (IPython's `import` completion) lists the folder as before.
        import pkgutil

        return pkgutil.iter_importer_modules(self._inner, prefix)


def _project_folder_hook(path: str) -> _ProjectFolderFinder:
    """``sys.path_hooks`` entry: wraps the finder of the current directory (``''`` arrives here
    as its absolute path); any other entry is left to the next hook."""
    if not _is_cwd(path):
        raise ImportError("not the current directory")
    for hook in sys.path_hooks:
        if hook is _project_folder_hook:
            continue
        try:
            return _ProjectFolderFinder(hook(path))
        except ImportError:
            continue
    raise ImportError(f"no finder for {path}")


def add_project_folder() -> None:
    """Adds the current directory for the user's code: last on ``sys.path``, guarded as above."""
    if _project_folder_hook not in sys.path_hooks:
        sys.path_hooks.insert(0, _project_folder_hook)
    # A finder cached for the folder before the hook existed would bypass it.
    for key in [key for key in sys.path_importer_cache if _is_cwd(key)]:
        del sys.path_importer_cache[key]
    if "" in sys.path:
        sys.path.remove("")
    sys.path.append("")


def _is_cwd(path: str) -> bool:
    try:
        return path in ("", ".") or os.path.samefile(path, os.getcwd())
    except (OSError, TypeError):
        return False
