"""The shared way an error message lists names (:func:`mhanw.infra.validate.listed`), used by the checks of
mappings and tables."""

import pytest

from mhanw.infra.validate import listed, mapping_with_keys, one_of


def test_listed_names_each_item_by_its_repr():
    assert listed(["a", 2, ("x", 1)]) == "'a', 2, ('x', 1)"
    assert listed([]) == ""


def test_messages_list_their_names_the_same_way():
    with pytest.raises(ValueError, match=r"^m: missing the key\(s\) 'b', 'c'$"):
        mapping_with_keys({"a": 1}, "m", ["a", "b", "c"])
    with pytest.raises(ValueError, match=r"^rule: expected one of 'average', 'sum', got 'x'"):
        one_of("x", "rule", ("average", "sum"))
