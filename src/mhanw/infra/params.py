"""Checking a chapter's papermill parameters: names, values and the constraints between them.

Papermill injects ``-p NAME VALUE`` into a notebook whether or not the
notebook knows ``NAME``; a misspelt name (``-p fidelty quick``) only warns and
the run goes on with the default.  A chapter therefore declares its parameters
in its module (``mhanw.chapters.chNN_slug``)::

    from mhanw.infra import params as P

    PARAMETERS = {
        **P.STANDARD,                       # fidelity, seed, figures_dir, macros_path, results_path
        "d": P.positive_int(1, 1024, why="a model dimension"),
        "d_k": P.positive_int(1, 1024, at_most="d", why="a head dimension"),
        "H": P.positive_int(1, 64, why="heads"),
        "sigma": P.nonnegative_float(100.0, why="responses of order 1"),
        "regression": P.regression(dimension="d"),
        "inputs": P.inputs(dimension="d"),
        "noise": P.noise(dimension="d"),
        "weights": P.weights(length="H"),
    }
    CONSTRAINTS = (P.product_at_most(("H", "d_k"), "d"),)

and its notebook passes every parameter by name to :func:`mhanw.chapters.base.setup`, which checks them
with :func:`check_parameters` before anything runs.

Every numeric parameter declares its range (``minimum``, ``maximum`` and a
``why`` that says where the ends come from, shown in the message), and one check,
:func:`_check_range`, enforces it for a notebook's parameters and a scenario's
alike: a count of Monte Carlo draws far beyond its default would run for days, a
bandwidth of ``1e-300`` or a noise level of ``1e308`` describes no experiment.
:func:`unbounded` lists the numeric parameters of a spec that lack an end.

Every problem raises :class:`ParameterError` (a ``ValueError``) with a one-line
message that starts with the parameter's name, e.g. ``fidelty: unknown
parameter (did you mean 'fidelity'?)``; in a papermill run the traceback ends
the chapter, and the pipeline publishes nothing from a failed chapter.

Unknown names are found in two ways: inside IPython (papermill's kernel), the
names assigned by papermill's injected cell (its source starts with
``# Parameters``) that the spec does not declare; outside IPython, the
data-valued names of the namespace (not modules, functions, classes, not
``_private``) that the spec does not declare and ``ignore`` does not list.

The kinds :func:`regression`, :func:`inputs` and :func:`noise` check specs with
:mod:`mhanw.data` (imported when they run); everything else knows nothing of
the library.
"""

from __future__ import annotations

import ast
import difflib
import math
import numbers
import re
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .validate import MAX_COUNT, brief

__all__ = [
    "CONSTRAINTS_NONE",
    "Kind",
    "ParameterError",
    "Parameters",
    "STANDARD",
    "at_most",
    "bandwidth",
    "boolean",
    "bounded_work",
    "check_parameters",
    "choice",
    "coordinate",
    "divides",
    "fidelity",
    "inputs",
    "noise",
    "noise_level",
    "nonnegative_float",
    "optional",
    "path",
    "positive_float",
    "positive_int",
    "probability",
    "product_at_most",
    "real",
    "regression",
    "require",
    "seed",
    "sequence",
    "unbounded",
    "weights",
    "workers",
]


class ParameterError(ValueError):
    """A chapter parameter is unknown, missing, malformed or inconsistent; the message starts with its name."""


def _fail(name: str, text: str) -> ParameterError:
    return ParameterError(f"{name}: {text}")


def _rename(exc: ValueError, name: str) -> ParameterError:
    """A library error ``"arg: detail"`` re-addressed to the parameter ``name``: ``"name: detail"`` (one line)."""
    msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    head, sep, rest = msg.partition(": ")
    return ParameterError(f"{name}: {rest if sep and head.isidentifier() else msg}")


@dataclass(frozen=True)
class Kind:
    """What a parameter may be.

    ``check(value, name) -> value`` validates (and normalises) the value alone;
    ``relate(value, name, params)``, if given, checks it against the other
    (already checked) parameters.  Both raise :class:`ParameterError`.
    ``describe`` is shown in messages and listings.  ``bounds``: ``(minimum,
    maximum)`` of a numeric kind as declared (``None`` for an end not declared),
    ``None`` for a kind that is not a number; ``parts``: the kinds a sequence or an
    optional value holds (:func:`unbounded` walks them).
    """

    describe: str
    check: Callable[[object, str], object]
    relate: Callable[[object, str, Mapping], None] | None = None
    bounds: tuple | None = None
    parts: tuple = ()


