"""crmatrix.indented: the bytes of json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False),
for every kind of value the standard library's encoder takes."""

import json
import math
import random
from collections import OrderedDict

import pytest

from crmatrix import indented


def stdlib(obj):
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False)


class Label(str):
    pass


class Count(int):
    pass


SCALARS = ["", "plain", "quote \" back \\ slash", "tab\tnew\nline\x00\x1f", "≡ · ünïcode 🦀", "</script>", None, True,
           False, 0, -1, 2**70, Count(7), 0.0, -0.0, 1e-05, 1e16, 1.5e300, 5e-324, 0.1 + 0.2, math.nan, math.inf,
           -math.inf, Label("sub")]
KEYS = ["b", "a", "", "ü", "10", "9"]


@pytest.mark.parametrize("value", SCALARS, ids=repr)
def test_each_scalar_alone_in_a_list_and_in_a_dict(value):
    for obj in (value, [value], [value, value], {"k": value}, [[value]], ()):
        assert indented.dumps(obj) == stdlib(obj)


@pytest.mark.parametrize("obj", [
    [], {}, [[]], [{}], {"a": []}, {"a": {}}, (1, 2), [1, 2.5], [1.0, 2.0, math.nan], [1.0, math.inf], [True, 1],
    [1, 2, 3], [0.25, 0.5], [Count(1), 2], {2: "int key", 2.5: "float key", True: "t", False: "f"}, {None: "n"},
    OrderedDict([("z", 1), ("a", 2)]), {"rows": [{"q": [1, 2], "v": [0.5, None]}], "arms": ("x", "y")},
])
def test_containers(obj):
    assert indented.dumps(obj) == stdlib(obj)


# lists of objects or lists of scalars go to the C encoder whole: values that look like their
# brackets and separators must stay inside their strings
TRICKY = ["}, {", "},\n  {", "], [", "\n", '"}', "{", "]", ": {", ",\n    "]


@pytest.mark.parametrize("obj", [
    [{"a": 1}], [{"a": 1}, {"b": 2.5, "a": None}], [{"s": t, "n": i} for i, t in enumerate(TRICKY)],
    [[t, t] for t in TRICKY], [[1, "x"], [2.0, None, True]], {"edges": [["a", "b"], ["c", "d"]]},
    [{"a": 1}, {}], [[1], []], [{"a": 1}, [1]], [{"a": {"b": 1}}], [[1, [2]]], [{"a": 1}, 3],
    {"rows": [{"decomposition": {"arm": {"unchanged": [{"q": "}", "base": 1, "arm": 2}] * 3}}}]},
    [{2: "x", 2.5: "y", True: "z"}], [{"n": math.nan, "i": math.inf}], [{"ü": "≡"}],
])
def test_lists_of_flat_containers(obj):
    assert indented.dumps(obj) == stdlib(obj)


def random_value(rng: random.Random, depth: int):
    if depth <= 0 or rng.random() < 0.3:
        return rng.choice(SCALARS + [rng.random(), rng.randint(-10**6, 10**6), rng.random() * 10**rng.randint(-30, 30)])
    if rng.random() < 0.5:
        kind = rng.random()
        n = rng.randint(0, 6)
        if kind < 0.3:
            return [rng.random() for _ in range(n)]
        if kind < 0.5:
            return [rng.randint(-5, 5) for _ in range(n)]
        if kind < 0.7:  # objects of scalars, some with bracket-like strings
            return [{rng.choice(KEYS): rng.choice(SCALARS + TRICKY) for _ in range(rng.randint(0, 3))}
                    for _ in range(n)]
        return [random_value(rng, depth - 1) for _ in range(n)]
    return {rng.choice(KEYS) + str(rng.randint(0, 3)): random_value(rng, depth - 1) for _ in range(rng.randint(0, 5))}


def test_random_documents():
    rng = random.Random(48)
    for _ in range(500):
        obj = random_value(rng, 5)
        assert indented.dumps(obj) == stdlib(obj)


@pytest.mark.parametrize("obj, message", [
    ({"a": object()}, "Object of type object is not JSON serializable"),
    ([1, {2, 3}], "Object of type set is not JSON serializable"),
    ({(1, 2): 3}, "keys must be str, int, float, bool or None, not tuple"),
])
def test_what_json_cannot_hold_is_a_type_error(obj, message):
    with pytest.raises(TypeError, match=message):
        indented.dumps(obj)
    with pytest.raises(TypeError):
        stdlib(obj)
