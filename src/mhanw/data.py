"""The data-generating process: the reference one and its variations (``book/claims.md``, 'The reference data-generating process').

The reference: inputs ``X ~ N(0, I_d)``, responses ``Y = m(X) + sigma * eps``
with ``eps ~ N(0, 1)`` and ``sigma =`` :data:`mhanw.constants.SIGMA` (0.5)
unless stated.  The training sample ``D_n`` is the only source of randomness in
the bias, variance, covariance and MSE of every head (Thm 3.1, Lemma 4.1,
Thm 4.2, Thm 5.1); projections are fixed and never fitted on ``D_n``.

A :class:`DataModel` changes the three modelling assumptions one at a time:

- the regression function ``m`` (:func:`regression_function`): a name of the
  catalogue :data:`REGRESSION_FUNCTIONS`, or a formula in the coordinates
  ``x1 ... xd`` and the norm ``r = |x|`` such as ``"sin(x1) + x2**2/2"``
  (functions :data:`EXPRESSION_FUNCTIONS`, parsed safely by
  :mod:`mhanw.infra.expressions`);
- the input distribution (:class:`InputDistribution`, :data:`INPUT_KINDS`):
  ``"gaussian"`` (the reference), ``"gaussian-diagonal:COND"``,
  ``"gaussian-equicorrelated:RHO"``, ``"student-t:NU"``, ``"uniform-cube"``,
  ``"uniform-sphere"``; every one has mean 0 and unit variance per coordinate,
  so that a bandwidth means the same thing under each;
- the noise (:class:`NoiseModel`, :data:`NOISE_LAWS`): a level ``sigma >= 0``
  and a law ``"gaussian"`` (the reference), ``"student-t:NU"`` or
  ``"heteroscedastic:EXPR"`` (standard deviation ``sigma * EXPR(x)``).

:func:`data_model` builds one from spec strings; :meth:`DataModel.draw` and
:func:`draw_sample` draw a training sample and test points from a
``numpy.random.Generator``, always in the same order (training inputs, noise,
test inputs), so that one stream per replicate gives common random numbers
across every configuration that uses it.  With the reference choices the draws
are bit-identical to ``rng.standard_normal((n, d))``,
``sigma * rng.standard_normal(n)``, ``rng.standard_normal((n_test, d))``.

Several closed-form predictions of the library assume Gaussian inputs (Lemma
4.1's first-order covariance, the kernel overlap, the density in the printed
bound); :func:`is_reference_gaussian` tells whether a model satisfies that
assumption, and :func:`mhanw.covariance.first_order_covariance_mc` recomputes
the prediction by Monte Carlo under any model.
"""

from __future__ import annotations

import functools
import math
import numbers
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp

from .constants import SIGMA, check_entries
from .infra.expressions import NUMBER_GRAMMAR, Grammar, check_tree
from .infra.validate import MAX_COUNT, as_float_array, brief, generator, nonnegative_scalar, one_of, positive_int

__all__ = [
    "DataModel",
    "EXPRESSION_FUNCTIONS",
    "INPUT_KINDS",
    "InputDistribution",
    "NOISE_LAWS",
    "NoiseModel",
    "REGRESSION_FUNCTIONS",
    "RegressionFunction",
    "Sample",
    "as_data_model",
    "data_model",
    "draw_sample",
    "input_distribution",
    "is_reference_gaussian",
    "noise_model",
    "regression_function",
    "sample_inputs",
]


@dataclass(frozen=True)
class RegressionFunction:
    """A regression function ``m: R^d -> R``: one of the catalogue or a parsed formula.

    Call it on ``x`` of shape ``(N, d)`` (returns ``(N,)``) or ``(d,)`` (returns a float); ``d`` must
    be at least :attr:`min_dim`.  Finite ``x`` gives finite values or a ``ValueError`` naming ``x``
    where ``m(x)`` is not a finite double (it overflows, or a formula is undefined there).  Build one
    with :func:`regression_function`.

    Parameters
    ----------
    name : str
        Catalogue name; for a parsed formula the string given (``regression_function(name)`` returns
        the same function).
    formula : str
        The formula (the table of regression functions in ``book/claims.md``); for a parsed formula,
        sympy's form of it.
    min_dim : int
        Smallest input dimension ``d`` on which ``m`` is defined (for a formula, the largest coordinate
        index it names, ``x4`` -> 4).
    isotropic : bool
        Whether ``m(x)`` depends on ``x`` only through ``|x|`` (rotation invariant on every ``R^d``),
        the condition of S-weak (Thm 4.2).  A formula is isotropic exactly when it uses no coordinate
        ``x_l``, only ``r = |x|`` (a non-constant function of ``x1..xk`` alone is not rotation invariant
        on ``R^(k+1)``).
    lipschitz_source : str
        ``"stated"`` when the claims page states the Lipschitz constant (``zero``, ``sin13``);
        ``"derived"`` when it is computed exactly from the formula (the supremum of ``|grad m|``; for
        parsed formulas: constants, linear forms, and polynomials of degree >= 2, whose constant is
        ``inf``, when their expansion is bounded by :data:`MAX_EXPANDED_DEGREE` and
        :data:`MAX_EXPANDED_TERMS`, read from the tree without expanding); ``"estimated"`` when it is
        the largest ``|grad m|`` on a large seeded sample (a lower bound of the true constant, see
        :data:`LIPSCHITZ_SAMPLE`, raised by a secant search that bisects towards the steepest part of
        the function, :func:`_steepest_secant`, so that a slope narrower than the sample's spacing is
        seen: ``tanh(1e6*x1)`` gives 1e6); ``"unbounded"`` when ``|grad m|`` was seen to grow without
        bound along rays (or overflow), or the secants' slope was still growing at the resolution of a
        double (a jump, or a transition narrower than the spacing of doubles, whose slope no sample
        resolves), so the constant is ``inf``.
    _func : callable
        The vectorised ``m``, ``(N, d) -> (N,)``, without checks (the library's own).
    _lipschitz : callable
        ``d -> L``, behind :meth:`lipschitz_constant`.
    expression : sympy.Expr or None
        The parsed formula (``None`` for the catalogue).
    """

    name: str
    formula: str
    min_dim: int
    isotropic: bool
    lipschitz_source: str
    _func: Callable[[np.ndarray], np.ndarray] = field(repr=False)
    _lipschitz: Callable[[int], float] = field(repr=False)
    expression: sp.Expr | None = field(default=None, repr=False)

    def __reduce_ex__(self, protocol):
        # Formulas and catalogue functions travel (to worker processes) by name and are rebuilt there.
        if self.expression is not None or _BY_NAME.get(self.name) is self:
            return (regression_function, (self.name,))
        return super().__reduce_ex__(protocol)

    def __call__(self, x) -> np.ndarray | float:
        """``m(x)``.

        Parameters
        ----------
        x : array (N, d) or (d,)
            Points, ``d >= min_dim``.

        Returns
        -------
        numpy.ndarray or float
            ``(N,)`` values, or a float for one point.

        Raises
        ------
        ValueError
            Naming ``x`` when it has fewer than :attr:`min_dim` columns, or where ``m(x)`` is not a finite
            double (it overflows, or a formula is undefined there).
        """
        arr = as_float_array(x, "x", ndim=(1, 2))
        single = arr.ndim == 1
        pts = arr[None, :] if single else arr
        if pts.shape[1] < self.min_dim:
            raise ValueError(f"x: {self.name!r} needs inputs of dimension d >= {self.min_dim}, got shape {arr.shape}")
        with np.errstate(all="ignore"):
            out = self._func(pts)
        bad = ~np.isfinite(out)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"x: {self.name!r} is {out[i]} (not a finite double) at x = "
                f"({', '.join(f'{v:.3g}' for v in pts[i][:6])}{', ...' if pts.shape[1] > 6 else ''})"
            )
        return float(out[0]) if single else out

    def lipschitz_constant(self, d: int | None = None) -> float:
        """Global Lipschitz constant ``L`` of ``m`` on ``R^d`` (``inf`` if none).

        Used by the printed bound of Lemma 4.1.  See :attr:`lipschitz_source` for how it was obtained.

        Parameters
        ----------
        d : int, optional
            The dimension; it matters only for ``additive`` (``L = sqrt(d)``) and formulas in ``r``, and
            defaults to :attr:`min_dim`.

        Returns
        -------
        float
            ``L``.
        """
        d = self.min_dim if d is None else positive_int(d, "d", minimum=self.min_dim)
        # the estimate holds about 8 arrays of LIPSCHITZ_SAMPLE x d (points, gradients, directions)
        check_entries("d", LIPSCHITZ_SAMPLE, d, 8)
        return float(self._lipschitz(d))


#: Row sums of squares outside ``[2**-960, 2**1000]`` may have overflowed or lost digits to underflow:
#: :func:`_norm` recomputes those rows with each row scaled by its largest entry.
_SQ_LOW, _SQ_HIGH = 2.0**-960, 2.0**1000


def _norm(x):
    """Euclidean norms of the rows of ``x`` ``(N, d)``, ``(N,)``: finite for every finite row.

    ``sqrt(sum x^2)`` (bit for bit) where the sum of squares is safely inside
    a double, else ``s * sqrt(sum (x/s)^2)`` with ``s`` the row's largest
    ``|x_l|`` (inputs of 1e200 gave inf, of 1e-200 gave 0).
    """
    with np.errstate(over="ignore", under="ignore"):
        sq = (x * x).sum(axis=1)
    out = np.sqrt(sq)
    bad = ~((sq >= _SQ_LOW) & (sq <= _SQ_HIGH))
    if bad.any():
        rows = x[bad]
        top = np.abs(rows).max(axis=1)
        safe = np.where(top > 0, top, 1.0)
        out[bad] = top * np.sqrt(((rows / safe[:, None]) ** 2).sum(axis=1))
    return out


def _const(value):
    return lambda d: value


