"""The optimal head size under a fixed budget ``D = H * d_k`` (Theorem 6.1).

Theorem 6.1 of the paper states that, under a fixed budget ``D = H * d_k``, the
risk ``MSE(H, d_k) = B(d_k)^2 + V(d_k)/H`` is minimised by a head dimension
``d_k* ~ (log n)^(2/(4+d))`` and ``H* = floor(D/d_k*)`` heads.  The summaries of
the paper never define ``d`` and disagree on the law, so this module does not
hard-code one: a risk is an :class:`MSEModel` (a squared-bias law, a per-head
variance law, a rule that combines the heads, and constants), and everything
else -- the first-order condition (FOC), its closed form, its leading order,
the real root, the integer minimiser, the local growth exponent -- is derived
from the model by sympy and evaluated numerically in log space.

Notation (``book/claims.md``, 'Theorem 6.1').  ``k = d_k`` is the head dimension, ``n`` the
sample size, ``D`` the budget and ``H = D/k`` the number of heads.  In a law,
``c_B`` is the constant of the **squared** bias and ``c_V`` the variance
constant (the claims page's convention).  The Python arguments ``c_bias`` and ``c_var``
of the numerical functions are the bias constant and the variance constant
(the convention of the numerical functions): they scale the model's constants,
``c_B -> c_B * c_bias**2`` and ``c_V -> c_V * c_var``.  The built-in models have
``c_B = c_V = 1``, so ``c_B = c_bias**2`` and ``c_V = c_var``; for M1 the risk is
``c_bias**2 / k**2 + c_var * k**(k/2 + 1) / (n * budget)``, and
the sensitivity grid's ``(c_B, c_V) = (10, 1)`` is ``c_bias = sqrt(10)``.

The built-in models (``model("M1")`` or ``MSEModel.named("M1")``), each with
squared bias ``c_B/k^2`` (bandwidth ``h = k^(-1/2)``, bias ``O(h^2)``):

- ``M1`` variance ``c_V k^(k/2)/n``, heads averaged: ``k* ~ 2 ln n / ln ln n``
  (leading order ``exp(W(2 Lambda))``, ``Lambda = ln(2 c_B n D / c_V)``);
- ``M2`` variance ``c_V exp(tau k^((4+d)/2))/n``, one head: ``k* ~ (ln n/tau)^(2/(4+d))``;
- ``M3`` variance ``c_V k^(d/2)/ln n``, one head: ``k* = (4 c_B ln n/(c_V d))^(2/(4+d))``;
- ``M4a`` variance ``c_V k^(d/2)/n``, one head: ``k* = (4 c_B n/(c_V d))^(2/(4+d))``;
- ``M4b`` variance ``c_V k^(d/2)/n``, heads averaged: ``k* = (4 c_B n D/(c_V (d+2)))^(2/(d+6))``;
- ``M5`` variance ``c_V exp(c k)/n``, heads averaged: ``k* = ln(nD)/c - O(ln ln n)``.

(``M4`` is an alias of ``M4a``.)  The combination rules: ``"average"`` averages
``H = D/k`` uncorrelated heads, ``MSE = B^2 + V/H``; ``"sum"`` adds them,
``MSE = B^2 + H V``; ``"none"`` is a single head, ``MSE = B^2 + V``; ``"concat"``
concatenates the heads through a fixed output projection of unit norm (``|W_O| = 1``, as a
Xavier or orthogonal initialisation gives each output coordinate), ``MSE = B^2 + |W_O|^2 V =
B^2 + V`` for uncorrelated heads of one response: it neither averages nor adds their variances.  A law may
also use ``H`` itself, which is replaced by ``D/k`` (for example a correlated
average ``V (rho + (1 - rho)/H)`` with ``combination="none"``).

Extending a proof: ``model(bias_law="c_B/k**4", variance_law="c_V*k**(k/2)/n")``
builds a new model from strings (parsed by sympy with a whitelist of names,
:data:`ALLOWED_NAMES`), and ``model("M1", variance_law=...)`` swaps one
ingredient of a built-in model; every function below accepts such a model
where it accepts a name.

Integer minimiser and ``H``.  :func:`optimal_head_dim` minimises the model's
risk over ``k = 1..budget`` with the continuous ``H = budget/k`` in the risk (the
relaxation that the claims page and the paper use), and :func:`n_heads` reports
``H* = floor(budget/k*)``, so ``H* k*`` may fall short of the budget by less than
``k*``; :func:`solve_head_size` reports that remainder.  With
``divisors_only=True`` the search is restricted to divisors of ``budget``, so
that ``H = budget/k`` is an integer and the budget is used exactly.

Real heads.  :func:`budget_simulation` puts real Gaussian Nadaraya-Watson heads under a budget: the input
has as many coordinates as the budget ``D``, and a head size ``d_k`` means ``H = D/d_k`` heads on orthogonal
coordinate blocks (:func:`mhanw.heads.orthogonal_heads`), so every configuration sees all ``D`` coordinates
and only the split into heads changes.  The bandwidth of every ``(d_k, rule)`` is tuned on a grid by the
integrated MSE over tuning replicates, and the tuned ensembles are evaluated on fresh replicates (independent
streams), so the reported IMSE is not biased downward by the tuning; within a stage every configuration
shares the training sample and test points of a replicate (common random numbers), so comparisons carry
paired standard errors (:class:`BudgetResult`).

Numerics.  M1's variance term ``k^(k/2)`` overflows a double near ``k = 256``,
so the risk is evaluated as ``log MSE = logaddexp(log B^2, log(V term))`` with
both logarithms expanded symbolically, and the real root is found by
``scipy.optimize.brentq`` on the log-FOC ``log(d(V term)/dk) - log(-d(B^2)/dk)``,
which is dimensionless and free of overflow.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import sys
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import sympy as sp
from scipy.optimize import brentq

from . import data as _data
from . import heads as _heads
from .constants import MAX_REPLICATES, N_SE, check_entries
from .infra import expressions as _expressions
from .infra.estimates import Estimate, ReplicatedErrors
from .infra.expressions import Grammar
from .infra.sweep import run_replicates
from .infra.validate import (
    as_float_array,
    as_seed_sequence,
    boolean,
    brief,
    one_of,
    positive_int,
    positive_scalar,
    sequence,
)

__all__ = [
    "ALLOWED_NAMES",
    "BIAS_EXPONENTS",
    "BUDGET_BANDWIDTHS",
    "BUILTIN_MODELS",
    "COMBINATIONS",
    "DEFAULT_CONSTANTS",
    "DEFAULT_N_VALUES",
    "PRINTED_LAW",
    "BudgetResult",
    "HeadSize",
    "MSEModel",
    "SYMBOLS",
    "bias_reading_models",
    "budget_simulation",
    "divisors",
    "fit_power_law",
    "heads_slope",
    "implied_d",
    "local_slope",
    "log_mse",
    "model",
    "n_heads",
    "optimal_head_dim",
    "parse_law",
    "real_root",
    "sample_size_for_head_dim",
    "scaling_table",
    "solve_head_size",
    "MAX_BUDGET",
    "MAX_DIVISOR_BUDGET",
    "MAX_GRID",
]

# --------------------------------------------------------------------------
# Symbols, the parser's whitelist
# --------------------------------------------------------------------------

#: The symbols a law may use.  ``k`` is d_k, ``n`` the sample size, ``D`` the
#: budget, ``H`` the number of heads (replaced by ``D/k``); the others are
#: constants with the defaults of :data:`DEFAULT_CONSTANTS`.
SYMBOLS: dict[str, sp.Symbol] = {
    "k": sp.Symbol("k", positive=True),
    "n": sp.Symbol("n", positive=True),
    "D": sp.Symbol("D", positive=True),
    "H": sp.Symbol("H", positive=True),
    "c_B": sp.Symbol("c_B", positive=True),
    "c_V": sp.Symbol("c_V", positive=True),
    "d": sp.Symbol("d", positive=True),
    "tau": sp.Symbol("tau", positive=True),  # M2's growth constant (kappa is the kernel overlap of Lemma 4.1)
    "c": sp.Symbol("c", positive=True),
    "s": sp.Symbol("s", positive=True),
    "rho": sp.Symbol("rho", nonnegative=True),
}
k_, n_, D_, H_ = (SYMBOLS[name] for name in ("k", "n", "D", "H"))

#: Default values of the constants (the numerical table of Thm 6.1: c_B = c_V = 1, d = 1,
#: tau = 1, c = 1; ``s`` is a smoothness, ``rho`` a between-head correlation).
DEFAULT_CONSTANTS: dict[str, float] = {
    "c_B": 1.0,
    "c_V": 1.0,
    "d": 1.0,
    "tau": 1.0,
    "c": 1.0,
    "s": 2.0,
    "rho": 0.0,
}

_FUNCTIONS = {
    "log": sp.log,
    "ln": sp.log,
    "exp": sp.exp,
    "sqrt": sp.sqrt,
    "LambertW": sp.LambertW,
    "pi": sp.pi,
    "E": sp.E,
}

#: Every name a law string may contain.
ALLOWED_NAMES: tuple[str, ...] = tuple(SYMBOLS) + tuple(_FUNCTIONS)

#: The law printed in the summaries, ``(log n)^(2/(4+d))``.
PRINTED_LAW = sp.log(n_) ** (2 / (4 + SYMBOLS["d"]))

#: How a model combines its ``H = D/k`` heads (:class:`MSEModel`'s ``combination``).
COMBINATIONS = ("average", "sum", "none", "concat")

#: The sample sizes of the numerical table of Thm 6.1, n = 1e2, 1e4, ..., 1e12.
DEFAULT_N_VALUES = tuple(10.0**e for e in range(2, 13, 2))

#: Dominant terms of the log-FOC are judged at this head dimension.
_K_LARGE = 1e30

# --------------------------------------------------------------------------
# Parsing and checking laws
# --------------------------------------------------------------------------


def parse_law(text, name: str = "law") -> sp.Expr:
    """Parse a law (a string, a number or a sympy expression) into a sympy expression (Thm 6.1).

    The string may use the names of :data:`ALLOWED_NAMES`, numbers, ``+ - * /``, ``**`` or ``^`` and
    parentheses, nothing else (no attribute access, no commas, no other function).  ``H`` is replaced
    by ``D/k``.

    Parameters
    ----------
    text : str, number or sympy.Expr
        The law.
    name : str, default "law"
        The caller's argument that holds it: every error starts with it.

    Returns
    -------
    sympy.Expr
        The law in ``k``, ``n``, ``D`` and the constants.

    Raises
    ------
    ValueError
        Starting with ``name`` when the law does not parse, uses another name, does not depend on ``k``,
        or is not finite and positive at ``k = 2, n = 1000, D = 512`` with the default constants.
    """
    expr = _parse_expression(text, name)
    if expr.has(sp.zoo, sp.oo, -sp.oo, sp.nan):
        raise ValueError(f"{name}: the law {text!r} is not finite (it evaluates to {expr})")
    if k_ not in expr.free_symbols:
        raise ValueError(f"{name}: the law {expr} does not depend on k (= d_k)")
    _check_on_domain(expr, name, DEFAULT_CONSTANTS)
    return expr


#: The law is checked at ``n = CHECK_N`` and ``D = CHECK_BUDGET`` on every half-integer
#: ``k`` in ``[1, CHECK_BUDGET]`` (:func:`parse_law`, :class:`MSEModel`).
CHECK_N, CHECK_BUDGET = 1000, 512
_CHECK_K = np.arange(1.0, CHECK_BUDGET + 0.25, 0.5)


def _numeric(expr: sp.Expr, consts) -> np.ndarray:
    """An expression's value at the check point.

    ``expr`` at ``k = _CHECK_K``, ``n = CHECK_N``, ``D = CHECK_BUDGET`` and ``consts``
    (NaN where it has no real value).
    """
    subs = {SYMBOLS[c]: v for c, v in dict(consts).items()}
    f = sp.lambdify((k_, n_, D_), expr.xreplace(subs), modules=["numpy", "scipy"])
    with np.errstate(all="ignore"):
        try:
            out = np.asarray(f(_CHECK_K, float(CHECK_N), float(CHECK_BUDGET)))
        except (ZeroDivisionError, OverflowError, TypeError, ValueError):
            return np.full(_CHECK_K.shape, np.nan)
    if np.iscomplexobj(out):
        out = np.where(np.abs(out.imag) <= 1e-12 * np.maximum(1.0, np.abs(out.real)), out.real, np.nan)
    return np.broadcast_to(out.astype(float), _CHECK_K.shape)


def _check_on_domain(expr: sp.Expr, name: str, consts) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``expr`` is finite and positive on the domain.

    The domain is ``k`` in ``[1, CHECK_BUDGET]`` (every half-integer), ``n =
    CHECK_N``, ``D = CHECK_BUDGET``.  A value that over- or underflows a double
    (``k**(k/2)`` at ``k = 512``) counts as finite and positive when the
    logarithm of the law, expanded symbolically, is finite there.
    """
    value = _numeric(expr, consts)
    direct = np.isfinite(value) & (value > 0)
    rescue = ~direct & (~np.isfinite(value) | (value == 0))
    if np.any(rescue):
        log_value = _numeric(sp.expand_log(sp.log(expr), force=True), consts)
        direct |= rescue & np.isfinite(log_value)
    if not np.all(direct):
        i = int(np.flatnonzero(~direct)[0])
        raise ValueError(
            f"{name}: expected a positive finite law for every k in [1, {CHECK_BUDGET}], "
            f"got {expr} = {value[i]:.6g} at k={_CHECK_K[i]:g}, n={CHECK_N}, D={CHECK_BUDGET}"
        )


