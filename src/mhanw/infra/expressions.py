"""Safe parsing of user-supplied formulas (strings) into sympy expressions.

One parser for every place where the project accepts a formula from a user: the
scaling laws of :mod:`mhanw.scaling` (``"k**(-4/d) + 1/(n*k)"``) and the
regression functions and noise levels of :mod:`mhanw.data`
(``"sin(x1) + x2**2/2"``).  A :class:`Grammar` says which names a formula may
use (symbols and functions); :meth:`Grammar.parse` turns a string, a number or
a sympy expression into a sympy expression or raises ``ValueError`` whose
message starts with the name of the parameter that held the formula.

Safety: a string is tokenised first and may contain only the grammar's names,
numbers, ``+ - * / ** ^`` and parentheses (no attribute access, no commas, no
strings, no other call); sympy's parser then runs with empty builtins, first
without evaluation, so that the size of every constant and power is bounded
(:data:`MAX_CONSTANT_LOG10`, :data:`MAX_EXPONENT`) before sympy computes
anything (``9**9**9`` has 369 million digits; ``x1**10**6`` would expand).
"""

from __future__ import annotations

import decimal
import io
import math
import numbers
import re
import tokenize
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import sympy as sp
from sympy.core.function import AppliedUndef
from sympy.parsing.sympy_parser import auto_number, convert_xor, parse_expr

from .validate import brief

__all__ = [
    "Grammar",
    "NUMBER_GRAMMAR",
    "exact_number",
    "check_algebraic",
    "MAX_ALGEBRAIC_WORK",
    "MAX_CONSTANT_LOG10",
    "MAX_EXPONENT",
    "MAX_LENGTH",
    "MAX_NESTING",
    "MAX_NODES",
    "MAX_TREE_DEPTH",
    "check_tree",
    "check_size",
]

#: Longest formula string accepted (characters).
MAX_LENGTH = 1000
#: Deepest nesting of parentheses in a formula (the paper and the figures print it: matplotlib's
#: mathtext overflows Python's stack at 15 nested functions).
MAX_NESTING = 10
#: Largest ``|exponent|`` of a power with a constant exponent, e.g. ``k**100``.
MAX_EXPONENT = 100
#: Largest ``|log10|`` of a constant in a formula (a double reaches about 308).
MAX_CONSTANT_LOG10 = 300.0

#: A number as a formula writes it: decimal digits, a point, an exponent (Python's tokenizer also reads
#: ``3_0``, ``0x1f`` and ``0o7``, which no reader of the paper would recognise as 30, 31 and 7).
_PLAIN_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

#: The operators a formula may contain.
ALLOWED_OPS = frozenset({"+", "-", "*", "/", "**", "^", "(", ")"})

#: What sympy's parser raises for a malformed formula (a call of a symbol, a
#: keyword, a wrong number of arguments, nesting beyond Python's limits).
_PARSE_ERRORS = (
    SyntaxError,
    TypeError,
    ValueError,
    AttributeError,
    NameError,
    ZeroDivisionError,
    RecursionError,
    MemoryError,
    tokenize.TokenError,
    sp.SympifyError,
)

_SYMPY_CONSTRUCTORS = {
    "Integer": sp.Integer,
    "Float": sp.Float,
    "Rational": sp.Rational,
    "Add": sp.Add,
    "Mul": sp.Mul,
    "Pow": sp.Pow,
}


