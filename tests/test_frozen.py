"""crmatrix.frozen: read-only dicts and lists that every reader sees as the plain ones they copy."""

import copy
import json
import pickle

import pytest

from crmatrix import atomic
from crmatrix.frozen import freeze, thaw

PLAIN = {"type": "command", "methods": ["search", "grep"], "options": {"argv": ["tool", "{query}"], "env": {}},
         "pair": ("a", {"b": [1, 2.5, None, True]}), "n": 3}


def kinds(value) -> object:
    """The value with each container replaced by its exact type's name, recursively."""
    if isinstance(value, dict):
        return [type(value).__name__, {k: kinds(v) for k, v in value.items()}]
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [kinds(v) for v in value]]
    return type(value).__name__


def test_every_dict_and_list_however_deep_is_frozen_and_tuples_stay_tuples():
    frozen = freeze(PLAIN)
    assert kinds(frozen) == ["FrozenDict", {
        "type": "str", "methods": ["FrozenList", ["str", "str"]],
        "options": ["FrozenDict", {"argv": ["FrozenList", ["str", "str"]], "env": ["FrozenDict", {}]}],
        "pair": ["tuple", ["str", ["FrozenDict", {"b": ["FrozenList", ["int", "float", "NoneType", "bool"]]}]]],
        "n": "int"}]
    assert frozen == PLAIN and PLAIN["methods"] == ["search", "grep"]  # a copy: the input is left as it was


@pytest.mark.parametrize("mutate", [
    lambda f: f.__setitem__("n", 4), lambda f: f.__delitem__("n"), lambda f: f.clear(), lambda f: f.pop("n"),
    lambda f: f.popitem(), lambda f: f.setdefault("x", 1), lambda f: f.update(x=1), lambda f: f.__ior__({"x": 1}),
    lambda f: f["methods"].append("x"), lambda f: f["methods"].extend(["x"]), lambda f: f["methods"].insert(0, "x"),
    lambda f: f["methods"].pop(), lambda f: f["methods"].remove("grep"), lambda f: f["methods"].clear(),
    lambda f: f["methods"].sort(), lambda f: f["methods"].reverse(), lambda f: f["methods"].__setitem__(0, "x"),
    lambda f: f["methods"].__delitem__(0), lambda f: f["methods"].__iadd__(["x"]),
    lambda f: f["methods"].__imul__(2), lambda f: f["options"]["env"].__setitem__("X", "1"),
    lambda f: f["pair"][1]["b"].append(3),
])
def test_every_mutator_raises_and_leaves_the_value_as_it_was(mutate):
    frozen = freeze(PLAIN)
    with pytest.raises(TypeError, match=r"^a Frozen(Dict|List) of the matrix is read-only: edit a copy"):
        mutate(frozen)
    assert frozen == PLAIN


def test_augmented_assignment_and_new_attributes_are_refused():
    frozen = freeze(PLAIN)
    methods = frozen["methods"]
    with pytest.raises(TypeError):
        methods += ["x"]
    with pytest.raises(AttributeError):
        frozen.note = "x"
    assert frozen["methods"] == ["search", "grep"]


def test_json_repr_and_hash_obj_are_those_of_the_plain_value():
    frozen = freeze(PLAIN)
    assert json.dumps(frozen) == json.dumps(PLAIN)
    assert atomic.dumps_canonical(frozen) == atomic.dumps_canonical(PLAIN)
    assert atomic.hash_obj(frozen) == atomic.hash_obj(PLAIN)
    assert repr(frozen) == repr(PLAIN)  # Snakemake's key of a job's parameters
    assert isinstance(frozen, dict) and isinstance(frozen["methods"], list)


def test_a_copy_a_deep_copy_a_pickle_and_thaw_are_plain_and_mutable():
    frozen = freeze(PLAIN)
    plain = kinds(PLAIN)
    for copied in (thaw(frozen), copy.deepcopy(frozen), pickle.loads(pickle.dumps(frozen)),
                   copy.deepcopy({"wrapped": frozen})["wrapped"]):
        assert copied == PLAIN and kinds(copied) == plain
        copied["methods"].append("x")
    assert copy.copy(frozen) == PLAIN and type(copy.copy(frozen)) is dict
    assert frozen["methods"] == ["search", "grep"]
