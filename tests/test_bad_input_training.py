"""Bad input through the training code (mhanw.training, chapter 10) and the concat helpers.

Reproducers of a sweep of the functions written for the attention work: each was a raw
``AttributeError``, ``KeyError``, ``TypeError`` or ``LinAlgError`` (or a truthy string read as a
flag, or an empty grid that ran nothing) and is now a one-line ``ValueError`` naming the argument.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from mhanw import data, heads, training
from mhanw.chapters import ch10_training_heads as ch10


def _W():
    return heads.haar_heads(4, 2, 2, np.random.default_rng(0))


def _sample():
    return data.data_model("aniso").draw(np.random.default_rng(1), 30, 4, n_test=5)


SETTING = ch10.Setting("aniso", "anisotropic", 4, 2, 2, "average")
SIZES = dict(n_seeds=2, n_test=5, n_steps=1, record_every=1)


def _refused(arg, call):
    with pytest.raises(ValueError) as info:
        call()
    msg = str(info.value)
    assert re.match(rf"^{re.escape(arg)}(?!\w)", msg), msg
    assert "\n" not in msg


@pytest.mark.parametrize("bad", ["x", None, 3, {"X": 1}])
def test_a_sample_that_is_not_a_sample_is_refused(bad):
    W = _W()
    _refused("sample", lambda: training.train_heads(W, bad, 0.5, n_steps=1))
    _refused("sample", lambda: training.fresh_error(W, bad, 0.5))
    _refused("sample", lambda: training.error_correlation(W, bad, 0.5))


def test_a_sample_without_fresh_points_or_of_another_dimension_is_refused():
    W = _W()
    no_test = data.data_model("aniso").draw(np.random.default_rng(1), 30, 4)
    _refused("sample", lambda: training.train_heads(W, no_test, 0.5, n_steps=1))
    wide = data.data_model("aniso").draw(np.random.default_rng(1), 30, 5, n_test=5)
    _refused("sample", lambda: training.fresh_error(W, wide, 0.5))


@pytest.mark.parametrize("bad", ["False", "no", 1, None])
def test_flags_are_booleans(bad):
    s = _sample()
    _refused("gradient", lambda: training.loo_loss(_W(), s.X, s.Y, 0.5, gradient=bad))
    _refused("gradient", lambda: training.orthogonality_penalty(_W(), bad))
    _refused("orthogonal", lambda: heads.output_projection(2, 2, np.random.default_rng(0), orthogonal=bad))
    _refused("control", lambda: ch10.run_setting(SETTING, 2, 0, 30, 5, 0.5, 1, 1, 1.0, control=bad))


def test_a_head_of_lower_rank_is_named_not_a_singular_matrix():
    W = _W()
    W[1, :, 1] = W[1, :, 0]
    _refused("W", lambda: training.orthogonality_penalty(W))
    s = _sample()
    _refused("W", lambda: training.loo_loss(W, s.X, s.Y, 0.5, penalty=1.0))


def test_the_grid_and_sizes_of_run_all_are_checked_before_anything_runs():
    _refused("grid", lambda: ch10.run_all("abc", SIZES, 0, 30, 0.5, 1.0))
    _refused("grid", lambda: ch10.run_all([], SIZES, 0, 30, 0.5, 1.0))
    _refused("grid[1]", lambda: ch10.run_all([SETTING, "x"], SIZES, 0, 30, 0.5, 1.0))
    _refused("sizes", lambda: ch10.run_all([SETTING], {}, 0, 30, 0.5, 1.0))
    _refused("sizes", lambda: ch10.run_all([SETTING], [1, 2], 0, 30, 0.5, 1.0))
    _refused("sizes['n_seeds']", lambda: ch10.run_all([SETTING], {**SIZES, "n_seeds": "2"}, 0, 30, 0.5, 1.0))
    _refused("sizes", lambda: ch10.run_all([SETTING], {**SIZES, "opt_starts": 1}, 0, 30, 0.5, 1.0))  # opt_* missing
    _refused("progress", lambda: ch10.run_all([SETTING], SIZES, 0, 30, 0.5, 1.0, progress=3))
    _refused("n", lambda: ch10.run_all([SETTING], SIZES, 0, 2, 0.5, 1.0))


def test_empty_choices_are_refused():
    _refused("combinations", lambda: ch10.settings("iso_cos", "aniso", 4, 2, 2, 4, []))
    _refused("combinations", lambda: ch10.settings("iso_cos", "aniso", 4, 2, 2, 4, "average"))
    _refused("scales", lambda: ch10.self_match_curves("aniso", 4, 2, 30, 0.5, [], 3, 0))


def test_the_bookkeeping_names_what_it_was_given():
    _refused("results", lambda: ch10.ledger("x", 1.0))
    _refused("results", lambda: ch10.results_payload([1, 2]))
    _refused("book", lambda: ch10.findings(3))
    _refused("setting", lambda: ch10.imse_optimum("x", 0, 30, 0.5, 2, 5, 1, 1))
    result = ch10.run_setting(SETTING, 2, 0, 30, 5, 0.5, 1, 1, 1.0, control=False)
    book = ch10.ledger([result], 1.0)
    from mhanw.infra.texout import Macros

    _refused("macros", lambda: ch10.write_macros(None, [result], book, SIZES))
    _refused("sizes", lambda: ch10.write_macros(Macros("TrainHeads"), [result], book, {}))
    _refused("book", lambda: ch10.write_macros(Macros("TrainHeads"), [result], ch10.Ledger("x"), SIZES))
    assert "did not change significantly in 1 of 1" in ch10.findings(book)  # two starts: undecided
