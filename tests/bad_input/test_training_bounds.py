"""Every loop a user can size is bounded by the one work bound of the Monte Carlo calls
(:data:`mhanw.constants.MAX_WORK`, :func:`mhanw.constants.check_work`), refused at once with the reason:
training's steps and step lengths (:func:`mhanw.training.train_heads`), and chapter 10's sizes."""

from __future__ import annotations

import numpy as np
import pytest
from nbtools import ROOT
from timeouts import within

from mhanw import data, heads, training
from mhanw.chapters import ch10_training_heads as ch10
from mhanw.constants import MAX_WORK
from mhanw.infra.params import ParameterError, check_parameters
from mhanw.pipeline import chapters as C


@pytest.fixture(scope="module")
def start():
    rng = np.random.default_rng(5)
    sample = data.data_model("aniso", "gaussian", "gaussian", 0.5).draw(rng, 40, 4, n_test=20)
    return heads.haar_heads(4, 2, 3, rng), sample


def test_a_first_move_of_1e308_is_refused_at_once(start):
    """The step became inf, and halving inf never ended."""
    W0, sample = start
    for move in (1e308, training.MAX_MOVE * 2):
        with within(5.0), pytest.raises(ValueError, match=r"^first_move: expected at most"):
            training.train_heads(W0, sample, 0.6, first_move=move)


def test_ten_million_steps_are_refused_with_the_work_bound(start):
    """``n_steps = 10**7`` would have run about a day."""
    W0, sample = start
    with within(5.0), pytest.raises(ValueError) as info:
        training.train_heads(W0, sample, 0.6, n_steps=10**7)
    msg = str(info.value)
    assert msg.startswith("n_steps, W0, sample: ") and f"{MAX_WORK:.0e}" in msg and "an hour" in msg, msg


def test_the_longest_first_move_and_its_doublings_finish(start):
    """At the largest first move, each step's backtracking is bounded (the doubled step is capped)."""
    W0, sample = start
    with within(20.0):
        path = training.train_heads(W0, sample, 0.6, first_move=training.MAX_MOVE, n_steps=30, record_every=10)
    assert np.all(np.isfinite(path.loss)) and path.loss[-1] <= path.loss[0]


def test_the_bound_does_not_change_a_default_path(start):
    """Steps far below the caps follow the same path as before the caps (the penalised one too)."""
    W0, sample = start
    for penalty in (0.0, 1.0):
        path = training.train_heads(W0, sample, 0.6, penalty=penalty, n_steps=12, record_every=4)
        assert path.accepted == 12 and np.all(np.diff(path.loss) <= 0)


def test_training_work_grows_with_every_size():
    base = training.training_work(4, 150, 4, 10, 100, 2)
    for bigger in (
        training.training_work(8, 150, 4, 10, 100, 2),
        training.training_work(4, 300, 4, 10, 100, 2),
        training.training_work(4, 150, 64, 10, 100, 2),
        training.training_work(4, 150, 4, 20, 100, 2),
        training.training_work(4, 150, 4, 10, 100, 2, "concat"),
        training.training_work(4, 150, 4, 10, 100, 2, penalty=True),
    ):
        assert bigger > base


def _chapter10_defaults() -> dict:
    namespace: dict = {}
    exec(C.code_sources(ROOT / "notebooks" / "10_training_heads.md")[0], namespace)  # noqa: S102 - the chapter's parameters cell
    return {k: v for k, v in namespace.items() if k in ch10.PARAMETERS}


@pytest.mark.parametrize(
    "change",
    [dict(n=8000), dict(d=256, d_k=1, heads_equal=256, heads_over=512), dict(n=2000, n_seeds=200)],
)
def test_chapter_10_refuses_sizes_whose_quick_run_takes_hours(change):
    params = {**_chapter10_defaults(), "fidelity": "quick", **change}
    with within(5.0), pytest.raises(ParameterError) as info:
        check_parameters(params, ch10.PARAMETERS, ch10.CONSTRAINTS)
    msg = str(info.value)
    assert msg.startswith("n: n, d, heads_equal, heads_over, n_seeds") and "an hour" in msg, msg
    for k, v in change.items():
        if k != "d_k":
            assert f"{k} = {v}" in msg, msg


@pytest.mark.parametrize("fidelity", ["quick", "paper"])
def test_chapter_10_accepts_its_defaults(fidelity):
    check_parameters({**_chapter10_defaults(), "fidelity": fidelity}, ch10.PARAMETERS, ch10.CONSTRAINTS)
