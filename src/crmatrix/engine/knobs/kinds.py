"""The kinds of knob: how a variable's value is written, parsed, spelled one way, and described.

Where CodeLens quietly falls back to a default (an unparseable number, a misspelt bool), a
kind raises: a silent fallback would make an arm measure something other than what it says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from crmatrix import CrmatrixError

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
_WHOLE = re.compile(r"[0-9]+")
_DECIMAL = re.compile(r"[0-9]*\.?[0-9]+|[0-9]+\.")


class KnobError(CrmatrixError):
    """An arm's CODELENS_ or CRMATRIX_ variable that is unknown or has a value of the wrong form."""


class Kind:
    """`read` gives the value as the variable states it (or raises); `parse` the knob's value
    with a note when it was clamped; `spell` the one spelling of the stated value."""

    def read(self, var: str, raw: str) -> Any:
        raise NotImplementedError

    def parse(self, var: str, raw: str) -> tuple[Any, str | None]:
        return self.read(var, raw), None

    def spell(self, var: str, raw: str) -> str:
        return str(self.read(var, raw))

    def values(self) -> str:
        """What the variable accepts, for the docs table."""
        raise NotImplementedError

    def show(self, value: Any) -> str:
        """A knob value as the variable would state it, for the docs table."""
        return str(value)


class Flag(Kind):
    def read(self, var: str, raw: str) -> bool:
        value = raw.strip().lower()
        if value in _TRUE:
            return True
        if value in _FALSE:
            return False
        raise KnobError(f"{var}={raw!r}: expected one of {'/'.join(_TRUE)} (on) or {'/'.join(_FALSE)} (off)")

    def spell(self, var: str, raw: str) -> str:
        return "1" if self.read(var, raw) else "0"

    def values(self) -> str:
        return "on/off"

    def show(self, value: bool) -> str:
        return "on" if value else "off"


@dataclass(frozen=True)
class Whole(Kind):
    """A whole number, clamped into low..high with a note. With `per`, the knob holds the
    number divided by it, a float (a percentage as a share; a score)."""

    low: int
    high: int
    per: int | None = None
    unit: str = ""  # for the docs: what the number counts

    def read(self, var: str, raw: str) -> int:
        if not _WHOLE.fullmatch(raw.strip()):
            raise KnobError(f"{var}={raw!r}: expected a whole number ({self.low}..{self.high})")
        return int(raw.strip())

    def parse(self, var: str, raw: str) -> tuple[int | float, str | None]:
        value = self.read(var, raw)
        clamped = min(max(value, self.low), self.high)
        note = f"{var}={value} clamped to {clamped}" if clamped != value else None
        return (clamped if self.per is None else clamped / self.per), note

    def values(self) -> str:
        return f"{self.low}..{self.high}{' ' + self.unit if self.unit else ''} (clamped)"

    def show(self, value: int | float) -> str:
        return f"{value if self.per is None else value * self.per:g}"


class Share(Kind):
    """A weight or decay from 0 to 1; outside it the value means nothing, so it is an error, not clamped."""

    def read(self, var: str, raw: str) -> float:
        if not _DECIMAL.fullmatch(raw.strip()) or float(raw) > 1:
            raise KnobError(f"{var}={raw!r}: expected a number from 0 to 1, such as 0.5")
        return float(raw)

    def values(self) -> str:
        return "0..1"

    def show(self, value: float) -> str:
        return f"{value:g}"


@dataclass(frozen=True)
class Choice(Kind):
    choices: tuple[str, ...]

    def read(self, var: str, raw: str) -> str:
        value = raw.strip().lower()
        if value not in self.choices:
            raise KnobError(f"{var}={raw!r}: expected one of {', '.join(self.choices)}")
        return value

    def values(self) -> str:
        return ", ".join(f"`{c}`" for c in self.choices)

    def show(self, value: str) -> str:
        return f"`{value}`"


class Language(Kind):
    """A language tag, lower-cased (a name or an extension: rust, rs, typescript, ts)."""

    def read(self, var: str, raw: str) -> str:
        tag = raw.strip().lower()
        if not tag:
            raise KnobError(f"{var}={raw!r}: expected a language tag such as rust, python or typescript")
        return tag

    def values(self) -> str:
        return "a language tag"

    def show(self, value: str | None) -> str:
        return "unset" if value is None else value