_CATALOGUE = (
    RegressionFunction("zero", "0", 1, True, "stated", lambda x: np.zeros(x.shape[0]), _const(0.0)),
    RegressionFunction(
        "sin13",
        "sin x1 + sin x3",
        3,
        False,
        "stated",
        lambda x: np.sin(x[:, 0]) + np.sin(x[:, 2]),
        _const(math.sqrt(2.0)),
    ),
    RegressionFunction(
        "bvc",
        "sin x1 + x2^2/2 - 0.3 x3 x4",
        4,
        False,
        "derived",
        lambda x: np.sin(x[:, 0]) + 0.5 * x[:, 1] ** 2 - 0.3 * x[:, 2] * x[:, 3],
        _const(math.inf),
    ),
    RegressionFunction(
        "iso_exp",
        "2 exp(-|x|^2/4)",
        1,
        True,
        "derived",
        lambda x: 2.0 * np.exp(-(x * x).sum(axis=1) / 4.0),
        _const(math.sqrt(2.0) * math.exp(-0.5)),
    ),
    RegressionFunction("iso_cos", "cos(1.5 |x|)", 1, True, "derived", lambda x: np.cos(1.5 * _norm(x)), _const(1.5)),
    RegressionFunction("iso_cos6", "cos(1.2 |x|)", 1, True, "derived", lambda x: np.cos(1.2 * _norm(x)), _const(1.2)),
    RegressionFunction(
        "aniso",
        "sin(2 x1) + 0.5 x2",
        2,
        False,
        "derived",
        lambda x: np.sin(2.0 * x[:, 0]) + 0.5 * x[:, 1],
        _const(math.sqrt(4.25)),
    ),
    RegressionFunction(
        "blind",
        "sin(2 x1) + x1",
        1,
        False,
        "derived",
        lambda x: np.sin(2.0 * x[:, 0]) + x[:, 0],
        _const(3.0),
    ),
    RegressionFunction(
        "additive",
        "sum_l sin x_l",
        1,
        False,
        "derived",
        lambda x: np.sin(x).sum(axis=1),
        lambda d: math.sqrt(d),
    ),
    RegressionFunction(
        "iso_cos8",
        "3 cos(0.8 |x|)",
        1,
        True,
        "derived",
        lambda x: 3.0 * np.cos(0.8 * _norm(x)),
        _const(2.4),
    ),
)

_BY_NAME = {f.name: f for f in _CATALOGUE}

#: Names of the regression functions, in the order of the claims page's table.
REGRESSION_FUNCTIONS = tuple(_BY_NAME)


# --------------------------------------------------------------------------
# Formulas in x1 ... xd (regression functions, noise levels)
# --------------------------------------------------------------------------

#: Functions and constants a formula in the coordinates ``x1``, ..., ``xd`` may use.
EXPRESSION_FUNCTIONS = {
    "sin": sp.sin,
    "cos": sp.cos,
    "exp": sp.exp,
    "log": sp.log,
    "sqrt": sp.sqrt,
    "tanh": sp.tanh,
    "abs": sp.Abs,
    "pi": sp.pi,
    "E": sp.E,
}

#: The named constants of :data:`EXPRESSION_FUNCTIONS` (a formula may be one of them alone).
_CONSTANTS = frozenset(k for k, v in EXPRESSION_FUNCTIONS.items() if isinstance(v, sp.Expr))

#: Largest coordinate index a formula may name (``x1 ... x4096``).
MAX_COORDINATE = 4096

_COORDINATE = re.compile(r"x([1-9][0-9]*)\Z")
#: The norm ``r = |x|`` over all ``d`` coordinates.
R_SYMBOL = sp.Symbol("r", nonnegative=True)


@functools.cache
def _coordinate(index: int) -> sp.Symbol:
    return sp.Symbol(f"x{index}", real=True)


def _symbol(name: str):
    if name == "r":
        return R_SYMBOL
    match = _COORDINATE.match(name)
    if match and int(match.group(1)) <= MAX_COORDINATE:
        return _coordinate(int(match.group(1)))
    return None


#: The grammar of a formula in ``x1 ... xd`` (:mod:`mhanw.infra.expressions`).
GRAMMAR = Grammar(
    symbols=_symbol,
    functions=EXPRESSION_FUNCTIONS,
    allowed=(
        f"x1, x2, ..., x{MAX_COORDINATE} (coordinates, numbered from 1), r (the norm |x|), "
        + ", ".join(EXPRESSION_FUNCTIONS)
    ),
    subject="expression",
    empty_hint="an expression in x1 ... xd",
)


def _coordinate_index(sym: sp.Symbol) -> int:
    return int(sym.name[1:]) if sym is not R_SYMBOL else 0


@dataclass(frozen=True)
class _Formula:
    """A parsed formula compiled for numpy: ``func(X)`` for ``X`` ``(N, d)``, ``d >= min_dim``."""

    text: str
    expr: sp.Expr
    min_dim: int
    args: tuple  # the symbols, in the order of the compiled function's arguments
    compiled: Callable

    def __call__(self, X: np.ndarray) -> np.ndarray:
        values = []
        for sym in self.args:
            values.append(_norm(X) if sym is R_SYMBOL else X[:, _coordinate_index(sym) - 1])
        with np.errstate(all="ignore"):
            out = np.asarray(self.compiled(*values))
        if np.iscomplexobj(out):
            out = np.where(out.imag == 0, out.real, np.nan)
        return np.array(np.broadcast_to(out, (X.shape[0],)), dtype=float)


