"""DS-1000's gold doc titles mapped to the definitions they document (crmatrix.datasets.apidocs),
and the ds1000-library format built on it, over small trees laid out as the real sdists are
(numpy 1.26.4, pandas 1.5.3, matplotlib 3.8.4 under lib/, scikit-learn 1.4.0, scipy 1.12.0):
each expected definition below was checked by hand against those sdists."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from crmatrix import CrmatrixError
from crmatrix.datasets import registry, relevance
from crmatrix.datasets.apidocs import AMBIGUOUS, NO_DEFINITION, OTHER_LIBRARY, Library, Unresolved, dotted_name
from crmatrix.hits import Hit
from crmatrix.symbols.extract import extract_files

TREE = {
    # numpy: `from .core import *` re-exports fromnumeric's functions; C functions and ufuncs
    # (`sin`, `ndarray`) come from the extension module, with no Python definition.
    "numpy/__init__.py": """
        from . import core
        from .core import *
        from . import linalg, ma
        from .lib import *
    """,
    "numpy/core/__init__.py": """
        from . import multiarray
        from .multiarray import *
        from . import umath
        from .umath import *
        from . import fromnumeric
        from .fromnumeric import *
        from .numeric import *
    """,
    "numpy/core/multiarray.py": """
        from ._multiarray_umath import *
        from ._multiarray_umath import ndarray, empty, zeros

        def where(condition, x=None, y=None):
            return (condition,)
    """,
    "numpy/core/umath.py": "from ._multiarray_umath import sin, cos, maximum\n",
    "numpy/core/fromnumeric.py": """
        def argmax(a, axis=None):
            '''Returns the indices of the maximum values along an axis.'''

        def sum(a, axis=None):
            pass
    """,
    "numpy/core/numeric.py": """
        from .multiarray import zeros

        def ones(shape):
            return zeros(shape)
    """,
    "numpy/lib/__init__.py": "from .function_base import *\n",
    "numpy/lib/function_base.py": """
        __all__ = ['percentile']

        def percentile(a, q):
            pass
    """,
    "numpy/linalg/__init__.py": "from .linalg import *\n",
    "numpy/linalg/linalg.py": "def norm(x, ord=None):\n    pass\n",
    "numpy/ma/__init__.py": "from . import core\nfrom .core import *\n",
    "numpy/ma/core.py": "def masked_where(condition, a):\n    pass\n\ndef where(condition, x, y):\n    pass\n",
    # pandas: names bound through pandas.core.api; DataFrame's own methods (overloaded) and
    # NDFrame's inherited ones; Series.str an accessor attribute, not a definition.
    "pandas/__init__.py": """
        from pandas.core.api import DataFrame, Series, Index
        from pandas.core.reshape.api import concat
    """,
    "pandas/core/__init__.py": "",
    "pandas/core/api.py": """
        from pandas.core.frame import DataFrame
        from pandas.core.series import Series
        from pandas.core.indexes.api import Index
    """,
    "pandas/core/generic.py": """
        class NDFrame(PandasObject):
            def add_prefix(self, prefix):
                pass

            def where(self, cond):
                pass
    """,
    "pandas/core/frame.py": """
        from typing import overload
        from pandas.core.generic import NDFrame
        from pandas.core.arraylike import OpsMixin

        class DataFrame(NDFrame, OpsMixin):
            @overload
            def where(self, cond, inplace: bool = False):
                ...

            def where(self, cond, inplace=False):
                return super().where(cond)

            div = OpsMixin.truediv
    """,
    "pandas/core/arraylike.py": "class OpsMixin:\n    def truediv(self, other):\n        pass\n",
    "pandas/core/series.py": """
        from pandas.core import generic
        from pandas.core.accessor import CachedAccessor

        class Series(generic.NDFrame):
            str = CachedAccessor("str", object)
    """,
    "pandas/core/accessor.py": "class CachedAccessor:\n    pass\n",
    "pandas/core/indexes/__init__.py": "",
    "pandas/core/indexes/api.py": "from pandas.core.indexes.base import Index\n",
    "pandas/core/indexes/base.py": """
        from pandas.core.base import IndexOpsMixin

        class Index(IndexOpsMixin):
            def isin(self, values):
                pass
    """,
    "pandas/core/base.py": "class IndexOpsMixin:\n    def tolist(self):\n        pass\n",
    "pandas/core/reshape/__init__.py": "",
    "pandas/core/reshape/api.py": "from pandas.core.reshape.concat import concat\n",
    "pandas/core/reshape/concat.py": "def concat(objs):\n    pass\n",
    # matplotlib under lib/, mpl_toolkits a namespace package; pyplot's `figure` (function)
    # beside the `Figure` it imports; Axes methods on _AxesBase; nested BoxStyle.Circle.
    "lib/matplotlib/__init__.py": "",
    "lib/matplotlib/pyplot.py": """
        from matplotlib.figure import Figure, FigureBase
        from matplotlib.axes import Axes

        def figure(num=None):
            return Figure()

        def subplots(nrows=1):
            pass
    """,
    "lib/matplotlib/figure.py": """
        from matplotlib.artist import Artist

        class FigureBase(Artist):
            def add_axes(self, *args):
                pass

        class Figure(FigureBase):
            def savefig(self, fname):
                pass
    """,
    "lib/matplotlib/artist.py": "class Artist:\n    def set(self, **kwargs):\n        pass\n",
    "lib/matplotlib/axes/__init__.py": "from ._axes import *\nfrom ._axes import Axes\n",
    "lib/matplotlib/axes/_base.py": """
        import matplotlib.artist as martist

        class _AxesBase(martist.Artist):
            def grid(self, visible=None):
                pass

            set_xticks = _axis_method_wrapper("xaxis", "set_ticks")
    """,
    "lib/matplotlib/axes/_axes.py": """
        from matplotlib.axes._base import _AxesBase

        class Axes(_AxesBase):
            def plot(self, *args):
                pass
    """,
    "lib/matplotlib/patches.py": """
        class BoxStyle:
            class Circle:
                def __call__(self, x0, y0):
                    pass
    """,
    "lib/mpl_toolkits/axisartist/__init__.py": "",
    "lib/mpl_toolkits/axisartist/axis_artist.py": """
        class Ticks:
            def set_color(self, color):
                pass
    """,
    # scikit-learn: the estimators re-exported by each subpackage from a private module.
    "sklearn/__init__.py": "",
    "sklearn/svm/__init__.py": "from ._classes import SVR, LinearSVC\n",
    "sklearn/svm/_base.py": "class BaseLibSVM:\n    def fit(self, X, y):\n        pass\n",
    "sklearn/svm/_classes.py": """
        from ._base import BaseLibSVM

        class SVR(BaseLibSVM):
            pass

        class LinearSVC:
            def fit(self, X, y):
                pass
    """,
    "sklearn/preprocessing/__init__.py": "from ._data import StandardScaler, scale\n",
    "sklearn/preprocessing/_data.py": """
        def scale(X):
            pass

        class StandardScaler:
            def inverse_transform(self, X):
                pass
    """,
    # scipy: `from ._stats_py import *` with a private helper that a star import does not bring in.
    "scipy/__init__.py": "",
    "scipy/stats/__init__.py": "from ._stats_py import *\n",
    "scipy/stats/_stats_py.py": "def ttest_ind(a, b):\n    pass\n\ndef _helper():\n    pass\n",
    # a name two definitions spell alike but for case, neither as the title does
    "scipy/odd.py": "def Mode():\n    pass\n\ndef MODE():\n    pass\n",
}

# (title, (path, qualname)) checked by hand against the sdists: re-exports, inherited methods,
# overloads, nested classes, namespace packages, case.
RESOLVED = [
    ("numpy.reference.generated.numpy.argmax", ("numpy/core/fromnumeric.py", "argmax")),
    ("numpy.reference.generated.numpy.sum", ("numpy/core/fromnumeric.py", "sum")),
    ("numpy.reference.generated.numpy.where", ("numpy/core/multiarray.py", "where")),
    ("numpy.reference.generated.numpy.ones", ("numpy/core/numeric.py", "ones")),
    ("numpy.reference.generated.numpy.percentile", ("numpy/lib/function_base.py", "percentile")),
    ("numpy.reference.generated.numpy.linalg.norm", ("numpy/linalg/linalg.py", "norm")),
    ("numpy.reference.generated.numpy.ma.masked_where", ("numpy/ma/core.py", "masked_where")),
    ("numpy.reference.generated.numpy.ma.where", ("numpy/ma/core.py", "where")),
    ("pandas.reference.api.pandas.concat", ("pandas/core/reshape/concat.py", "concat")),
    ("pandas.reference.api.pandas.dataframe.where", ("pandas/core/frame.py", "DataFrame.where")),
    ("pandas.reference.api.pandas.dataframe.add_prefix", ("pandas/core/generic.py", "NDFrame.add_prefix")),
    ("pandas.reference.api.pandas.series", ("pandas/core/series.py", "Series")),
    ("pandas.reference.api.pandas.index.isin", ("pandas/core/indexes/base.py", "Index.isin")),
    ("pandas.reference.api.pandas.index.tolist", ("pandas/core/base.py", "IndexOpsMixin.tolist")),
    ("matplotlib._as_gen.matplotlib.pyplot.figure", ("lib/matplotlib/pyplot.py", "figure")),
    ("matplotlib._as_gen.matplotlib.pyplot.subplots", ("lib/matplotlib/pyplot.py", "subplots")),
    ("matplotlib._as_gen.matplotlib.axes.axes.plot", ("lib/matplotlib/axes/_axes.py", "Axes.plot")),
    ("matplotlib._as_gen.matplotlib.axes.axes.grid", ("lib/matplotlib/axes/_base.py", "_AxesBase.grid")),
    ("matplotlib._as_gen.matplotlib.axes.axes.set", ("lib/matplotlib/artist.py", "Artist.set")),
    ("matplotlib.figure_api#matplotlib.figure.Figure.add_axes", ("lib/matplotlib/figure.py", "FigureBase.add_axes")),
    ("matplotlib._as_gen.matplotlib.patches.boxstyle#matplotlib.patches.BoxStyle.Circle",
     ("lib/matplotlib/patches.py", "BoxStyle.Circle")),
    ("matplotlib._as_gen.mpl_toolkits.axisartist.axis_artist.ticks#mpl_toolkits.axisartist.axis_artist.Ticks.set_color",
     ("lib/mpl_toolkits/axisartist/axis_artist.py", "Ticks.set_color")),
    ("sklearn.modules.generated.sklearn.svm.svr#sklearn.svm.SVR", ("sklearn/svm/_classes.py", "SVR")),
    ("sklearn.modules.generated.sklearn.svm.svr#sklearn.svm.SVR.fit", ("sklearn/svm/_base.py", "BaseLibSVM.fit")),
    ("sklearn.modules.generated.sklearn.preprocessing.scale#sklearn.preprocessing.scale",
     ("sklearn/preprocessing/_data.py", "scale")),
    ("sklearn.modules.generated.sklearn.preprocessing.standardscaler#sklearn.preprocessing.StandardScaler.inverse_transform",
     ("sklearn/preprocessing/_data.py", "StandardScaler.inverse_transform")),
    ("scipy.reference.generated.scipy.stats.ttest_ind", ("scipy/stats/_stats_py.py", "ttest_ind")),
]

DROPPED = [
    ("numpy.reference.generated.numpy.sin", NO_DEFINITION),  # a ufunc of the C extension
    ("numpy.reference.generated.numpy.zeros", NO_DEFINITION),  # a C function
    ("numpy.reference.generated.numpy.ndarray.max", NO_DEFINITION),  # a C type's method
    ("numpy.reference.constants#numpy.inf", NO_DEFINITION),
    ("pandas.reference.api.pandas.series.str.extract", NO_DEFINITION),  # an accessor attribute
    ("pandas.reference.api.pandas.dataframe.div", NO_DEFINITION),  # a class attribute, not a def
    ("matplotlib._as_gen.matplotlib.axes.axes.set_xticks", NO_DEFINITION),
    ("numpy.reference.generated.numpy.linalg", NO_DEFINITION),  # a module, not a definition
    ("scipy.reference.generated.scipy.stats._helper", NO_DEFINITION),  # private: no star import
    ("tensorflow.compat.v1.argmax", OTHER_LIBRARY),
    ("tensorflow.cast", OTHER_LIBRARY),
    ("scipy.reference.generated.scipy.odd.mode", AMBIGUOUS),
]


def write_tree(root: Path, files: dict[str, str]) -> list[str]:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return sorted(files)


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Library:
    root = tmp_path_factory.mktemp("libs")
    return Library(root, write_tree(root, TREE))


@pytest.mark.parametrize(("title", "expected"), RESOLVED, ids=[t for t, _ in RESOLVED])
def test_titles_resolve_to_their_definition(library, title, expected):
    d = library.resolve(title)
    assert (d.path, d.qualname) == expected


@pytest.mark.parametrize(("title", "reason"), DROPPED, ids=[t for t, _ in DROPPED])
def test_titles_without_one_definition_are_dropped_with_a_reason(library, title, reason):
    with pytest.raises(Unresolved) as e:
        library.resolve(title)
    assert e.value.reason == reason
    assert e.value.detail.startswith(title)


def test_the_fixture_checks_enough_titles_across_the_five_libraries():
    tops = {dotted_name(t, {"numpy", "pandas", "matplotlib", "mpl_toolkits", "sklearn", "scipy"})[0]
            for t, _ in RESOLVED}
    assert len(RESOLVED) >= 20 and tops == {"numpy", "pandas", "matplotlib", "mpl_toolkits", "sklearn", "scipy"}


def test_dotted_name_takes_the_anchor_or_what_follows_the_docs_section():
    packages = {"numpy", "pandas", "matplotlib"}
    assert dotted_name("numpy.reference.generated.numpy.argmax", packages) == ["numpy", "argmax"]
    assert dotted_name("matplotlib._as_gen.matplotlib.pyplot.plot", packages) == ["matplotlib", "pyplot", "plot"]
    assert dotted_name("matplotlib.figure_api#matplotlib.figure.Figure.add_axes", packages) == [
        "matplotlib", "figure", "Figure", "add_axes"]
    assert dotted_name("tensorflow.compat.v1.argmax", packages) is None
    assert dotted_name("matplotlib.figure_api#tensorflow.cast", packages) is None


def test_ambiguity_names_the_candidates(library):
    with pytest.raises(Unresolved) as e:
        library.resolve("scipy.reference.generated.scipy.odd.mode")
    assert e.value.detail == ("scipy.reference.generated.scipy.odd.mode: mode is any of "
                              "Definition(path='scipy/odd.py', qualname='MODE'), "
                              "Definition(path='scipy/odd.py', qualname='Mode')")


# --- the format ------------------------------------------------------------------------------


def _row(pid: int, library: str, titles: list[str], prompt: str | None = None) -> dict:
    return {"prompt": prompt or f"problem {pid}", "reference_code": "", "code_context": "",
            "metadata": {"library": library, "problem_id": pid},
            "docs": [{"function": t, "title": t, "text": f"doc of {t}"} for t in titles]}


def _pandas_corpus(tmp_path: Path):
    root = tmp_path / "tree"
    paths = write_tree(root, {k: v for k, v in TREE.items() if k.startswith("pandas/")})
    manifest = {"pin": {"kind": "pypi", "pypi": "pandas==1.5.3", "sha256": "0" * 64},
                "files": [{"path": p} for p in paths]}
    return root, manifest, extract_files(root, paths)


def test_ds1000_library_keeps_its_librarys_problems_with_definition_gold(tmp_path):
    root, manifest, symbols = _pandas_corpus(tmp_path)
    rows = [
        _row(0, "Pandas", ["pandas.reference.api.pandas.dataframe.where", "pandas.reference.api.pandas.dataframe.div"]),
        _row(1, "Numpy", ["numpy.reference.generated.numpy.argmax"]),
        _row(2, "Pandas", []),
        _row(3, "Pandas", ["pandas.reference.api.pandas.series.str.extract", "numpy.reference.generated.numpy.sum"]),
        _row(4, "Pandas", ["pandas.reference.api.pandas.dataframe.add_prefix"], prompt="problem 0"),
        _row(5, "Pandas", ["pandas.reference.api.pandas.index.tolist"]),
    ]
    file = tmp_path / "ds1000.jsonl"
    file.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    loaded = registry.load_all(file, "ds1000-library", "pandas", manifest, symbols, root)
    assert [(t.task_id, t.stratum) for t in loaded.tasks] == [("ds0000", "Pandas"), ("ds0005", "Pandas")]
    # both of DataFrame.where's definitions (the overload and the body) are the one gold definition
    assert loaded.tasks[0].gold == {
        "type": "definitions",
        "ids": ["pandas.reference.api.pandas.dataframe.div", "pandas.reference.api.pandas.dataframe.where"],
        "definitions": [["pandas/core/frame.py", "where", 6, 8], ["pandas/core/frame.py", "where", 10, 11]]}
    assert loaded.tasks[1].gold["definitions"] == [["pandas/core/base.py", "tolist", 2, 3]]
    assert loaded.summary("ds1000-library")["dropped_by_reason"] == {
        "another library's problem": 1, "no gold docs": 1, "repeated question": 1,
        NO_DEFINITION: 2, OTHER_LIBRARY: 1, "no gold title resolved": 1}
    # a hit on the inherited definition is relevant; one on the parent's method of that name is not
    gold = loaded.tasks[0].gold
    assert relevance.is_relevant(gold, Hit("pandas/core/frame.py", "where", "method", 10, 11, 1.0))
    assert not relevance.is_relevant(gold, Hit("pandas/core/generic.py", "where", "method", 5, 6, 1.0))
    assert relevance.qrels(loaded.tasks, symbols)["ds0005"] == ["pandas/core/base.py:2:tolist"]


def test_ds1000_library_needs_the_tree_and_a_library_corpus(tmp_path):
    root, manifest, symbols = _pandas_corpus(tmp_path)
    file = tmp_path / "ds1000.jsonl"
    file.write_text(json.dumps(_row(0, "Pandas", ["pandas.reference.api.pandas.concat"])) + "\n", encoding="utf-8")
    with pytest.raises(CrmatrixError, match=r"format ds1000-library reads the files of corpus 'pandas', "
                                            r"and no tree was given"):
        registry.load_all(file, "ds1000-library", "pandas", manifest, symbols)
    other = {**manifest, "pin": {"kind": "pypi", "pypi": "requests==2.32.3", "sha256": "0" * 64}}
    with pytest.raises(CrmatrixError, match=r"corpus 'pandas': holds 'requests', none of DS-1000's libraries"):
        registry.load_all(file, "ds1000-library", "pandas", other, symbols, root)