@dataclass(frozen=True)
class Grammar:
    """The names a formula may use and how to describe them in error messages.

    Parameters
    ----------
    symbols : mapping name -> sympy.Symbol, or callable name -> Symbol or None
        The variables.  A callable serves open families of names (``x1``,
        ``x2``, ...): it returns the symbol of a name, or ``None`` for a name
        that is not a variable.
    functions : mapping name -> sympy function or constant
        Functions (``sin``, ``log``, ...) and named constants (``pi``, ``E``).
    allowed : str
        How the allowed names are listed in error messages.
    subject : str
        What a formula is called in error messages (``"law"``, ``"expression"``).
    empty_hint : str
        What an empty string should have been (``"an expression in k"``).
    max_length : int
        Longest accepted string.
    """

    symbols: Mapping[str, sp.Symbol] | Callable[[str], sp.Symbol | None]
    functions: Mapping[str, object]
    allowed: str
    subject: str = "expression"
    empty_hint: str = "an expression"
    max_length: int = MAX_LENGTH

    def symbol(self, name: str) -> sp.Symbol | None:
        """The symbol called ``name``, or ``None`` if the grammar has no such variable."""
        if callable(self.symbols):
            return self.symbols(name)
        return self.symbols.get(name)

    def canonical(self, expr: sp.Expr, name: str) -> sp.Expr:
        """Replace the free symbols of ``expr`` by the grammar's symbols (matched by name)."""
        found = {s: self.symbol(s.name) for s in expr.free_symbols}
        unknown = sorted(s.name for s, t in found.items() if t is None)
        if unknown:
            raise ValueError(f"{name}: unknown symbol(s) {', '.join(unknown)}; allowed names are {self.allowed}")
        return expr.xreplace(found)

    def parse(self, text, name: str) -> sp.Expr:
        """A string, a real number or a sympy expression as a sympy expression.

        Every failure raises ``ValueError`` whose message starts with ``name``;
        sizes are checked (:func:`check_size`) before and after evaluation.
        """
        if isinstance(text, sp.Basic):
            if not isinstance(text, sp.Expr):
                raise ValueError(f"{name}: expected a sympy expression, got {type(text).__name__}")
            undefined = sorted({str(f.func) for f in text.atoms(AppliedUndef)})
            if undefined:
                raise ValueError(
                    f"{name}: undefined function(s) {', '.join(undefined)} in {text}; allowed names are {self.allowed}"
                )
            expr = self.canonical(text, name)
        elif isinstance(text, numbers.Real) and not isinstance(text, bool):
            expr = sp.Float(text)
        elif isinstance(text, str):
            expr = self._parse_string(text, name)
        else:
            raise ValueError(f"{name}: expected a string or a sympy expression, got {type(text).__name__}")
        check_size(expr, name, self.subject)
        return expr

    def names_in(self, text: str, name: str) -> tuple[str, ...]:
        """The names (tokens) of a formula string, in order of appearance, after the safety checks."""
        if not text.strip():
            raise ValueError(f"{name}: expected {self.empty_hint}, got an empty string")
        if len(text) > self.max_length:
            raise ValueError(
                f"{name}: expected {_a(self.subject)} of at most {self.max_length} characters, got {len(text)}"
            )
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
        except (tokenize.TokenError, IndentationError, SyntaxError) as exc:
            raise ValueError(f"{name}: could not parse {text!r} (unbalanced parentheses?)") from exc
        names, depth = [], 0
        for tok in tokens:
            if tok.type == tokenize.OP and tok.string in "()":
                depth += 1 if tok.string == "(" else -1
                if depth > MAX_NESTING:
                    raise ValueError(
                        f"{name}: parentheses nested more than {MAX_NESTING} deep in {text[:80]!r} "
                        f"(a formula that deep cannot be printed or drawn)"
                    )
            if tok.type == tokenize.NAME:
                if tok.string not in self.functions and self.symbol(tok.string) is None:
                    raise ValueError(
                        f"{name}: unknown name {tok.string!r} in {text!r}; allowed names are {self.allowed}"
                    )
                names.append(tok.string)
            elif tok.type == tokenize.NUMBER and tok.string[-1] in "jJ":
                raise ValueError(f"{name}: imaginary number {tok.string!r} in {text!r}; expected a real {self.subject}")
            elif tok.type == tokenize.NUMBER and not _PLAIN_NUMBER.fullmatch(tok.string):
                raise ValueError(
                    f"{name}: the number {tok.string!r} in {text!r} is not a plain decimal "
                    "(digits, a point and an exponent; no underscores, hexadecimal or octal)"
                )
            elif tok.type == tokenize.NUMBER and abs(_literal_log10(tok.string)) > MAX_CONSTANT_LOG10:
                # read from the literal: sympy would build 1e999999 as an integer of a million digits
                raise ValueError(
                    f"{name}: the number {tok.string} in {text!r} is too large or too small in "
                    f"magnitude (beyond 10**+-{MAX_CONSTANT_LOG10:g}) to be part of {_a(self.subject)}"
                )
            elif tok.type == tokenize.OP and tok.string not in ALLOWED_OPS:
                raise ValueError(f"{name}: operator {tok.string!r} is not allowed in {text!r}")
            elif tok.type not in (
                tokenize.NAME,
                tokenize.OP,
                tokenize.NUMBER,
                tokenize.NEWLINE,
                tokenize.NL,
                tokenize.ENDMARKER,
            ):
                raise ValueError(f"{name}: unexpected {tok.string!r} in {text!r}")
        return tuple(names)

    def _parse_string(self, text: str, name: str) -> sp.Expr:
        names = self.names_in(text, name)
        local_dict = {s: self.symbol(s) for s in names if s not in self.functions}
        global_dict = {"__builtins__": {}, **_SYMPY_CONSTRUCTORS, **self.functions}

        def parse(evaluate: bool):
            try:
                return parse_expr(
                    text,
                    local_dict=dict(local_dict),
                    global_dict=dict(global_dict),
                    transformations=(auto_number, convert_xor),
                    evaluate=evaluate,
                )
            except _PARSE_ERRORS as exc:
                raise ValueError(f"{name}: could not parse {text!r}: {type(exc).__name__}: {exc}") from exc

        # First unevaluated, so that sizes are checked before sympy computes anything.
        raw = parse(False)
        if not isinstance(raw, sp.Expr):
            raise ValueError(f"{name}: {text!r} is not an expression")
        check_size(raw, name, self.subject)
        expr = parse(True)
        if not isinstance(expr, sp.Expr):
            raise ValueError(f"{name}: {text!r} is not an expression")
        return expr


