"""A corpus as a store of versions of a tree, and the machinery of a store of many.

A git, PyPI, npm or path corpus is a store of one version: its tree, its symbols, its index
(crmatrix.engine.index). A repository corpus (`repositories:`, from a swe-bench or history
dataset's rows) is a store of many, one per commit its tasks are at, and a task names its
version as `NAME@COMMIT` (`corpus_of`, `commit_of`). Every system is handed the version a task
is at the same way: `System.select(corpus)`, with the task's corpus; the builtin opens that
version's engine (`engines`), any other system is started on that version's tree (`commits`).

One module per part of a store of many, in the order the pipeline makes them:

- `repository` — the commits as rule fetch_repository lays them out (the bare repository, each
  commit's candidate files);
- `store` — their symbols, each distinct content once (rule extract_repository);
- `index` — the builtin's index of the store and of the distinct files (rule
  build_repository_index), a commit's engine gathered from it;
- `grown`, `bases` — a store or index grown from the previous build, kept in the cache;
- `engines` — the builtin's engine of the version a task names, of a store of one or many;
- `trees`, `commits`, `treecaches` — each commit's files as a directory tree, any other system's
  index per distinct tree and the system started on each, and those caches' `crmatrix cache`.
"""

SEP = "@"  # between a repository corpus's name and a commit, in the corpus a task names


def corpus_of(name: str, commit: str) -> str:
    """The version of repository corpus `name` at `commit`, as a task names its corpus."""
    return f"{name}{SEP}{commit}"


def commit_of(corpus: str) -> str:
    """The commit a task's corpus names (`corpus_of`)."""
    return corpus.rpartition(SEP)[2]