#: The grammar of a law (:mod:`mhanw.infra.expressions`): the names of :data:`ALLOWED_NAMES`.
GRAMMAR = Grammar(
    symbols=SYMBOLS,
    functions=_FUNCTIONS,
    allowed=", ".join(ALLOWED_NAMES),
    subject="law",
    empty_hint="an expression in k",
)

#: Longest law string :func:`parse_law` accepts (characters).
MAX_LAW_LENGTH = GRAMMAR.max_length
#: Largest ``|exponent|`` of a power with a constant exponent, e.g. ``k**100``.
MAX_EXPONENT = _expressions.MAX_EXPONENT
#: Largest ``|log10|`` of a constant in a law (a double reaches about 308).
MAX_CONSTANT_LOG10 = _expressions.MAX_CONSTANT_LOG10


#: An asymptotic formula for ``k*`` is a positive finite function of ``n`` for large ``n``: it is checked at
#: these ``n`` (``D = CHECK_BUDGET``) when a model is made, and at every ``n`` of a table that uses it.
ASYMPTOTIC_CHECK_N = (1e6, 1e9, 1e12)


def _asymptotic_function(expr: sp.Expr, name: str, subs: dict, text=None):
    """An asymptotic formula as a numpy function.

    ``expr`` (in ``n`` and ``D``) at the constants ``subs`` (symbol -> value) as a numpy function of ``(n,
    D)``, or ``ValueError`` naming ``name`` when it is not finite there (``log(0)*n``: complex infinity,
    which lambdify cannot print); ``text`` is the formula as given, for the message.
    """
    e = expr.xreplace(subs)
    if e.has(sp.zoo, sp.oo, -sp.oo, sp.nan):
        given = brief(text) if text is not None else str(expr)
        raise ValueError(
            f"{name}: expected a positive finite formula for k* in n, got {given} (it evaluates to "
            f"{e}, not a finite number)"
        )
    return sp.lambdify((n_, D_), e, modules=["numpy", "scipy"])


def _asymptotic_at(f, name: str, expr, n_values, budget) -> np.ndarray:
    """The values of an asymptotic formula, checked.

    The values of an asymptotic formula ``f`` (:func:`_asymptotic_function` of ``expr``) at ``n_values``
    and ``D = budget``, or ``ValueError`` naming ``name``, the formula and the first ``n`` where it is not
    a positive finite real number (a ratio ``d_k / f`` is then no number: ``log(log(log(n)))`` at ``n = 2``
    is NaN, ``n - n`` is 0).
    """
    n = np.asarray(n_values, dtype=float)
    values = np.empty(n.shape)
    for i, x in enumerate(n_values):  # one scalar at a time, as a table row reads it (the same last digit)
        with np.errstate(all="ignore"):
            try:
                out = complex(np.asarray(f(x, budget)))
            except (ZeroDivisionError, OverflowError, TypeError, ValueError):
                out = complex(math.nan)
        values[i] = out.real if abs(out.imag) <= 1e-12 * max(1.0, abs(out.real)) else math.nan
    bad = ~(np.isfinite(values) & (values > 0))
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name}: expected a positive finite formula for k* in n, got {expr} = {values[i]:.6g} "
            f"at n={n[i]:g}, D={budget}"
        )
    return values


def _parse_expression(text, name: str) -> sp.Expr:
    """A law as a canonical sympy expression, parsed safely.

    A string, number or sympy expression as a canonical sympy expression, ``H -> D/k``
    (parsed safely by :data:`GRAMMAR`).
    """
    return GRAMMAR.parse(text, name).xreplace({H_: D_ / k_})


def _fmt_point(point) -> str:
    return ", ".join(f"{s}={v:g}" for s, v in point.items() if s in (k_, n_, D_))


def _check_constants(constants, name: str = "constants") -> dict[str, float]:
    if constants is None:
        return {}
    if not hasattr(constants, "items"):
        raise ValueError(f"{name}: expected a mapping from constant names to numbers, got {brief(constants)}")
    out = {}
    for key, value in dict(constants).items():
        one_of(key, f"{name}", tuple(DEFAULT_CONSTANTS))
        if key == "rho":
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= float(value) <= 1:
                raise ValueError(f"{name}: expected rho in [0, 1], got {brief(value)}")
            out[key] = float(value)
        else:
            out[key] = positive_scalar(value, f"{name}[{key!r}]")
    return out


