"""An arm's knob variables read once (`read` → `ArmKnobs`), settled on a corpus's language
(`settle`) into the engine's `Knobs`, and the two forms the pipeline hands on: the variables
in one spelling (`ArmKnobs.env`) and what an index is built from (`ArmKnobs.index_spec`).

Knob values travel as fields (field -> value, `ArmKnobs.values`): an index job gets them
already parsed, and completes them with `settle` once the corpus's language is known.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from crmatrix import did_you_mean
from crmatrix.engine.knobs import table
from crmatrix.engine.knobs.kinds import KnobError
from crmatrix.engine.knobs.table import INDEX


class Knobs:
    """One arm's knob values, resolved: an attribute per knob of `table.KNOBS` (named by its
    field; unset ones at their default) and `notes`, one line per clamped value. Immutable,
    compared by value."""

    __slots__ = ("_values", "notes")

    def __init__(self, notes: Iterable[str] = (), **values: Any):
        known = table.by_field()
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise TypeError(f"Knobs: no knob {unknown[0]!r} (knobs: {', '.join(known)})")
        object.__setattr__(self, "_values", {f: values.get(f, k.default) for f, k in known.items()})
        object.__setattr__(self, "notes", tuple(notes))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # _values itself, were it unset: no endless recursion
            raise AttributeError(name)
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"Knobs has no knob {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Knobs are immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Knobs) and (self._values, self.notes) == (other._values, other.notes)

    def __hash__(self) -> int:
        return hash((tuple(self._values.items()), self.notes))

    def __reduce__(self):  # copy and pickle, as the frozen dataclass this replaces allowed
        return _knobs, (self.notes, self._values)

    def __repr__(self) -> str:
        return f"Knobs({', '.join(f'{f}={v!r}' for f, v in self._values.items())}, notes={self.notes!r})"

    def index_fields(self) -> dict[str, Any]:
        """What an index is built from: the settings that change a symbol's embedding text, and
        those of BM25's tokenizer that differ from the defaults (`table.index_fields`)."""
        return table.index_fields(self._values)

    def tokenizer_fields(self) -> dict[str, Any]:
        """The settings of BM25's tokenizer that differ from the defaults (none: today's tokenizer)."""
        return table.tokenizer_fields(self._values)

    def to_dict(self) -> dict[str, Any]:
        return {**self._values, "notes": list(self.notes)}


def _knobs(notes: tuple[str, ...], values: dict[str, Any]) -> Knobs:
    return Knobs(notes, **values)


@dataclass(frozen=True)
class ArmKnobs:
    """An arm's variables read once (`read`): `env` with each knob in its one spelling (what
    jobs get: "true" and "1" are one value, so respelling a knob re-runs nothing), `values`
    the knobs it sets (field -> parsed, clamped value, in table order) and `notes`, one line
    per clamped value. What the pipeline asks of an arm comes from here, without reading its
    variables again."""

    env: dict[str, str]
    values: dict[str, Any]
    notes: tuple[str, ...]

    def knobs(self, dominant_language: str | None) -> Knobs:
        """The arm's knobs on a corpus whose dominant language is given (`settle`)."""
        return settle(self.values, dominant_language, self.notes)

    def index_spec(self, language: str | None) -> dict[str, Any]:
        """What the builtin's index of a corpus is built from under the arm, as fields: the
        index-time knobs resolved on the corpus's `language` — or, while they wait for its
        dominant language (auto gating left to decide a knob of the index, no language known),
        auto gating on and every index-time knob it leaves alone at its value, set or not, with
        the gated ones the arm sets; the index job `settle`s the rest. Either way BM25's
        tokenizer knobs follow, those that differ from their defaults (`table.tokenizer_fields`).

        Arms with equal specs embed the corpus alike, so they share its index; spelling,
        defaults written out or left unset, and query-time knobs do not show (an arm of
        query-time knobs alone shares the index of an arm that only turns auto gating on). A
        waiting spec lacks a gated field every resolved one holds, so the two never coincide.
        """
        values = self.values
        waits = (language is None and values.get(table.AUTO.field, table.AUTO.default)
                 and table.AUTO_LANG.field not in values
                 and any(k.gate is not None and k.field not in values for k in table.KNOBS if k.phase == INDEX))
        if waits:
            return {table.AUTO.field: True, **{k.field: values.get(k.field, k.default) for k in table.KNOBS
                                               if k.phase == INDEX and (k.gate is None or k.field in values)},
                    **table.tokenizer_fields(values)}
        return settle(values, language).index_fields()


def read(env: Mapping[str, str]) -> ArmKnobs:
    """An arm's variables read, each knob once: its one spelling (parsed but not clamped, so
    the job still notes a clamped value), its value (parsed, clamped) and the notes. Variables
    outside the knobs' name space are not ours and left as given; a bad value raises here."""
    given = _ours(env)
    spelled, values, notes = dict(env), {}, []
    for knob in table.KNOBS:
        if knob.var in given:
            raw = given[knob.var]
            spelled[knob.var] = knob.kind.spell(knob.var, raw)
            values[knob.field], note = knob.kind.parse(knob.var, raw)
            if note:
                notes.append(note)
    return ArmKnobs(dict(sorted(spelled.items())), values, tuple(notes))


def spell(var: str, raw: str) -> str:
    """One knob value in its one spelling (a sweep's axis value, say)."""
    return canonical({var: raw})[var]


def settle(values: Mapping[str, Any], dominant_language: str | None, notes: Iterable[str] = ()) -> Knobs:
    """The knobs of explicit field `values` on a corpus whose dominant language is given: a
    gated knob left unset follows auto gating, every other one its default."""
    known = table.by_field()
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise KnobError(f"unknown knob {unknown[0]!r}; known: {', '.join(known)}")
    language = values.get(table.AUTO_LANG.field)
    if language is None and dominant_language is not None:
        language = dominant_language.lower()
    auto = values.get(table.AUTO.field, table.AUTO.default)
    out = {k.field: values[k.field] if k.field in values
           else (auto and language in k.gate.languages) if k.gate is not None
           else k.default
           for k in table.KNOBS}
    out[table.AUTO_LANG.field] = language
    return Knobs(notes, **out)


def resolve(env: Mapping[str, str], dominant_language: str | None) -> Knobs:
    """The knobs an arm's `env` sets on a corpus whose dominant language is given."""
    return read(env).knobs(dominant_language)


def index_spec(env: Mapping[str, str], language: str | None) -> dict[str, Any]:
    """`ArmKnobs.index_spec` of `env`."""
    return read(env).index_spec(language)


def canonical(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with each knob in one spelling: on/off as "1"/"0", numbers without padding,
    language tags and choices lower-cased; other variables as given (`ArmKnobs.env`)."""
    return read(env).env


def _ours(env: Mapping[str, str]) -> dict[str, str]:
    """The knob variables of `env`; an unknown one in the knobs' name space is an error."""
    given = {k: v for k, v in env.items() if table.ours(k)}
    known = sorted(table.by_var())
    unknown = sorted(set(given) - set(known))
    if unknown:
        hint = did_you_mean(unknown[0], known, " (did you mean {}?)")
        raise KnobError(f"unknown variable {unknown[0]}{hint}; known: {', '.join(known)}")
    return given
