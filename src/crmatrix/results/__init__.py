"""Results as types: a run (`run`), a cell's statistics (`cell`), the phase matrix (`row`,
`pool`, `matrix`) and the systems compared (`versus`), each a frozen dataclass with one
`to_json` and one `from_json` (`crmatrix.jsontypes`); a file's JSON is its type's, byte for
byte. Types only: what computes them is `crmatrix.evaluation` and `crmatrix.analysis`, so a
chart that reads the matrix runs none of its statistics' code."""
