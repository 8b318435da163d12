"""The typed settings of a config's entries that jobs and plugins read: a system's (`SystemSpec`),
its install's (`Install`), an embedding model's (`ModelDef`), a dataset's as its format's
`per_commit` hook reads it (`DatasetEntry`); an arm's knobs as a job gets them parsed
(`KnobSpec`), and all an evaluation runs with, typed (`JobSpec`).

Each is read here, once, out of the entry as validated (`crmatrix.config.resolve`) or out of the
job parameters that carry it (a job's parameters stay the plain values they were, byte for byte:
they are its cache key and its run's record), and is immutable: nothing outside
`crmatrix.config` reads an entry's keys (`tests/test_config.py` holds it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from crmatrix import CrmatrixError
from crmatrix.config.entries import Install, _fields
from crmatrix.engine.knobs import ArmKnobs
from crmatrix.frozen import freeze, thaw
from crmatrix.jsontypes import JsonType
from crmatrix.systems import templates
from crmatrix.systems.guard import DEFAULT_BUDGET_S, DEFAULT_TIMEOUT_S
from crmatrix.systems.registry import TYPES, system_class


@dataclass(frozen=True)
class SystemSpec:
    """A system's settings, as its type's class methods and its jobs read them: its `type` (the
    class, `cls`, resolved once), the `methods` it runs (a job's; none for an index job), its
    type's `options`, its query `timeout_s` and evaluation `budget_s`, and its `install`."""

    type: str
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    methods: tuple[str, ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S
    budget_s: float = DEFAULT_BUDGET_S
    install: Install | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "options", freeze(self.options))
        object.__setattr__(self, "methods", tuple(self.methods))

    @classmethod
    def from_conf(cls, conf: Mapping, where: str = "system") -> SystemSpec:
        """The settings of a system's entry as validated, or of a job's parameters that carry
        them (`Plan.job_conf`, `ExternalSystem.index_conf`: their project files and models are
        the keys' part, which the job reads as files)."""
        given = {k: v for k, v in conf.items() if k not in ("arms", "datasets", "files", "models")}
        out = _fields(cls, given, where)
        if out.get("install") is not None:
            out["install"] = Install.from_conf(out["install"], f"{where}.install")
        return cls(**out)

    @cached_property
    def cls(self) -> type:
        """Its type's class (`crmatrix.systems.registry.System` subclass)."""
        return system_class(self.type)


def check_system(name: str, conf: Mapping) -> dict:
    """The system's entry with its options and methods filled in, its type resolved and its
    options checked (resolution calls this after the schema); `conf` is left as it is."""
    cls = TYPES.get(conf["type"], f"systems.{name}.type")
    conf = {**conf, "options": dict(conf.get("options", {}))}
    try:
        cls.check_options(conf["options"])
    except CrmatrixError as e:
        raise CrmatrixError(f"systems.{name}.options.{e}") from None
    if "install" in conf:
        if not cls.installable():
            raise CrmatrixError(f"systems.{name}.install: only command and mcp systems run from an environment "
                                f"of their own (type {conf['type']} runs in crmatrix's)")
    elif templates.uses(conf["options"], "bin"):
        raise CrmatrixError(f"systems.{name}.options: uses {{bin}}, but the system installs nothing "
                            "(expected install: {pip: NAME==VERSION} or {git: URL, commit: SHA})")
    supported = (*cls.methods_for(conf["options"]), *cls.optional_methods(conf["options"]))
    conf.setdefault("methods", list(cls.methods_for(conf["options"])))
    unknown = [m for m in conf["methods"] if m not in supported]
    if unknown:
        raise CrmatrixError(f"systems.{name}.methods: {', '.join(unknown)} not supported by {conf['type']} "
                            f"(expected some of: {', '.join(supported)})")
    return conf


@dataclass(frozen=True)
class KnobSpec(JsonType):
    """An arm's knobs as the config layer parsed them (`crmatrix.engine.knobs.read`, once per arm:
    each knob's value and a note per clamped one), as a job's parameters carry them. The job
    settles them on its corpus's language (`ArmKnobs.knobs`), never reading the arm's variables
    again, so a knob is parsed once from the config to the engine (`fusion.fuse` included)."""

    values: dict[str, Any]
    notes: tuple[str, ...]

    @classmethod
    def of(cls, knobs: ArmKnobs) -> KnobSpec:
        return cls(thaw(knobs.values), tuple(knobs.notes))

    def arm_knobs(self, env: Mapping[str, str]) -> ArmKnobs:
        """The arm's knobs, with its variables (`env`, in the one spelling the plan gave the job)."""
        return ArmKnobs(dict(env), dict(self.values), tuple(self.notes))


@dataclass(frozen=True)
class JobSpec:
    """What one evaluation runs with, read back from its parameters (`crmatrix.config.plan.Plan.cell`):
    the system's settings (`system_conf`, whose type names its class) and the arm's knobs as the
    config layer parsed them (`knobs`, with its variables `env`; None for a cell made without a
    plan, whose system reads `env` itself)."""

    system: SystemSpec
    knobs: ArmKnobs | None

    @classmethod
    def of(cls, system_conf: Mapping, env: Mapping[str, str], knobs: Mapping | None, where: str) -> JobSpec:
        """The spec of a job's parameters: its system's settings, the arm's variables and knobs."""
        return cls(SystemSpec.from_conf(system_conf, where),
                   None if knobs is None else KnobSpec.from_json(knobs, f"{where}: knobs").arm_knobs(env))
