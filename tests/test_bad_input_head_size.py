"""Bad input to the optimal head size (Thm 6.1) and the helpers it rests on: sizes that would run for
hours or exhaust memory (the frame ascent, the risk grid), entries at the ends of the double range
(orthonormal bases, principal angles) and head sizes beyond the budget.  Every case ends at once with a
``ValueError`` naming the argument; good input gives the numbers it gave before."""

from __future__ import annotations

import re

import numpy as np
import pytest
from timeouts import within

from mhanw import diversity as Dv
from mhanw import heads
from mhanw import scaling as S


def _named(call, name: str, seconds: float = 5.0):
    """``call()`` raises, within ``seconds``, a one-line ``ValueError`` whose message starts with ``name:``
    (or, for a name of plain words such as ``n_starts x n_steps``, whose head names it)."""
    with within(seconds), pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    head = message.split(": ", 1)[0]
    assert head == name or (re.fullmatch(r"[\w ]+", name) and re.search(rf"\b{re.escape(name)}\b", head)), message
    assert "\n" not in message
    return message


# --------------------------------------------------------------------------- sizes: the frame ascent


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(n_steps=10**6), "n_steps"),  # 20 starts of 10**6 steps ran for hours
        (dict(n_steps=Dv.MAX_ASCENT_STEPS + 1, n_starts=1), "n_steps"),
        (dict(n_starts=1000, n_steps=1000), "n_starts x n_steps"),
        (dict(n_starts=Dv.MAX_ASCENT_STEPS // 10 + 1, n_steps=10), "n_starts x n_steps"),
    ],
)
def test_maximize_hdi_refuses_an_ascent_of_hours(kwargs, name):
    _named(lambda: Dv.maximize_hdi(3, 1, 4, np.random.default_rng(0), **kwargs), name, seconds=2.0)


def test_maximize_hdi_refuses_too_much_work_on_large_shapes():
    # 1000 steps of 64 heads in R^512 are within the count of steps, not of the work
    _named(
        lambda: Dv.maximize_hdi(512, 8, 64, np.random.default_rng(0), n_starts=1, n_steps=1000),
        "n_starts x n_steps",
        seconds=2.0,
    )


def test_maximize_hdi_keeps_its_answer_within_the_bounds():
    out = Dv.maximize_hdi(3, 1, 4, np.random.default_rng(20), n_starts=4, n_steps=150)
    assert out.trace.shape == (4, 151) and out.hdi.max() == pytest.approx(8 / 9, abs=1e-6)


# --------------------------------------------------------------------------- orthonormal bases


@pytest.mark.parametrize("scale", [1e308, 2.0**1000, 1e-300, 2.0**-1000])
def test_orthonormalize_has_the_same_basis_at_any_scale(scale):
    A = np.array([[1.0, 0.5], [0.25, -1.0], [0.5, 0.75]])
    Q = heads.orthonormalize(A)
    Q_scaled = heads.orthonormalize(A * scale)  # was LinAlgError 'SVD did not converge' at 1e308
    np.testing.assert_allclose(Q_scaled, Q, atol=1e-12)
    assert np.allclose(Q_scaled.T @ Q_scaled, np.eye(2))


def test_orthonormalize_of_a_power_of_two_multiple_is_exact():
    A = np.random.default_rng(1).standard_normal((5, 3))
    assert np.array_equal(heads.orthonormalize(A * 2.0**900), heads.orthonormalize(A))
    assert np.array_equal(heads.orthonormalize(A * 2.0**-900), heads.orthonormalize(A))


@pytest.mark.parametrize(
    "A",
    [
        np.full((3, 2), 1e308),
        np.full((3, 2), -1e308),
        np.zeros((3, 2)),
        np.array([[1e308, 1e-308], [1e308, 1e-308], [0.0, 1e-308]]),
        np.array([[1e308, 1e-300], [0.0, 0.0], [0.0, 0.0]]),
    ],
)
def test_orthonormalize_names_a_rank_deficient_matrix(A):
    _named(lambda: heads.orthonormalize(A), "A")


