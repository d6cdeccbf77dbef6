"""The head-size law derived step by step, checked, and classified (Theorem 6.1).

:mod:`mhanw.scaling` turns a risk model (:class:`~mhanw.scaling.MSEModel`) into
its first-order condition, closed form or leading order, and numerical
minimisers.  This module is the textbook layer on top of it, for notebook
``06_optimal_head_size`` and for a reader who changes an assumption:

- :func:`derivation_steps` lists the derivation of ``k* = d_k*`` as a reader
  would follow it (risk, FOC, FOC in logs, solution, asymptotic forms), each
  step a sympy equation; :func:`show_derivation` displays it in a notebook.
- :func:`symbolic_checks` verifies each step symbolically: the closed form
  solves the FOC, the leading order solves the dominant balance, and for the
  built-in models the result equals the formula stated on the claims page
  (``book/claims.md``, 'Theorem 6.1').
- :func:`growth_law` classifies the law the model gives, symbolically: with
  ``l = ln n``, the local exponent ``p(n) = d ln k*/d ln ln n`` and the
  elasticity ``q = d ln k*/d ln n = p/l``.  A law ``k* ~ n^q`` is
  *polynomial*; ``k* ~ (ln n)^p`` is a power of ``ln n``; it is the printed
  ``(log n)^(2/(4+d))`` for some ``d > 0`` exactly when ``p -> 2/(4+d)``, i.e.
  ``0 < p < 1/2``, with ``d = 2/p - 4``.
- :func:`real_root_mp` and :func:`asymptotic_check` solve the FOC in mpmath at
  sample sizes far beyond a double (``n = 10^10000``), where an asymptotic
  formula must be within a few per cent of the real root.

Everything accepts a model name or an :class:`~mhanw.scaling.MSEModel`,
including one built from a reader's strings (:func:`mhanw.scaling.model`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np
import sympy as sp

from . import scaling as _s
from .infra.validate import brief, positive_int, positive_scalar

__all__ = [
    "REFERENCE_FORMULAS",
    "GrowthLaw",
    "Step",
    "asymptotic_check",
    "derivation_steps",
    "formula",
    "growth_law",
    "law_latex",
    "numeric",
    "real_root_mp",
    "show_derivation",
    "symbolic_checks",
]

k_, n_, D_ = (_s.SYMBOLS[s] for s in ("k", "n", "D"))
_cB, _cV, _d, _tau, _c = (_s.SYMBOLS[s] for s in ("c_B", "c_V", "d", "tau", "c"))
_K_STAR = sp.Symbol("k^{*}", positive=True)  # typeset name of the minimiser
_ELL = sp.Symbol("ell", positive=True)  # ln n
_W = sp.Symbol("w", positive=True)  # stands for a Lambert W of an argument that grows with n

#: The formulas stated on the claims page (``book/claims.md``, 'Theorem 6.1') for the
#: built-in models: the closed form (M3, M4a, M4b) or the leading order (M1, M2, M5).
REFERENCE_FORMULAS: dict[str, sp.Expr] = {
    "M1": sp.exp(sp.LambertW(2 * sp.log(2 * _cB * n_ * D_ / _cV))),
    "M2": (sp.log(4 * _cB * n_ / (_cV * _tau * (4 + _d))) / _tau) ** (2 / (4 + _d)),
    "M3": (4 * _cB * sp.log(n_) / (_cV * _d)) ** (2 / (4 + _d)),
    "M4a": (4 * _cB * n_ / (_cV * _d)) ** (2 / (4 + _d)),
    "M4b": (4 * _cB * n_ * D_ / (_cV * (_d + 2))) ** (2 / (_d + 6)),
    "M5": sp.log(2 * _cB * n_ * D_ / _cV) / _c,
}


def _model(spec) -> _s.MSEModel:
    if isinstance(spec, _s.MSEModel):
        return spec
    if isinstance(spec, str):
        return _s.model(spec)
    raise ValueError(f"model: expected a model name or an MSEModel, got {type(spec).__name__}")


# --------------------------------------------------------------------------
# The derivation, step by step
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    r"""One step of a derivation: a sentence and a relation ``lhs relation rhs``.

    Parameters
    ----------
    text : str
        The sentence.
    lhs : sympy.Basic
        The left side.
    rhs : sympy.Basic
        The right side.
    relation : str, default "="
        ``"="`` or ``"\sim"`` (asymptotic equivalence).
    """

    text: str
    lhs: sp.Basic
    rhs: sp.Basic
    relation: str = "="

    @property
    def equation(self) -> sp.Basic:
        """The step as a sympy ``Eq`` (an asymptotic step as the equation of its two sides)."""
        return sp.Eq(self.lhs, self.rhs, evaluate=False)

    def latex(self) -> str:
        r"""The relation in LaTeX (no ``$``).

        Returns
        -------
        str
            ``lhs relation rhs``, logarithms written ``\ln``.
        """
        return f"{sp.latex(self.lhs, ln_notation=True)} {self.relation} {sp.latex(self.rhs, ln_notation=True)}"


_LABELS = {
    "printed": r"the printed law $(\ln n)^{2/(4+d)}$",
    "log_ratio": r"the leading order simplified with $W(x)\sim\ln x$ and $\Lambda\sim\ln n$",
    "law": r"the law the model was built for",
    "log_n": r"the leading order with $\Lambda\sim\ln(nD)$",
}


_RULE_TEXT = {
    "average": "the $H=D/k$ heads are averaged, so the per-head variance is divided by $H$",
    "sum": "the $H=D/k$ heads are added, so the per-head variance is multiplied by $H$",
    "none": "a single head: the variance enters as it is",
    "concat": "the $H=D/k$ heads are concatenated through a unit-norm output projection, so the variance "
    "enters as it is",
}


def formula(spec) -> sp.Expr | None:
    """The model's formula for ``k*``: its closed form, else its leading order (Thm 6.1).

    Parameters
    ----------
    spec : str or mhanw.scaling.MSEModel
        A model name (:func:`mhanw.scaling.model`) or a model.

    Returns
    -------
    sympy.Expr or None
        The formula, or None when sympy finds neither.

    Raises
    ------
    ValueError
        Naming ``model`` when ``spec`` is neither a known name nor a model.
    """
    m = _model(spec)
    return m.closed_form if m.closed_form is not None else m.leading_order


def derivation_steps(spec) -> list[Step]:
    """The derivation of ``k*`` for a model, one :class:`Step` per line of a textbook proof (Thm 6.1).

    Parameters
    ----------
    spec : str or mhanw.scaling.MSEModel
        A model name (:func:`mhanw.scaling.model`) or a model.

    Returns
    -------
    list of Step
        From the risk to the first-order condition, its log form and its solution.

    Raises
    ------
    ValueError
        Naming ``model`` when ``spec`` is neither a known name nor a model.
    """
    m = _model(spec)
    mse = sp.Function("MSE")(k_)
    steps = [
        Step(
            f"Assumptions: squared bias $B^2(k)$ and per-head variance $V(k)$; {_RULE_TEXT[m.combination]}.",
            mse,
            sp.Add(m.bias_law, sp.powsimp(m.variance_term), evaluate=False),
        ),
        Step(
            "First-order condition: the derivative in $k$ vanishes at the minimiser.", sp.powsimp(m.foc), sp.Integer(0)
        ),
        Step(
            r"In logarithms, $\ln(\partial_k\,\text{variance term}) = \ln(-\partial_k B^2)$, "
            r"with the terms in $k$ on the left and $\Lambda$, free of $k$, on the right.",
            m.foc_lhs,
            m.log_scale,
        ),
    ]
    if m.closed_form is not None:
        steps.append(
            Step(r"The left side is linear in $\ln k$, so the minimiser has a closed form.", _K_STAR, m.closed_form)
        )
        return steps + _extra_steps(m)
    steps.append(
        Step(
            r"No closed form. As $n\to\infty$ the root $k^*\to\infty$, and the left side is "
            r"dominated by its largest term (the others are of lower order):",
            m.dominant_term,
            m.log_scale,
        )
    )
    if m.leading_order is None:
        steps.append(
            Step(
                "sympy finds no solution of the dominant balance; only the numerical root is available.",
                _K_STAR,
                sp.Symbol("\\text{numerical}"),
            )
        )
        return steps + _extra_steps(m)
    text = "Solving the dominant balance for $k$ gives the leading order"
    if m.leading_order.has(sp.LambertW):
        text += (
            r" (Lambert's $W$, the inverse of $w e^w$; $e^{W(x)} = x/W(x)$ and "
            r"$W(x) = \ln x - \ln\ln x + o(1)$)"
        )
    steps.append(Step(text + ":", _K_STAR, m.leading_order, r"\sim"))
    return steps + _extra_steps(m)


def _extra_steps(m: _s.MSEModel) -> list[Step]:
    out = []
    for label, expr in m.asymptotics:
        what = _LABELS.get(label, f"the asymptotic form `{label}`")
        # the printed law is what the model is judged against, not a result of the model
        text = (
            f"For comparison, {what} (not a result of this model):" if label == "printed" else f"Compared with {what}:"
        )
        out.append(Step(text, _K_STAR, expr, r"\sim" if label != "printed" else r"\asymp"))
    return out


def show_derivation(spec) -> None:
    """Display :func:`derivation_steps` in a notebook (markdown text, typeset equations).

    Parameters
    ----------
    spec : str or mhanw.scaling.MSEModel
        A model name (:func:`mhanw.scaling.model`) or a model.

    Raises
    ------
    ValueError
        Naming ``model`` when ``spec`` is neither a known name nor a model.
    """
    from IPython.display import Markdown, display

    m = _model(spec)
    about = m.description if m.name in _s.BUILTIN_MODELS else "the reader's model"
    display(Markdown(f"**{m.name}**: {about}"))
    for i, step in enumerate(derivation_steps(m), 1):
        display(Markdown(f"{i}. {step.text}\n\n$$ {step.latex()} $$"))


# --------------------------------------------------------------------------
# Symbolic checks
# --------------------------------------------------------------------------


def _log_equal(a: sp.Expr, b: sp.Expr) -> bool:
    """``a == b`` for expressions in positive symbols, comparing logarithms."""
    diff = sp.expand_log(a - b, force=True)
    diff = diff.replace(lambda e: isinstance(e, sp.log), lambda e: sp.log(sp.factor(e.args[0])))
    diff = sp.expand_log(diff, force=True)
    if sp.simplify(diff) == 0:
        return True
    return sp.simplify(sp.logcombine(diff, force=True)) == 0


def _solves_dominant(m: _s.MSEModel) -> bool:
    """Whether the leading order solves the dominant balance.

    The leading order solves ``dominant term = Lambda``; a Lambert ``W(x)`` is
    checked through its definition ``x = w e^w`` with ``w = W(x)``.
    """
    lam = sp.Symbol("Lambda", positive=True)
    lead = m.leading_order
    if lead is None:
        return False
    lead = lead.xreplace({m.log_scale: lam})
    residual = m.dominant_term.subs(k_, lead) - lam
    lamberts = residual.atoms(sp.LambertW)
    if not lamberts:
        return _log_equal(m.dominant_term.subs(k_, m.leading_order), m.log_scale)
    if len(lamberts) != 1 or lam in m.dominant_term.free_symbols:
        return False
    (lw,) = lamberts
    sols = sp.solve(sp.Eq(lw.args[0], _W * sp.exp(_W)), lam)
    if len(sols) != 1:
        return False
    residual = residual.xreplace({lw: _W}).subs(lam, sols[0])
    return sp.simplify(sp.expand_log(residual, force=True)) == 0


def symbolic_checks(spec) -> dict[str, bool]:
    """Symbolic verification of the derivation of a model (Thm 6.1).

    The checks:

    - ``"closed form solves the FOC"`` (when there is one): the log-FOC at the closed form is
      identically zero;
    - ``"leading order solves the dominant balance"`` (otherwise);
    - ``"equals the stated formula"`` for an unmodified built-in model: the closed form or leading
      order equals the formula of :data:`REFERENCE_FORMULAS`.

    Parameters
    ----------
    spec : str or mhanw.scaling.MSEModel
        A model name (:func:`mhanw.scaling.model`) or a model.

    Returns
    -------
    dict of str to bool
        Each check and whether it holds.

    Raises
    ------
    ValueError
        Naming ``model`` when ``spec`` is neither a known name nor a model.
    """
    m = _model(spec)
    out = {}
    if m.closed_form is not None:
        out["closed form solves the FOC"] = _log_equal(m.foc_lhs.subs(k_, m.closed_form), m.log_scale)
    elif m.leading_order is not None:
        out["leading order solves the dominant balance"] = _solves_dominant(m)
    if m.name in REFERENCE_FORMULAS and formula(m) is not None:
        out["equals the stated formula"] = _log_equal(sp.log(formula(m)), sp.log(REFERENCE_FORMULAS[m.name]))
    return out


# --------------------------------------------------------------------------
# Which law?
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class GrowthLaw:
    """How ``k*`` grows with ``n`` under a model (from its closed form or leading order; Thm 6.1).

    Made by :func:`growth_law`.

    Parameters
    ----------
    kind : str
        ``"polynomial"`` (``k* ~ n^q``), ``"power of log n"`` (``k* ~ (ln n)^p``, ``p`` finite and
        positive), ``"slower than any power of log n"``, or ``"undetermined"``.
    exact : bool
        Whether the exponent is the same at every ``n`` (a closed form) or only in the limit.
    p_limit : sympy.Expr or None
        The exponent of ``ln n`` (in the model's constants).
    q_limit : sympy.Expr or None
        The exponent of ``n``.
    implied_d : sympy.Expr or None
        ``2/p - 4``, the ``d`` of the printed law ``(log n)^(2/(4+d))`` (None unless the kind is a power
        of log n).
    gives_printed_law : bool
        Whether that ``d`` is positive with the model's default constants.
    description : str
        The law in words.
    """

    kind: str
    exact: bool
    p_limit: sp.Expr | None
    q_limit: sp.Expr | None
    implied_d: sp.Expr | None
    gives_printed_law: bool
    description: str


def _limit_in_ell(expr: sp.Expr) -> sp.Expr | None:
    """``lim_{ell -> oo}`` of an expression in ``ell`` (and Lambert W's of arguments growing with ``ell``)."""
    try:
        lim = sp.limit(expr, _ELL, sp.oo)
        if lim.has(sp.Limit) or lim.has(sp.LambertW):
            # every W(.) here has an argument growing like ell: take ell -> oo with W held
            # fixed, then W -> oo (W grows like ln ell, more slowly than any power of ell)
            held = expr.replace(lambda e: isinstance(e, sp.LambertW), lambda e: _W)
            lim = sp.limit(sp.limit(held, _ELL, sp.oo), _W, sp.oo)
        if lim.has(sp.Limit):
            return None
        return sp.simplify(lim)
    except (NotImplementedError, ValueError, TypeError):
        return None


def _power(e: sp.Expr) -> str:
    """An exponent as text, parenthesised unless it is an integer or a symbol."""
    return sp.sstr(e) if (e.is_Integer or e.is_Symbol) else f"({sp.sstr(e)})"


def growth_law(spec) -> GrowthLaw:
    """Classify the growth of ``k*`` in ``n`` symbolically (see :class:`GrowthLaw`; Thm 6.1).

    Parameters
    ----------
    spec : str or mhanw.scaling.MSEModel
        A model name (:func:`mhanw.scaling.model`) or a model.

    Returns
    -------
    GrowthLaw
        The classification.

    Raises
    ------
    ValueError
        Naming ``model`` when ``spec`` is neither a known name nor a model.
    """
    m = _model(spec)
    f = formula(m)
    if f is None or n_ not in f.free_symbols:
        return GrowthLaw(
            "undetermined", False, None, None, None, False, "no closed form or leading order in n from sympy"
        )
    log_f = sp.expand_log(sp.log(f), force=True).subs(n_, sp.exp(_ELL))
    log_f = sp.expand_log(log_f, force=True)
    p = sp.simplify(_ELL * sp.diff(log_f, _ELL))  # d ln k / d ln ln n
    q = sp.simplify(p / _ELL)  # d ln k / d ln n
    consts = {_s.SYMBOLS[c]: v for c, v in m.constants}
    q_lim = _limit_in_ell(q)
    if q_lim is not None and q_lim != 0:
        exact = _ELL not in q.free_symbols and not q.has(_W)
        return GrowthLaw("polynomial", exact, None, q_lim, None, False, f"polynomial in n: k* ~ n^{_power(q_lim)}")
    p_lim = _limit_in_ell(p)
    if p_lim is None:
        return GrowthLaw("undetermined", False, None, q_lim, None, False, "sympy finds no limit of the exponent")
    if p_lim == 0:
        return GrowthLaw(
            "slower than any power of log n",
            False,
            p_lim,
            q_lim,
            None,
            False,
            "k* grows more slowly than any power of ln n",
        )
    if p_lim == sp.oo:
        return GrowthLaw(
            "undetermined",
            False,
            p_lim,
            q_lim,
            None,
            False,
            "faster than any power of ln n, slower than any power of n",
        )
    exact = _ELL not in p.free_symbols and not p.has(sp.LambertW)
    implied = sp.simplify(2 / p_lim - 4)
    try:
        implied_value = float(implied.xreplace(consts))
    except TypeError:
        implied_value = math.nan
    gives = implied_value > 0
    how = "exactly" if exact else "asymptotically"
    power = _power(p_lim)
    desc = f"k* ~ (ln n)^{power} {how}"
    if p.has(sp.LambertW):
        desc += ", up to a factor slower than any power of ln n (a Lambert W)"
    desc += f"; printed-law d = 2/p - 4 = {sp.sstr(implied)}"
    return GrowthLaw("power of log n", exact, p_lim, q_lim, implied, gives, desc)


def numeric(expr) -> float:
    """An expression in the models' constants as a number (Thm 6.1's law, evaluated).

    The constants take their values of :data:`mhanw.scaling.DEFAULT_CONSTANTS`.

    Parameters
    ----------
    expr : sympy.Expr or None
        An expression in the models' constants, e.g. a law's exponent ``p_limit`` or its ``implied_d``
        (:func:`growth_law`).

    Returns
    -------
    float
        Its value; NaN when there is none (``None``, or a symbol left over after the substitution).
    """
    try:
        return float(expr.xreplace({_s.SYMBOLS[c]: v for c, v in _s.DEFAULT_CONSTANTS.items()}))
    except (AttributeError, TypeError, ValueError):
        return math.nan


def law_latex(spec) -> str:
    r"""The growth law in LaTeX (no ``$``).

    ``k^*\propto n^{q}`` (polynomial), ``k^*\propto(\ln n)^{p}`` (exact power of ``ln n``) or
    ``k^*=(\ln n)^{p+o(1)}`` (asymptotic).

    Parameters
    ----------
    spec : str or mhanw.scaling.MSEModel
        A model name (:func:`mhanw.scaling.model`) or a model.

    Returns
    -------
    str
        The LaTeX.

    Raises
    ------
    ValueError
        Naming ``model`` when ``spec`` is neither a known name nor a model.
    """
    g = growth_law(spec)
    if g.kind == "polynomial":
        return rf"k^*\propto n^{{{sp.latex(g.q_limit)}}}" if g.exact else rf"k^*=n^{{{sp.latex(g.q_limit)}+o(1)}}"
    if g.kind == "power of log n":
        if g.exact:
            return rf"k^*\propto(\ln n)^{{{sp.latex(g.p_limit)}}}"
        return rf"k^*=(\ln n)^{{{sp.latex(g.p_limit)}+o(1)}}"
    return rf"k^*\ \text{{{g.kind}}}"


# --------------------------------------------------------------------------
# Arbitrary precision: n far beyond a double
# --------------------------------------------------------------------------


def _mp_functions(m: _s.MSEModel, c_bias: float, c_var: float):
    subs = {_s.SYMBOLS[c]: v for c, v in _s._constants_with(m, c_bias, c_var).items()}
    # write n = exp(ell) so that ln n never overflows
    logfoc = sp.expand_log(m.log_foc.xreplace(subs), force=True).subs(n_, sp.exp(_ELL))
    logfoc = sp.expand_log(logfoc, force=True)
    f = sp.lambdify((k_, _ELL, D_), logfoc, modules="mpmath")
    slope = sp.lambdify((k_, _ELL, D_), m.local_slope_expr.xreplace(subs).subs(n_, sp.exp(_ELL)), modules="mpmath")
    formulas = {}
    for label, expr in m.asymptotic_formulas.items():
        e = sp.expand_log(expr.xreplace(subs), force=True).subs(n_, sp.exp(_ELL))
        formulas[label] = sp.lambdify((_ELL, D_), e, modules="mpmath")
    return f, slope, formulas


_U_GRID = [
    -6,
    -3,
    -1,
    0,
    0.5,
    1,
    1.5,
    2,
    3,
    4,
    6,
    8,
    11,
    16,
    23,
    32,
    45,
    64,
    90,
    128,
    181,
    256,
    362,
    512,
    724,
    1024,
    1448,
    2048,
    2896,
    4096,
    5793,
    8192,
    11585,
    16384,
    23170,
    32768,
    65536,
]


#: Smallest and largest working precision (decimal digits) of :func:`real_root_mp`.
MIN_DPS, MAX_DPS = 15, 1000


def real_root_mp(log10_n, budget, model="M1", c_bias=1.0, c_var=1.0, dps: int = 40):
    """The real minimiser ``k*`` at ``n = 10**log10_n`` in mpmath (``log10_n`` may be 10000; Thm 6.1).

    Solves the log-FOC in ``u = ln k`` by bracketing on a grid and the Anderson-Björck method.

    Parameters
    ----------
    log10_n : float
        ``log10 n``.
    budget : int >= 1
        ``D``.
    model : str or mhanw.scaling.MSEModel, default "M1"
        The model.
    c_bias : float > 0, default 1.0
        Scales the model's ``c_B`` by ``c_bias**2``.
    c_var : float > 0, default 1.0
        Scales the model's ``c_V``.
    dps : int, default 40
        The working precision in decimal digits, from :data:`MIN_DPS` (a double's) to
        :data:`MAX_DPS`.

    Returns
    -------
    mpmath.mpf
        ``k*``; NaN if no sign change on ``k`` in ``[e^-6, e^65536]``.

    Raises
    ------
    ValueError
        Naming the argument that is out of range.
    """
    m = _model(model)
    dps = positive_int(dps, "dps", minimum=MIN_DPS)
    if not MIN_DPS <= dps <= MAX_DPS:
        raise ValueError(f"dps: expected an integer from {MIN_DPS} to {MAX_DPS} (decimal digits), got {brief(dps)}")
    log10_n = positive_scalar(log10_n, "log10_n")
    budget = _s._budget(budget)
    c_bias, c_var = positive_scalar(c_bias, "c_bias"), positive_scalar(c_var, "c_var")
    f, _, _ = _mp_functions(m, c_bias, c_var)
    with mpmath.workdps(dps):
        ell = mpmath.mpf(log10_n) * mpmath.log(10)

        def g(u):
            try:
                v = f(mpmath.exp(u), ell, budget)
            except (ZeroDivisionError, ValueError, OverflowError):
                return mpmath.nan
            return mpmath.re(v) if isinstance(v, mpmath.mpc) else v

        prev_u, prev = None, None
        for u in _U_GRID:
            u = mpmath.mpf(u)
            val = g(u)
            if prev is not None and mpmath.isfinite(prev) and mpmath.isfinite(val) and prev < 0 <= val:
                try:
                    root = mpmath.findroot(g, (prev_u, u), solver="anderson")
                except ValueError:  # mpmath: "Could not find root within given tolerance"
                    raise ValueError(
                        f"log10_n: the root at n = 10**{log10_n:g} could not be located to {dps} digits "
                        "(the log-FOC is too steep there); use a larger dps or a smaller n"
                    ) from None
                return +mpmath.exp(root)
            prev_u, prev = u, val
    return mpmath.nan


#: Most sample sizes :func:`asymptotic_check` takes: each is a high-precision root search of about a
#: second; the chapter uses 4.
MAX_ASYMPTOTIC_POINTS = 100


def asymptotic_check(spec, log10_n_values=(12, 100, 1000, 10000), budget=512, c_bias=1.0, c_var=1.0) -> list[dict]:
    """At ``n = 10**x``: the real root, its local exponent and its ratio to every asymptotic formula (Thm 6.1).

    A formula is asymptotically right when the ratio tends to 1 as ``x`` grows.

    Parameters
    ----------
    spec : str or mhanw.scaling.MSEModel
        A model name or a model.
    log10_n_values : sequence of float, default (12, 100, 1000, 10000)
        The ``x``, at most :data:`MAX_ASYMPTOTIC_POINTS` of them.
    budget : int, default 512
        ``D``.
    c_bias : float > 0, default 1.0
        Scales the model's ``c_B`` by ``c_bias**2``.
    c_var : float > 0, default 1.0
        Scales the model's ``c_V``.

    Returns
    -------
    list of dict
        One row per ``x``: ``log10_n``, ``k_real``, ``log10_k_real``, ``local_exponent``
        (``d ln k*/d ln ln n``) and ``ratio_<label>`` per formula.  Plain floats; a value beyond a double
        (``k_real`` of a polynomial law at ``n = 10^1000``) or undefined (no root) is None, and
        ``log10_k_real`` still holds the size of the root.

    Raises
    ------
    ValueError
        Naming ``log10_n_values`` when it is not a list or too long, ``model`` for an unknown model, or
        the argument that is out of range.
    """
    m = _model(spec)
    budget = _s._budget(budget)
    if (
        isinstance(log10_n_values, (str, bytes))
        or not isinstance(log10_n_values, (list, tuple, np.ndarray))
        or np.ndim(log10_n_values) != 1
    ):
        raise ValueError(f"log10_n_values: expected a list of log10 sample sizes, got {brief(log10_n_values)}")
    if len(log10_n_values) > MAX_ASYMPTOTIC_POINTS:
        raise ValueError(
            f"log10_n_values: expected at most {MAX_ASYMPTOTIC_POINTS} sample sizes (each is a "
            f"high-precision root search), got {len(log10_n_values)}"
        )
    _, slope, formulas = _mp_functions(m, positive_scalar(c_bias, "c_bias"), positive_scalar(c_var, "c_var"))
    rows = []
    for x in log10_n_values:
        root = real_root_mp(x, budget, m, c_bias, c_var)
        row = {
            "log10_n": float(x),
            "k_real": None,
            "log10_k_real": None,
            "local_exponent": None,
            **{f"ratio_{label}": None for label in formulas},
        }
        if mpmath.isfinite(root):
            with mpmath.workdps(40):
                ell = mpmath.mpf(x) * mpmath.log(10)
                row["log10_k_real"] = _float(mpmath.log10(root))
                row["k_real"] = _float(root)
                row["local_exponent"] = _float(slope(root, ell, budget))
                for label, fn in formulas.items():
                    row[f"ratio_{label}"] = _float(root / fn(ell, budget))
        rows.append(row)
    return rows


def _float(x) -> float | None:
    """An mpmath number as a float, or ``None`` when it is not a finite double."""
    try:
        v = float(mpmath.re(x))
    except (TypeError, ValueError, OverflowError):
        return None
    return v if math.isfinite(v) else None
