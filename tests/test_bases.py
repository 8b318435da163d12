"""Builds kept to grow the next from: picked by what they share, written whole, retired when
superseded unless another build reads them, and never a reason for a build to fail."""

import logging
import os

from crmatrix.versions import bases


def built(tmp_path, name, rows):
    d = tmp_path / "results" / name
    (d / "sub").mkdir(parents=True)
    (d / "rows.txt").write_text("\n".join(rows))
    (d / "sub" / "meta.json").write_text("{}")
    return d


def shared_with(rows):
    return lambda d: len(set(rows) & set((d / "rows.txt").read_text().split("\n")))


def picked(cache, kind, key, rows, shared):
    with bases.pick(cache, kind, key, rows, shared) as found:
        return found


def test_the_kept_build_sharing_most_rows_is_picked_and_its_files_are_links(tmp_path):
    cache = tmp_path / "cache"
    assert picked(cache, "stores", "k1", 2, shared_with(["a"])) is None  # nothing kept yet
    small, large = built(tmp_path, "small", ["a", "b"]), built(tmp_path, "large", ["a", "b", "c", "d"])
    kept = bases.keep(small, cache, "stores", "k1", "n-small")
    assert kept == cache / "bases" / "stores" / "k1" / "n-small"
    assert os.path.samefile(kept / "rows.txt", small / "rows.txt") and (kept / "sub" / "meta.json").is_file()
    bases.keep(large, cache, "stores", "k1", "n-large")
    bases.keep(large, cache, "stores", "k2", "n-other-key")
    assert picked(cache, "stores", "k1", 3, shared_with(["c", "d", "e"])).name == "n-large"
    assert picked(cache, "stores", "k1", 2, shared_with(["a", "b"])).name == "n-large"  # a tie: the first by name
    assert picked(cache, "stores", "k1", 2, shared_with(["x"])) is None
    assert picked(cache, "indexes", "k1", 2, shared_with(["a"])) is None  # another kind
    # one sharing less than a tenth of the build's rows is not worth reading (a chance empty file)
    assert picked(cache, "stores", "k1", 41, shared_with(["a", "b", "c", "d"])) is None
    assert picked(cache, "stores", "k1", 40, shared_with(["a", "b", "c", "d"])).name == "n-large"
    # kept again under the same name: the one kept stands
    assert bases.keep(built(tmp_path, "again", ["z"]), cache, "stores", "k1", "n-small") == kept
    assert (kept / "rows.txt").read_text() == "a\nb"


def test_an_unreadable_base_is_skipped_and_a_superseded_one_retired(tmp_path, caplog):
    cache = tmp_path / "cache"
    kept = bases.keep(built(tmp_path, "one", ["a"]), cache, "stores", "k", "n1")
    (cache / "bases" / "stores" / "k" / "n0").mkdir()  # no rows.txt
    (cache / "bases" / "stores" / "k" / ".n2.abc.tmp").mkdir()  # being written
    with caplog.at_level(logging.WARNING):
        assert picked(cache, "stores", "k", 1, shared_with(["a"])) == kept
    assert "n0: not a build to grow from" in caplog.text and ".n2" not in caplog.text
    assert bases.retire(kept) is True
    assert sorted(p.name for p in (cache / "bases" / "stores" / "k").iterdir()) == [".n2.abc.tmp", "n0"]


def test_a_build_that_cannot_be_kept_warns_and_leaves_nothing(tmp_path, caplog, monkeypatch):
    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "link", refuse)
    monkeypatch.setattr(bases.shutil, "copy2", refuse)
    with caplog.at_level(logging.WARNING):
        assert bases.keep(built(tmp_path, "one", ["a"]), tmp_path / "cache", "stores", "k", "n1") is None
    assert "not kept to grow the next build from" in caplog.text
    assert [p.name for p in (tmp_path / "cache" / "bases" / "stores" / "k").iterdir()] == []


def test_a_base_another_build_reads_is_not_retired_under_it(tmp_path, caplog):
    """Two projects sharing a cache_dir: one build reads a base while another, superseding it,
    retires it. The base stays until no build holds it; the reader sees it whole throughout."""
    cache = tmp_path / "cache"
    kept = bases.keep(built(tmp_path, "one", ["a", "b"]), cache, "stores", "k", "n1")
    with bases.pick(cache, "stores", "k", 2, shared_with(["a"])) as found:
        assert found == kept
        with caplog.at_level(logging.INFO):
            assert bases.retire(kept) is False  # the other build's retire, while this one reads
        assert "in use by another build; left for `crmatrix cache evict`" in caplog.text
        assert (found / "rows.txt").read_text() == "a\nb"
    assert bases.retire(kept) is True
    assert not kept.exists() and bases.kept(cache) == []
    assert bases.retire(kept) is False  # gone already: nothing to do


def test_a_base_retired_while_the_lock_was_awaited_is_not_picked(tmp_path, monkeypatch):
    """A build scores the bases, then another removes the best before its shared lock is granted:
    the build takes the next best, here none (a cold build), rather than read a removed tree."""
    cache = tmp_path / "cache"
    kept = bases.keep(built(tmp_path, "one", ["a"]), cache, "stores", "k", "n1")
    flock = bases.fcntl.flock

    def retired_meanwhile(fd, op):
        flock(fd, op)
        if op == bases.fcntl.LOCK_SH:
            bases.atomic.remove_tree(kept)  # as a retire holding the exclusive lock would have

    monkeypatch.setattr(bases.fcntl, "flock", retired_meanwhile)
    assert picked(cache, "stores", "k", 1, shared_with(["a"])) is None


def test_a_base_retired_while_it_was_scored_is_skipped_without_a_warning(tmp_path, caplog):
    """Scoring holds no lock (every build of the kind scores every base, and a held one could not
    be retired): one retired meanwhile is read no further, and is no fault of the cache."""
    cache = tmp_path / "cache"
    bases.keep(built(tmp_path, "one", ["a"]), cache, "stores", "k", "n1")
    score = shared_with(["a"])

    def retired_meanwhile(d):
        assert bases.retire(d) is True  # no build holds it while it is scored
        return score(d)

    with caplog.at_level(logging.WARNING):
        assert picked(cache, "stores", "k", 1, retired_meanwhile) is None
    assert caplog.text == ""
