"""Generated text reads as written text (mhanw.infra.prose)."""

import pytest

from mhanw.infra.prose import count_of, group_by_verdict, join_list, number_word, ranges


@pytest.mark.parametrize(
    "k, n, noun, text",
    [
        (4, 4, "", "all four"),
        (4, 4, "layers", "all four layers"),
        (0, 4, "layers", "none of the four layers"),
        (3, 8, "", "three of eight"),
        (2, 2, "heads", "both heads"),
        (0, 2, "heads", "neither of the heads"),
        (22, 24, "cases", "22 of 24 cases"),
        (24, 24, "cases", "all 24 cases"),
    ],
)
def test_counts_read_as_words(k, n, noun, text):
    assert count_of(k, n, noun) == text


def test_counts_reject_impossible_inputs():
    with pytest.raises(ValueError, match="^k:"):
        count_of(5, 4)
    with pytest.raises(ValueError, match="^k:"):
        count_of(True, 4)
    with pytest.raises(ValueError, match="^n:"):
        count_of(0, 0)


def test_ranges_collapse_runs():
    assert ranges([1, 2, 3, 4, 5, 6]) == "1-6"
    assert ranges([5, 1, 2, 3, 7, 8]) == "1-3, 5, 7-8"
    assert ranges([3]) == "3"
    with pytest.raises(ValueError, match="^values:"):
        ranges([])


def test_lists_and_grouped_verdicts_do_not_stutter():
    assert join_list(["a"]) == "a" and join_list(["a", "b"]) == "a and b" and join_list(("a", "b", "c")) == "a, b and c"
    with pytest.raises(ValueError, match="^items:"):
        join_list("abc")  # one string is one item, never its letters
    text = group_by_verdict(
        [("the bound", "fails as stated"), ("the limit", "fails as stated"), ("the identity", "holds")]
    )
    assert text == "the bound and the limit: fails as stated; the identity: holds"
    assert text.count("fails as stated") == 1
    assert number_word(12) == "twelve" and number_word(13) == "13"