# --------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class MSEModel:
    """A risk model for one head size ``k = d_k`` under the budget ``D = H k`` (Thm 6.1).

    Strings are parsed with :func:`parse_law`.  Derived attributes (sympy, computed once): :attr:`mse`,
    :attr:`foc`, :attr:`log_foc`, :attr:`log_scale`, :attr:`closed_form`, :attr:`leading_order`,
    :attr:`asymptotic_formulas`, :attr:`local_slope_expr`.

    Parameters
    ----------
    name : str
        A label.
    bias_law : str or sympy.Expr
        The squared bias ``B(k)^2`` (must depend on ``k``).
    variance_law : str or sympy.Expr
        The variance ``V(k, n)`` of one head (must depend on ``k``).
    combination : str, default "average"
        One of :data:`COMBINATIONS`: ``"average"`` (``B^2 + V/H``, uncorrelated heads averaged),
        ``"sum"`` (``B^2 + H V``, uncorrelated heads added; the bias law is then that of the additive
        ensemble, the reader's to supply), ``"none"`` (``B^2 + V``, a single head) or ``"concat"``
        (``B^2 + |W_O|^2 V`` with a unit-norm output projection, ``B^2 + V``: uncorrelated heads
        concatenated), with ``H = D/k``.
    constants : mapping or pairs, optional
        Values of the constants (``c_B, c_V, d, tau, c, s, rho``); missing ones take
        :data:`DEFAULT_CONSTANTS`.  Stored as a sorted tuple of pairs so that the model is hashable.
    asymptotics : mapping or pairs, optional
        Extra asymptotic formulas for ``k*``, ``{label: expr in n, D}``.
    description : str, default ""
        The assumptions, in words.

    Raises
    ------
    ValueError
        Naming the field that does not parse or is out of range (``name``, ``bias_law``,
        ``variance_law``, ``combination``, ``constants``, ``asymptotics[label]``), or a law that violates
        the model's assumptions on ``k`` in ``[1, CHECK_BUDGET]``.
    """

    name: str
    bias_law: sp.Expr
    variance_law: sp.Expr
    combination: str = "average"
    constants: Any = ()  # a mapping or pairs; after checking, the sorted (name, value) pairs with the defaults
    asymptotics: Any = ()  # a mapping or pairs; after checking, the sorted (label, expression) pairs
    description: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name: expected a non-empty string, got {brief(self.name)}")
        object.__setattr__(self, "bias_law", parse_law(self.bias_law, "bias_law"))
        object.__setattr__(self, "variance_law", parse_law(self.variance_law, "variance_law"))
        one_of(self.combination, "combination", COMBINATIONS)
        consts = dict(self.constants) if not hasattr(self.constants, "items") else self.constants
        merged = {**DEFAULT_CONSTANTS, **_check_constants(consts)}
        object.__setattr__(self, "constants", tuple(sorted(merged.items())))
        asym = dict(self.asymptotics) if not hasattr(self.asymptotics, "items") else self.asymptotics
        checked = []
        for label, expr in asym.items():
            e = _parse_expression(expr, f"asymptotics[{label!r}]")
            if k_ in e.free_symbols:
                raise ValueError(f"asymptotics[{label!r}]: a formula for k* must not contain k, got {e}")
            where = f"asymptotics[{label!r}]"
            f = _asymptotic_function(e, where, {SYMBOLS[c]: v for c, v in merged.items()}, expr)
            _asymptotic_at(f, where, e, ASYMPTOTIC_CHECK_N, CHECK_BUDGET)
            checked.append((str(label), e))
        object.__setattr__(self, "asymptotics", tuple(checked))
        self._check_shape()

    def _check_shape(self) -> None:
        """Check the model's assumptions on ``k``.

        The model's assumptions, on ``k`` in ``[1, CHECK_BUDGET]`` at its constants:
        both laws finite and positive, the squared bias decreasing in ``k`` and
        the variance term (after :attr:`combination`) increasing, so that the
        log-FOC is defined and the risk has one interior trade-off.

        Signs are judged on ``d log(law)/dk``, which neither overflows nor
        underflows where the law itself does.
        """
        consts = dict(self.constants)
        _check_on_domain(self.bias_law, "bias_law", consts)
        _check_on_domain(self.variance_law, "variance_law", consts)
        for law, term, name, want in (
            (self.bias_law, self.bias_law, "bias_law", -1.0),
            (self.variance_law, self.variance_term, "variance_law", 1.0),
        ):
            slope = _numeric(sp.diff(sp.expand_log(sp.log(term), force=True), k_), consts)
            bad = np.isfinite(slope) & (want * slope <= 0)
            if np.any(bad) or not np.any(np.isfinite(slope)):
                i = int(np.flatnonzero(bad)[0]) if np.any(bad) else 0
                what = (
                    "the squared bias must decrease in k"
                    if want < 0
                    else f"the variance term {term} (combination {self.combination!r}) must increase in k"
                )
                raise ValueError(
                    f"{name}: {what} for a trade-off in the head size; {law} does not at "
                    f"k={_CHECK_K[i]:g} (n={CHECK_N}, D={CHECK_BUDGET})"
                )

    # -- construction ------------------------------------------------------

    @classmethod
    def named(cls, name: str, argument: str = "model") -> MSEModel:
        """The built-in model ``name``.

        Parameters
        ----------
        name : str
            One of :data:`BUILTIN_MODELS` or ``"M4"``.
        argument : str, default "model"
            The caller's argument that holds ``name``, named by an error.

        Returns
        -------
        MSEModel
            The model.

        Raises
        ------
        ValueError
            Naming ``argument`` for an unknown name.
        """
        return _named(one_of(name, argument, tuple(_BUILTIN_SPECS) + ("M4",)))

    def replace(self, **changes) -> MSEModel:
        """A copy with some fields changed (laws may be strings); constants are merged.

        Parameters
        ----------
        **changes
            Fields of :class:`MSEModel` and their new values.

        Returns
        -------
        MSEModel
            The new model, checked.

        Raises
        ------
        ValueError
            Naming the field whose new value is not valid.
        """
        if "constants" in changes and changes["constants"] is not None:
            changes["constants"] = {**dict(self.constants), **_check_constants(changes["constants"])}
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    @property
    def constant_values(self) -> dict[str, float]:
        """The constants as a dict."""
        return dict(self.constants)

    # -- sympy derivations -------------------------------------------------

    @cached_property
    def variance_term(self) -> sp.Expr:
        """The variance part of the risk after combining ``H = D/k`` heads."""
        factor = {"average": k_ / D_, "sum": D_ / k_, "none": sp.Integer(1), "concat": sp.Integer(1)}[self.combination]
        return self.variance_law * factor

    @cached_property
    def mse(self) -> sp.Expr:
        """The risk ``B(k)^2 + (variance term)`` as a sympy expression in ``k, n, D``."""
        return self.bias_law + self.variance_term

    @cached_property
    def foc(self) -> sp.Expr:
        """The first-order condition ``d MSE / dk`` (``= 0`` at the optimum)."""
        return sp.diff(self.mse, k_)

    @cached_property
    def log_foc(self) -> sp.Expr:
        """The FOC in logs: ``log(d(V term)/dk) - log(-d(B^2)/dk)``, ``= 0`` at the optimum.

        It is negative where the risk decreases and positive where it
        increases, assuming the squared bias decreases and the variance term
        increases in ``k``.  Written as ``G(k) - Lambda`` with
        :attr:`log_scale` ``= Lambda`` free of ``k``.
        """
        dv = sp.factor_terms(sp.diff(self.variance_term, k_))
        db = sp.factor_terms(-sp.diff(self.bias_law, k_))
        expr = sp.expand_log(sp.log(dv), force=True) - sp.expand_log(sp.log(db), force=True)
        return sp.expand(expr)

    @cached_property
    def _split(self) -> tuple[sp.Expr, sp.Expr]:
        with_k: list[sp.Expr] = []
        without_k: list[sp.Expr] = []
        for term in sp.Add.make_args(self.log_foc):
            (with_k if k_ in term.free_symbols else without_k).append(term)
        scale = sp.powsimp(sp.together(sp.expand_power_exp(sp.exp(-sp.Add(*without_k)))), force=True)
        return sp.Add(*with_k), scale

    @property
    def foc_lhs(self) -> sp.Expr:
        """``G(k)``, the ``k``-dependent side of the log-FOC ``G(k) = Lambda``."""
        return self._split[0]

    @property
    def log_scale(self) -> sp.Expr:
        """``Lambda``, the ``k``-free side of the log-FOC (for M1, ``log(2 c_B n D / c_V)``)."""
        return sp.log(self._split[1])

    @cached_property
    def closed_form(self) -> sp.Expr | None:
        """``k*`` in closed form when the log-FOC is linear in ``log k``, else ``None``.

        This covers every power-law model (M3, M4a, M4b); sympy's ``solve`` is
        not called on transcendental FOCs such as M1's, where it does not return.
        """
        u = sp.Symbol("u", real=True)
        g = sp.expand(sp.expand_log(self.foc_lhs.subs(k_, sp.exp(u)), force=True))
        if not g.is_polynomial(u) or sp.degree(g, u) != 1:
            return None
        # g1 log k + g0 = Lambda  =>  k = (exp(Lambda) exp(-g0))^(1/g1)
        g0, g1 = g.coeff(u, 0), g.coeff(u, 1)
        base = self._split[1]
        if g0 != 0:
            base = sp.powsimp(base * sp.expand_power_exp(sp.exp(-g0)), force=True)
        return base ** sp.together(1 / g1)

    @cached_property
    def dominant_term(self) -> sp.Expr:
        """The terms of ``G(k)`` that dominate as ``k -> oo`` (judged at ``k = 1e30``)."""
        terms = sp.Add.make_args(sp.expand(self.foc_lhs))
        subs = {SYMBOLS[c]: v for c, v in self.constants}
        sizes = []
        for term in terms:
            try:
                size = abs(float(sp.N(term.xreplace(subs).xreplace({k_: sp.Float(_K_LARGE)}))))
            except (TypeError, ValueError, OverflowError):
                size = math.inf
            sizes.append(size if math.isfinite(size) else math.inf)
        top = max(sizes)
        keep = [t for t, s in zip(terms, sizes) if s == math.inf or (top < math.inf and s >= 1e-3 * top)]
        return sp.Add(*keep)

    @cached_property
    def leading_order(self) -> sp.Expr | None:
        """Leading order of ``k*``: ``solve(dominant term = Lambda, k)``, or ``None``.

        For M1 the dominant term is ``k log(k)/2`` and sympy returns the Lambert
        form ``exp(W(2 Lambda))`` (``= 2 Lambda / W(2 Lambda)``).  For models
        with a closed form this is the closed form.
        """
        if self.closed_form is not None:
            return self.closed_form
        lam = sp.Symbol("Lambda", positive=True)
        sol = _solve_dominant(self.dominant_term, lam)
        return None if sol is None else sol.xreplace({lam: self.log_scale})

    @cached_property
    def asymptotic_formulas(self) -> dict[str, sp.Expr]:
        """Every formula for ``k*`` known for this model.

        Every formula for ``k*`` known for this model: ``closed_form`` or
        ``leading_order`` (derived), then the model's own ``asymptotics``.
        """
        out = {}
        if self.closed_form is not None:
            out["closed_form"] = self.closed_form
        elif self.leading_order is not None:
            out["leading_order"] = self.leading_order
        out.update(dict(self.asymptotics))
        return out

    @cached_property
    def local_slope_expr(self) -> sp.Expr:
        """``d ln k* / d ln ln n`` along the real root.

        ``d ln k* / d ln ln n`` along the real root, by implicit differentiation
        of the log-FOC: ``-(n ln n / k) (dF/dn) / (dF/dk)``.
        """
        f = self.log_foc
        return -(n_ * sp.log(n_) / k_) * sp.diff(f, n_) / sp.diff(f, k_)

    def __str__(self) -> str:
        return f"{self.name}: MSE = {self.mse}"