@pytest.mark.parametrize(
    "bad",
    [
        np.array([[np.inf, 0.0], [0.0, 1.0], [0.0, 0.0]]),
        np.full((3, 2), np.nan),
        [[1e400, 0.0], [0.0, 1.0], [0.0, 0.0]],
        "A",
        None,
        np.ones((2, 3)),
        np.ones(3),
    ],
)
def test_orthonormalize_names_a_non_finite_or_malformed_matrix(bad):
    _named(lambda: heads.orthonormalize(bad), "A")


def test_orthonormal_bases_names_the_head_at_the_end_of_the_range():
    W = np.stack([np.eye(4)[:, :2], np.full((4, 2), 1e308)])
    assert "head 1" in _named(lambda: Dv.orthonormal_bases(W), "W")
    W = np.stack([np.eye(4)[:, :2] * 1e308, np.eye(4)[:, 2:] * 1e-300])
    np.testing.assert_allclose(Dv.orthonormal_bases(W), np.stack([np.eye(4)[:, :2], np.eye(4)[:, 2:]]), atol=0)


# --------------------------------------------------------------------------- sizes: the risk grid


@pytest.mark.parametrize("size", [S.MAX_GRID + 1, 10**8])
def test_log_mse_refuses_a_grid_beyond_its_maximum_before_allocating(size):
    # 10**8 head dimensions raised MemoryError after 20 s; a view of one entry costs nothing to pass
    grid = np.broadcast_to(np.float64(2.0), (size,))
    _named(lambda: S.log_mse(grid, 1e6, 512), "d_k", seconds=2.0)


def test_log_mse_refuses_a_long_list():
    _named(lambda: S.log_mse([2.0] * (S.MAX_GRID + 1), 1e6, 512), "d_k", seconds=2.0)


def test_log_mse_keeps_the_largest_exhaustive_search():
    assert S.MAX_GRID >= S.MAX_BUDGET
    values = S.log_mse(np.arange(1, 513), 1e6, 512)
    assert values.shape == (512,) and int(np.argmin(values)) + 1 == S.optimal_head_dim(1e6, 512)


# --------------------------------------------------------------------------- head sizes beyond the budget


@pytest.mark.parametrize("d_k,budget", [(600, 512), (513, 512), (9, 8), (1e300, 512), (2.5, 2)])
@pytest.mark.parametrize("model", ["M1", "M4a", "M5"])
def test_sample_size_for_a_head_beyond_the_budget_names_d_k(d_k, budget, model):
    # 600 > 512 gave NaN under M1 (read as "no n below 1e300") and a number under M4a: fewer than one head
    _named(lambda: S.sample_size_for_head_dim(d_k, budget, model), "d_k")


def test_sample_size_within_the_budget_is_unchanged():
    assert S.sample_size_for_head_dim(64, 512) == pytest.approx(62.42632760511637, rel=1e-12)
    assert S.sample_size_for_head_dim(512, 512, "M4a") == pytest.approx(6.171114911111615, rel=1e-12)
    assert np.isnan(S.sample_size_for_head_dim(300, 512))  # n of about 1e379: beyond 1e300, documented NaN


# --------------------------------------------------------------------------- principal angles


@pytest.mark.parametrize("scale", [1e308, 1e-300])
def test_principal_angles_are_the_same_at_any_scale(scale):
    A, B = np.array([[1.0, -1.0], [1.0, 1.0], [1.0, 1.0]]), np.eye(3)[:, :2]  # angles 0 and pi/4
    # 1e308 returned no angles at all (scipy's subspace_angles overflowed); an angle 0 comes out of
    # subspace_angles to about sqrt(eps) at any scale
    for angles in (Dv.principal_angles(A * scale, B), Dv.principal_angles(B, A * scale)):
        np.testing.assert_allclose(angles, [0.0, np.pi / 4], atol=1e-7)
