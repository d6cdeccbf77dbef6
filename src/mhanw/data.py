"""The reference data-generating process of the companion (``book/claims.md``, 'The reference data-generating process').

Inputs ``X ~ N(0, I_d)``, responses ``Y = m(X) + sigma * eps`` with
``eps ~ N(0, 1)`` and ``sigma =`` :data:`mhanw.constants.SIGMA` (0.5) unless stated.  The training sample
``D_n`` is the only source of randomness in the bias, variance, covariance and
MSE of every head (Thm 3.1, Lemma 4.1, Thm 4.2, Thm 5.1); projections are fixed
and never fitted on ``D_n``.

The catalogue of regression functions ``m`` is :data:`REGRESSION_FUNCTIONS`;
:func:`regression_function` returns one by name.  :func:`draw_sample` draws a
training sample and fresh test points from a ``numpy.random.Generator``, always
in the same order (training inputs, noise, test inputs), so that one stream per
replicate gives common random numbers across every configuration that uses it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .constants import SIGMA
from .infra.validate import as_float_array, generator, nonnegative_scalar, one_of, positive_int

__all__ = [
    "REGRESSION_FUNCTIONS",
    "RegressionFunction",
    "Sample",
    "draw_sample",
    "regression_function",
    "sample_inputs",
]


@dataclass(frozen=True)
class RegressionFunction:
    """A regression function ``m: R^d -> R`` of the catalogue.

    Call it on ``x`` of shape ``(N, d)`` (returns ``(N,)``) or ``(d,)``
    (returns a float); ``d`` must be at least :attr:`min_dim`.

    Attributes
    ----------
    name, formula : str
        Catalogue name and the formula (the table of regression functions in
        ``book/claims.md``).
    min_dim : int
        Smallest input dimension ``d`` on which ``m`` is defined.
    isotropic : bool
        Whether ``m(x)`` depends on ``x`` only through ``|x|`` (rotation
        invariant), the condition of S-weak (Thm 4.2).
    lipschitz_source : str
        ``"stated"`` when the claims page states the Lipschitz constant (``zero``,
        ``sin13``); ``"derived"`` when it is computed here from the formula
        (the supremum of ``|grad m|``).
    """

    name: str
    formula: str
    min_dim: int
    isotropic: bool
    lipschitz_source: str
    _func: Callable[[np.ndarray], np.ndarray]
    _lipschitz: Callable[[int], float]

    def __call__(self, x) -> np.ndarray | float:
        arr = as_float_array(x, "x", ndim=(1, 2))
        single = arr.ndim == 1
        pts = arr[None, :] if single else arr
        if pts.shape[1] < self.min_dim:
            raise ValueError(
                f"x: {self.name!r} needs inputs of dimension d >= {self.min_dim}, got shape {arr.shape}"
            )
        out = self._func(pts)
        return float(out[0]) if single else out

    def lipschitz_constant(self, d: int | None = None) -> float:
        """Global Lipschitz constant ``L`` of ``m`` on ``R^d`` (``inf`` if none).

        ``d`` matters only for ``additive`` (``L = sqrt(d)``); it defaults to
        :attr:`min_dim`.  Used by the printed bound of Lemma 4.1.
        """
        d = self.min_dim if d is None else positive_int(d, "d", minimum=self.min_dim)
        return float(self._lipschitz(d))


def _norm(x):
    return np.sqrt((x * x).sum(axis=1))


def _const(value):
    return lambda d: value


_CATALOGUE = (
    RegressionFunction(
        "zero", "0", 1, True, "stated", lambda x: np.zeros(x.shape[0]), _const(0.0)
    ),
    RegressionFunction(
        "sin13", "sin x1 + sin x3", 3, False, "stated",
        lambda x: np.sin(x[:, 0]) + np.sin(x[:, 2]), _const(math.sqrt(2.0)),
    ),
    RegressionFunction(
        "bvc", "sin x1 + x2^2/2 - 0.3 x3 x4", 4, False, "derived",
        lambda x: np.sin(x[:, 0]) + 0.5 * x[:, 1] ** 2 - 0.3 * x[:, 2] * x[:, 3], _const(math.inf),
    ),
    RegressionFunction(
        "iso_exp", "2 exp(-|x|^2/4)", 1, True, "derived",
        lambda x: 2.0 * np.exp(-(x * x).sum(axis=1) / 4.0), _const(math.sqrt(2.0) * math.exp(-0.5)),
    ),
    RegressionFunction(
        "iso_cos", "cos(1.5 |x|)", 1, True, "derived", lambda x: np.cos(1.5 * _norm(x)), _const(1.5)
    ),
    RegressionFunction(
        "iso_cos6", "cos(1.2 |x|)", 1, True, "derived", lambda x: np.cos(1.2 * _norm(x)), _const(1.2)
    ),
    RegressionFunction(
        "aniso", "sin(2 x1) + 0.5 x2", 2, False, "derived",
        lambda x: np.sin(2.0 * x[:, 0]) + 0.5 * x[:, 1], _const(math.sqrt(4.25)),
    ),
    RegressionFunction(
        "blind", "sin(2 x1) + x1", 1, False, "derived",
        lambda x: np.sin(2.0 * x[:, 0]) + x[:, 0], _const(3.0),
    ),
    RegressionFunction(
        "additive", "sum_l sin x_l", 1, False, "derived",
        lambda x: np.sin(x).sum(axis=1), lambda d: math.sqrt(d),
    ),
    RegressionFunction(
        "iso_cos8", "3 cos(0.8 |x|)", 1, True, "derived",
        lambda x: 3.0 * np.cos(0.8 * _norm(x)), _const(2.4),
    ),
)

_BY_NAME = {f.name: f for f in _CATALOGUE}

#: Names of the regression functions, in the order of the claims page's table.
REGRESSION_FUNCTIONS = tuple(_BY_NAME)


def regression_function(name) -> RegressionFunction:
    """The regression function called ``name`` (one of :data:`REGRESSION_FUNCTIONS`).

    A :class:`RegressionFunction` is returned unchanged, so functions accept
    either a name or the object.
    """
    if isinstance(name, RegressionFunction):
        return name
    return _BY_NAME[one_of(name, "regression", REGRESSION_FUNCTIONS)]


@dataclass(frozen=True)
class Sample:
    """One replicate of the reference DGP.

    ``X`` ``(n, d)`` and ``Y`` ``(n,)``: the training sample ``D_n``;
    ``X_test`` ``(T, d)``: test points; ``m_test`` ``(T,)``: ``m(X_test)``.
    """

    X: np.ndarray
    Y: np.ndarray
    X_test: np.ndarray
    m_test: np.ndarray


def sample_inputs(rng, n: int, d: int) -> np.ndarray:
    """``n`` iid draws of ``X ~ N(0, I_d)``, shape ``(n, d)``."""
    generator(rng, "rng")
    return rng.standard_normal((positive_int(n, "n"), positive_int(d, "d")))


def draw_sample(rng, regression, n: int, d: int, n_test: int = 0, sigma: float = SIGMA,
                x_test=None) -> Sample:
    """Draw ``D_n`` and test points from the reference DGP (noise sd ``sigma``, default :data:`mhanw.constants.SIGMA`).

    Draws, in this order from ``rng``: ``X`` ``(n, d)`` ~ ``N(0, I_d)``, noise
    ``eps`` ``(n,)`` ~ ``N(0, 1)``, then, unless ``x_test`` is given,
    ``n_test`` fresh test points ``(n_test, d)`` ~ ``N(0, I_d)``.
    ``Y = m(X) + sigma * eps``.

    Parameters
    ----------
    rng : numpy.random.Generator
    regression : str or RegressionFunction
        ``m``; a name of :data:`REGRESSION_FUNCTIONS`.
    n, d : int >= 1
    n_test : int >= 0
        Number of fresh test points (Thm 4.2's integrated MSE uses fresh ones
        in every replicate).  Ignored when ``x_test`` is given.
    sigma : float >= 0
        Noise standard deviation.
    x_test : array ``(T, d)``, optional
        Fixed test points (per-point moments of Thm 3.1 and Lemma 4.1).

    Returns
    -------
    Sample
    """
    generator(rng, "rng")
    m = regression_function(regression)
    n = positive_int(n, "n")
    d = positive_int(d, "d", minimum=m.min_dim)
    sigma = nonnegative_scalar(sigma, "sigma")
    if x_test is None:
        n_test = positive_int(n_test, "n_test", minimum=0)
    else:
        x_test = as_float_array(x_test, "x_test", ndim=2)
        if x_test.shape[1] != d:
            raise ValueError(f"x_test: expected shape (T, {d}), got {x_test.shape}")
    X = rng.standard_normal((n, d))
    eps = rng.standard_normal(n)
    if x_test is None:
        x_test = rng.standard_normal((n_test, d))
    Y = m._func(X) + sigma * eps
    m_test = m._func(x_test) if x_test.shape[0] else np.zeros(0)
    return Sample(X=X, Y=Y, X_test=x_test, m_test=m_test)