#: Most nodes of a sympy expression given as such (a formula string of MAX_LENGTH characters has fewer),
#: and the deepest nesting of its tree: derivatives, lambdify and printing recurse over it.
MAX_NODES, MAX_TREE_DEPTH = 1000, 4 * MAX_NESTING


def check_tree(expr: sp.Basic, name: str) -> sp.Basic:
    """``expr`` if its tree has at most :data:`MAX_NODES` nodes nested at most :data:`MAX_TREE_DEPTH`
    deep, else ``ValueError`` naming ``name``: a sympy expression passed in directly skips the length
    bound of a string, and a sum of 20 000 terms or 150 nested functions hung or overflowed the stack
    in differentiation and lambdify.  The walk stops at the first node beyond either bound."""
    stack, seen = [(expr, 1)], 0
    while stack:
        node, depth = stack.pop()
        seen += 1
        if seen > MAX_NODES or depth > MAX_TREE_DEPTH:
            what = f"more than {MAX_NODES} nodes" if seen > MAX_NODES else f"nesting deeper than {MAX_TREE_DEPTH}"
            raise ValueError(f"{name}: the expression has {what} (a formula that large is not evaluated)")
        stack.extend((arg, depth + 1) for arg in node.args)
    return expr


def check_size(expr: sp.Basic, name: str, subject: str = "expression") -> float:
    """Reject formulas whose constants or powers are too large to evaluate quickly.

    Walks the (possibly unevaluated) expression tree bottom-up and returns an
    upper bound of ``|log10 |value||`` (for a node with symbols, with every
    symbol of magnitude one).  A constant beyond ``10**MAX_CONSTANT_LOG10``
    (such as ``9**9**9``), a power of a symbol with a constant exponent above
    :data:`MAX_EXPONENT`, or a power or ``exp`` whose symbolic exponent holds
    constants that would make it such a constant should the symbols cancel
    (``9**(9**9 + k - k)``) raises ``ValueError`` naming ``name`` before sympy
    evaluates it.
    """
    try:
        return _check_size(expr, name, subject)
    except RecursionError as exc:
        raise ValueError(f"{name}: the {subject} is nested too deeply") from exc


