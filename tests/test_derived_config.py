"""A derived dataset in the matrix config: scored on one docs-withheld view of its corpus,
sampled by max_queries; its config errors name the key."""

import pytest

from crmatrix import CrmatrixError, config
from crmatrix.pipeline import slices


def matrix_config(**datasets) -> dict:
    return {"corpora": {"c": {"path": "src", "language": "python"}, "docs": {"ds1000": {"file": "d.jsonl"}}},
            "datasets": {"hand": {"file": "d.json", "corpus": "c"}, **datasets},
            "arms": {"baseline": {}}}


def config_error(cfg: dict) -> str:
    with pytest.raises(CrmatrixError) as e:
        config.from_dict(cfg)
    return str(e.value)


def test_config_scores_derived_datasets_on_one_view_of_their_corpus():
    m = config.from_dict(matrix_config(**{"c-derived": {"format": "derived", "corpus": "c"},
                                           "c-small": {"format": "derived", "corpus": "c", "max_queries": 20,
                                                       "seed": 3, "split": "small_dev"}}))
    assert sorted(m.corpora) == ["c", "c~nodocs", "docs"]
    assert m.corpora["c~nodocs"].conf == {"nodocs": "c", "language": "python"}
    assert m.datasets["c-derived"].conf == {"format": "derived", "corpus": "c~nodocs", "max_queries": 300,
                                            "file": "results/datasets/c-derived.jsonl"}
    assert m.datasets["c-small"].source == "c" and m.datasets["hand"].source == "c"
    assert m.datasets["c-small"].sample == {"max_queries": 20, "seed": 3}
    assert m.datasets["c-derived"].sample == {"max_queries": 300, "seed": 0}
    assert m.datasets["hand"].sample is None
    assert m.datasets["c-small"].split == {"split": "small_dev", "seed": 3}
    # the view is no slice of its own: the corpus's slice holds the datasets scored on it
    s = slices.slices(m)
    assert "corpus_c~nodocs" not in s
    assert sorted({d for d, _, _ in s["corpus_c"]["cells"]}) == ["c-derived", "c-small", "hand"]


@pytest.mark.parametrize(("dataset", "message"), [
    ({"format": "derived", "corpus": "c", "max_queries": 0},
     "config: datasets.x.max_queries: expected a number >= 1, got an integer 0"),
    ({"format": "derived", "corpus": "c", "max_queries": -5},
     "config: datasets.x.max_queries: expected a number >= 1, got an integer -5"),
    ({"format": "derived", "corpus": "c", "max_queries": "300"},
     "config: datasets.x.max_queries: expected integer, got a string '300'"),
    ({"format": "derived", "corpus": "c", "max_queries": 2.5},
     "config: datasets.x.max_queries: expected integer, got a number 2.5"),
    ({"format": "derived", "corpus": "c", "file": "x.json"},
     "config: datasets.x.file: a derived dataset reads no file (its queries come from the leading docs of corpus 'c')"),
    ({"format": "derived", "corpus": "c", "split": "structural"},
     "config: datasets.x.split: structural swaps the gold of a dataset file's rows; a derived dataset has none "
     "(dev, test, small_dev or small_test split it)"),
    ({"format": "derived", "corpus": "docs"},
     "config: datasets.x.corpus: corpus 'docs' is a documents corpus (ds1000), no source the symbol extractor "
     "parses: it has no leading docs to derive queries from"),
    ({"file": "x.json", "corpus": "c", "max_queries": 10},
     "config: datasets.x.max_queries: samples only a derived dataset (format: derived), not format 'codelens'"),
    ({"corpus": "c"}, "config: datasets.x: 'file' is a required property"),
])
def test_config_errors_of_derived_datasets_name_the_key(dataset, message):
    assert config_error(matrix_config(x=dataset)) == message


def test_a_corpus_name_with_the_view_separator_is_refused():
    cfg = matrix_config()
    cfg["corpora"]["a~b"] = {"path": "x"}
    assert config_error(cfg) == ("config: corpora.a~b: '~' is kept for the views crmatrix makes of a corpus "
                                 "(NAME~nodocs); rename the corpus")