@functools.lru_cache(maxsize=256)
def _formula(text, name: str) -> _Formula:
    """Parse and compile a formula in ``x1 ... xd`` and ``r``; ``ValueError`` naming ``name`` if malformed."""
    if isinstance(text, sp.Basic):  # a string is bounded by its length; an expression by its tree
        check_tree(text, name)
    expr = GRAMMAR.parse(text, name)
    if isinstance(text, str):
        named = [_symbol(t) for t in GRAMMAR.names_in(text, name) if t not in EXPRESSION_FUNCTIONS]
    else:
        named = list(expr.free_symbols)
    if expr.has(sp.I, sp.zoo, sp.oo, -sp.oo, sp.nan):
        raise ValueError(f"{name}: the expression {text!r} is not real and finite (it evaluates to {expr})")
    indices = [_coordinate_index(s) for s in named]
    min_dim = max(indices + [1])
    args = tuple(sorted(expr.free_symbols, key=_coordinate_index))
    compiled = sp.lambdify(args, expr, modules="numpy")
    label = text.strip() if isinstance(text, str) else sp.sstr(text)
    formula = _Formula(label, expr, min_dim, args, compiled)
    # A formula must be a finite real number wherever data may fall; checked on a seeded probe.
    probe = np.random.default_rng(np.random.SeedSequence(_PROBE_SEED)).standard_normal((_PROBE_SIZE, min_dim))
    probe *= np.repeat(np.geomspace(0.1, 10.0, 8), _PROBE_SIZE // 8)[:, None]
    try:
        values = formula(probe)
    except (TypeError, ArithmeticError, AttributeError, NameError) as exc:  # a function numpy cannot evaluate
        raise ValueError(
            f"{name}: the expression {label[:80]!r} cannot be evaluated on arrays "
            f"({type(exc).__name__}: {brief(str(exc))})"
        ) from None
    bad = ~np.isfinite(values)
    if np.any(bad):
        x = probe[np.flatnonzero(bad)[0]]
        raise ValueError(
            f"{name}: the expression {label!r} is not a finite real number at x = ({', '.join(f'{v:.3g}' for v in x)})"
        )
    return formula


#: Seed and size of the probe sample on which a formula is checked when parsed.
_PROBE_SEED, _PROBE_SIZE = 20260521, 4096

#: Seed and size of the sample on which the Lipschitz constant of a formula is estimated.
LIPSCHITZ_SEED, LIPSCHITZ_SAMPLE = 20260520, 1 << 15
#: Radii of the rays along which the gradient is probed for unbounded growth.
_RAY_RADII = (10.0, 100.0, 1000.0)
#: The local search for a point where the gradient has no bound (``sqrt(|x1|)`` at 0): from each of the
#: ``_LOCAL_STARTS`` sample points with the largest ``|grad m|``, a step to the best of ``_LOCAL_DIRS``
#: neighbours, up to ``_LOCAL_STEPS`` times, at each radius of ``_LOCAL_RADII`` (0.1 down to 1e-12).  Near a point where the
#: gradient is bounded the search has converged by radius 1e-6; near one where it is not, it keeps
#: growing as the radius shrinks: more than ``_LOCAL_GROWTH`` times from radius 1e-6 to 1e-12 (or a
#: value that is not finite) means no finite Lipschitz constant (``|x1|**0.9`` grows 4 times, a
#: bounded gradient not at all).
_LOCAL_STARTS, _LOCAL_DIRS, _LOCAL_GROWTH, _LOCAL_STEPS = 16, 32, 1.5, 20
_LOCAL_RADII = tuple(np.geomspace(1e-1, 1e-12, 12))


def _local_growth(grad, X, norms, rng) -> float:
    """The growth of ``|grad m|`` in a local search around the largest sample values.

    How much the largest ``|grad m|`` grows in the local search of :data:`_LOCAL_RADII` from the
    sample points ``X`` ``(n, dim)`` with the largest ``norms``, between radius 1e-6 and the end
    (``inf`` when a value is not finite).
    """
    points = X[np.argsort(norms)[-_LOCAL_STARTS:]].copy()  # (s, dim)
    best = np.sort(norms)[-_LOCAL_STARTS:]
    dim, rows = X.shape[1], np.arange(len(points))
    coarse: float | None = None  # the best at radius 1e-6, one of _LOCAL_RADII
    with np.errstate(all="ignore"):
        for r in _LOCAL_RADII:
            for _ in range(_LOCAL_STEPS):  # steps of length r while one helps: a search travels 20 r
                dirs = rng.standard_normal((_LOCAL_DIRS, dim))
                dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
                cand = points[:, None, :] + r * dirs[None]  # (s, k, dim)
                g = np.linalg.norm(grad(cand.reshape(-1, dim)), axis=1).reshape(len(points), _LOCAL_DIRS)
                if not np.all(np.isfinite(g)):
                    return math.inf
                i = g.argmax(axis=1)
                better = g[rows, i] > best
                if not better.any():
                    break
                points[better] = cand[rows, i][better]
                best = np.where(better, g[rows, i], best)
            if coarse is None and r <= 1.0001e-6:
                coarse = float(best.max())
    assert coarse is not None
    return float(best.max()) / max(coarse, 1e-300)


#: The secant search of a Lipschitz estimate: ``_SECANT_PAIRS`` random pairs of sample points, the
#: ``_SECANT_BISECTED`` steepest of them bisected (keeping the steeper half, whose slope is at least the
#: whole segment's) up to ``_SECANT_STEPS`` times, down to segments of one rounding unit of the points.  A
#: half counts while ``m`` changes on it by more than ``_SECANT_RESOLUTION`` times the largest ``|m|`` of
#: the pairs (below, a secant measures rounding, not slope); a pair whose halves both change less has
#: converged.  A slope that still grows ``_SECANT_GROWTH`` times over the last ``_SECANT_WINDOW`` halvings
#: when the segments reach one rounding unit is not resolved (a jump doubles with every halving).
_SECANT_PAIRS, _SECANT_BISECTED, _SECANT_STEPS = 4096, 16, 1100
_SECANT_RESOLUTION, _SECANT_WINDOW, _SECANT_GROWTH = 1e-7, 8, 1.5


def _steepest_secant(func, grad, X, rng) -> tuple[float, bool]:
    """The steepest secant of ``m`` found by bisecting random pairs of the sample.

    ``(slope, resolved)``: the steepest secant ``|m(a) - m(b)| / |a - b|`` found by bisecting the steepest
    of random pairs of the sample ``X`` ``(N, dim)`` towards the steepest part of each segment (and
    ``|grad m|`` where the segments end), a lower bound of the Lipschitz constant that sees a slope too
    narrow for a sample point to land on (``tanh(1e6*x1)``: the gradient at the sample gave 8,252, the
    secants give 1e6); ``resolved`` is ``False`` when the slope was still growing as the segments reached
    the resolution of a double (a jump, or a transition narrower than the spacing of doubles).
    """
    idx = rng.permutation(X.shape[0])[: 2 * _SECANT_PAIRS]
    A, B = X[idx[0::2]], X[idx[1::2]]

    def slope(fp, fq, p, q, floor):
        with np.errstate(all="ignore"):
            change = np.abs(fp - fq)
            out = change / _norm(p - q)
        return np.where(np.isfinite(out) & (change > floor), out, 0.0)

    fa, fb = func(A), func(B)
    floor = _SECANT_RESOLUTION * float(np.max(np.abs(np.concatenate([fa, fb])), initial=0.0))
    slopes = slope(fa, fb, A, B, floor)
    top = np.argsort(slopes)[-_SECANT_BISECTED:]
    a, b, fa, fb = A[top].copy(), B[top].copy(), fa[top].copy(), fb[top].copy()
    active = slopes[top] > 0
    history = [float(slopes[top].max())]
    for _ in range(_SECANT_STEPS):
        c = 0.5 * (a + b)
        active &= ~((c == a).all(axis=1) | (c == b).all(axis=1))  # one rounding unit long
        if not active.any():
            break
        fc = func(c)
        left, right = slope(fc, fa, c, a, floor), slope(fb, fc, b, c, floor)
        active &= (left > 0) | (right > 0)  # converged: m changes on neither half beyond its rounding
        go_left = (left >= right)[:, None] & active[:, None]
        go_right = (left < right)[:, None] & active[:, None]
        a, fa = np.where(go_right, c, a), np.where(go_right[:, 0], fc, fa)
        b, fb = np.where(go_left, c, b), np.where(go_left[:, 0], fc, fb)
        history.append(max(history[-1], float(np.max(np.where(active, np.maximum(left, right), 0.0)))))
    with np.errstate(all="ignore"):
        ends = _norm(grad(np.vstack([a, b])))
    found = max(history[-1], float(np.max(np.where(np.isfinite(ends), ends, 0.0))))
    growing = len(history) > _SECANT_WINDOW and history[-1] > _SECANT_GROWTH * history[-1 - _SECANT_WINDOW]
    return found, not growing


def _gradient(formula: _Formula, name: str = "regression"):
    """The gradient of a formula as a vectorised function.

    ``grad m`` as a function of ``X`` ``(N, d)`` -> ``(N, d)`` (chain rule through ``r = |x|``); ``ValueError``
    naming ``name`` when the partial derivatives together exceed :data:`MAX_GRADIENT_OPS` operations.
    """
    derivatives = [(s, sp.diff(formula.expr, s)) for s in formula.args]
    ops = sum(sp.count_ops(d) + 1 for _, d in derivatives)
    if ops > MAX_GRADIENT_OPS:
        raise ValueError(
            f"{name}: the partial derivatives of {brief(formula.text)} by its {len(formula.args)} "
            f"variables have {ops} operations together, each evaluated on {LIPSCHITZ_SAMPLE} points "
            f"for its Lipschitz constant (at most {MAX_GRADIENT_OPS}); use fewer coordinates, or the "
            "norm r for an isotropic function"
        )
    partials = [(s, sp.lambdify(formula.args, d, modules="numpy")) for s, d in derivatives]

    def grad(X):
        values = [
            np.sqrt((X * X).sum(axis=1)) if s is R_SYMBOL else X[:, _coordinate_index(s) - 1] for s in formula.args
        ]
        G = np.zeros_like(X)
        with np.errstate(all="ignore"):
            for s, f in partials:
                g = np.broadcast_to(np.asarray(f(*values), dtype=float), (X.shape[0],))
                if s is R_SYMBOL:
                    G += (g / values[formula.args.index(R_SYMBOL)])[:, None] * X
                else:
                    G[:, _coordinate_index(s) - 1] += g
        return G

    return grad


#: Polynomials whose degree (bounded from the expression tree) is above this are not expanded to
#: find their Lipschitz constant exactly (``(x1 + ... + x5)**100`` has millions of terms); their
#: constant is estimated like any other formula's.
MAX_EXPANDED_DEGREE = 12
#: ... nor are those whose expansion may have more terms than this (bounded from the tree, without
#: expanding): ``(x1 + ... + x10)**12``, 56 characters of degree 12, has 293,930 terms and took sympy
#: hours; a thousand terms expand in a fraction of a second.
MAX_EXPANDED_TERMS = 1000


def _term_bound(expr) -> float:
    """An upper bound of the number of terms of a polynomial's expansion.

    An upper bound of the number of terms of the expansion of a polynomial expression, read from its
    tree without expanding it (``inf`` for anything that is not a polynomial in its symbols).
    """
    if expr.is_Symbol or expr.is_Number or not expr.free_symbols:
        return 1
    if expr.is_Add:
        return sum(_term_bound(a) for a in expr.args)
    if expr.is_Mul:
        return math.prod(_term_bound(a) for a in expr.args)
    if expr.is_Pow and expr.exp.is_Integer and expr.exp >= 0:
        e, t = int(expr.exp), _term_bound(expr.base)
        if math.isinf(t):
            return math.inf
        v, degree = len(expr.base.free_symbols), e * _degree_bound(expr.base)
        return min(math.comb(int(t) + e - 1, e), math.comb(v + degree, v))  # products of e terms; monomials
    return math.inf


def _degree_bound(expr) -> int:
    """An upper bound of the total degree of a polynomial expression, read from its tree without expanding it."""
    if expr.is_Symbol:
        return 1
    if expr.is_Number or not expr.free_symbols:
        return 0
    if expr.is_Add:
        return max(_degree_bound(a) for a in expr.args)
    if expr.is_Mul:
        return sum(_degree_bound(a) for a in expr.args)
    if expr.is_Pow and expr.exp.is_Integer and expr.exp >= 0:
        return int(expr.exp) * _degree_bound(expr.base)
    return MAX_EXPANDED_DEGREE + 1  # anything else: do not expand


#: Most symbolic work of a Lipschitz estimate, which differentiates the formula once per variable: the sum
#: over the nodes of its tree of the variables below the node times the node's arguments (squared for a
#: product, whose derivative sympy builds in time of order ``factors**2``).  The product of 30 coordinates
#: (27,000) took a second, of 60 (216,000) seven seconds, of 199 (7.9 million) minutes (measured).
MAX_GRADIENT_WORK = 100_000
#: Most operations of the partial derivatives together (``count_ops + 1`` each), each evaluated on the
#: :data:`LIPSCHITZ_SAMPLE` points: ``tanh(x1 + ... + x199)`` (199 partials of 200 operations) took 12 s,
#: ``tanh(x1 + ... + x139)`` seven.
MAX_GRADIENT_OPS = 12_000


def _gradient_work(expr: sp.Expr) -> int:
    """The symbolic work of differentiating ``expr`` once by each of its variables (:data:`MAX_GRADIENT_WORK`)."""
    work = 0
    for node in sp.preorder_traversal(expr):
        if node.args and node.free_symbols:
            width = len(node.args)
            work += len(node.free_symbols) * (width * width if node.is_Mul else width)
    return work


def _check_gradient_work(formula: _Formula, name: str) -> None:
    """Refuse a formula whose gradient would be too large to derive.

    ``ValueError`` naming ``name`` when differentiating ``formula`` once per variable would exceed
    :data:`MAX_GRADIENT_WORK`, before any derivative is taken.
    """
    work = _gradient_work(formula.expr)
    if work > MAX_GRADIENT_WORK:
        raise ValueError(
            f"{name}: the expression {brief(formula.text)} ({len(formula.args)} variables) is too large "
            f"to differentiate by each of its variables for its Lipschitz constant (symbolic work "
            f"{work}, at most {MAX_GRADIENT_WORK}; a product of v coordinates costs about v**3); use "
            "fewer coordinates, or the norm r for an isotropic function"
        )


def _lipschitz_of(formula: _Formula, name: str = "regression"):
    """The Lipschitz constant of a formula and how it was obtained.

    ``(L(d), source)`` for a formula: exact for polynomials, else estimated (:attr:`RegressionFunction.lipschitz_source`)
    within :data:`MAX_GRADIENT_WORK` (``ValueError`` naming ``name`` beyond it).
    """
    xs = [s for s in formula.args if s is not R_SYMBOL]
    if R_SYMBOL not in formula.args:
        if not xs:
            return (lambda d: 0.0), "derived"
        if (
            formula.expr.is_polynomial(*xs)
            and _degree_bound(formula.expr) <= MAX_EXPANDED_DEGREE
            and _term_bound(formula.expr) <= MAX_EXPANDED_TERMS
        ):
            poly = sp.Poly(formula.expr, *xs)
            if poly.total_degree() <= 1:
                coeffs = [float(poly.coeff_monomial(s)) for s in xs]
                value = math.hypot(*coeffs)
                return (lambda d: value), "derived"
            return (lambda d: math.inf), "derived"
    _check_gradient_work(formula, name)
    grad = _gradient(formula, name)

    @functools.cache
    def estimate(d: int) -> float:
        dim = d if R_SYMBOL in formula.args else formula.min_dim
        rng = np.random.default_rng(np.random.SeedSequence(LIPSCHITZ_SEED))
        X = rng.standard_normal((LIPSCHITZ_SAMPLE, dim))
        X *= np.repeat(np.geomspace(0.1, 10.0, 8), LIPSCHITZ_SAMPLE // 8)[:, None]
        norms = np.linalg.norm(grad(X), axis=1)
        dirs = rng.standard_normal((512, dim))
        dirs = np.vstack(
            [
                dirs / np.linalg.norm(dirs, axis=1, keepdims=True),
                np.eye(dim),
                -np.eye(dim),
                np.full((1, dim), dim**-0.5),
                np.full((1, dim), -(dim**-0.5)),
            ]
        )
        rays = [np.linalg.norm(grad(R * dirs), axis=1) for R in _RAY_RADII]
        if not (np.all(np.isfinite(norms)) and all(np.all(np.isfinite(g)) for g in rays)):
            return math.inf
        far = [float(g.max()) for g in rays]
        if far[2] >= 2.0 * far[1] and far[1] >= 2.0 * far[0] and far[2] > norms.max():
            return math.inf
        if _local_growth(grad, X, norms, rng) > _LOCAL_GROWTH:
            return math.inf  # a point where the gradient has no bound (sqrt(|x1|) at 0)
        secant, resolved = _steepest_secant(formula, grad, X, rng)
        if not resolved:
            return math.inf  # a slope the sampler cannot resolve at double precision: no finite estimate
        return float(max(norms.max(), *far, secant))

    source = "unbounded" if math.isinf(estimate(formula.min_dim)) else "estimated"
    return estimate, source


@functools.lru_cache(maxsize=256)
def _regression_from_formula(text) -> RegressionFunction:
    formula = _formula(text, "regression")
    lipschitz, source = _lipschitz_of(formula)
    isotropic = not any(s is not R_SYMBOL for s in formula.args)
    return RegressionFunction(
        formula.text, sp.sstr(formula.expr), formula.min_dim, isotropic, source, formula, lipschitz, formula.expr
    )


def regression_function(spec) -> RegressionFunction:
    """The regression function ``m`` given by ``spec``.

    A formula is vectorised with numpy, must be a finite real number on a seeded probe sample, and
    gets ``min_dim``, ``isotropic`` and a Lipschitz constant as described in
    :class:`RegressionFunction`.

    Parameters
    ----------
    spec : str, sympy.Expr or RegressionFunction
        A name of :data:`REGRESSION_FUNCTIONS`, a formula in the coordinates ``x1 ... xd`` and the norm
        ``r = |x|`` (a string such as ``"sin(x1) + x2**2/2"`` or ``"2*exp(-r**2/4)"``, or a sympy
        expression in those symbols; functions :data:`EXPRESSION_FUNCTIONS`, numbers,
        ``+ - * / ** ^`` and parentheses), or a :class:`RegressionFunction` (returned unchanged), so
        functions accept any of them.

    Returns
    -------
    RegressionFunction
        The function.

    Raises
    ------
    ValueError
        Starting with ``regression:`` for an unknown name, a formula that does not parse, uses a name it
        may not, is too large, or is not a finite real number on the probe sample.
    """
    if isinstance(spec, RegressionFunction):
        return spec
    if isinstance(spec, str) and spec in _BY_NAME:
        return _BY_NAME[spec]
    names = ", ".join(repr(c) for c in REGRESSION_FUNCTIONS)
    if (
        isinstance(spec, str)
        and re.fullmatch(r"\s*[A-Za-z_]\w*\s*", spec)
        and _symbol(spec.strip()) is None
        and not re.fullmatch(r"\s*x[0-9]+\s*", spec)
        and spec.strip() not in _CONSTANTS
    ):
        raise ValueError(f"regression: expected one of {names} or an expression in x1 ... xd, got {brief(spec)}")
    if not isinstance(spec, (str, sp.Expr)):
        raise ValueError(f"regression: expected one of {names} or an expression in x1 ... xd, got {brief(spec)}")
    return _regression_from_formula(spec)


# --------------------------------------------------------------------------
# Input distributions
# --------------------------------------------------------------------------

#: The kinds of input distribution and whether each takes a parameter (``kind:PARAM``).
INPUT_KINDS = {
    "gaussian": None,
    "gaussian-diagonal": "COND",
    "gaussian-equicorrelated": "RHO",
    "student-t": "NU",
    "uniform-cube": None,
    "uniform-sphere": None,
    "ar1": "PHI",
    "clustered": "K:ICC",
}
#: The kinds whose rows are dependent (every other kind draws iid rows).
DEPENDENT_KINDS = ("ar1", "clustered")

_SQRT3 = math.sqrt(3.0)
#: Largest condition number of ``gaussian-diagonal``: the variances keep relative precision 1e-4
#: after a whitening solve, and their geometric sequence cannot overflow (COND = 1e308 gave
#: variances of 0 and inf).
MAX_CONDITION = 1e12


def _split_spec(spec: str, name: str, kinds: dict) -> tuple[str, str | None]:
    """``"kind"`` or ``"kind:PARAM"`` -> ``(kind, PARAM text or None)``, checked against ``kinds``."""
    if not isinstance(spec, str):
        raise ValueError(f"{name}: expected a spec string such as {next(iter(kinds))!r}, got {brief(spec)}")
    kind, sep, param = spec.strip().partition(":")
    kind = kind.strip()
    if kind not in kinds:
        listed = ", ".join(k if kinds[k] is None else f"{k}:{kinds[k]}" for k in kinds)
        raise ValueError(f"{name}: unknown kind {kind!r} in {spec!r}; expected one of {listed}")
    if kinds[kind] is None and sep:
        raise ValueError(f"{name}: {kind!r} takes no parameter, got {brief(spec)}")
    if kinds[kind] is not None and not param.strip():
        raise ValueError(
            f"{name}: {kind!r} needs its parameter {kinds[kind]} ({kind}:{kinds[kind]}), got {brief(spec)}"
        )
    return kind, (param.strip() if sep else None)


#: A plain decimal number (read directly; anything else goes through :data:`NUMBER_GRAMMAR`).
_DECIMAL = re.compile(r"\s*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*")


def _number(text, name: str, what: str) -> float:
    """A spec's numeric parameter as a float.

    A spec's numeric parameter: a real number (not a bool) or a string holding a number or a
    formula of numbers (``"3"``, ``"1/pi"``, ``"sqrt(2)"``: :data:`NUMBER_GRAMMAR`).
    """
    if isinstance(text, (bool, np.bool_)):
        raise ValueError(f"{name}: expected a number for {what}, got {brief(text)}")
    value = None
    if isinstance(text, str) and text.strip().lstrip("+-").lower() in ("inf", "infinity", "nan"):
        raise ValueError(f"{name}: expected a finite number for {what}, got {brief(text)}")
    if isinstance(text, str):
        # the one parser of formulas: plain decimals and formulas of numbers (Python's float() would also
        # take "3_0", "infinity" and "nan", which a reader would not recognise and LaTeX could not print)
        try:
            value = float(text) if _DECIMAL.fullmatch(text) else float(NUMBER_GRAMMAR.parse(text, name))
        except (TypeError, ValueError, OverflowError):
            value = None
    elif isinstance(text, (numbers.Real, np.floating, np.integer)):
        try:
            value = float(text)
        except OverflowError:
            value = None
    if value is None:
        raise ValueError(f"{name}: expected a number for {what}, got {brief(text)}") from None
    if not math.isfinite(value):
        raise ValueError(f"{name}: expected a finite number for {what}, got {brief(text)}")
    return value


@dataclass(frozen=True)
class InputDistribution:
    """The law of the inputs ``X`` in ``R^d``; every kind has mean 0 and unit variance per coordinate.

    ``kind`` (``parameter``):

    - ``"gaussian"``: ``N(0, I_d)``, the reference; rotation invariant.  Drawn
      as ``rng.standard_normal((n, d))`` exactly.
    - ``"gaussian-diagonal"`` (``1 <= COND <=`` :data:`MAX_CONDITION`): independent centred Gaussian
      coordinates with variances ``lambda_l = COND^((l-1)/(d-1)) / c``,
      ``l = 1..d``, geometric from the smallest to the largest with ratio
      (condition number) ``COND`` and ``c`` chosen so that the average
      variance is 1 (``trace = d``, the reference's); ``d = 1`` gives
      variance 1.  Rotation invariant only for ``COND = 1``.
    - ``"gaussian-equicorrelated"`` (``RHO``): unit variances, every
      correlation ``RHO``, covariance ``(1 - RHO) I + RHO 1 1^T``; positive
      definite for ``-1/(d-1) < RHO < 1`` (checked when ``d`` is known).
      Rotation invariant only for ``RHO = 0``.
    - ``"student-t"`` (``NU > 2``): multivariate t with ``NU`` degrees of
      freedom, ``X = sqrt((NU-2)/W) Z`` with ``Z ~ N(0, I_d)``, ``W ~
      chi^2_NU`` (one per point), covariance ``I_d``; rotation invariant
      (spherical), heavier tails and dependent coordinates.  ``NU <= 2`` has
      no variance and is rejected.
    - ``"uniform-cube"``: independent ``U(-sqrt 3, sqrt 3)`` coordinates,
      covariance ``I_d``; not rotation invariant.
    - ``"uniform-sphere"``: uniform on the sphere of radius ``sqrt d``,
      ``X = sqrt(d) Z / |Z|``, covariance ``I_d``; rotation invariant (no
      density on ``R^d``: kernel-density arguments do not apply).

    Two kinds draw **dependent rows** (:data:`DEPENDENT_KINDS`); each row is
    still ``N(0, I_d)`` (the marginal law, hence bandwidths, of the
    reference), but the rows of one sample are correlated:

    - ``"ar1"`` (``-1 < PHI < 1``): a stationary AR(1) chain along the rows,
      ``X_1 = Z_1``, ``X_i = PHI X_(i-1) + sqrt(1 - PHI^2) Z_i``, so that
      ``Corr(X_il, X_(i+k)l) = PHI^k`` in every coordinate (a time series of
      inputs, e.g. the tokens of one sequence).
    - ``"clustered"`` (``K >= 1`` an integer, ``0 <= ICC < 1``): ``K``
      clusters of consecutive rows (row ``i`` of ``n`` in cluster
      ``floor(i K / n)``), ``X_i = sqrt(ICC) C_g + sqrt(1 - ICC) Z_i`` with
      centres ``C_g ~ N(0, I_d)``: two rows of one cluster have correlation
      ``ICC`` in every coordinate, rows of different clusters are independent.

    Each call of :meth:`sample` is one chain (one set of clusters): the test
    points of a replicate, drawn by a second call, are independent of its
    training sample.  ``ar1:0`` and ``clustered:K:0`` draw exactly what the
    reference draws.  What assumes iid rows: the variance and covariance
    formulas of Lemma 4.1 (``1/n`` rates, the kernel overlap, the printed
    bound), the variance laws of Thm 6.1's risk models and the rates of
    consistency of chapter 01; Thm 3.1's decomposition is an identity of
    moments and the HDI is geometric, so neither does.  :attr:`independent`
    says which case a law is, and :attr:`is_standard_gaussian` (the
    condition of the closed forms) is false for dependent rows.

    Build one from a spec string with :func:`input_distribution`.

    Parameters
    ----------
    kind : str, default "gaussian"
        One of :data:`INPUT_KINDS`.
    parameter : float or tuple, optional
        The kind's parameter: ``COND``, ``RHO``, ``NU`` or ``PHI`` (a float), ``(K, ICC)`` for
        ``"clustered"`` (a pair or the string ``"K:ICC"``), none for the others.

    Raises
    ------
    ValueError
        Naming ``inputs`` for an unknown kind, a parameter a kind does not take, or a parameter out of
        its range.
    """

    kind: str = "gaussian"
    # a float for the one-parameter kinds, (K, ICC) for "clustered", None for the others (checked below)
    parameter: Any = None

    def __post_init__(self):
        one_of(self.kind, "inputs", tuple(INPUT_KINDS))
        needs = INPUT_KINDS[self.kind]
        if needs is None:
            if self.parameter is not None:
                raise ValueError(f"inputs: {self.kind!r} takes no parameter, got {brief(self.parameter)}")
            return
        if self.kind == "clustered":
            object.__setattr__(self, "parameter", _cluster_parameters(self.parameter))
            return
        p = _number(self.parameter, "inputs", f"{needs} of {self.kind!r}")
        if self.kind == "gaussian-diagonal" and not 1.0 <= p <= MAX_CONDITION:
            raise ValueError(
                f"inputs: COND of 'gaussian-diagonal' is a condition number, expected >= 1 and "
                f"<= {MAX_CONDITION:g}, got {p:g}"
            )
        if self.kind == "gaussian-equicorrelated" and not -1.0 < p < 1.0:
            raise ValueError(
                f"inputs: RHO of 'gaussian-equicorrelated' is a correlation, expected in (-1, 1) "
                f"(and > -1/(d-1)), got {p:g}"
            )
        if self.kind == "student-t" and not p > 2.0:
            raise ValueError(f"inputs: NU of 'student-t' must exceed 2 for the inputs to have a variance, got {p:g}")
        if self.kind == "ar1" and not -1.0 < p < 1.0:
            raise ValueError(
                f"inputs: PHI of 'ar1' is the lag-1 autocorrelation of a stationary chain, expected in "
                f"(-1, 1), got {p:g}"
            )
        object.__setattr__(self, "parameter", p)

    @property
    def spec(self) -> str:
        """The spec string that :func:`input_distribution` turns back into this distribution."""
        if self.parameter is None:
            return self.kind
        if self.kind == "clustered":
            return f"{self.kind}:{self.parameter[0]}:{self.parameter[1]!r}"
        return f"{self.kind}:{self.parameter!r}"

    @property
    def independent(self) -> bool:
        """Whether the rows of a sample are iid.

        False for :data:`DEPENDENT_KINDS` with dependence: ``ar1`` with ``PHI != 0``, ``clustered`` with
        ``ICC > 0``.
        """
        if self.kind == "ar1":
            return self.parameter == 0.0
        if self.kind == "clustered":
            return self.parameter[1] == 0.0
        return True

    @property
    def marginal(self) -> InputDistribution:
        """The law of one row: this law for the iid kinds, ``N(0, I_d)`` for the dependent ones."""
        return InputDistribution() if self.kind in DEPENDENT_KINDS else self

    def __str__(self) -> str:
        return self.spec

    @property
    def rotation_invariant(self) -> bool:
        """Whether the law of ``O X`` equals that of ``X`` for every rotation ``O``.

        The condition of several theorems, e.g. the Haar-averaged statements and S-weak of Thm 4.2.
        """
        if self.kind == "gaussian-diagonal":
            return self.parameter == 1.0
        if self.kind == "gaussian-equicorrelated":
            return self.parameter == 0.0
        # the dependent kinds: one rotation applied to every row leaves the joint law unchanged
        return self.kind in ("gaussian", "student-t", "uniform-sphere") + DEPENDENT_KINDS

    @property
    def is_gaussian(self) -> bool:
        """Whether the rows are iid ``N(0, Sigma)`` (see :meth:`gaussian_factor`).

        The dependent kinds have Gaussian rows but are not iid, and are not counted.
        """
        return self.kind.startswith("gaussian")

    @property
    def is_standard_gaussian(self) -> bool:
        """Whether the rows are iid ``N(0, I_d)``, the assumption of the closed-form predictions.

        ``ar1:0`` and ``clustered:K:0`` are included: they are the reference rows.
        """
        if self.kind in DEPENDENT_KINDS:
            return self.independent
        return self.is_gaussian and self.rotation_invariant

    def check_dimension(self, d: int, name: str = "d") -> int:
        """``d`` if the distribution exists in ``R^d`` (``RHO > -1/(d-1)`` for the equicorrelated kind).

        Parameters
        ----------
        d : int >= 1
            The dimension.
        name : str, default "d"
            The caller's argument that holds ``d``, named by an error.

        Returns
        -------
        int
            ``d``.

        Raises
        ------
        ValueError
            Naming ``inputs`` when the equicorrelated covariance is not positive definite in ``R^d``, or
            ``name`` when ``d`` is not a positive integer.
        """
        d = positive_int(d, name)
        if self.kind == "gaussian-equicorrelated" and d > 1 and not self.parameter > -1.0 / (d - 1):
            raise ValueError(
                f"inputs: RHO of 'gaussian-equicorrelated' must exceed -1/(d-1) = {-1.0 / (d - 1):.4g} "
                f"in d = {d} (covariance positive definite), got {self.parameter:g}"
            )
        return d

    def variances(self, d: int) -> np.ndarray:
        """Per-coordinate variances (all 1 except for ``gaussian-diagonal``).

        Parameters
        ----------
        d : int >= 1
            The dimension.

        Returns
        -------
        numpy.ndarray
            ``(d,)``.

        Raises
        ------
        ValueError
            Naming the argument that is out of range or of the wrong shape.
        """
        d = self.check_dimension(d)
        check_entries("d", d)
        if self.kind != "gaussian-diagonal" or d == 1:
            return np.ones(d)
        lam = self.parameter ** (np.arange(d) / (d - 1))
        return lam * (d / lam.sum())

    def mean(self, d: int) -> np.ndarray:
        """``E X``: zero for every kind.

        Parameters
        ----------
        d : int >= 1
            The dimension.

        Returns
        -------
        numpy.ndarray
            ``(d,)`` zeros.

        Raises
        ------
        ValueError
            Naming the argument that is out of range or of the wrong shape.
        """
        d = self.check_dimension(d)
        check_entries("d", d)
        return np.zeros(d)

    def covariance(self, d: int) -> np.ndarray:
        """``Cov X``.

        Parameters
        ----------
        d : int >= 1
            The dimension.

        Returns
        -------
        numpy.ndarray
            ``(d, d)``.

        Raises
        ------
        ValueError
            Naming the argument that is out of range or of the wrong shape.
        """
        d = self.check_dimension(d)
        check_entries("d", d, d)
        if self.kind == "gaussian-equicorrelated":
            return (1.0 - self.parameter) * np.eye(d) + self.parameter * np.ones((d, d))
        return np.diag(self.variances(d))

    def gaussian_factor(self, d: int) -> np.ndarray:
        """For Gaussian kinds, the symmetric ``A`` with ``X = A Z``, ``Z ~ N(0, I_d)`` (``A = Cov^(1/2)``).

        Parameters
        ----------
        d : int >= 1
            The dimension.

        Returns
        -------
        numpy.ndarray
            ``(d, d)``.

        Raises
        ------
        ValueError
            Naming ``inputs`` for a kind that is not Gaussian, or ``d`` when it is out of range.
        """
        if not self.is_gaussian:
            raise ValueError(f"inputs: {self.spec!r} is not Gaussian")
        d = self.check_dimension(d)
        check_entries("d", d, d)
        if self.kind == "gaussian-equicorrelated":
            P = np.full((d, d), 1.0 / d)
            rho = self.parameter
            return math.sqrt(1.0 - rho) * (np.eye(d) - P) + math.sqrt(1.0 + (d - 1) * rho) * P
        return np.diag(np.sqrt(self.variances(d)))

    def sample(self, rng, n: int, d: int) -> np.ndarray:
        """``n`` draws: iid, or one chain / one set of clusters for the dependent kinds.

        ``gaussian``: ``rng.standard_normal((n, d))`` exactly; the other Gaussian kinds, ``student-t``,
        ``uniform-sphere``, ``ar1`` and ``clustered`` start from the same standard normal block (so they
        share it with the reference under common random numbers; ``clustered`` then draws its ``K``
        centres).  Arguments are not checked here: :func:`sample_inputs` checks them.

        Parameters
        ----------
        rng : numpy.random.Generator
            The stream.
        n : int >= 0
            The number of rows.
        d : int >= 1
            The dimension.

        Returns
        -------
        numpy.ndarray
            ``(n, d)``.
        """
        if self.kind == "gaussian":
            return rng.standard_normal((n, d))
        if self.kind == "uniform-cube":
            return rng.uniform(-_SQRT3, _SQRT3, (n, d))
        Z = rng.standard_normal((n, d))
        if self.kind == "ar1":
            return _ar1_rows(Z, self.parameter)
        if self.kind == "clustered":
            K, icc = self.parameter
            if icc == 0.0:  # no dependence: the reference rows, and no centres drawn
                return Z
            centres = rng.standard_normal((min(K, n), d))  # clusters beyond n would hold no row
            group = (np.arange(n) * min(K, n)) // n
            return math.sqrt(icc) * centres[group] + math.sqrt(1.0 - icc) * Z
        if self.kind == "gaussian-diagonal":
            return Z * np.sqrt(self.variances(d))
        if self.kind == "gaussian-equicorrelated":
            if self.parameter == 0.0:
                return Z
            zbar = Z.mean(axis=1, keepdims=True)
            rho = self.parameter
            return math.sqrt(1.0 - rho) * (Z - zbar) + math.sqrt(1.0 + (d - 1) * rho) * zbar
        if self.kind == "student-t":
            W = rng.chisquare(self.parameter, n)
            return Z * np.sqrt((self.parameter - 2.0) / W)[:, None]
        # uniform-sphere
        norms = np.sqrt((Z * Z).sum(axis=1, keepdims=True))
        return Z * (math.sqrt(d) / norms)


def _ar1_rows(Z: np.ndarray, phi: float) -> np.ndarray:
    """The stationary AR(1) chain ``X_1 = Z_1``, ``X_i = phi X_(i-1) + sqrt(1 - phi^2) Z_i`` along axis 0."""
    if phi == 0.0 or Z.shape[0] == 0:
        return Z
    from scipy.signal import lfilter

    b = math.sqrt(1.0 - phi * phi)
    # lfilter: y_i = b z_i + phi y_(i-1), the first row b z_1 + zi; zi = (1 - b) Z_1 starts at X_1 = Z_1
    return lfilter([b], [1.0, -phi], Z, axis=0, zi=(1.0 - b) * Z[:1])[0]


def _cluster_parameters(value) -> tuple[int, float]:
    """The parameters ``(K, ICC)`` of the clustered input law, checked.

    ``K:ICC`` (a string, or a pair) as ``(K, ICC)``: ``K`` an integer from 1 to the shared maximum of a
    size (:data:`mhanw.infra.validate.MAX_COUNT`; at most ``min(K, n)`` centres are drawn per sample),
    ``0 <= ICC < 1``; ``ValueError`` naming ``inputs``.
    """
    parts = value.split(":") if isinstance(value, str) else value
    if isinstance(parts, (int, float, bool, np.number)) or not isinstance(parts, (list, tuple)) or len(parts) != 2:
        raise ValueError(
            f"inputs: 'clustered' takes two parameters K:ICC (clusters, intraclass correlation), got {value!r}"
        )
    k = _number(parts[0], "inputs", "K of 'clustered'")
    if k != int(k) or not 1 <= k <= MAX_COUNT:
        raise ValueError(
            f"inputs: K of 'clustered' is a number of clusters, expected an integer in "
            f"[1, {MAX_COUNT}] (the shared maximum of a size), got {parts[0]!r}"
        )
    icc = _number(parts[1], "inputs", "ICC of 'clustered'")
    if not 0.0 <= icc < 1.0:
        raise ValueError(f"inputs: ICC of 'clustered' is an intraclass correlation, expected in [0, 1), got {icc:g}")
    return int(k), icc


def input_distribution(spec="gaussian", name: str = "inputs") -> InputDistribution:
    """An :class:`InputDistribution` from a spec string ``"kind"`` or ``"kind:PARAM"`` (or the object).

    Kinds (:data:`INPUT_KINDS`): ``gaussian``, ``gaussian-diagonal:COND``,
    ``gaussian-equicorrelated:RHO``, ``student-t:NU``, ``uniform-cube``,
    ``uniform-sphere``, and the dependent ``ar1:PHI``, ``clustered:K:ICC``.

    Parameters
    ----------
    spec : str or InputDistribution, default "gaussian"
        The spec (an InputDistribution is returned unchanged).
    name : str, default "inputs"
        The caller's argument that holds ``spec``: errors start with it.

    Returns
    -------
    InputDistribution
        The law.

    Raises
    ------
    ValueError
        Starting with ``name`` for an unknown kind or a parameter out of range.
    """
    if isinstance(spec, InputDistribution):
        return spec
    kind, param = _split_spec(spec, name, INPUT_KINDS)
    try:
        if kind == "clustered":
            return InputDistribution(kind, param)
        return InputDistribution(
            kind, None if param is None else _number(param, name, f"{INPUT_KINDS[kind]} of {kind!r}")
        )
    except ValueError as exc:
        msg = str(exc)
        raise ValueError(name + msg[len("inputs") :] if msg.startswith("inputs:") else msg) from None


# --------------------------------------------------------------------------
# Noise
# --------------------------------------------------------------------------

#: The noise laws and their parameter (``law:PARAM``).
NOISE_LAWS = {"gaussian": None, "student-t": "NU", "heteroscedastic": "EXPR"}


@dataclass(frozen=True)
class NoiseModel:
    """The noise ``Y - m(X)``: level ``sigma >= 0`` and law.

    - ``"gaussian"``: ``sigma * eps``, ``eps ~ N(0, 1)``, the reference; drawn
      as ``sigma * rng.standard_normal(n)`` exactly.
    - ``"student-t"`` (``parameter = NU > 2``): ``sigma * sqrt((NU-2)/NU) t_NU``,
      standard deviation ``sigma`` and heavier tails (``NU <= 2``: no variance).
    - ``"heteroscedastic"`` (``expression = EXPR``): ``sigma * g(X) * eps``,
      ``eps ~ N(0, 1)``, with ``g`` a formula in ``x1 ... xd`` and ``r`` (as for
      :func:`regression_function`) that must be positive at every drawn point.

    Always independent of ``X`` given the level, with mean 0 and conditional
    variance ``sd(X)^2`` (:meth:`sd`).  Build one with :func:`noise_model`.

    Parameters
    ----------
    sigma : float >= 0, default :data:`mhanw.constants.SIGMA`
        The level.
    law : str, default "gaussian"
        One of :data:`NOISE_LAWS`.
    parameter : float, optional
        ``NU`` of ``"student-t"``.
    expression : str or sympy.Expr, optional
        The level multiplier ``g`` of ``"heteroscedastic"``.

    Raises
    ------
    ValueError
        Naming ``sigma`` or ``noise`` for a level, law, parameter or expression that is out of range or
        that the law does not take (a multiplier must be positive on a seeded probe sample).
    """

    sigma: float = SIGMA
    law: str = "gaussian"
    parameter: Any = None  # NU of "student-t" (a float > 2), None for the other laws (checked below)
    expression: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "sigma", nonnegative_scalar(self.sigma, "sigma"))
        one_of(self.law, "noise", tuple(NOISE_LAWS))
        if self.law == "student-t":
            nu = _number(self.parameter, "noise", "NU of 'student-t'")
            if not nu > 2.0:
                raise ValueError(f"noise: NU of 'student-t' must exceed 2 for the noise to have a variance, got {nu:g}")
            object.__setattr__(self, "parameter", nu)
        elif self.parameter is not None:
            raise ValueError(f"noise: {self.law!r} takes no numeric parameter, got {brief(self.parameter)}")
        if self.law == "heteroscedastic":
            if not isinstance(self.expression, (str, sp.Expr)):
                raise ValueError(
                    f"noise: expected the expression of the level multiplier (a string or a sympy "
                    f"expression), got {brief(self.expression)}"
                )
            formula = _formula(self.expression, "noise")
            probe = np.random.default_rng(np.random.SeedSequence(_PROBE_SEED)).standard_normal(
                (_PROBE_SIZE, formula.min_dim)
            )
            g = formula(probe)
            if not np.all(g > 0):
                x = probe[np.flatnonzero(~(g > 0))[0]]
                raise ValueError(
                    f"noise: the level multiplier {formula.text!r} must be positive, it is {g[~(g > 0)][0]:.3g} "
                    f"at x = ({', '.join(f'{v:.3g}' for v in x)})"
                )
        elif self.expression is not None:
            raise ValueError(f"noise: {self.law!r} takes no expression, got {brief(self.expression)}")

    @property
    def spec(self) -> str:
        """The law as a spec string (without the level)."""
        if self.law == "student-t":
            return f"student-t:{self.parameter!r}"
        if self.law == "heteroscedastic":
            return f"heteroscedastic:{self.expression}"
        return self.law

    def __str__(self) -> str:
        return f"{self.spec} (sigma = {self.sigma:g})"

    @property
    def min_dim(self) -> int:
        """Smallest input dimension the noise law needs (its formula's largest coordinate index)."""
        return _formula(self.expression, "noise").min_dim if self.law == "heteroscedastic" else 1

    @property
    def is_gaussian(self) -> bool:
        """Whether the noise is ``N(0, sigma^2)`` independent of ``X`` (the reference law)."""
        return self.law == "gaussian"

    @property
    def homoscedastic(self) -> bool:
        """Whether the noise has the same conditional variance ``sigma^2`` at every ``x``.

        Every law but ``"heteroscedastic"``.
        """
        return self.law != "heteroscedastic"

    @property
    def rotation_invariant(self) -> bool:
        """Whether the law of the noise given ``X = x`` equals its law given ``X = O x`` for every rotation ``O``.

        Homoscedastic, or a level multiplier that uses only ``r = |x|`` (no coordinate ``x_l``).
        """
        if self.homoscedastic:
            return True
        return all(s is R_SYMBOL for s in _formula(self.expression, "noise").args)

    def sd(self, X) -> np.ndarray:
        """Conditional standard deviation of the noise at the points ``X``.

        Parameters
        ----------
        X : array (N, d)
            The points.

        Returns
        -------
        numpy.ndarray
            ``(N,)``.

        Raises
        ------
        ValueError
            Naming ``X`` when it is not a finite 2-D array, or ``d`` or ``noise`` when the level multiplier
            needs more coordinates or is not positive and finite there.
        """
        X = as_float_array(X, "X", ndim=2, allow_empty=True)
        if self.law != "heteroscedastic":
            return np.full(X.shape[0], self.sigma)
        return self.sigma * self._multiplier(X)

    def _multiplier(self, X: np.ndarray) -> np.ndarray:
        formula = _formula(self.expression, "noise")
        if X.shape[1] < formula.min_dim:
            raise ValueError(f"d: the noise level {formula.text!r} needs d >= {formula.min_dim}, got d = {X.shape[1]}")
        g = formula(X)
        if not np.all((g > 0) & (g < np.inf)):
            i = int(np.flatnonzero(~((g > 0) & (g < np.inf)))[0])
            raise ValueError(
                f"noise: the level multiplier {formula.text!r} is {g[i]:.3g} (not positive, or not "
                f"finite) at a drawn "
                f"point x = ({', '.join(f'{v:.3g}' for v in X[i][:6])})"
            )
        return g

    def draw(self, rng, X) -> np.ndarray:
        """Noise at the training inputs ``X``; consumes ``n`` draws of ``rng``.

        ``gaussian``: ``sigma * rng.standard_normal(n)`` exactly.

        Parameters
        ----------
        rng : numpy.random.Generator
            The stream.
        X : array (n, d)
            The training inputs, with at least :attr:`min_dim` columns.

        Returns
        -------
        numpy.ndarray
            ``(n,)``.

        Raises
        ------
        ValueError
            Naming ``rng`` or ``X`` for a bad generator or inputs (too few columns).
        """
        generator(rng, "rng")
        X = as_float_array(X, "X", ndim=2, allow_empty=True)
        if X.shape[1] < self.min_dim:
            raise ValueError(f"X: the noise law {self.spec!r} needs d >= {self.min_dim} columns, got shape {X.shape}")
        return self._draw(rng, X)

    def _draw(self, rng, X: np.ndarray) -> np.ndarray:
        """:meth:`draw` without its checks (``X`` a float ``(n, d)`` array, ``d >= min_dim``)."""
        n = X.shape[0]
        if self.law == "gaussian":
            return self.sigma * rng.standard_normal(n)
        if self.law == "student-t":
            return (self.sigma * math.sqrt((self.parameter - 2.0) / self.parameter)) * rng.standard_t(self.parameter, n)
        g = self._multiplier(X)
        return self.sigma * g * rng.standard_normal(n)


def noise_model(spec="gaussian", sigma: float = SIGMA, name: str = "noise") -> NoiseModel:
    """A :class:`NoiseModel` from a spec ``"gaussian"``, ``"student-t:NU"`` or ``"heteroscedastic:EXPR"``.

    Parameters
    ----------
    spec : str or NoiseModel, default "gaussian"
        The law (a NoiseModel is returned unchanged if its level is ``sigma``).
    sigma : float >= 0, default :data:`mhanw.constants.SIGMA`
        The level.
    name : str, default "noise"
        The caller's argument that holds ``spec``: errors start with it (``sigma`` for the level).

    Returns
    -------
    NoiseModel
        The noise.

    Raises
    ------
    ValueError
        Starting with ``name`` (or ``sigma``) for an unknown law, a parameter out of range, or a NoiseModel
        of another level.
    """
    if isinstance(spec, NoiseModel):
        sigma = nonnegative_scalar(sigma, "sigma")
        if sigma != spec.sigma:
            raise ValueError(f"sigma: the noise model {spec} has level {spec.sigma:g}, got sigma = {sigma:g}")
        return spec
    law, param = _split_spec(spec, name, NOISE_LAWS)
    try:
        if law == "student-t":
            return NoiseModel(sigma, law, parameter=_number(param, name, "NU of 'student-t'"))
        if law == "heteroscedastic":
            return NoiseModel(sigma, law, expression=param)
        return NoiseModel(sigma, law)
    except ValueError as exc:
        msg = str(exc)
        raise ValueError(name + msg[len("noise") :] if msg.startswith("noise:") else msg) from None


# --------------------------------------------------------------------------
# Samples and data models
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """One replicate of a data-generating process.

    Parameters
    ----------
    X : numpy.ndarray
        ``(n, d)`` training inputs of ``D_n``.
    Y : numpy.ndarray
        ``(n,)`` training responses.
    X_test : numpy.ndarray
        ``(T, d)`` test points.
    m_test : numpy.ndarray
        ``(T,)``: ``m(X_test)``.
    """

    X: np.ndarray
    Y: np.ndarray
    X_test: np.ndarray
    m_test: np.ndarray


@dataclass(frozen=True)
class DataModel:
    """A data-generating process ``Y = m(X) + noise``: regression function, input law, noise.

    Build one with :func:`data_model`; every Monte Carlo driver of the library
    (:mod:`mhanw.montecarlo`, :func:`draw_sample`) accepts it wherever it
    accepts a regression name.  The reference model (``data_model(name)``:
    Gaussian inputs and noise, ``sigma = SIGMA``) draws exactly what
    :func:`draw_sample` drew with the name alone.

    Parameters
    ----------
    regression : RegressionFunction
        ``m``.
    inputs : InputDistribution
        The law of ``X``.
    noise : NoiseModel
        The law of ``Y - m(X)``.
    """

    regression: RegressionFunction
    inputs: InputDistribution
    noise: NoiseModel

    @property
    def name(self) -> str:
        """The regression function's name."""
        return self.regression.name

    @property
    def sigma(self) -> float:
        """The noise level."""
        return self.noise.sigma

    @property
    def min_dim(self) -> int:
        """Smallest input dimension on which the model is defined."""
        return max(self.regression.min_dim, self.noise.min_dim)

    @property
    def is_reference(self) -> bool:
        """Whether inputs and noise are the reference ones (Gaussian ``N(0, I)``, Gaussian noise)."""
        return self.inputs.kind == "gaussian" and self.noise.is_gaussian

    def spec(self) -> dict:
        """The model as spec strings, for results files.

        Returns
        -------
        dict
            ``{"regression", "inputs", "noise", "sigma"}``.
        """
        return {
            "regression": self.regression.name,
            "inputs": self.inputs.spec,
            "noise": self.noise.spec,
            "sigma": self.sigma,
        }

    def __str__(self) -> str:
        return f"m = {self.regression.name}, X ~ {self.inputs.spec}, noise {self.noise}"

    def check_dimension(self, d: int, name: str = "d") -> int:
        """``d`` if the model is defined on ``R^d``.

        Parameters
        ----------
        d : int
            The dimension.
        name : str, default "d"
            The caller's argument that holds ``d``, named by an error.

        Returns
        -------
        int
            ``d``.

        Raises
        ------
        ValueError
            Naming ``name`` when ``d`` is below :attr:`min_dim` or the input law does not exist in ``R^d``.
        """
        d = positive_int(d, name, minimum=self.min_dim)
        self.inputs.check_dimension(d, name)
        return d

    def draw(self, rng, n: int, d: int, n_test: int = 0, x_test=None) -> Sample:
        """Draw ``D_n`` and test points; the order of draws is fixed: ``X``, noise, ``X_test``.

        Parameters
        ----------
        rng : numpy.random.Generator
            The stream.
        n : int >= 1
            The training sample size.
        d : int >= 1
            The dimension.
        n_test : int >= 0, default 0
            Number of fresh test points (ignored when ``x_test`` is given).
        x_test : array (T, d), optional
            Fixed test points (per-point moments of Thm 3.1 and Lemma 4.1).

        Returns
        -------
        Sample
            With ``Y = m(X) + noise`` and ``m_test = m(X_test)``.

        Raises
        ------
        ValueError
            Naming ``x_test`` when it does not have ``d`` columns, or the argument that is out of range.
        """
        generator(rng, "rng")
        n = positive_int(n, "n")
        d = self.check_dimension(d)
        check_entries("n" if n >= d else "d", n, d)
        if x_test is None:
            n_test = positive_int(n_test, "n_test", minimum=0)
            check_entries("n_test", n_test, d)
        else:
            x_test = as_float_array(x_test, "x_test", ndim=2)
            if x_test.shape[1] != d:
                raise ValueError(f"x_test: expected shape (T, {d}), got {x_test.shape}")
        return self._draw(rng, n, d, n_test, x_test)

    def _draw(self, rng, n: int, d: int, n_test: int = 0, x_test=None, m_test=None) -> Sample:
        """:meth:`draw` without its argument checks.

        :meth:`draw` without its argument checks, for drivers that checked them once
        (``n``, ``d``, ``n_test`` valid, ``x_test`` a finite float ``(T, d)`` array);
        ``m_test``: ``m(x_test)`` if already computed (and found finite) for these
        fixed points.
        """
        m = self.regression._func
        X = self.inputs.sample(rng, n, d)
        noise = self.noise._draw(rng, X)
        if x_test is None:
            x_test = self.inputs.sample(rng, n_test, d)
        mX = m(X)
        Y = mX + noise
        if m_test is None:
            m_test = m(x_test) if x_test.shape[0] else np.zeros(0)
            finite = _all_finite(m_test)
        else:
            finite = True
        if not (_all_finite(Y) and finite):
            if not (_all_finite(mX) and finite):
                raise ValueError(
                    f"regression: {self.regression.name!r} is not finite at some drawn point "
                    f"(inputs {self.inputs.spec})"
                )
            if not _all_finite(noise):  # sigma * eps beyond a double: the noise level's fault, not m's
                raise ValueError(
                    f"sigma: the noise sigma * eps of {self.noise.spec} overflows a double at "
                    f"sigma = {self.sigma!r} (inputs {self.inputs.spec})"
                )
            raise ValueError(
                f"sigma: m(X) + noise overflows a double ({self.regression.name!r} with noise of level {self.sigma!r})"
            )
        return Sample(X=X, Y=Y, X_test=x_test, m_test=m_test)

    def _regression_at(self, x: np.ndarray) -> np.ndarray:
        """``m`` at fixed points, checked to be finite.

        ``m(x)`` at fixed points ``(T, d)`` (checked), for :meth:`_draw`'s ``m_test``;
        ``ValueError`` as :meth:`draw` raises if it is not finite.
        """
        m_x = self.regression._func(x) if x.shape[0] else np.zeros(0)
        if not _all_finite(m_x):
            raise ValueError(
                f"regression: {self.regression.name!r} is not finite at some drawn point (inputs {self.inputs.spec})"
            )
        return m_x


def _all_finite(a: np.ndarray) -> bool:
    """Whether every entry of an array is finite, without a temporary of its size.

    Whether every entry of ``a`` (float, non-empty or empty) is finite: ``np.all(np.isfinite(a))``
    without its boolean temporary (the maximum and minimum propagate NaN).
    """
    return a.size == 0 or (math.isfinite(a.max()) and math.isfinite(a.min()))


def data_model(regression, inputs="gaussian", noise="gaussian", sigma: float | None = None) -> DataModel:
    """A :class:`DataModel` from specs (strings or objects).

    Parameters
    ----------
    regression : str, sympy.Expr or RegressionFunction
        A catalogue name or a formula in ``x1 ... xd`` (:func:`regression_function`).
    inputs : str or InputDistribution, default "gaussian"
        ``"gaussian"`` (the reference), ``"gaussian-diagonal:COND"``,
        ``"gaussian-equicorrelated:RHO"``, ``"student-t:NU"``,
        ``"uniform-cube"``, ``"uniform-sphere"``, ``"ar1:PHI"``, ``"clustered:K:ICC"``
        (:class:`InputDistribution`).
    noise : str or NoiseModel, default "gaussian"
        ``"gaussian"`` (the reference), ``"student-t:NU"``,
        ``"heteroscedastic:EXPR"`` (:class:`NoiseModel`).
    sigma : float >= 0, optional
        Noise level; default the level of a NoiseModel given as ``noise``, else
        :data:`mhanw.constants.SIGMA`.

    Returns
    -------
    DataModel
        The model.

    Raises
    ------
    ValueError
        Naming the argument (``regression``, ``inputs``, ``noise``, ``sigma``) that is not a valid spec.
    """
    m = regression_function(regression)
    dist = input_distribution(inputs)
    if sigma is None:
        sigma = noise.sigma if isinstance(noise, NoiseModel) else SIGMA
    return DataModel(m, dist, noise_model(noise, sigma))


def as_data_model(model, sigma: float | None = None, name: str = "regression") -> DataModel:
    """``model`` as a :class:`DataModel`.

    A DataModel is returned unchanged; anything else is a regression spec for :func:`data_model` with
    the reference inputs and noise.

    Parameters
    ----------
    model : DataModel, str, sympy.Expr or RegressionFunction
        The model or a regression spec.
    sigma : float >= 0, optional
        ``None`` keeps the model's level (``SIGMA`` for a name); a number must equal the level of a
        DataModel (the level is part of the model).
    name : str, default "regression"
        The caller's argument that held ``model``, named by a bad regression spec.

    Returns
    -------
    DataModel
        The model.

    Raises
    ------
    ValueError
        Naming ``sigma`` when it contradicts a DataModel's level, or ``name`` for a bad regression spec.
    """
    if isinstance(model, DataModel):
        if sigma is not None and nonnegative_scalar(sigma, "sigma") != model.sigma:
            raise ValueError(
                f"sigma: the data model has noise level {model.sigma:g}; leave sigma at its default "
                f"(None) or pass {model.sigma:g}, got {brief(sigma)}"
            )
        return model
    try:
        m = regression_function(model)
    except ValueError as exc:
        raise ValueError(f"{name}: {str(exc).partition(': ')[2]}") from None
    return data_model(m, sigma=SIGMA if sigma is None else sigma)


def is_reference_gaussian(model) -> bool:
    """Whether the inputs of ``model`` are ``N(0, I_d)``, the assumption of the closed-form predictions.

    The closed forms :func:`mhanw.covariance.kernel_overlap`,
    :func:`mhanw.covariance.first_order_covariance` (exact also for the other Gaussian kinds through
    its ``inputs`` argument) and the density in :func:`mhanw.covariance.printed_covariance_bound`
    assume it; when this is ``False``, compare with :func:`mhanw.covariance.first_order_covariance_mc`
    instead or say that the prediction does not apply.  Geometric quantities (head diversity,
    :func:`mhanw.diversity.haar_expected_hdi`) do not depend on the data.

    Parameters
    ----------
    model : DataModel, InputDistribution or str
        A model, an input law, an input spec string or a regression spec (reference inputs).

    Returns
    -------
    bool
        Whether the rows are iid ``N(0, I_d)``.
    """
    if isinstance(model, DataModel):
        return model.inputs.is_standard_gaussian
    if isinstance(model, InputDistribution):
        return model.is_standard_gaussian
    if isinstance(model, str) and model.strip().partition(":")[0].strip() in INPUT_KINDS:
        return input_distribution(model, name="model").is_standard_gaussian
    as_data_model(model, name="model")
    return True


def sample_inputs(rng, n: int, d: int, inputs="gaussian") -> np.ndarray:
    """``n`` draws of ``X`` from ``inputs``: iid, or one chain of a dependent law.

    Parameters
    ----------
    rng : numpy.random.Generator
        The stream.
    n : int >= 1
        The number of rows.
    d : int >= 1
        The dimension.
    inputs : str or InputDistribution, default "gaussian"
        The law (default ``N(0, I_d)``).

    Returns
    -------
    numpy.ndarray
        ``(n, d)``.

    Raises
    ------
    ValueError
        Naming ``rng``, ``n``, ``d`` or ``inputs`` for a value that is out of range.
    """
    generator(rng, "rng")
    dist = input_distribution(inputs)
    n, d = positive_int(n, "n"), dist.check_dimension(positive_int(d, "d"))
    check_entries("n" if n >= d else "d", n, d)
    return dist.sample(rng, n, d)


def draw_sample(rng, regression, n: int, d: int, n_test: int = 0, sigma: float | None = None, x_test=None) -> Sample:
    """Draw ``D_n`` and test points (noise sd ``sigma``, default :data:`mhanw.constants.SIGMA`).

    With a regression name (or formula), draws in this order from ``rng``: ``X``
    ``(n, d)`` ~ ``N(0, I_d)``, noise ``eps`` ``(n,)`` ~ ``N(0, 1)``, then,
    unless ``x_test`` is given, ``n_test`` fresh test points ``(n_test, d)``
    ~ ``N(0, I_d)``; ``Y = m(X) + sigma * eps``.  With a :class:`DataModel`,
    the same order with the model's inputs and noise (:meth:`DataModel.draw`).

    Parameters
    ----------
    rng : numpy.random.Generator
        The stream.
    regression : str, RegressionFunction or DataModel
        ``m`` (a name of :data:`REGRESSION_FUNCTIONS` or a formula), or a whole model.
    n : int >= 1
        The training sample size.
    d : int >= 1
        The dimension.
    n_test : int >= 0, default 0
        Number of fresh test points (Thm 4.2's integrated MSE uses fresh ones
        in every replicate).  Ignored when ``x_test`` is given.
    sigma : float >= 0, optional
        Noise standard deviation; default :data:`mhanw.constants.SIGMA` for a
        name, the model's level for a DataModel (a different value is an error).
    x_test : array (T, d), optional
        Fixed test points (per-point moments of Thm 3.1 and Lemma 4.1).

    Returns
    -------
    Sample
        With ``Y = m(X) + sigma eps`` and ``m_test = m(X_test)``.

    Raises
    ------
    ValueError
        Naming the argument that is out of range or contradicts the model.
    """
    generator(rng, "rng")
    return as_data_model(regression, sigma).draw(rng, n, d, n_test=n_test, x_test=x_test)