def _solve_dominant(term: sp.Expr, lam: sp.Symbol) -> sp.Expr | None:
    """Solve ``term(k) = lam`` for ``k > 0``.

    The two shapes of the built-in models are solved directly (sympy's
    ``solve`` gives the same answers, but takes about a second for the Lambert
    case): ``a k^p = lam`` gives ``k = (lam/a)^(1/p)``, and ``a k^p log k = lam``
    gives, with ``w = p log k``, ``w e^w = p lam / a``, so
    ``k = exp(W(p lam / a) / p)``.  Anything else goes to ``sympy.solve``;
    ``None`` when it finds no unique solution.
    """
    a, rest = term.as_independent(k_, as_Add=False)
    factors = sp.Mul.make_args(rest)
    logs = [f for f in factors if f == sp.log(k_)]
    powers = [f for f in factors if f != sp.log(k_)]
    power = sp.Mul(*powers)
    p = None
    if power == k_:
        p = sp.Integer(1)
    else:
        power = sp.powsimp(power)
        if power.is_Pow and power.base == k_ and k_ not in power.exp.free_symbols:
            p = power.exp
    if p is not None and len(logs) == 0:
        return (lam / a) ** sp.together(1 / p)
    if p is not None and len(logs) == 1:
        return sp.exp(sp.LambertW(p * lam / a) / p)
    try:
        sols = sp.solve(sp.Eq(term, lam), k_, check=False, simplify=False)
    except (NotImplementedError, ValueError):
        return None
    sols = [s for s in sols if s.is_positive is not False]
    return sols[0] if len(sols) == 1 else None


# --------------------------------------------------------------------------
# Built-in models (M1-M5 of Theorem 6.1)
# --------------------------------------------------------------------------

_cB, _cV, _d, _tau, _c = (SYMBOLS[s] for s in ("c_B", "c_V", "d", "tau", "c"))

_BUILTIN_SPECS = {
    "M1": dict(
        bias_law=_cB / k_**2,
        variance_law=_cV * k_ ** (k_ / 2) / n_,
        combination="average",
        asymptotics={"log_ratio": 2 * sp.log(n_) / sp.log(sp.log(n_))},
        description=(
            "The summaries' own ingredients: bandwidth h = k^(-1/2), squared bias "
            "c_B h^4 = c_B/k^2, per-head NW variance c_V/(n h^k) = c_V k^(k/2)/n "
            "as in Lemma 4.1, H = D/k uncorrelated heads averaged."
        ),
    ),
    "M2": dict(
        bias_law=_cB / k_**2,
        variance_law=_cV * sp.exp(_tau * k_ ** ((4 + _d) / 2)) / n_,
        combination="none",
        asymptotics={"law": (sp.log(n_) / _tau) ** (2 / (4 + _d)), "printed": PRINTED_LAW},
        description=(
            "A variance exp(tau k^((4+d)/2))/n chosen to give the printed law; "
            "no derivation from NW theory is known; no 1/H."
        ),
    ),
    "M3": dict(
        bias_law=_cB / k_**2,
        variance_law=_cV * k_ ** (_d / 2) / sp.log(n_),
        combination="none",
        asymptotics={"printed": PRINTED_LAW},
        description=(
            "Standard NW trade-off with h = k^(-1/2) in d dimensions, n replaced by "
            "an effective sample size ln n; no 1/H."
        ),
    ),
    "M4a": dict(
        bias_law=_cB / k_**2,
        variance_law=_cV * k_ ** (_d / 2) / n_,
        combination="none",
        asymptotics={"printed": PRINTED_LAW},
        description="Standard NW trade-off with h = k^(-1/2) in fixed dimension d; no 1/H.",
    ),
    "M4b": dict(
        bias_law=_cB / k_**2,
        variance_law=_cV * k_ ** (_d / 2) / n_,
        combination="average",
        asymptotics={"printed": PRINTED_LAW},
        description="Standard NW trade-off in fixed dimension d, H = D/k heads averaged.",
    ),
    "M5": dict(
        bias_law=_cB / k_**2,
        variance_law=_cV * sp.exp(_c * k_) / n_,
        combination="average",
        asymptotics={"log_n": sp.log(n_ * D_) / _c},
        description=(
            "Fixed bandwidth h_0 < 1 in k dimensions, c = ln(1/h_0): variance "
            "c_V h_0^(-k)/n = c_V exp(c k)/n, H = D/k heads averaged."
        ),
    ),
}

#: Names of the built-in models, in the order of the claims page.
BUILTIN_MODELS: tuple[str, ...] = tuple(_BUILTIN_SPECS)


@functools.cache
def _named(name: str) -> MSEModel:
    key = "M4a" if name == "M4" else name
    return MSEModel(name=key, **_BUILTIN_SPECS[key])


def model(spec=None, *, bias_law=None, variance_law=None, combination=None, constants=None, name=None) -> MSEModel:
    """Resolve a model: a built-in name, an :class:`MSEModel`, or laws given as strings (Thm 6.1).

    ``model("M1")``; ``model(bias_law="c_B/k**2", variance_law="c_V*k**(d/2)/n", combination="none")``
    (default combination ``"average"``); ``model("M1", variance_law="c_V*exp(k)/n")`` swaps one
    ingredient of a built-in model; ``constants={"d": 2}`` overrides constants.  This is the entry point
    for a notebook parameter.

    Parameters
    ----------
    spec : str or MSEModel, optional
        A built-in name or a model; None to build one from ``bias_law`` and ``variance_law``.
    bias_law : str or sympy.Expr, optional
        The squared bias (replaces the model's).
    variance_law : str or sympy.Expr, optional
        The variance of one head (replaces the model's).
    combination : str, optional
        One of :data:`COMBINATIONS` (replaces the model's).
    constants : mapping, optional
        Constants to override.
    name : str, optional
        The label of the result.

    Returns
    -------
    MSEModel
        The model.

    Raises
    ------
    ValueError
        Naming ``model`` when neither a spec nor both laws are given or the spec is unknown, or the field
        that is not valid.
    """
    if spec is None:
        if bias_law is None or variance_law is None:
            raise ValueError("model: expected a model name, an MSEModel, or both bias_law and variance_law")
        return MSEModel(
            name=name or "custom",
            bias_law=bias_law,
            variance_law=variance_law,
            combination=combination or "average",
            constants=constants or {},
        )
    if isinstance(spec, MSEModel):
        base = spec
    elif isinstance(spec, str):
        base = MSEModel.named(spec)
    else:
        raise ValueError(f"model: expected a model name or an MSEModel, got {type(spec).__name__}")
    if all(v is None for v in (bias_law, variance_law, combination, constants, name)):
        return base
    changed_law = bias_law is not None or variance_law is not None or combination is not None
    return base.replace(
        name=name or (f"{base.name}*" if changed_law else base.name),
        bias_law=bias_law,
        variance_law=variance_law,
        combination=combination,
        constants=constants,
        # a law changed by the reader invalidates the built-in asymptotic formulas
        asymptotics=() if changed_law else None,
    )


# --------------------------------------------------------------------------
# Numerics
# --------------------------------------------------------------------------


class _Compiled:
    """Lambdified log-space functions of one model at fixed constants."""

    def __init__(self, m: MSEModel, consts: tuple):
        subs = {SYMBOLS[c]: v for c, v in consts}
        mods = ["numpy", "scipy"]

        def lam(expr, args=(k_, n_, D_)):
            return sp.lambdify(args, expr.xreplace(subs), modules=mods)

        self.log_bias = lam(sp.expand_log(sp.log(m.bias_law), force=True))
        self.log_var = lam(sp.expand_log(sp.log(m.variance_term), force=True))
        self.log_foc = lam(m.log_foc)
        self.model = m
        self.subs = subs

    @cached_property
    def slope(self):
        return sp.lambdify((k_, n_, D_), self.model.local_slope_expr.xreplace(self.subs), modules=["numpy"])

    @cached_property
    def asymptotics(self):
        """Each formula for ``k*`` as a function of ``(n, D)``.

        ``{label: (name, f)}``: each formula for ``k*`` as a function of ``(n, D)`` and the name an error
        about it gives (``asymptotics['a']``, or the laws a derived formula comes from).
        """
        own = dict(self.model.asymptotics)
        out = {}
        for label, expr in self.model.asymptotic_formulas.items():
            where = f"asymptotics[{label!r}]" if label in own else f"bias_law, variance_law (their {label})"
            out[label] = (where, _asymptotic_function(expr, where, self.subs))
        return out


@functools.lru_cache(maxsize=64)
def _compiled(m: MSEModel, consts: tuple) -> _Compiled:
    return _Compiled(m, consts)


def _resolve(spec, c_bias, c_var, name: str = "model") -> tuple[MSEModel, _Compiled]:
    if isinstance(spec, str):
        m = MSEModel.named(spec, name)
    elif isinstance(spec, MSEModel):
        m = spec
    else:
        raise ValueError(f"{name}: expected a model name or an MSEModel, got {type(spec).__name__}")
    c_bias = positive_scalar(c_bias, "c_bias")
    c_var = positive_scalar(c_var, "c_var")
    return m, _compiled(m, tuple(sorted(_constants_with(m, c_bias, c_var).items())))


def _constants_with(m: MSEModel, c_bias: float, c_var: float) -> dict[str, float]:
    """The model's constants with ``c_B`` scaled by ``c_bias**2`` and ``c_V`` by ``c_var`` (checked)."""
    consts = dict(m.constants)
    consts.update(
        c_B=_scaled_constant(consts["c_B"], c_bias, 2, "c_bias"), c_V=_scaled_constant(consts["c_V"], c_var, 1, "c_var")
    )
    return consts


def _scaled_constant(base: float, factor: float, power: int, name: str) -> float:
    """A constant scaled by a factor, if it stays a positive normal double.

    ``base * factor**power`` if it is a positive normal double (the laws take its log), else
    ``ValueError`` naming ``name`` (``c_bias = 1e300`` raised OverflowError, ``1e-300`` gave log 0).
    """
    try:
        value = base * factor**power
    except OverflowError:
        value = math.inf
    if not (sys.float_info.min <= value < math.inf):
        raise ValueError(
            f"{name}: the model's constant becomes {base:g} * {factor!r}**{power} = {value:g}, "
            "not a positive normal double"
        )
    return value


