"""``skills``: Python packages with instructions (a folder holding SKILL.md and ``__init__.py``).

::

    skills.list()                        # name, description, source and folder of every skill
    pdf = skills.load("pdf-tables")      # imports it as prime_skills.pdf_tables and prints its SKILL.md
    await skills.create("release-notes", "draft release notes from git log, as I did above")

Skills are found by the host in ``.prime/skills/``, ``~/.prime/agent/skills/`` and installed
extension packages. ``skills.create`` asks the model to package a workflow of this session as a
new skill; the host validates it (it must import cleanly and have a description) before writing.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from typing import Any

from . import host_call

PACKAGE = "prime_skills"
LIST_REQUEST = "skills.list"
LOAD_REQUEST = "skills.load"
CREATE_REQUEST = "skills.create"


class SkillError(RuntimeError):
    """No such skill, or it could not be imported or created; the message says what to do."""


def _check(reply: dict[str, Any], what: str) -> dict[str, Any]:
    if reply.get("status") != "ok":
        raise SkillError(f"{what}: {reply.get('error', 'the host refused without a reason')}")
    return reply


def _package() -> types.ModuleType:
    package = sys.modules.get(PACKAGE)
    if package is None:
        package = types.ModuleType(PACKAGE, "Skills loaded with skills.load(name), one module each.")
        package.__path__ = []
        sys.modules[PACKAGE] = package
    return package


def import_skill(folder: str, module: str) -> types.ModuleType:
    """Import the package in ``folder`` as ``prime_skills.<module>`` (again, when it was loaded before)."""
    init = os.path.join(folder, "__init__.py")
    full = f"{PACKAGE}.{module}"
    package = _package()
    for name in [key for key in sys.modules if key == full or key.startswith(full + ".")]:
        del sys.modules[name]
    spec = importlib.util.spec_from_file_location(full, init, submodule_search_locations=[folder])
    if spec is None or spec.loader is None:
        raise SkillError(f"cannot import the skill package at {folder}")
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[full] = loaded
    try:
        spec.loader.exec_module(loaded)
    except BaseException:
        del sys.modules[full]
        raise
    setattr(package, module, loaded)
    return loaded


class Skills:
    """The ``skills`` handle in the kernel namespace."""

    def list(self) -> list[dict[str, Any]]:  # noqa: A003 - the handle's own verb
        """Every skill: ``name``, ``description``, ``source`` (project, user, package ...), ``dir``."""
        reply = _check(host_call.request_sync(LIST_REQUEST, {}, "skills.list()"), "skills.list()")
        return list(reply.get("skills", []))

    def load(self, name: str, quiet: bool = False) -> types.ModuleType | None:
        """Import skill ``name`` and print its SKILL.md (unless ``quiet``); returns the module (None for instructions only)."""
        if not isinstance(name, str) or not name:
            raise TypeError("skills.load(name): name must be a skill name such as 'pdf-tables'")
        reply = _check(host_call.request_sync(LOAD_REQUEST, {"name": name}, "skills.load()"), f"skills.load({name!r})")
        if not quiet:
            print(reply.get("skill_md", ""))
        if not reply.get("has_package"):
            return None
        try:
            return import_skill(str(reply["dir"]), str(reply["module"]))
        except SkillError:
            raise
        except Exception as error:
            raise SkillError(f"skills.load({name!r}): importing {reply['dir']} failed: {type(error).__name__}: {error}") from error

    async def create(self, name: str, request: str | None = None, scope: str = "user") -> str:
        """Package a workflow of this session as the new skill ``name``; ``request`` says what it should do.

        ``scope``: "user" (``~/.prime/agent/skills``, every project) or "project" (``.prime/skills``).
        Returns the host's report; nothing is written when the draft does not validate.
        """
        payload: dict[str, Any] = {"name": name, "scope": scope}
        if request is not None:
            payload["request"] = request
        reply = _check(await host_call.request(CREATE_REQUEST, payload, "skills.create()"), f"skills.create({name!r})")
        return str(reply.get("report", ""))

    def __repr__(self) -> str:
        return '<skills: skills.list(), skills.load("name"), await skills.create("name", "what it should do")>'


skills = Skills()


def install(namespace: dict[str, Any] | None = None) -> None:
    """Put ``skills`` in ``namespace`` (default: IPython's)."""
    namespace = host_call.user_namespace(namespace)
    namespace["skills"] = skills


if __name__ == "__main__":
    # `python -m prime_agent_runtime.skills <folder> <module>`: the import check of a new skill.
    import_skill(sys.argv[1], sys.argv[2])
    print("imported")
