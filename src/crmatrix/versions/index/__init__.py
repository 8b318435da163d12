"""The builtin engine's index of a versioned symbol store (`crmatrix.versions.store`) under
one set of index-time knobs and one model, and each commit's engine from it, built without
rebuilding anything per commit.

Everything the engine computes of a symbol, apart from where it lies, depends on its content
alone: its embedding text, its BM25 tokens, the lowercased fields the lexical ranker matches,
the words 2e covers. So the index computes each once per distinct content, and a commit's
engine (`VersionedIndex.engine`) gathers them along the commit's occurrences:

- vectors: one per distinct embedding text, through the embedding cache (a text is embedded
  once ever: an index of a store grown by a commit embeds only that commit's new texts),
  gathered into the commit's (symbols x dim) matrix — the very matrix a plain index of the
  commit holds, so cosines are the same bits;
- BM25: term counts per content (`crmatrix.versions.index.termcounts`), scored with the commit's own
  N, document frequencies and average length — bitwise the plain index's scores;
- lexical: the lowercased name, signature, qualified name and path of each content as
  string columns (`crmatrix.versions.index.columns`), gathered into the commit's blobs in one pass
  each; its lowercased name as an id among the distinct ones, so the commit's symbols by name
  are one sort; whether its kind is a function's or a type's;
- 2e: each content's words as postings, a commit's coverage gathered from them;
- ties: each content's path and name as ranks in string order, so the (path, start_line,
  name) order of a commit's symbols is one `np.lexsort`.

A commit's engine returns exactly the hits a plain `Engine` over `store.symbols_of(commit)`
with a plain index returns (tests/test_versioned.py checks every method under several arms).

Whole files as documents (`crmatrix.engine.files`) are versioned the same way (`build_files`,
`VersionedFiles`): each distinct (path, blob) tokenized and embedded once, per commit the
documents it holds; `VersionedFiles.view(commit)` is the `FileDocs` a plain build of the
commit's files gives, for an engine's `files`.

The vectors are optional: built without a model (a system whose methods rank by none,
`crmatrix.engine.methods.VECTOR_METHODS`), an index holds no `texts.jsonl`, `vectors.npy`,
`content_text.npy` or `doc_text.npy` and its meta no model, and its every other part is the
bytes a build with vectors writes; opened without a model it gives engines without vectors,
and one opened as what it is not (vectors or none) is refused.

Both are built again when a commit is added, and both grow from the previous build of the
same code, model and knobs (`base`, kept by `crmatrix.versions.bases`): the contents or files it holds
take its parts — vectors, counts, columns, postings — gathered (`crmatrix.versions.grown`), and only the
others are tokenized and embedded. The arrays are those a build without it writes.

On disk: `meta.json` (the store's hash, the model, the index-time knobs, counts, what was
embedded and taken from the base), `contents.keys.npy` (the store's content keys: what the
next build matches its contents by), `texts.jsonl` (each distinct embedding text and its
sha256), `vectors.npy` (float32, one row per text), `content_text.npy` (int32: each content's
text row), `bm25/`, `sparse/` (postings), `lexical/` (string columns; `kind.npy`, int8: 1 a
function's kind, 2 a type's; `names.json`, the distinct lowercased names, and `name_id.npy`)
and `ties/` (`path.npy`, `name.npy`: int32 ranks among `paths.json` and `names.json`, the
distinct ones sorted), and `crmatrix-checksums.json`. A file index: `meta.json` (each
commit's run [start, end) of `occurrences.npy`, the model, counts), `docs.jsonl` (per document
its path, blob, last line and embedding text's sha256), `occurrences.npy` (int32 document ids,
commits in sha order, each commit's in path order), `doc_text.npy`, `texts.jsonl`,
`vectors.npy`, `bm25/`, `crmatrix-checksums.json`.

One module per part: `symbols` (the symbol index and a commit's engine), `files` (the file
index and a commit's documents) and `base` (what both share: the bases' key, the parts taken
from a base, the embedding texts). Every public name is importable from here.
"""

from crmatrix.versions.index.base import FILE_INDEX, SYMBOL_INDEX, build_key, code_key
from crmatrix.versions.index.files import FILES_FORMAT, VersionedFiles, build_files
from crmatrix.versions.index.symbols import FORMAT, KEYS, CommitNames, CommitSparse, VersionedIndex, build, ranks

__all__ = ["FILES_FORMAT", "FILE_INDEX", "FORMAT", "KEYS", "SYMBOL_INDEX", "CommitNames", "CommitSparse",
           "VersionedFiles", "VersionedIndex", "build", "build_files", "build_key", "code_key", "ranks"]