def _check_size(expr: sp.Basic, name: str, subject: str) -> float:
    """The bound of :func:`check_size`.  A node with symbols gets the bound its constants give with
    every symbol of magnitude one (``nan`` is never returned): an exponent such as ``9**9 + k - k``
    cancels to the constant ``9**9`` when sympy evaluates it, so a power of it is bounded like
    ``9**(9**9)``."""
    sizes = [_check_size(arg, name, subject) for arg in expr.args]
    symbolic = bool(expr.free_symbols)
    if expr.is_Symbol:
        return 0.0
    if expr.is_Number:
        if expr.is_zero:
            size = 0.0
        elif expr.is_Rational:
            size = abs(_log10_int(expr.p) - _log10_int(expr.q))
        else:
            size = abs(float(sp.N(sp.log(abs(expr), 10)))) if expr.is_finite else math.inf
    elif isinstance(expr, sp.NumberSymbol):
        size = 1.0
    elif expr.is_Pow:
        base_size, exp_size = sizes
        if expr.exp.free_symbols:  # as large as the exponent's constants allow, should its symbols cancel
            up = _upper_log10(expr.exp)
            exponent = 10.0**up if up <= MAX_CONSTANT_LOG10 else math.inf
            size = exponent * (base_size if expr.base.free_symbols else max(base_size, 1.0))
            if not size <= MAX_CONSTANT_LOG10:
                raise ValueError(
                    f"{name}: the power {_text(expr)} could be too large to evaluate (its exponent "
                    f"holds constants up to about 10**{up:.0f}, so the power could exceed "
                    f"10**{MAX_CONSTANT_LOG10:g})"
                )
        else:
            exponent = _constant_value(expr.exp, name) if exp_size <= MAX_CONSTANT_LOG10 else math.inf
            if symbolic and abs(exponent) > MAX_EXPONENT:
                raise ValueError(
                    f"{name}: the exponent {_text(expr.exp)} is larger than {MAX_EXPONENT} in absolute value"
                )
            size = abs(exponent) * (base_size if symbolic else max(base_size, 1.0))
    elif isinstance(expr, sp.exp):
        if symbolic:
            up = _upper_log10(expr.args[0])
            arg = 10.0**up if up <= MAX_CONSTANT_LOG10 else math.inf
        else:
            arg = abs(_constant_value(expr.args[0], name)) if sizes[0] <= MAX_CONSTANT_LOG10 else math.inf
        size = arg / math.log(10)
        if symbolic and not size <= MAX_CONSTANT_LOG10:
            raise ValueError(
                f"{name}: exp({_text(expr.args[0])}) could be too large to evaluate (its argument "
                f"holds constants up to about 10**{up:.0f})"
            )
    elif expr.is_Mul:
        size = sum(sizes)
    elif expr.is_Add:  # |a + b + ...| <= n max |term|
        size = max(sizes, default=0.0) + math.log10(max(len(sizes), 1))
    elif isinstance(expr, _EXP_LIKE):  # sinh, cosh: about exp(|argument|)/2
        up = _upper_log10(expr.args[0]) if symbolic else sizes[0]
        arg = (
            (10.0**up if symbolic else abs(_constant_value(expr.args[0], name)))
            if up <= MAX_CONSTANT_LOG10
            else math.inf
        )
        size = arg / math.log(10)
        if symbolic and not size <= MAX_CONSTANT_LOG10:
            raise ValueError(
                f"{name}: {_text(expr)} could be too large to evaluate (its argument holds constants "
                f"up to about 10**{up:.0f})"
            )
    elif isinstance(expr, _FACTORIAL_LIKE):  # factorial(a) < (a + 1)**(a + 1): a*log10(a) digits
        if symbolic or max(sizes, default=0.0) > MAX_CONSTANT_LOG10:
            arg = 10.0 ** max(sizes, default=0.0) if max(sizes, default=0.0) <= MAX_CONSTANT_LOG10 else math.inf
        else:
            arg = sum(abs(_constant_value(a, name)) for a in expr.args)
        size = (arg + 1.0) * math.log10(arg + 2.0)
        if symbolic and not size <= MAX_CONSTANT_LOG10:
            raise ValueError(
                f"{name}: {_text(expr)} could be too large to evaluate (its argument holds constants "
                f"up to about 10**{max(sizes, default=0.0):.0f})"
            )
    elif not expr.args or isinstance(expr, _BOUNDED_FUNCTIONS):
        # log, sin, Abs, ...: no larger than their arguments (plus a little)
        size = max(sizes, default=0.0) + math.log10(max(len(sizes), 1)) + 1.0
    else:  # a sum, an integral, a function of unknown growth: its work cannot be bounded from its tree
        raise ValueError(
            f"{name}: {_text(expr)} holds {type(expr).__name__}, whose size cannot be bounded "
            f"before it is evaluated; {_a(subject)} may hold numbers, symbols, + - * / **, exp, log, "
            "sqrt and bounded functions such as sin, cos, tanh and abs"
        )
    if not symbolic and not size <= MAX_CONSTANT_LOG10:
        raise ValueError(
            f"{name}: the constant {_text(expr)} is too large or too small in magnitude "
            f"(beyond 10**+-{MAX_CONSTANT_LOG10:g}) to be part of {_a(subject)}"
        )
    return size


