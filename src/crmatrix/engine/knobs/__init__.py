"""An arm's CODELENS_ and CRMATRIX_ variables as the builtin engine's knobs.

`table` holds every knob once; `kinds` how each kind of value is read; `resolve` turns an
arm's variables into `Knobs`, one spelling, or index fields; `docs` writes the table as a page.
"""

from crmatrix.engine.knobs.docs import markdown
from crmatrix.engine.knobs.kinds import KnobError
from crmatrix.engine.knobs.resolve import ArmKnobs, Knobs, canonical, index_spec, read, resolve, settle, spell
from crmatrix.engine.knobs.table import GATING, INDEX, MODEL_VAR, QUERY, TOKENIZER, Knob

__all__ = ["GATING", "INDEX", "MODEL_VAR", "QUERY", "TOKENIZER", "ArmKnobs", "Knob", "KnobError", "Knobs", "canonical",
           "index_spec", "markdown", "read", "resolve", "settle", "spell"]