def _sample_size(n, name: str = "n") -> float:
    value = positive_scalar(n, name)
    if value <= 1:
        raise ValueError(f"{name}: expected a sample size > 1, got {brief(n)}")
    return value


def _eval(f, *args):
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        out = f(*args)
    return np.real(np.asarray(out, dtype=complex)) if np.iscomplexobj(out) else np.asarray(out, dtype=float)


#: Largest budget :func:`solve_head_size` (and :func:`optimal_head_dim`) searches
#: exhaustively (every ``k`` in ``1..budget`` is a candidate, one float each).
MAX_BUDGET = 1 << 22
#: Largest budget whose divisors :func:`divisors` lists (trial division up to its square root).
MAX_DIVISOR_BUDGET = 10**12
#: Most head dimensions :func:`log_mse` evaluates at once: the candidates ``1..MAX_BUDGET`` of the largest
#: exhaustive search (each law's lambdified expression makes several temporaries of this size).
MAX_GRID = MAX_BUDGET
#: The most sample sizes (and models) :func:`scaling_table` takes: each row solves a first-order condition
#: (1-4 ms of CPU per row for the built-in models at D = 512), so a thousand rows take seconds; 10**5 rows
#: ran for many minutes.
MAX_TABLE_ROWS = 1000


def _check_grid(values, name: str) -> None:
    """Refuse a grid of head dimensions that is too large.

    ``ValueError`` naming ``name`` when the array (or list) ``values`` has more than :data:`MAX_GRID`
    entries, checked before it is converted or copied.
    """
    size = values.size if isinstance(values, np.ndarray) else len(values) if isinstance(values, (list, tuple)) else 0
    if size > MAX_GRID:
        raise ValueError(
            f"{name}: expected at most {MAX_GRID} head dimensions at once (the candidates of the "
            f"largest exhaustive search), got {size}"
        )


def log_mse(d_k, n, budget, model="M1", c_bias=1.0, c_var=1.0) -> np.ndarray:
    """``log MSE`` of the model at head dimensions ``d_k``, without overflow (Thm 6.1).

    Both laws must be positive and finite at every ``d_k`` (the model checked them on ``k`` up to
    :data:`CHECK_BUDGET`; a larger budget searches further).  At most :data:`MAX_GRID` head dimensions at
    once: the lambdified laws make several temporaries of the grid's size.

    Parameters
    ----------
    d_k : float or array
        Head dimensions, > 0.
    n : float > 1
        The sample size.
    budget : int >= 1
        ``D = H d_k``.
    model : str or MSEModel, default "M1"
        A name of :data:`BUILTIN_MODELS` (or ``"M4"``) or a model.
    c_bias : float > 0, default 1.0
        Scales the model's ``c_B`` by ``c_bias**2``.
    c_var : float > 0, default 1.0
        Scales the model's ``c_V`` by ``c_var``.

    Returns
    -------
    numpy.ndarray
        ``log MSE``, of the shape of ``d_k``.

    Raises
    ------
    ValueError
        Naming ``bias_law`` or ``variance_law`` and the first ``d_k`` where one is not positive and
        finite, instead of an infinite risk; naming ``d_k`` for more than :data:`MAX_GRID` of them before
        any is allocated; or the argument that is out of range.
    """
    m, comp = _resolve(model, c_bias, c_var)
    n = _sample_size(n)
    budget = _budget(budget)
    _check_grid(d_k, "d_k")
    k = as_float_array(d_k, "d_k", ndim=None)
    _check_grid(k, "d_k")
    if np.any(k <= 0):
        raise ValueError("d_k: expected positive finite head dimensions")
    lb = np.broadcast_to(_eval(comp.log_bias, k, n, budget), k.shape)
    lv = np.broadcast_to(_eval(comp.log_var, k, n, budget), k.shape)
    for values, name, law in ((lb, "bias_law", m.bias_law), (lv, "variance_law", m.variance_law)):
        bad = ~np.isfinite(values)
        if np.any(bad):  # the laws are checked on k <= CHECK_BUDGET when the model is made; a search may go further
            at = float(k.reshape(-1)[int(np.flatnonzero(bad.reshape(-1))[0])])
            raise ValueError(
                f"{name}: expected a positive finite law at every head dimension searched, got {law} "
                f"with no finite logarithm at d_k={at:g} (n={n:g}, budget={budget})"
            )
    return np.logaddexp(lb, lv)


def _budget(budget, name: str = "budget") -> int:
    """A budget ``D = H d_k``, checked.

    A budget ``D = H d_k``: an integer from 1 to :data:`MAX_DIVISOR_BUDGET` (the largest whose divisors
    are listed; a search over every ``d_k`` is further bounded by :data:`MAX_BUDGET`).
    """
    return positive_int(budget, name, maximum=MAX_DIVISOR_BUDGET, what="the largest budget whose divisors are listed")


