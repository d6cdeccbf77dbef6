"""Bad input through the training code (mhanw.training) and the concat helpers.

Reproducers of a sweep of the functions written for the attention work: each was a raw
``AttributeError``, ``KeyError``, ``TypeError`` or ``LinAlgError`` (or a truthy string read as a
flag) and is now a one-line ``ValueError`` naming the argument.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from mhanw import data, heads, training


def _W():
    return heads.haar_heads(4, 2, 2, np.random.default_rng(0))


def _sample():
    return data.data_model("aniso").draw(np.random.default_rng(1), 30, 4, n_test=5)


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


def test_a_head_of_lower_rank_is_named_not_a_singular_matrix():
    W = _W()
    W[1, :, 1] = W[1, :, 0]
    _refused("W", lambda: training.orthogonality_penalty(W))
    s = _sample()
    _refused("W", lambda: training.loo_loss(W, s.X, s.Y, 0.5, penalty=1.0))