def _upper_log10(expr: sp.Basic) -> float:
    """An upper bound of ``log10 |expr|`` with every symbol of magnitude one, signed: a small coefficient
    makes it smaller (``x/100``: -2), unlike the ``|log10|`` of :func:`check_size`, which treats 1/100
    and 100 alike.  It bounds what an exponent or the argument of ``exp`` can reach: ``exp(-|x|^2/100)``
    in 30 dimensions is ``exp`` of at most 0.3, not of 3000."""
    if expr.is_Symbol:
        return 0.0
    if expr.is_Number:
        if expr.is_zero:
            return -math.inf
        if expr.is_Rational:
            return _log10_int(expr.p) - _log10_int(expr.q)
        return float(sp.N(sp.log(abs(expr), 10))) if expr.is_finite else math.inf
    if isinstance(expr, sp.NumberSymbol):
        return 1.0
    ups = [_upper_log10(a) for a in expr.args]
    if expr.is_Mul:
        return math.inf if math.inf in ups else sum(ups)
    if expr.is_Add:
        return max(ups) + math.log10(len(ups))
    if expr.is_Pow:
        base, exponent = ups
        if expr.exp.free_symbols:
            scale = abs(base) if expr.base.free_symbols else max(abs(base), 1.0)  # a symbol's powers stay 1
            return 0.0 if scale == 0 else (10.0**exponent if exponent <= MAX_CONSTANT_LOG10 else math.inf) * scale
        try:
            e = float(expr.exp)
        except (TypeError, ValueError, OverflowError):
            return math.inf
        return e * base if math.isfinite(base) else math.inf
    if isinstance(expr, (sp.exp, *_EXP_LIKE)):
        return (10.0 ** ups[0] if ups[0] <= MAX_CONSTANT_LOG10 else math.inf) / math.log(10)
    return max([max(u, 0.0) for u in ups], default=0.0) + math.log10(max(len(ups), 1)) + 1.0


#: Functions no larger than their arguments (plus a little): :func:`check_size` bounds them like their
#: arguments.  ``exp``, ``sinh`` and ``cosh`` grow like ``exp``, the factorials faster; anything else
#: (``Sum``, ``Integral``, an unknown function) is refused, its growth not being known from the tree.
_BOUNDED_FUNCTIONS = (
    sp.sin,
    sp.cos,
    sp.tan,
    sp.tanh,
    sp.atan,
    sp.asin,
    sp.acos,
    sp.asinh,
    sp.acosh,
    sp.atanh,
    sp.log,
    sp.LambertW,
    sp.Abs,
    sp.sign,
    sp.re,
    sp.im,
    sp.arg,
    sp.floor,
    sp.ceiling,
    sp.frac,
    sp.Min,
    sp.Max,
    sp.erf,
    sp.erfc,
    sp.Heaviside,
    sp.loggamma,
)
_EXP_LIKE = (sp.sinh, sp.cosh)
_FACTORIAL_LIKE = (
    sp.factorial,
    sp.factorial2,
    sp.subfactorial,
    sp.gamma,
    sp.binomial,
    sp.RisingFactorial,
    sp.FallingFactorial,
)