def divisors(budget) -> np.ndarray:
    """The divisors of ``budget``, ascending: the head sizes that split it exactly.

    Trial division up to ``sqrt(budget)`` (vectorised), so ``budget`` up to
    :data:`MAX_DIVISOR_BUDGET` takes well under a second.

    Parameters
    ----------
    budget : int
        From 1 to :data:`MAX_DIVISOR_BUDGET`.

    Returns
    -------
    numpy.ndarray of int64
        The divisors.

    Raises
    ------
    ValueError
        Naming ``budget`` when it is not a positive integer within bounds.
    """
    budget = _budget(budget)
    small = np.arange(1, math.isqrt(budget) + 1, dtype=np.int64)
    small = small[budget % small == 0]
    return np.unique(np.concatenate([small, budget // small]))


def _candidates(budget: int, divisors_only: bool) -> np.ndarray:
    if divisors_only:
        return divisors(budget)
    if budget > MAX_BUDGET:
        raise ValueError(
            f"budget: expected at most {MAX_BUDGET} for an exhaustive search over d_k = 1..budget, "
            f"got {budget}; use divisors_only=True for larger budgets"
        )
    return np.arange(1, budget + 1)


def optimal_head_dim(n, budget, model="M1", c_bias=1.0, c_var=1.0, *, divisors_only=False) -> int:
    """The integer ``d_k`` in ``1..budget`` that minimises the model's risk (Theorem 6.1).

    The risk uses ``H = budget / d_k`` as a real number (the relaxation of the claims page and the
    paper); the number of heads is then ``n_heads(d_k, budget) = floor(budget / d_k)``.  Ties go to the
    smaller ``d_k``.  For M1 the risk is ``c_bias**2/k**2 + c_var*k**(k/2+1)/(n*budget)``.

    Parameters
    ----------
    n : float > 1
        The sample size.
    budget : int >= 1
        ``D = H d_k``.
        At most :data:`MAX_BUDGET` (:data:`MAX_DIVISOR_BUDGET` with ``divisors_only``).
    model : str or MSEModel, default "M1"
        A name of :data:`BUILTIN_MODELS` (or ``"M4"``) or a model.
    c_bias : float > 0, default 1.0
        Scales the model's ``c_B`` by ``c_bias**2``.
    c_var : float > 0, default 1.0
        Scales the model's ``c_V`` by ``c_var``.
    divisors_only : bool, default False
        Only divisors of ``budget`` are candidates, so that ``H`` is exact.

    Returns
    -------
    int
        The minimiser.

    Raises
    ------
    ValueError
        Naming the argument that is out of range (``model`` for an unknown one, ``budget`` beyond
        :data:`MAX_BUDGET`), or ``bias_law`` or ``variance_law`` where the model's risk is not positive and
        finite.
    """
    return solve_head_size(n, budget, model, c_bias, c_var, divisors_only=divisors_only).d_k


def n_heads(d_k, budget) -> int:
    """``H = floor(budget / d_k)``, the number of heads of size ``d_k`` that fit in the budget.

    Parameters
    ----------
    d_k : int >= 1
        The head size.
    budget : int >= 1
        ``D``.

    Returns
    -------
    int
        ``H``.

    Raises
    ------
    ValueError
        Naming ``d_k`` when it exceeds the budget, or the argument that is not a positive integer.
    """
    d_k = _budget(d_k, "d_k")
    budget = _budget(budget)
    if d_k > budget:
        raise ValueError(f"d_k: expected at most budget = {budget}, got {d_k}")
    return budget // d_k


@dataclass(frozen=True)
class HeadSize:
    """The solution at one ``(n, budget)``: integer and real minimiser, heads, risk.

    Parameters
    ----------
    model : str
        The model's name.
    n : float
        The sample size.
    budget : int
        ``D``.
    d_k : int
        The integer argmin over the candidates.
    n_heads : int
        ``floor(budget / d_k)``.
    unused_budget : int
        ``budget - n_heads * d_k``.
    d_k_real : float
        The real root of the FOC (unconstrained; NaN if none).
    log_mse : float
        ``log MSE`` at ``d_k``.
    """

    model: str
    n: float
    budget: int
    d_k: int  #: integer argmin over the candidates
    n_heads: int  #: floor(budget / d_k)
    unused_budget: int  #: budget - n_heads * d_k
    d_k_real: float  #: the real root of the FOC (unconstrained; NaN if none)
    log_mse: float  #: log MSE at d_k


def solve_head_size(n, budget, model="M1", c_bias=1.0, c_var=1.0, *, divisors_only=False) -> HeadSize:
    """Integer minimiser, heads and real root of the model at ``(n, budget)`` (Thm 6.1).

    Parameters
    ----------
    n : float > 1
        The sample size.
    budget : int >= 1
        ``D = H d_k``.
    model : str or MSEModel, default "M1"
        A name of :data:`BUILTIN_MODELS` (or ``"M4"``) or a model.
    c_bias : float > 0, default 1.0
        Scales the model's ``c_B`` by ``c_bias**2``.
    c_var : float > 0, default 1.0
        Scales the model's ``c_V`` by ``c_var``.
    divisors_only : bool, default False
        Only divisors of ``budget`` are candidates.

    Returns
    -------
    HeadSize
        The solution.

    Raises
    ------
    ValueError
        Naming the argument that is out of range (``model`` for an unknown one, ``budget`` beyond
        :data:`MAX_BUDGET`), or ``bias_law`` or ``variance_law`` where the model's risk is not positive and
        finite.
    """
    m, comp = _resolve(model, c_bias, c_var)
    n = _sample_size(n)
    budget = _budget(budget)
    ks = _candidates(budget, boolean(divisors_only, "divisors_only"))
    values = log_mse(ks, n, budget, m, c_bias, c_var)
    if not np.any(np.isfinite(values)):
        raise ValueError(f"model: the risk of {m.name} is not finite at any d_k in 1..{budget}")
    best = int(ks[int(np.argmin(values))])
    h = budget // best
    return HeadSize(
        model=m.name,
        n=n,
        budget=budget,
        d_k=best,
        n_heads=h,
        unused_budget=budget - h * best,
        d_k_real=real_root(n, budget, m, c_bias, c_var),
        log_mse=float(values[int(np.argmin(values))]),
    )


_ROOT_GRID = np.geomspace(1e-3, 1e9, 601)


def real_root(n, budget, model="M1", c_bias=1.0, c_var=1.0) -> float:
    """The real minimiser of the risk (Thm 6.1).

    The first root of the log-FOC where it changes sign from - to + on ``k`` in ``[1e-3, 1e9]``
    (brentq, ``xtol = 1e-14``); not constrained to ``1..budget``.

    Parameters
    ----------
    n : float > 1
        The sample size.
    budget : int >= 1
        ``D = H d_k``.
    model : str or MSEModel, default "M1"
        A name of :data:`BUILTIN_MODELS` (or ``"M4"``) or a model.
    c_bias : float > 0, default 1.0
        Scales the model's ``c_B`` by ``c_bias**2``.
    c_var : float > 0, default 1.0
        Scales the model's ``c_V`` by ``c_var``.

    Returns
    -------
    float
        The root; NaN when there is none.

    Raises
    ------
    ValueError
        Naming the argument that is out of range (``model`` for an unknown one, ``budget`` beyond
        :data:`MAX_BUDGET`), or ``bias_law`` or ``variance_law`` where the model's risk is not positive and
        finite.
    """
    m, comp = _resolve(model, c_bias, c_var)
    n = _sample_size(n)
    budget = _budget(budget)

    def f(k):
        return float(_eval(comp.log_foc, k, n, budget))

    vals = _eval(comp.log_foc, _ROOT_GRID, n, budget) * np.ones_like(_ROOT_GRID)
    for i in range(len(_ROOT_GRID) - 1):
        a, b = vals[i], vals[i + 1]
        if np.isfinite(a) and np.isfinite(b) and a < 0 <= b:
            if b == 0:
                return float(_ROOT_GRID[i + 1])
            return float(
                brentq(f, _ROOT_GRID[i], _ROOT_GRID[i + 1], xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=500)
            )
    return math.nan


def local_slope(n, budget, model="M1", c_bias=1.0, c_var=1.0) -> float:
    """``d ln k* / d ln ln n`` at the real root: the local exponent ``p`` of ``k* ~ (ln n)^p`` (Thm 6.1).

    Constant (``= 2/(4+d)``) exactly when the law is a power of ``ln n``.

    Parameters
    ----------
    n : float > 1
        The sample size.
    budget : int >= 1
        ``D = H d_k``.
    model : str or MSEModel, default "M1"
        A name of :data:`BUILTIN_MODELS` (or ``"M4"``) or a model.
    c_bias : float > 0, default 1.0
        Scales the model's ``c_B`` by ``c_bias**2``.
    c_var : float > 0, default 1.0
        Scales the model's ``c_V`` by ``c_var``.

    Returns
    -------
    float
        ``p`` at ``n``; NaN where there is no real root.

    Raises
    ------
    ValueError
        Naming the argument that is out of range (``model`` for an unknown one, ``budget`` beyond
        :data:`MAX_BUDGET`), or ``bias_law`` or ``variance_law`` where the model's risk is not positive and
        finite.
    """
    m, comp = _resolve(model, c_bias, c_var)
    return _slope_at(comp, real_root(n, budget, m, c_bias, c_var), float(n), budget)


def _slope_at(comp: _Compiled, k: float, n: float, budget: int) -> float:
    if not math.isfinite(k):
        return math.nan
    return float(_eval(comp.slope, k, n, budget))


def sample_size_for_head_dim(d_k, budget, model="M1", c_bias=1.0, c_var=1.0) -> float:
    """``log10 n`` at which the real root equals ``d_k`` (Thm 6.1).

    Brentq on ``log10 n`` in ``(0, 300]``; returned in ``log10`` because the answer can be
    astronomically large (M1 needs ``n`` of about ``1e379`` for ``d_k = 300``, M2 about ``1e14239`` for
    ``d_k = 64``).

    Parameters
    ----------
    d_k : float
        A head size within the budget, ``0 < d_k <= budget`` (Theorem 6.1 splits ``D = H d_k`` into
        ``H >= 1`` heads).
    budget : int >= 1
        ``D``.
    model : str or MSEModel, default "M1"
        A name of :data:`BUILTIN_MODELS` (or ``"M4"``) or a model.
    c_bias : float > 0, default 1.0
        Scales the model's ``c_B`` by ``c_bias**2``.
    c_var : float > 0, default 1.0
        Scales the model's ``c_V`` by ``c_var``.

    Returns
    -------
    float
        ``log10 n``; NaN if no such ``n`` below ``1e300``.

    Raises
    ------
    ValueError
        Naming ``d_k`` when it is not within the budget, or the argument that is out of range.
    """
    m, comp = _resolve(model, c_bias, c_var)
    k = positive_scalar(d_k, "d_k")
    budget = _budget(budget)
    if k > budget:
        raise ValueError(
            f"d_k: expected a head size of at most the budget {budget} (D = H d_k with H >= 1 head), got {brief(d_k)}"
        )

    def f(x):
        return float(_eval(comp.log_foc, k, 10.0**x, budget))

    lo, hi = 1e-9, 300.0
    flo, fhi = f(lo), f(hi)
    if not (np.isfinite(flo) and np.isfinite(fhi)) or flo * fhi > 0:
        return math.nan
    return float(brentq(f, lo, hi, xtol=1e-12))


def fit_power_law(n_values, d_k_values) -> tuple[float, float]:
    """Least-squares fit of ``d_k = A (ln n)^p`` in logs (Thm 6.1's law).

    Parameters
    ----------
    n_values : array (N,)
        Sample sizes, ``n > 1``, at least two distinct.
    d_k_values : array (N,)
        Head dimensions, > 0.

    Returns
    -------
    A : float
        The prefactor.
    p : float
        The exponent.

    Raises
    ------
    ValueError
        Naming ``d_k_values`` when its shape differs from ``n_values`` or a value is not positive, or
        ``n_values`` for a size not above 1 or fewer than two distinct sizes.
    """
    n = as_float_array(n_values, "n_values", ndim=1)
    kk = as_float_array(d_k_values, "d_k_values", ndim=1)
    if n.shape != kk.shape or n.size < 2:
        raise ValueError(f"d_k_values: expected the shape of n_values {n.shape} (at least 2), got {kk.shape}")
    if np.any(n <= 1):
        raise ValueError("n_values: expected sample sizes n > 1")
    if np.any(kk <= 0):
        raise ValueError("d_k_values: expected head dimensions > 0")
    if np.unique(np.log(np.log(n))).size < 2:
        raise ValueError(f"n_values: expected at least two distinct sample sizes, got {np.unique(n).tolist()}")
    x, y = np.log(np.log(n)), np.log(kk)
    p, log_a = np.polyfit(x, y, 1)
    return float(np.exp(log_a)), float(p)


def implied_d(p) -> float:
    """The ``d`` of the printed law ``(log n)^(2/(4+d))`` that a fitted exponent ``p`` implies: ``2/p - 4``.

    Parameters
    ----------
    p : float > 0
        The exponent.

    Returns
    -------
    float
        ``d``.

    Raises
    ------
    ValueError
        Naming ``p`` when it is not positive or ``2/p - 4`` is beyond the largest double.
    """
    p = positive_scalar(p, "p")
    d = 2.0 / p - 4.0
    if not math.isfinite(d):
        raise ValueError(f"p: 2/p - 4 is beyond the largest double for p = {p!r}")
    return d


def scaling_table(
    models=BUILTIN_MODELS, n_values=DEFAULT_N_VALUES, budget=512, c_bias=1.0, c_var=1.0, *, divisors_only=False
) -> list[dict]:
    """The table of Thm 6.1: one row per (model, n).

    Each row has the integer argmin ``d_k``, ``n_heads = floor(budget/d_k)``, the real root
    ``d_k_real``, the local slope, and for every asymptotic formula ``f`` of the model its value
    ``asym_f`` and the ratios ``ratio_f = d_k / f`` and ``ratio_real_f = d_k_real / f``.
    ``pandas.DataFrame(rows)`` makes a table.

    Parameters
    ----------
    models : sequence of str or MSEModel, default :data:`BUILTIN_MODELS`
        The models.
    n_values : sequence of float, default :data:`DEFAULT_N_VALUES`
        The sample sizes.
    budget : int, default 512
        ``D``.
    c_bias : float > 0, default 1.0
        Scales every model's ``c_B`` by ``c_bias**2``.
    c_var : float > 0, default 1.0
        Scales every model's ``c_V``.
    divisors_only : bool, default False
        Only divisors of ``budget`` are candidates.

    Returns
    -------
    list of dict
        The rows.

    Raises
    ------
    ValueError
        Naming ``models`` or ``n_values`` when there are none or too many rows (models x sizes), or the
        argument that is out of range.
    """
    budget = _budget(budget)
    if isinstance(models, (str, MSEModel)):
        models = (models,)
    if not isinstance(models, (list, tuple)):
        raise ValueError(f"models: expected a model name, an MSEModel or a list of them, got {type(models).__name__}")
    if (
        isinstance(n_values, (str, bytes))
        or not isinstance(n_values, (list, tuple, np.ndarray))
        or np.ndim(n_values) != 1
    ):
        raise ValueError(f"n_values: expected a list of sample sizes, got {type(n_values).__name__}")
    if len(models) * len(n_values) > MAX_TABLE_ROWS:
        raise ValueError(
            f"n_values, models: a table of {len(models)} models x {len(n_values)} sample sizes has "
            f"{len(models) * len(n_values)} rows; at most {MAX_TABLE_ROWS} (each row solves a first-order "
            f"condition: the product, not each factor, is the work)"
        )
    rows = []
    for i, spec in enumerate(models):
        m, comp = _resolve(spec, c_bias, c_var, f"models[{i}]")
        for n in n_values:
            n = _sample_size(n, "n_values")
            sol = solve_head_size(n, budget, m, c_bias, c_var, divisors_only=divisors_only)
            row = {
                "model": m.name,
                "n": n,
                "budget": budget,
                "d_k": sol.d_k,
                "n_heads": sol.n_heads,
                "unused_budget": sol.unused_budget,
                "d_k_real": sol.d_k_real,
                "local_slope": _slope_at(comp, sol.d_k_real, n, budget),
            }
            for label, (where, f) in comp.asymptotics.items():
                value = float(_asymptotic_at(f, where, m.asymptotic_formulas[label], [n], budget)[0])
                row[f"asym_{label}"] = value
                row[f"ratio_{label}"] = sol.d_k / value
                row[f"ratio_real_{label}"] = sol.d_k_real / value
            rows.append(row)
    return rows


#: The squared-bias exponents ``a`` of the readings of "bias proportional to d_k^-2": 2 (the squared bias,
#: the claims page's reading), 4 (the bias itself, squared), and 1 and 3 around them.
BIAS_EXPONENTS = (1, 2, 3, 4)


def bias_reading_models(base="M1", exponents=BIAS_EXPONENTS) -> dict:
    """The model ``base`` with each squared-bias exponent of ``exponents`` (Thm 6.1).

    Theorem 6.1 takes the bias proportional to ``d_k^-2`` without saying whether the bias or its square is
    meant; each reading is the model ``base`` with its squared bias replaced by ``c_B/k^a``, derived
    symbolically like any reader's model, so the head-size law can be compared across readings.

    Parameters
    ----------
    base : str or MSEModel
        The model whose squared bias is replaced: a built-in name (``"M1"``, ...) or an :class:`MSEModel`;
        its variance law, combination rule and constants are kept.
    exponents : sequence of int >= 1
        The distinct squared-bias exponents ``a`` (default :data:`BIAS_EXPONENTS`, ``(1, 2, 3, 4)``).

    Returns
    -------
    dict of int to MSEModel
        ``{a: model}`` in the order of ``exponents``; each model is named ``"<base>, B^2 = c_B/k^<a>"``.

    Raises
    ------
    ValueError
        Naming ``exponents`` when they are not distinct positive integers or are empty, or ``base`` when it
        is no model.
    """
    exps = tuple(positive_int(a, "exponents") for a in sequence(exponents, "exponents", "positive integers"))
    if not exps or len(set(exps)) != len(exps):
        raise ValueError(f"exponents: expected distinct positive integers, got {brief(exponents)}")
    try:
        name = model(base).name  # a model name or an MSEModel
    except ValueError as exc:
        raise ValueError(f"base: {exc}") from None
    return {a: model(base, bias_law=f"c_B/k**{a}", name=f"{name}, B^2 = c_B/k^{a}") for a in exps}


def heads_slope(n, budgets, model="M1") -> float:
    """The least-squares slope of ``ln H*`` on ``ln D`` at a fixed sample size (Thm 6.1).

    Theorem 6.1 says ``H* = floor(D/d_k*)`` grows nearly linearly with the budget ``D``: with ``d_k*`` the
    integer minimiser of the model's risk (:func:`optimal_head_dim`) at each budget, the slope is 1 when
    the number of heads is proportional to the budget and below 1 when ``d_k*`` grows with ``D``.

    Parameters
    ----------
    n : float > 1
        The sample size, the same for every budget.
    budgets : sequence of int >= 1
        The budgets ``D``, at least two distinct values (each at most :data:`MAX_BUDGET`).
    model : str or MSEModel
        The risk model (default ``"M1"``), with its own constants.

    Returns
    -------
    float
        The slope of the least-squares line of ``ln H*`` against ``ln D``.
    """
    heads = [n_heads(optimal_head_dim(n, D, model), D) for D in budgets]
    return float(np.polyfit(np.log(budgets), np.log(heads), 1)[0])


# --------------------------------------------------------------------------
# Real heads under the budget: the Monte Carlo counterpart of the risk models
# --------------------------------------------------------------------------

#: The bandwidth grid of :func:`budget_simulation`, extended down to 0.1: with many one-dimensional heads
#: summed, 0.15 was the tuned value at n = 3000 (the edge of the first grid), so the optimum could have
#: been below it.
BUDGET_BANDWIDTHS = (0.1, 0.15, 0.25, 0.4, 0.6, 0.9, 1.3, 2.0)


def _budget_errors(rng, regression, n, n_test, sigma, budget, d_k_values, cells, rules):
    """One replicate of the budget simulation.

    One replicate: ``err[i, j, r]`` for head size ``d_k_values[i]``, bandwidth
    ``cells[i][j]`` and rule ``rules[r]`` (NaN where a cell is unused).
    """
    s = _data.draw_sample(rng, regression, n, budget, n_test=n_test, sigma=sigma)
    ybar = s.Y.mean()
    width = max(len(c) for c in cells)
    out = np.full((len(d_k_values), width, len(rules)), np.nan)
    for i, d_k in enumerate(d_k_values):
        W = _heads.orthogonal_heads(budget, d_k, budget // d_k)
        for j, h in enumerate(cells[i]):
            est = _heads.head_estimates(W, s.X, s.Y, s.X_test, bandwidth=h)
            for r, rule in enumerate(rules):
                if rule == "concat":  # transformer-style: W_O fitted by least squares (leave-one-out head outputs)
                    cfg = _heads.HeadConfig(W, bandwidth=h, rule="concat", output="fitted")
                    fit = _heads.ensemble_estimate(cfg, s.X, s.Y, s.X_test)
                else:
                    fit = _heads.combine(est, rule, y_mean=ybar)
                out[i, j, r] = np.mean((fit - s.m_test) ** 2)
    return out


@dataclass(frozen=True)
class BudgetResult(ReplicatedErrors):
    """The budget simulation at one ``(regression, n)``: real heads under ``D = H * d_k`` (Thm 6.1).

    What :func:`budget_simulation` returns: for each head size ``d_k`` (``H = budget / d_k`` heads on
    orthogonal coordinate blocks) and each combination rule, the bandwidth tuned on the tuning replicates
    and the integrated squared error of the tuned ensemble on fresh evaluation replicates.  ``mean``,
    ``se`` and ``estimate`` (from :class:`mhanw.infra.estimates.ReplicatedErrors`) are the evaluation
    IMSE and its Monte Carlo s.e., shape ``(n_rules, n_dk)``.

    Parameters
    ----------
    regression : str
        The name of the data model (regression function, inputs and noise).
    n : int
        The training sample size.
    budget : int
        ``D``, the total head dimension and the number of input coordinates.
    n_test : int
        Test points per replicate.
    sigma : float
        The noise standard deviation.
    d_k_values : tuple of int
        The head sizes, each a divisor of ``budget``; ``n_dk = len(d_k_values)``.
    rules : tuple of str
        The combination rules (:data:`mhanw.heads.RULES`); ``n_rules = len(rules)``.
    bandwidths : tuple of float
        The tuning grid; ``n_h = len(bandwidths)``.
    tuning_imse : numpy.ndarray, shape (n_dk, n_h, n_rules)
        The mean integrated squared error over the tuning replicates of every grid bandwidth.
    tuning_se : numpy.ndarray, shape (n_dk, n_h, n_rules)
        Its Monte Carlo standard error.
    tuned_bandwidth : numpy.ndarray, shape (n_dk, n_rules)
        The grid bandwidth with the smallest tuning IMSE.
    errors : numpy.ndarray, shape (n_rules, n_dk, n_rep)
        Per-replicate integrated squared errors of the tuned ensembles on the evaluation replicates
        (common random numbers: replicate ``r`` is the same sample in every cell).
    """

    regression: str
    n: int
    budget: int
    n_test: int
    sigma: float
    d_k_values: tuple
    rules: tuple
    bandwidths: tuple
    tuning_imse: np.ndarray
    tuning_se: np.ndarray
    tuned_bandwidth: np.ndarray
    errors: np.ndarray

    @property
    def n_rep(self) -> int:
        """The number of replicates ``R``."""
        return self.errors.shape[2]

    @property
    def n_heads(self) -> tuple:
        """The number of heads ``D // d_k`` of each head size."""
        return tuple(self.budget // k for k in self.d_k_values)

    def _index(self, rule, d_k):
        return self.rules.index(one_of(rule, "rule", self.rules)), self.d_k_values.index(
            one_of(d_k, "d_k", self.d_k_values)
        )

    def paired_difference(self, a: tuple, b: tuple) -> Estimate:
        """The paired difference ``IMSE_a - IMSE_b`` of two cells with its Monte Carlo s.e.

        The replicates are common random numbers, so the s.e. is that of the per-replicate differences.

        Parameters
        ----------
        a : tuple (str, int)
            The cell ``(rule, d_k)``: a rule of :attr:`rules` and a head size of :attr:`d_k_values`.
        b : tuple (str, int)
            The cell subtracted, likewise.

        Returns
        -------
        Estimate
            The mean difference and its paired s.e. (scalars; unpacks as ``diff, se``).
        """
        return Estimate.paired(self.errors[self._index(*a)], self.errors[self._index(*b)])

    def best_d_k(self, rule, among=None) -> int:
        """The head size with the smallest evaluation IMSE under ``rule``.

        Parameters
        ----------
        rule : str
            A rule of :attr:`rules`.
        among : sequence of int, optional
            The head sizes to choose from, each in :attr:`d_k_values` (default: all of them).

        Returns
        -------
        int
            The head size with the smallest mean evaluation IMSE; ties go to the first of ``among``.
        """
        r = self.rules.index(one_of(rule, "rule", self.rules))
        among = self.d_k_values if among is None else tuple(among)
        return min(among, key=lambda k: self.mean[r, self.d_k_values.index(one_of(k, "among", self.d_k_values))])

    def best_difference(self, a, b) -> Estimate:
        """The best head size under rule ``a`` against the best under rule ``b``.

        Parameters
        ----------
        a : str
            A rule of :attr:`rules`, taken at its own best head size (:meth:`best_d_k`).
        b : str
            The rule subtracted, at its own best head size.

        Returns
        -------
        Estimate
            ``IMSE_a - IMSE_b`` with its paired s.e. (scalars).
        """
        return self.paired_difference((a, self.best_d_k(a)), (b, self.best_d_k(b)))

    def small_vs_big(self, rule) -> Estimate:
        """The best of the many small heads against the best of the few big ones (Thm 6.1's conclusion).

        Parameters
        ----------
        rule : str
            A rule of :attr:`rules`.  The small heads are those with ``d_k <= D/4``, the big ones the rest;
            both groups must be non-empty in :attr:`d_k_values`.

        Returns
        -------
        Estimate
            ``IMSE_small - IMSE_big`` of the best head size of each group, with its paired s.e. (scalars;
            negative: the many small heads win).
        """
        small = [k for k in self.d_k_values if k <= self.budget // 4]
        big = [k for k in self.d_k_values if k > self.budget // 4]
        return self.paired_difference((rule, self.best_d_k(rule, small)), (rule, self.best_d_k(rule, big)))

    def comparisons(self, rule) -> list[dict]:
        """Every other head size against the best one, under ``rule``.

        Parameters
        ----------
        rule : str
            A rule of :attr:`rules`.

        Returns
        -------
        list of dict
            One row per head size other than the best (:meth:`best_d_k`), in the order of
            :attr:`d_k_values`, with keys ``rule``, ``best_d_k``, ``d_k``, ``diff`` (``IMSE_d_k -
            IMSE_best``), ``se`` (its paired s.e.), ``z = diff/se`` and ``significant`` (whether ``diff``
            exceeds :data:`mhanw.constants.N_SE` s.e.: the best is significantly better;
            :meth:`mhanw.infra.estimates.Estimate.exceeds`).
        """
        best = self.best_d_k(rule)
        rows = []
        for d_k in self.d_k_values:
            if d_k == best:
                continue
            diff = self.paired_difference((rule, d_k), (rule, best))
            rows.append(
                {
                    "rule": rule,
                    "best_d_k": best,
                    "d_k": d_k,
                    "diff": float(diff.mean),
                    "se": float(diff.se),
                    "z": float(diff.z),
                    "significant": bool(diff.exceeds(N_SE)),
                }
            )
        return rows

    def rows(self) -> list[dict]:
        """One row per ``(rule, d_k)`` for a table.

        Returns
        -------
        list of dict
            Rule-major rows with keys ``regression``, ``n``, ``rule``, ``d_k``, ``n_heads`` (``D // d_k``),
            ``imse`` and ``se`` (the evaluation IMSE and its s.e.), ``bandwidth`` (the tuned one) and
            ``bandwidth_on_edge`` (whether it is the first or last grid value: then the grid should be
            widened).
        """
        out = []
        for r, rule in enumerate(self.rules):
            for i, d_k in enumerate(self.d_k_values):
                h = float(self.tuned_bandwidth[i, r])
                out.append(
                    {
                        "regression": self.regression,
                        "n": self.n,
                        "rule": rule,
                        "d_k": d_k,
                        "n_heads": self.budget // d_k,
                        "imse": float(self.mean[r, i]),
                        "se": float(self.se[r, i]),
                        "bandwidth": h,
                        "bandwidth_on_edge": h in (self.bandwidths[0], self.bandwidths[-1]),
                    }
                )
        return out


def budget_simulation(
    regression,
    n: int,
    *,
    budget: int = 8,
    d_k_values=None,
    bandwidths=BUDGET_BANDWIDTHS,
    rules=("average", "sum"),
    n_tune: int = 10,
    n_rep: int = 20,
    n_test: int = 300,
    sigma: float | None = None,
    seed=0,
    n_jobs: int = 1,
) -> BudgetResult:
    """Tune the bandwidth per ``(d_k, rule)`` and evaluate the tuned ensembles (Thm 6.1).

    Parameters
    ----------
    regression : str, RegressionFunction or DataModel
        ``m``, e.g. ``"additive"`` or ``"iso_cos8"``, or a whole
        :class:`mhanw.data.DataModel` (its inputs and noise are used).
    n : int
        Training sample size.
    budget : int
        ``D``, the total head dimension, which is also the number of input coordinates.
    d_k_values : sequence of int, optional
        Head sizes, each a divisor of ``budget`` (default: all divisors).
    bandwidths : sequence of float
        The tuning grid.
    rules : sequence of str
        Distinct combination rules of :data:`mhanw.heads.RULES` (``"concat"``: one response per head,
        ``W_O`` fitted by least squares on the training sample's leave-one-out head outputs).
    n_tune : int >= 2
        Tuning replicates (the stream of child 0 of ``seed``).
    n_rep : int >= 2
        Evaluation replicates (the independent stream of child 1 of ``seed``).
    n_test : int >= 1
        Test points per replicate.
    sigma : float, optional
        The noise standard deviation (default :data:`mhanw.constants.SIGMA`, or the DataModel's level).
    seed : int or numpy.random.SeedSequence
        The root of the random streams.
    n_jobs : int
        Worker processes (the results do not depend on it).

    Returns
    -------
    BudgetResult
        The tuned bandwidths and the per-replicate evaluation errors, ``errors`` of shape
        ``(len(rules), len(d_k_values), n_rep)``.

    Raises
    ------
    ValueError
        Naming ``d_k_values`` when they are not distinct divisors of ``budget``, ``bandwidths`` when the
        grid is empty, ``rules`` when they are not distinct known rules, or the argument that is out of
        range (``n``, ``budget``, ``n_tune``, ``n_rep``, ``n_test``, ``regression``).
    """
    budget = positive_int(budget, "budget", maximum=None)  # bounded by the keys of one sample, n x budget
    n = positive_int(n, "n", maximum=None)
    check_entries("n x budget", n, budget)
    d_k_values = (
        tuple(int(k) for k in divisors(budget))
        if d_k_values is None
        else tuple(positive_int(k, "d_k_values") for k in sequence(d_k_values, "d_k_values", "head sizes"))
    )
    bad = [k for k in d_k_values if budget % k]
    if bad or not d_k_values or len(set(d_k_values)) != len(d_k_values):
        raise ValueError(f"d_k_values: expected distinct divisors of budget = {budget}, got {d_k_values}")
    bandwidths = tuple(positive_scalar(h, "bandwidths") for h in sequence(bandwidths, "bandwidths", "bandwidths"))
    if not bandwidths:
        raise ValueError("bandwidths: expected at least one bandwidth")
    rules = tuple(one_of(r, "rules", _heads.RULES) for r in sequence(rules, "rules", "combination rules"))
    if not rules or len(set(rules)) != len(rules):
        raise ValueError(f"rules: expected distinct rules among {_heads.RULES}, got {rules}")
    m = _data.as_data_model(regression, sigma)
    positive_int(budget, "budget", minimum=m.min_dim)
    m.inputs.check_dimension(budget, "budget")
    n_tune, n_rep = (
        positive_int(v, name, minimum=2, maximum=MAX_REPLICATES, what="replicates")
        for v, name in ((n_tune, "n_tune"), (n_rep, "n_rep"))
    )
    n_test = positive_int(n_test, "n_test")
    sigma = m.sigma
    root = as_seed_sequence(seed)
    # a copy, so that the children do not depend on what the caller spawned before
    root = np.random.SeedSequence(root.entropy, spawn_key=root.spawn_key, pool_size=root.pool_size)
    tune_seed, eval_seed = root.spawn(2)
    common = dict(regression=m, n=n, n_test=n_test, sigma=sigma, budget=budget, d_k_values=d_k_values, rules=rules)

    # stage 1: every bandwidth on the tuning replicates
    tune = run_replicates(
        functools.partial(_budget_errors, cells=[bandwidths] * len(d_k_values), **common),
        n_tune,
        tune_seed,
        n_jobs=n_jobs,
    )  # (R, n_dk, n_h, n_rules)
    tuning = Estimate.from_samples(tune, axis=0)
    tuning_imse, tuning_se = np.asarray(tuning.mean), np.asarray(tuning.se)
    tuned = np.asarray(bandwidths)[np.argmin(tuning_imse, axis=1)]  # (n_dk, n_rules)

    # stage 2: the tuned bandwidths on fresh replicates; each distinct bandwidth evaluated once
    cells = [sorted(set(tuned[i].tolist())) for i in range(len(d_k_values))]
    ev = run_replicates(functools.partial(_budget_errors, cells=cells, **common), n_rep, eval_seed, n_jobs=n_jobs)
    errors = np.empty((len(rules), len(d_k_values), n_rep))
    for i in range(len(d_k_values)):
        for r in range(len(rules)):
            errors[r, i] = ev[:, i, cells[i].index(tuned[i, r]), r]
    return BudgetResult(
        regression=m.name,
        n=n,
        budget=budget,
        n_test=n_test,
        sigma=sigma,
        d_k_values=d_k_values,
        rules=rules,
        bandwidths=bandwidths,
        tuning_imse=tuning_imse,
        tuning_se=tuning_se,
        tuned_bandwidth=tuned,
        errors=errors,
    )