def _real(value, name: str, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise _fail(name, f"expected {what}, got {brief(value)}")
    try:
        out = float(value)
    except OverflowError:  # an integer beyond a double
        raise _fail(name, f"expected {what} (within the range of a double), got {brief(value)}") from None
    if not math.isfinite(out):
        raise _fail(name, f"expected {what} (finite), got {brief(value)}")
    return out + 0.0  # -0.0 is 0 (it was printed "sigma = -0.0")


def _check_range(
    value,
    out,
    name: str,
    minimum,
    maximum,
    *,
    what_below: str,
    what_above: str,
    open_min: bool = False,
    open_max: bool = False,
    why_min: str = "",
    why_max: str = "",
):
    """The one range check of every numeric kind: ``out`` (``value`` read as a number) within
    ``[minimum, maximum]`` (an end ``None``: none; ``open_*``: that end excluded), else
    ``"name: expected WHAT (WHY), got VALUE"`` (``why_min``/``why_max``: where the end that is
    crossed comes from); returns ``out``."""
    if minimum is not None and (out < minimum or (open_min and out == minimum)):
        raise _fail(name, f"expected {what_below}{f' ({why_min})' if why_min else ''}, got {brief(value)}")
    if maximum is not None and (out > maximum or (open_max and out == maximum)):
        raise _fail(name, f"expected {what_above}{f' ({why_max})' if why_max else ''}, got {brief(value)}")
    return out


def _integer(value, name: str, minimum: int, maximum: int | None = None, why: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise _fail(name, f"expected an integer >= {minimum}, got {brief(value)}")
    return _check_range(
        value,
        int(value),
        name,
        minimum,
        maximum,
        what_below=f"an integer >= {minimum}",
        what_above=f"an integer <= {maximum}",
        why_max=why,
    )


def _ref(params: Mapping, ref, name: str):
    """A literal, or the value of the parameter called ``ref``."""
    if isinstance(ref, str):
        if ref not in params:
            raise _fail(name, f"refers to parameter {ref!r}, which the chapter does not declare")
        return params[ref]
    return ref


def _bound_text(ref, value) -> str:
    return f"{ref} = {brief(value)}" if isinstance(ref, str) else brief(value)


def positive_int(minimum: int = 1, maximum: int | None = None, *, at_most=None, why: str = "") -> Kind:
    """An integer from ``minimum`` to ``maximum`` (``None``: the shared maximum of a size or count,
    :data:`mhanw.infra.validate.MAX_COUNT`); ``why`` says where the maximum comes from (it is shown in
    the message); ``at_most``: a number or the name of another parameter (``d_k <= d``)."""
    top, because = (MAX_COUNT, why or "the shared maximum of a size or count") if maximum is None else (maximum, why)

    def relate(value, name, params):
        if at_most is not None:
            bound = _ref(params, at_most, name)
            if value > bound:
                raise _fail(name, f"expected {name} <= {_bound_text(at_most, bound)}, got {brief(value)}")

    describe = f"integer >= {minimum}" if maximum is None else f"integer from {minimum} to {maximum}"
    return Kind(describe, lambda v, n: _integer(v, n, minimum, top, because), relate, bounds=(minimum, maximum))


def real(
    minimum: float | None = None,
    maximum: float | None = None,
    *,
    open_min: bool = False,
    open_max: bool = False,
    why: str = "",
) -> Kind:
    """A finite real number, optionally in ``[minimum, maximum]`` (ends open if asked); ``why`` says
    where the ends come from (shown in the message)."""
    lo = "-inf" if minimum is None else f"{minimum:g}"
    hi = "inf" if maximum is None else f"{maximum:g}"
    interval = f"{'(' if open_min or minimum is None else '['}{lo}, {hi}{')' if open_max or maximum is None else ']'}"

    what = f"a real number in {interval}"

    def check(value, name):
        out = _real(value, name, what)
        return _check_range(
            value,
            out,
            name,
            minimum,
            maximum,
            what_below=what,
            what_above=what,
            open_min=open_min,
            open_max=open_max,
            why_min=why,
            why_max=why,
        )

    return Kind(f"real number in {interval}", check, bounds=(minimum, maximum))


def positive_float(minimum: float = 0.0, maximum: float | None = None, *, why: str = "") -> Kind:
    """A finite real number ``> 0`` (a bandwidth, a temperature), or in ``[minimum, maximum]`` when a
    positive ``minimum`` is declared."""
    return real(minimum, maximum, open_min=minimum == 0, why=why)


def nonnegative_float(maximum: float | None = None, *, why: str = "") -> Kind:
    """A finite real number ``>= 0`` (a noise level), at most ``maximum``."""
    return real(0.0, maximum, why=why)


#: The ranges shared by the chapters' parameters of one meaning (the inputs are of unit scale, the
#: responses of order 1, the chapters' defaults are 0.3-0.6 for a bandwidth and 0.5 for a noise level).
BANDWIDTH_RANGE = (1e-3, 1e3)
MAX_NOISE_LEVEL = 100.0
COORDINATE_RANGE = (-10.0, 10.0)
MAX_WORKERS = 256


def bandwidth() -> Kind:
    """A kernel bandwidth in :data:`BANDWIDTH_RANGE`: from a thousandth to a thousand times the
    inputs' unit scale (beyond it every kernel weight but one, or none, is zero)."""
    return positive_float(*BANDWIDTH_RANGE, why="a thousandth to a thousand times the inputs' unit scale")


def noise_level() -> Kind:
    """A noise standard deviation in ``[0, MAX_NOISE_LEVEL]`` (200 times the chapters' 0.5; the
    responses are of order 1)."""
    return nonnegative_float(MAX_NOISE_LEVEL, why="200 times the default 0.5, for responses of order 1")


def coordinate() -> Kind:
    """A coordinate of a point where an estimate is evaluated, in :data:`COORDINATE_RANGE`: within 10
    standard deviations of the inputs."""
    return real(*COORDINATE_RANGE, why="within 10 standard deviations of the unit-scale inputs")


def workers() -> Kind:
    """A number of worker processes, 1 to :data:`MAX_WORKERS`."""
    return positive_int(1, MAX_WORKERS, why="worker processes: the cores of a large machine")


def probability(*, open_ends: bool = False) -> Kind:
    """A number in ``[0, 1]`` (``(0, 1)`` with ``open_ends``)."""
    return real(0.0, 1.0, open_min=open_ends, open_max=open_ends)


def choice(*options) -> Kind:
    """One of ``options``."""

    def check(value, name):
        if value not in options:
            close = difflib.get_close_matches(str(value), [str(o) for o in options], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise _fail(name, f"expected one of {', '.join(repr(o) for o in options)}, got {brief(value)}{hint}")
        return value

    return Kind("one of " + ", ".join(repr(o) for o in options), check)


def fidelity() -> Kind:
    """``"quick"`` (tests, CI) or ``"paper"`` (the figures), :data:`mhanw.infra.notebook.FIDELITIES`."""
    return choice("quick", "paper")


#: Largest seed: the 64-bit seeds of :func:`mhanw.pipeline.scenarios.seed_params`.
MAX_SEED = 2**63 - 1


def seed() -> Kind:
    """An explicit non-negative integer (never ``None``: two runs would differ)."""

    def check(value, name):
        if value is None:
            raise _fail(name, "expected an explicit non-negative integer, got None (two runs would differ)")
        return _integer(value, name, 0, MAX_SEED, "a seed of 64 bits")

    return Kind("explicit integer >= 0", check, bounds=(0, MAX_SEED))


def path() -> Kind:
    """A non-empty string (a file or folder path)."""

    def check(value, name):
        if not isinstance(value, str) or not value.strip():
            raise _fail(name, f"expected a non-empty path string, got {brief(value)}")
        return value

    return Kind("path", check)


def boolean() -> Kind:
    """``True`` or ``False``."""

    def check(value, name):
        if not isinstance(value, bool):
            raise _fail(name, f"expected True or False, got {brief(value)}")
        return value

    return Kind("True or False", check)


def optional(kind: Kind) -> Kind:
    """``None`` or a value of ``kind``."""

    def relate(value, name, params):
        if value is not None and kind.relate is not None:
            kind.relate(value, name, params)

    return Kind(f"None or {kind.describe}", lambda v, n: None if v is None else kind.check(v, n), relate, parts=(kind,))


def sequence(of: Kind, *, min_length: int = 1, max_length: int | None = None, length=None, why: str = "") -> Kind:
    """A list or tuple of values of ``of`` (returned as a tuple), of ``min_length`` to ``max_length`` entries
    (``why``: the reason for the maximum, shown in the refusal); ``length``: a number or a parameter name."""

    def check(value, name):
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise _fail(name, f"expected a list of {of.describe}, got {brief(value)}")
        if len(value) < min_length:
            raise _fail(name, f"expected at least {min_length} entries, got {len(value)}")
        if max_length is not None and len(value) > max_length:
            raise _fail(name, f"expected at most {max_length} entries{f' ({why})' if why else ''}, got {len(value)}")
        return tuple(of.check(v, f"{name}[{i}]") for i, v in enumerate(value))

    def relate(value, name, params):
        if length is not None:
            want = _ref(params, length, name)
            if len(value) != want:
                raise _fail(name, f"expected {_bound_text(length, want)} entries, got {len(value)}")
        if of.relate is not None:
            for i, v in enumerate(value):
                of.relate(v, f"{name}[{i}]", params)

    return Kind(f"list of {of.describe}", check, relate, parts=(of,))


#: Tolerance of "sums to 1" for weights written as decimal literals.
WEIGHT_SUM_TOLERANCE = 1e-9


def weights(
    length=None, *, sum_to_one=True, nonnegative: bool = True, maximum: float | None = None, why: str = ""
) -> Kind:
    """Head weights: a list of reals, ``length`` entries (a number or a parameter name, e.g. ``"H"``),
    each in ``[0, maximum]`` (``[-maximum, maximum]`` when not ``nonnegative``).

    ``sum_to_one``: ``True``, ``False``, or a predicate of the checked
    parameters (e.g. ``lambda p: p["rule"] == "average"``) saying when the
    weights must sum to 1 (within :data:`WEIGHT_SUM_TOLERANCE`).
    """
    low = 0.0 if nonnegative else (None if maximum is None else -maximum)
    base = sequence(real(low, maximum, why=why), length=length)

    def relate(value, name, params):
        base.relate(value, name, params)
        need = sum_to_one(params) if callable(sum_to_one) else sum_to_one
        if need and abs(sum(value) - 1.0) > WEIGHT_SUM_TOLERANCE:
            raise _fail(name, f"expected weights summing to 1, got sum {sum(value):.12g}")

    return Kind("weights" + (" summing to 1" if sum_to_one is True else ""), base.check, relate, parts=base.parts)


def _dimensions(dimension) -> tuple:
    """``dimension`` as a tuple: ``None`` (no check), a literal ``d``, the name of the parameter holding
    it, or a tuple of literals when the chapter draws from one law in several dimensions."""
    return () if dimension is None else tuple(dimension) if isinstance(dimension, tuple) else (dimension,)


def _where(dimension, d) -> str:
    """The dimension a value was checked in, for a message (all of them when there are several)."""
    if isinstance(dimension, tuple):
        return f"d = {d} (the chapter draws from it in d = {', '.join(map(str, dimension))})"
    return _bound_text(dimension, d)


def _dimension_check(dimension, min_dim_of):
    def relate(value, name, params):
        need = None
        for ref in _dimensions(dimension):
            d = _ref(params, ref, name)
            need = min_dim_of(value) if need is None else need
            if need > d:
                raise _fail(name, f"{brief(value)} needs d >= {need}, got {_where(dimension, d)}")

    return relate


def regression(dimension=None) -> Kind:
    """A regression spec of :func:`mhanw.data.regression_function`: a catalogue name or a formula in
    ``x1 ... xd``; ``dimension``: ``d`` or the parameter holding it, or a tuple of the dimensions the
    chapter uses (the formula's largest index must fit each)."""

    def check(value, name):
        from mhanw import data

        from .texout import check_mathtext, tex_math

        try:
            f = data.regression_function(value)
            if f.expression is not None:  # figures and the paper print the formula (m = ...)
                check_mathtext(f"${tex_math(f.expression)}$", name)
        except ValueError as exc:
            raise _rename(exc, name) from None
        return value

    def min_dim(value):
        from mhanw import data

        return data.regression_function(value).min_dim

    return Kind("catalogue name or expression in x1 ... xd", check, _dimension_check(dimension, min_dim))


def inputs(dimension=None) -> Kind:
    """An input-distribution spec of :func:`mhanw.data.input_distribution`; with ``dimension`` (as for
    :func:`regression`), also checked in ``R^d`` for each ``d`` (e.g. ``RHO > -1/(d-1)``)."""

    def check(value, name):
        from mhanw import data

        from .texout import check_verbatim

        try:
            data.input_distribution(value, name=name)
            check_verbatim(value, name)  # a chapter prints the law as written (\texttt{...})
        except ValueError as exc:
            raise _rename(exc, name) from None
        return value

    def relate(value, name, params):
        from mhanw import data

        for ref in _dimensions(dimension):
            d = _ref(params, ref, name)
            try:
                data.input_distribution(value, name=name).check_dimension(d, name)
            except ValueError as exc:
                raise _rename(exc, name) from None

    return Kind("input distribution spec", check, relate)


def noise(dimension=None) -> Kind:
    """A noise-law spec of :func:`mhanw.data.noise_model` (``gaussian``, ``student-t:NU``,
    ``heteroscedastic:EXPR``); the level is a separate parameter (:func:`nonnegative_float`);
    ``dimension`` as for :func:`regression` (the formula's largest index must fit each)."""

    def check(value, name):
        from mhanw import data

        try:
            data.noise_model(value, sigma=1.0, name=name)
        except ValueError as exc:
            raise _rename(exc, name) from None
        return value

    def min_dim(value):
        from mhanw import data

        return data.noise_model(value, sigma=1.0).min_dim

    return Kind("noise law spec", check, _dimension_check(dimension, min_dim))


# --------------------------------------------------------------------------
# Constraints between parameters
# --------------------------------------------------------------------------

#: A constraint: ``f(params) -> None`` raising :class:`ParameterError`.
Constraint = Callable[[Mapping], None]

#: No constraints.
CONSTRAINTS_NONE: tuple = ()


#: What evaluating a constraint on bad values may raise (a missing parameter, a division by zero, an
#: overflow, a comparison of a number with None): each becomes a :class:`ParameterError` naming the parameter.
_CONSTRAINT_ERRORS = (KeyError, ArithmeticError, TypeError, ValueError)


def _unevaluable(name: str, statement: str, exc: BaseException) -> ParameterError:
    if isinstance(exc, KeyError):
        return _fail(
            name,
            f"the constraint {statement!r} refers to parameter {exc.args[0]!r}, which the chapter does not declare",
        )
    return _fail(name, f"cannot check {statement!r} with these values ({type(exc).__name__}: {exc})")


def require(name: str, predicate: Callable[[Mapping], bool], statement: str) -> Constraint:
    """``predicate(params)`` must hold; otherwise ``"name: expected statement"`` with the values it names.
    A predicate that cannot be evaluated (a missing parameter, a division by zero) also fails, naming ``name``."""

    def constraint(params):
        try:
            ok = predicate(params)
        except ParameterError:
            raise
        except _CONSTRAINT_ERRORS as exc:
            raise _unevaluable(name, statement, exc) from None
        if not ok:
            words = set(re.findall(r"[A-Za-z_]\w*", statement))
            shown = ", ".join(f"{k} = {brief(v)}" for k, v in params.items() if k in words)
            raise _fail(name, f"expected {statement}" + (f" (got {shown})" if shown else ""))

    return constraint


def at_most(a: str, b: str) -> Constraint:
    """``params[a] <= params[b]`` (e.g. ``d_k <= d``)."""

    def constraint(params):
        try:
            bad = params[a] > params[b]
        except _CONSTRAINT_ERRORS as exc:
            raise _unevaluable(a, f"{a} <= {b}", exc) from None
        if bad:
            raise _fail(a, f"expected {a} <= {b} = {brief(params[b])}, got {brief(params[a])}")

    return constraint


def product_at_most(factors, bound: str, *, equal: bool = False) -> Constraint:
    """``prod(params[f] for f in factors) <= params[bound]`` (``== `` with ``equal``): e.g. ``H*d_k <= d``,
    or a budget that ``H*d_k`` fills exactly.  The message names the first factor."""
    factors = tuple(factors)

    def constraint(params):
        try:
            value = math.prod(params[f] for f in factors)
            limit = params[bound]
            bad = value != limit if equal else value > limit
        except _CONSTRAINT_ERRORS as exc:
            raise _unevaluable(factors[0], f"{'*'.join(factors)} {'=' if equal else '<='} {bound}", exc) from None
        if bad:
            rel = "=" if equal else "<="
            raise _fail(
                factors[0],
                f"expected {'*'.join(factors)} {rel} {bound} = {brief(limit)}, got "
                f"{' * '.join(brief(params[f]) for f in factors)} = {brief(value)}",
            )

    return constraint


def divides(a: str, b: str) -> Constraint:
    """``params[a]`` divides ``params[b]`` (a head size that splits a budget)."""

    def constraint(params):
        try:
            rest = params[b] % params[a]
        except ZeroDivisionError:
            raise _fail(a, f"expected a divisor of {b} = {brief(params[b])}, got {brief(params[a])}") from None
        except _CONSTRAINT_ERRORS as exc:
            raise _unevaluable(a, f"{a} divides {b}", exc) from None
        if rest:
            raise _fail(a, f"expected a divisor of {b} = {brief(params[b])}, got {brief(params[a])}")

    return constraint


def bounded_work(kind: Kind, work: Callable[[Mapping], int], names, what: str) -> Kind:
    """``kind``, and the work of the chapter's loops at the checked parameters, ``work(params)`` in kernel
    weights, within :data:`mhanw.constants.MAX_WORK` (:func:`mhanw.constants.check_work`, the bound of the
    Monte Carlo calls): sizes each within its range may still multiply to days of computing.  The refusal
    starts with the parameter that carries the check and names ``names``, the parameters whose product
    sets the work, with their values; ``what`` says what the chapter computes."""
    from ..constants import check_work

    names = tuple(names)

    def relate(value, name, params):
        if kind.relate is not None:
            kind.relate(value, name, params)
        try:
            total = work(params)
        except _CONSTRAINT_ERRORS as exc:
            raise _unevaluable(name, f"the work of {what}", exc) from None
        sizes = ", ".join(f"{k} = {brief(params[k])}" for k in names if k in params)
        try:
            check_work(
                ", ".join(names), total, f"{what} ({sizes}, fidelity {params.get('fidelity')!r})", "use smaller sizes"
            )
        except ValueError as exc:
            raise _fail(name, str(exc)) from None

    return Kind(kind.describe, kind.check, relate, bounds=kind.bounds, parts=kind.parts)


def unbounded(spec: Mapping[str, Kind]) -> list[str]:
    """The numeric parameters of ``spec`` (also those inside a list or an optional value) that
    declare no minimum or no maximum: a chapter's spec has none, so that every number a notebook or a
    scenario gives is checked against a range that says what the chapter can run."""
    out = []

    def walk(kind: Kind, where: str):
        if kind.bounds is not None and None in kind.bounds:
            out.append(where)
        for part in kind.parts:
            walk(part, where)

    for name, kind in spec.items():
        walk(kind, name)
    return out


# --------------------------------------------------------------------------
# The check
# --------------------------------------------------------------------------

#: The parameters every chapter has (``notebooks/README.md``).
STANDARD: Mapping[str, Kind] = types.MappingProxyType(
    {
        "fidelity": fidelity(),
        "seed": seed(),
        "figures_dir": path(),
        "macros_path": path(),
        "results_path": path(),
    }
)

#: Names IPython puts in a kernel's namespace.
_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython", "display"})


class Parameters(Mapping):
    """The checked parameters, read-only: ``params["d"]`` or ``params.d``."""

    def __init__(self, values: Mapping):
        object.__setattr__(self, "_values", dict(values))

    def __getitem__(self, key):
        return self._values[key]

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def __getattr__(self, key):
        if key == "_values":
            raise AttributeError(key)
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key, value):
        raise AttributeError("Parameters are read-only")

    def __repr__(self):
        return f"Parameters({self._values!r})"


def injected_names(namespace: Mapping) -> tuple[str, ...] | None:
    """Names assigned by papermill's injected-parameters cell, or ``None`` outside an IPython kernel
    or when no parameters were injected.

    Papermill's injected cell (tagged ``injected-parameters``) starts with the
    comment ``# Parameters``; IPython keeps every executed cell's source in ``In``.
    """
    history = namespace.get("In")
    if not isinstance(history, list):
        return None
    for source in reversed(history):
        if isinstance(source, str) and source.lstrip().startswith("# Parameters"):
            try:
                tree = ast.parse(source)
            except SyntaxError:
                return None
            names = []
            for node in tree.body:
                targets = (
                    node.targets
                    if isinstance(node, ast.Assign)
                    else ([node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
                )
                names += [t.id for t in targets if isinstance(t, ast.Name)]
            return tuple(names)
    return None


def _data_names(namespace: Mapping, ignore) -> list[str]:
    out = []
    for key, value in namespace.items():
        if (
            key.startswith("_")
            or key in _IPYTHON_NAMES
            or key in ignore
            or isinstance(value, (types.ModuleType, type, Parameters))
            or callable(value)
        ):
            continue
        out.append(key)
    return out


def check_parameters(namespace: Mapping, spec: Mapping[str, Kind], constraints=(), *, ignore=()) -> Parameters:
    """Check a chapter's parameters; return them checked and normalised, or raise :class:`ParameterError`.

    Parameters
    ----------
    namespace : mapping
        The parameters by name (what :func:`mhanw.chapters.base.setup` was given, or a scenario's values
        merged with the notebook's defaults).
    spec : mapping name -> Kind
        The chapter's declared parameters (e.g. ``{**STANDARD, "d": positive_int()}``).
    constraints : sequence of callables ``f(params)``
        Cross-constraints (:func:`at_most`, :func:`product_at_most`,
        :func:`divides`, :func:`require`), checked after every value.
    ignore : names of the namespace that are not parameters (only needed
        outside IPython, for data-valued names defined before the call).

    Order of the checks (the first failure is raised): unknown names (with the
    closest declared name as a hint), declared names missing from the
    namespace, each value, each value against the others, the constraints.
    """
    if not isinstance(namespace, Mapping):
        raise TypeError(f"namespace: expected a mapping of parameters by name, got {type(namespace).__name__}")
    if not isinstance(spec, Mapping) or not all(isinstance(k, Kind) for k in spec.values()):
        raise TypeError("spec: expected a mapping from parameter names to Kind objects (mhanw.infra.params)")
    known = list(spec)
    injected = injected_names(namespace)
    candidates = injected if injected is not None else _data_names(namespace, set(ignore))
    for name in candidates:
        if name not in spec:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(known)})"
            raise _fail(name, f"unknown parameter{hint}")
    for name in known:
        if name not in namespace:
            raise _fail(name, "declared by the chapter but missing from its parameters cell")
    values = {}
    for name, kind in spec.items():
        try:
            values[name] = kind.check(namespace[name], name)
        except ParameterError:
            raise
        except ValueError as exc:
            raise _rename(exc, name) from None
    for name, kind in spec.items():
        if kind.relate is not None:
            try:
                kind.relate(values[name], name, values)
            except ParameterError:
                raise
            except ValueError as exc:
                raise _rename(exc, name) from None
    for i, constraint in enumerate(constraints):
        if not callable(constraint):
            raise TypeError(f"constraints: expected callables f(params), got {brief(constraint)} at position {i}")
        try:
            constraint(values)
        except ParameterError:
            raise
        except _CONSTRAINT_ERRORS as exc:  # a hand-written constraint that could not be evaluated
            raise ParameterError(f"constraints[{i}]: could not be checked ({type(exc).__name__}: {exc})") from None
    return Parameters(values)