def _text(expr: sp.Basic, limit: int = 60) -> str:
    """``expr`` as text for an error message, at most ``limit`` characters (an integer too long for
    Python to print is said by its number of digits)."""
    try:
        text = sp.sstr(expr)
    except ValueError:  # beyond Python's limit on the digits of an integer
        return "(a number of more than 4300 digits)"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _a(noun: str) -> str:
    return ("an " if noun[:1] in "aeiou" else "a ") + noun


def _literal_log10(literal: str) -> int:
    """The decimal exponent of the leading digit of a plain decimal literal (0 for zero), read without
    building the number (``"1e999999"`` -> 999999)."""
    d = decimal.Decimal(literal)
    return 0 if d.is_zero() else d.adjusted()


def _log10_int(value: int) -> float:
    return math.log10(abs(value)) if value else 0.0


def _constant_value(expr: sp.Expr, name: str) -> float:
    """A constant sub-expression as a float (it is known to be of moderate size)."""
    try:
        return float(sp.N(expr, 20))
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{name}: the constant {expr} has no real value") from exc


#: A plain number written as a formula: digits, arithmetic, ``sqrt``, ``pi`` and ``E`` (no variables).
NUMBER_GRAMMAR = Grammar(
    symbols={},
    functions={"sqrt": sp.sqrt, "pi": sp.pi, "E": sp.E},
    allowed="numbers, + - * / ** ( ), sqrt, pi and E",
    subject="number",
    empty_hint="a number",
)


def _rational(f: float) -> sp.Rational:
    """A finite double as the simplest rational that is the same double (``0.6`` -> ``3/5``), or else as
    the decimal it prints as (``0.9999999999999999`` stays below 1: the simplest rational nearby is 1)."""
    out = sp.nsimplify(f, rational=True)
    return out if float(out) == f else sp.Rational(repr(f))


#: Most algebraic work an irrational constant may ask of a symbolic derivation (:func:`check_algebraic`):
#: sympy simplifies rational functions of it, whose cost grows with the degree of the number field it
#: spans.  Eight allows three square roots (``(sqrt(2) + sqrt(3) + sqrt(5))/6``), ``pi/4`` and
#: ``2/(1 + sqrt(5))`` (a few seconds for the eight heads of chapter 7); ten square roots, ``(pi + 1)/(pi +
#: 5)`` or ``(2**(1/3) + 3**(1/3))/4`` took from ten seconds to hours (measured).
MAX_ALGEBRAIC_WORK = 8
#: What a transcendental constant (``pi``, ``E``, ``exp(2)``) counts in :func:`check_algebraic`.
_TRANSCENDENTAL_WORK = 4


