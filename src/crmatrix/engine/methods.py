"""The builtin engine's methods, apart from the engine itself: planning asks which methods need
an index without loading the engine's libraries."""

METHODS = ("lexical", "semantic", "hybrid", "bm25")
INDEX_METHODS = frozenset({"semantic", "hybrid"})  # the methods that need embedded symbols
# Whole files as documents (`crmatrix.engine.files`): each hit a file; an engine given its files ranks them.
FILE_METHODS = ("file-bm25", "file-semantic")
# SweRank's BM25 (`crmatrix.engine.engine.Engine.swerank_bm25_scores`): its corpus of functions and methods
# of the files SweRank's candidate rule keeps, scored with that corpus's own statistics; each hit a function.
FUNCTION_METHODS = ("swerank-bm25",)
# The methods that rank by the model's vectors (the symbols' or the files'): a system with none
# of them prepares no model and embeds nothing, and its repository index holds no vectors.
VECTOR_METHODS = INDEX_METHODS | {"file-semantic"}
