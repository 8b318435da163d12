"""Query datasets: a registry of formats, one module each, every one yielding validated tasks.

A task is `{task_id, query, query_type, gold, corpus, stratum}`; validation happens at load
time against the corpus as indexed, so a bad row stops the run before any search is made.
A format may also drop rows it cannot use (a public benchmark's citation that names no file
of the pinned tree): each drop is counted with its reason, never silent.

Adding a format is one module here with a `@register("name", **facts)` loader (named in
`_builtin_formats` of `registry.py`, which imports the formats before the first lookup; the
facts are `registry.Format`'s), or, from another package, an entry point in the group
`crmatrix.datasets` naming its loader or a `Format`. A loader is
`(path, corpus, manifest, symbols) -> Loaded | list[Task]`.

Gold comes in kinds, each with its relevance rule (`is_relevant`) and unit of ranking:
- `symbol` (codelens): exact symbol name, path ending with the file suffix;
- `calls` (callgraph): one of the edge ends;
- `needle` (repoqa): a corpus function AST-equivalent to the needle, found at load time;
- `docs` (ds1000): a corpus document with the gold id or fuzzily equal content, found at load time;
- `file_set` (swe-qa): the gold files; ranked by file, a symbol hit counting for its file.
"""