def check_algebraic(expr: sp.Expr, name: str) -> sp.Expr:
    """``expr`` if it is a constant whose symbolic work is bounded, else ``ValueError`` naming ``name``.

    The work is the product of the root degrees of its distinct radicals (``sqrt(2)`` 2, ``2**(1/3)``
    3), times :data:`_TRANSCENDENTAL_WORK` for each transcendental constant (``pi``, ``E``, a function
    of a number), times 2 for an irrational denominator, times ``|e|`` for each power ``(a + b)**e`` of an
    irrational sum; at most :data:`MAX_ALGEBRAIC_WORK`.  A transcendental constant may only be a factor
    (``pi/4``), not part of a sum (``pi/(pi + 4)``).  Rationals and expressions with symbols pass.
    """
    if expr.free_symbols or expr.is_Rational:
        return expr
    work, radicals, transcendental, denominator = 1, set(), set(), False
    for node in sp.preorder_traversal(expr):
        if node.is_Rational or node.is_Symbol:
            continue
        if node.is_Pow:
            if node.exp.is_Rational and not node.exp.is_Integer:
                radicals.add(node)
            elif not node.exp.is_Rational:
                transcendental.add(node)
            elif not node.base.is_Rational:
                if node.exp.is_negative:
                    denominator = True
                if node.base.is_Add:
                    work *= abs(int(node.exp))
        elif isinstance(node, sp.NumberSymbol) or (isinstance(node, sp.Function) and node.is_number):
            transcendental.add(node)
        elif node.is_Add and _transcendentals(node):
            raise ValueError(
                f"{name}: {_text(expr)} holds a transcendental constant in a sum; a derivation with "
                "it is not bounded (write pi or E only as a factor, such as pi/4, or give a number)"
            )
    for r in radicals:
        work *= int(r.exp.q)
    work *= _TRANSCENDENTAL_WORK ** len(transcendental) * (2 if denominator else 1)
    if work > MAX_ALGEBRAIC_WORK:
        raise ValueError(
            f"{name}: {_text(expr)} asks too much exact algebra of a symbolic derivation (its radicals, "
            f"constants and powers span a number field of degree about {work}; at most "
            f"{MAX_ALGEBRAIC_WORK}, e.g. three square roots); give fewer radicals or a decimal number"
        )
    return expr


def _transcendentals(expr: sp.Expr) -> set:
    """The transcendental constants in ``expr`` (``pi``, ``E``, powers with irrational exponents, functions
    of numbers)."""
    return {
        node
        for node in sp.preorder_traversal(expr)
        if isinstance(node, sp.NumberSymbol)
        or (isinstance(node, sp.Function) and node.is_number)
        or (node.is_Pow and not node.exp.is_Rational and node.is_number)
    }


def exact_number(value, name: str) -> sp.Expr:
    """``value`` as an exact sympy quantity for a symbolic derivation.

    A real number (int, float, numpy scalar, fraction) becomes an exact rational
    (``0.6`` -> ``3/5``; never another double: ``0.9999999999999999`` stays below 1); a string is read by
    :data:`NUMBER_GRAMMAR` (never by ``sympify``, which would run it as Python); a sympy expression is
    kept (it may hold symbols), its sizes checked as a parsed string's are (:func:`check_size`).  A string
    must ask bounded algebra of the derivation (:func:`check_algebraic`; a sympy input is often derived,
    such as the weights of a ratio, and the caller who builds it bounds it).  bool, complex, None and
    anything else raise ``ValueError`` naming ``name``, as does a value that is not finite.
    """
    if isinstance(value, sp.Basic):
        if not isinstance(value, sp.Expr):
            raise ValueError(f"{name}: expected a number or a sympy expression, got {type(value).__name__}")
        check_size(value, name, "number")
        expr = value
    elif isinstance(value, str):
        expr = NUMBER_GRAMMAR.parse(value, name)
        expr = _rational(float(expr)) if expr.is_Float else check_algebraic(expr, name)
    elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if abs(int(value)) > 10 ** int(MAX_CONSTANT_LOG10):  # exact, but beyond what a formula may hold
            raise ValueError(
                f"{name}: expected a number of magnitude at most 10**{MAX_CONSTANT_LOG10:g}, got {brief(value)}"
            )
        expr = sp.Integer(int(value))
    elif isinstance(value, numbers.Real) and not isinstance(value, bool):
        f = float(value)
        if not math.isfinite(f):
            raise ValueError(f"{name}: expected a finite number, got {brief(value)}")
        expr = _rational(f)
    else:
        raise ValueError(f"{name}: expected a real number or a sympy expression, got {type(value).__name__}")
    if expr.has(sp.zoo, sp.oo, -sp.oo, sp.nan) or expr.is_real is False:
        raise ValueError(f"{name}: expected a finite real value, got {brief(value)}")
    return expr
