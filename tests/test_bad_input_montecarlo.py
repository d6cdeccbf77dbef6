"""Bad input to the Monte Carlo drivers and the head constructors (`mhanw.montecarlo`,
`mhanw.heads`): noise levels whose squared errors overflow, regression functions
too large to square, sizes too large to allocate.  Every case ends quickly with a
``ValueError`` naming the argument, never inf or a MemoryError."""

from __future__ import annotations

import time

import numpy as np
import pytest

from mhanw import constants, data, heads
from mhanw import montecarlo as MC

W = heads.orthogonal_heads(4, 2, 2)
X0 = np.zeros(4)

DRIVERS = {
    "integrated_mse": lambda **kw: MC.integrated_mse(
        [W], kw.pop("regression", "zero"), kw.pop("n", 20), kw.pop("n_test", 5), kw.pop("n_rep", 3), 0, **kw
    ),
    "pointwise_estimates": lambda **kw: MC.pointwise_estimates(
        [W], kw.pop("regression", "zero"), X0, kw.pop("n", 20), kw.pop("n_rep", 3), 0, **kw
    ),
    "error_moments": lambda **kw: MC.error_moments(
        W, kw.pop("regression", "zero"), kw.pop("n", 20), kw.pop("n_test", 5), kw.pop("n_rep", 3), 0, **kw
    ),
}


@pytest.mark.parametrize("driver", sorted(DRIVERS))
@pytest.mark.parametrize("sigma", [1e200, 1e308, 1.5e100])
def test_noise_levels_whose_squares_overflow_name_sigma(driver, sigma):
    # sigma = 1e200 gave inf (or blamed the regression at 1e308)
    with pytest.raises(ValueError, match=r"^sigma: .*at most"):
        DRIVERS[driver](sigma=sigma)
    with pytest.raises(ValueError, match=r"^sigma: "):  # the same level inside a data model
        DRIVERS[driver](regression=data.data_model("zero", sigma=sigma))


@pytest.mark.parametrize("driver", sorted(DRIVERS))
def test_the_largest_noise_level_gives_finite_errors(driver):
    out = DRIVERS[driver](sigma=MC.MAX_SIGMA)
    values = out.errors if hasattr(out, "errors") else out[0] if isinstance(out, list) else out
    assert np.all(np.isfinite(values))


@pytest.mark.parametrize("driver", ["integrated_mse", "error_moments"])
def test_a_regression_too_large_to_square_is_named(driver):
    with pytest.raises(ValueError, match=r"^regression: .*overflow"):  # was samples: ... or inf
        DRIVERS[driver](regression="1e200*x1")


@pytest.mark.parametrize("driver", sorted(DRIVERS))
@pytest.mark.parametrize(
    "name,value", [("n", 10**12), ("n_rep", 10**12), ("n_test", 10**12), ("n_rep", True), ("n", 0), ("n_rep", None)]
)
def test_sizes_are_checked_before_any_work(driver, name, value):
    if name == "n_test" and driver == "pointwise_estimates":
        return
    start = time.monotonic()
    with pytest.raises(ValueError, match=rf"^{name}: "):  # was MemoryError, or a run without end
        DRIVERS[driver](**{name: value})
    assert time.monotonic() - start < 2.0


def test_replicates_are_bounded():
    with pytest.raises(ValueError, match=r"^n_rep: expected at most"):
        MC.integrated_mse([W], "zero", 20, 5, constants.MAX_REPLICATES + 1, 0)


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: heads.identical_heads(10**12, 2, 3), "d"),
        (lambda: heads.identical_heads(4, 2, 10**12), "n_heads"),
        (lambda: heads.orthogonal_heads(10**12, 2, 2), "d"),
        (lambda: heads.haar_heads(4, 2, 10**12, np.random.default_rng(0)), "n_heads"),
        (lambda: heads.interpolated_heads(0.5, 4, 2, 10**12, np.random.default_rng(0)), "n_heads"),  # hung
        (lambda: heads.graded_heads([0.1, 0.2], 10**12), "d"),
    ],
)
def test_head_constructors_refuse_huge_sizes(call, name):
    start = time.monotonic()
    with pytest.raises(ValueError, match=rf"^{name}: .*exceeds"):
        call()
    assert time.monotonic() - start < 2.0


def test_check_entries():
    constants.check_entries("n", 1 << 14, 1 << 14)
    with pytest.raises(ValueError, match=r"^n: an array of 16384 x 16385"):
        constants.check_entries("n", 1 << 14, (1 << 14) + 1)
