"""Every string a user or a caller writes as a formula goes through the one safe parser.

:mod:`mhanw.infra.expressions` tokenises a string first (only the grammar's
names, plain decimal numbers, ``+ - * / ** ^`` and parentheses) and bounds the
size of every constant and power before sympy evaluates anything.  No other
module may hand a string to ``sympify``/``parse_expr``: ``sympify`` runs its
argument as Python (``"__import__('os').system(...)"``), and evaluates
``9**9**9`` (369 million digits) without a bound.  This module checks the
source for such calls, then sends strings through every path that reads a
formula -- regression functions, noise levels, input-law parameters, scaling
laws, exact numbers, chapter parameters -- and demands a result or a one-line
``ValueError`` naming the argument, within seconds, and no side effect.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from timeouts import within

from mhanw import covariance, data, decomposition, scaling, weighting
from mhanw.chapters import ch06_optimal_head_size as ch06
from mhanw.chapters import ch07_structured_weighting as ch07
from mhanw.infra import params as P
from mhanw.infra.expressions import exact_number

SRC = Path(__file__).resolve().parents[1] / "src" / "mhanw"

#: Every path from a string to sympy, with the name its errors must start with.
PATHS = {
    "regression_function": (lambda s: data.regression_function(s), "regression"),
    "noise_model": (lambda s: data.noise_model(f"heteroscedastic:{s}"), "noise"),
    "input_distribution": (lambda s: data.input_distribution(f"student-t:{s}"), "inputs"),
    "parse_law": (lambda s: scaling.parse_law(s, "law"), "law"),
    "scaling.model": (lambda s: scaling.model("M1", bias_law=s), "bias_law"),
    "exact_number": (lambda s: exact_number(s, "value"), "value"),
    "weights_expr": (lambda s: weighting.weights_expr("geometric", 3, q=s), "q"),
    "crossover_gap": (lambda s: weighting.crossover_gap(2, s, ["1/2", "1/2"]), "rho"),
    "kernel_overlap_symbolic": (lambda s: covariance.kernel_overlap_symbolic(bandwidth=s), "bandwidth"),
    "symbolic_decomposition": (lambda s: decomposition.symbolic_decomposition(2, [s, "1/2"]), "weights"),
    "ch07.q": (lambda s: ch07.PARAMETERS["q"].check(s, "q"), "q"),
    "ch06.bias_law": (lambda s: ch06.PARAMETERS["bias_law"].check(s, "bias_law"), "bias_law"),
    "params.regression": (lambda s: P.regression().check(s, "regression"), "regression"),
    "params.noise": (lambda s: P.noise().check(f"heteroscedastic:{s}", "noise"), "noise"),
    "params.inputs": (lambda s: P.inputs().check(f"gaussian-equicorrelated:{s}", "inputs"), "inputs"),
}

#: What a string must never do: run code, take long, leave a file.
PAYLOADS = [
    "9**9**9",
    "9**9**9**9",
    "(9**9)**(9**9)",
    "10**10**10",
    "2**(2**(2**(2**(2**5))))",
    "__import__('os').system('touch pwned')*0",
    "__import__('os').getpid()",
    "x1.__class__",
    "().__class__.__base__",
    "lambda: 0",
    "[x1 for x1 in ()]",
    "exec('1')",
    "eval('1')",
    "open('f')",
    "Symbol('x')",
    "Integer(9)**Integer(9)**Integer(9)",
    "Pow(9, Pow(9, 9))",
    "x1 if 1 else 0",
    "x1; 1",
    "1_000_000",
    "0x1f",
    "0o17",
    "3_0",
    "1e999999",
    "x1**10**6",
    "x1**(9**9)",
    "(" * 300 + "1" + ")" * 300,
    "sqrt(-1)",
    "1/0",
    "zoo",
    "nan",
    "oo",
    "I",
    "x1" * 400,
    "k**(10**10)",
    "E**E**E**E**E",
    # exponents whose symbols cancel when sympy evaluates them: 9**(9**9) in disguise
    "9**(9**9+x1-x1)",
    "9**(9**9+k-k)",
    "2**(10**7+x1-x1)*x1",
    "2**(10**7+k-k)*k",
    "9**(9**9*x1/x1)",
    "exp(10**9+x1-x1)",
    "exp(10**9+k-k)",
    "(9+x1-x1)**(9**9+x1-x1)",
]


def _through(path: str, text: str, seconds: float = 10.0):
    """``text`` through ``path``: a value, or a one-line ValueError naming the argument."""
    call, arg = PATHS[path]
    with within(seconds):
        try:
            return call(text)
        except ValueError as exc:
            msg = str(exc)
            assert msg.startswith(f"{arg}:"), f"{path}: {msg!r} does not name {arg}"
            assert "\n" not in msg, f"{path}: {msg!r} is not one line"
            return exc


#: The one other place that executes code, and why no user string reaches it: the records-mode runner
#: executes a chapter's own code cells (as papermill does), with the parameters injected as ``repr``
#: literals after they passed the chapter's parameter checks.
EXECUTES_CHAPTER_CODE = {"pipeline/runner.py": "exec(code, namespace)"}


def test_no_string_reaches_sympify_outside_the_safe_parser():
    """``sympify``, ``parse_expr``, ``S(...)`` with a string, ``eval`` and ``exec`` appear only in
    :mod:`mhanw.infra.expressions` (whose tokeniser admits only formula tokens), apart from
    :data:`EXECUTES_CHAPTER_CODE`."""
    bad = re.compile(
        r"\bsympify\s*\(|\bparse_expr\s*\(|\bsp\.S\s*\(|\bsympy\.S\s*\(|(?<![.\w])eval\s*\("
        r"|(?<![.\w])exec\s*\(|\bS\s*\(\s*['\"]"
    )
    found = []
    for path in SRC.rglob("*.py"):
        if path.name == "expressions.py" and path.parent.name == "infra":
            continue
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            rel = path.relative_to(SRC).as_posix()
            if bad.search(code) and EXECUTES_CHAPTER_CODE.get(rel, "\0") not in code:
                found.append(f"{path.relative_to(SRC)}:{i}: {line.strip()}")
    assert not found, "strings reach sympy outside the safe parser:\n" + "\n".join(found)


@pytest.mark.parametrize("path", sorted(PATHS))
@pytest.mark.parametrize("text", PAYLOADS)
def test_payloads_are_refused_quickly_naming_the_argument(path, text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    start = time.perf_counter()
    out = _through(path, text)
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "f").exists()
    if any(
        s in text
        for s in ("__", "import", "lambda", "exec", "eval", "open", "Symbol", "Integer", "Pow", "0x", "0o", "_0")
    ):
        assert isinstance(out, ValueError), f"{path} accepted {text!r}"
    assert time.perf_counter() - start < 10.0


def test_chapter_07_q_no_longer_hangs_or_runs_code(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    check = ch07.PARAMETERS["q"].check
    with within(5.0):
        with pytest.raises(ValueError, match=r"^q: the constant 9\*\*\(9\*\*9\) is too large"):
            check("9**9**9", "q")  # hung: the character whitelist let it through to sympify
        with pytest.raises(ValueError, match="^q: "):
            check("__import__('os').system('touch pwned')", "q")
    assert not (tmp_path / "pwned").exists()
    assert check("(sqrt(5) - 1)/2", "q") == "(sqrt(5) - 1)/2" and check(0.5, "q") == 0.5
    for bad in ("1", "0", "3/2", "-(sqrt(5) - 1)/2", 1.5, True, None, [0.5]):
        with pytest.raises(ValueError, match="^q: "):
            check(bad, "q")


def test_underscored_numbers_are_not_numbers():
    # Python's float() and tokenizer read '3_0' as 30; no reader (and no LaTeX \texttt) would
    with pytest.raises(ValueError, match=r"^inputs: expected a number for NU"):
        data.input_distribution("student-t:3_0")
    with pytest.raises(ValueError, match=r"^regression: the number '1_0' .* is not a plain decimal"):
        data.regression_function("1_0*x1")
    with pytest.raises(ValueError, match=r"^inputs: expected a finite number"):
        data.input_distribution("student-t:inf")
    assert data.input_distribution("student-t: 3").spec == "student-t:3.0"
    assert data.input_distribution("student-t:1/0.2").spec == "student-t:5.0"


#: Characters and words formulas are made of, and those an attack is made of.
_PIECES = st.sampled_from(
    [
        "x1",
        "x2",
        "r",
        "k",
        "n",
        "1",
        "9",
        "0.5",
        "1e3",
        "+",
        "-",
        "*",
        "/",
        "**",
        "^",
        "(",
        ")",
        " ",
        "sin",
        "exp",
        "log",
        "sqrt",
        "pi",
        "E",
        "__",
        "import",
        ".",
        "'",
        ",",
        "[",
        "]",
        "lambda",
        ":",
        "=",
        "os",
        "9**9",
        "_",
        "j",
        "0x",
        "#",
        "\\",
        ";",
        "\n",
        "+x1-x1",
        "+k-k",
        "*x1/x1",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(sorted(PATHS)), pieces=st.lists(_PIECES, min_size=1, max_size=24))
def test_any_string_through_any_expression_path(path, pieces):
    """Property: any string through any expression path gives a value or a one-line ValueError
    naming the argument, within 10 seconds (never a hang, a raw exception or a side effect)."""
    _through(path, "".join(pieces))


def test_a_formula_nested_too_deep_to_draw_is_refused_at_the_parameter_check():
    """15 nested functions passed the check and then overflowed matplotlib's stack when the figure was
    drawn (16 overflowed in the check itself): parentheses nest at most MAX_NESTING deep, and a label
    nests at most MAX_MATHTEXT_DEPTH groups."""
    from mhanw.infra import expressions, texout
    from mhanw.infra import params as P

    ok = "sin(" * expressions.MAX_NESTING + "x1" + ")" * expressions.MAX_NESTING
    assert P.regression().check(ok, "regression") == ok
    for k in (expressions.MAX_NESTING + 1, 15, 16, 40):
        with pytest.raises(ValueError, match=r"^regression: parentheses nested more than"):
            P.regression().check("sin(" * k + "x1" + ")" * k, "regression")
    deep = "$" + "{" * (texout.MAX_MATHTEXT_DEPTH + 1) + "x" + "}" * (texout.MAX_MATHTEXT_DEPTH + 1) + "$"
    with pytest.raises(ValueError, match=r"^label: .*groups deep"):
        texout.check_mathtext(deep, "label")


def test_a_ratio_whose_powers_leave_the_exact_range_is_refused_at_the_parameter_check():
    """q = 1e-50 with H = 8 passed the check and stopped chapter 7's symbolic cell naming weights:
    q**(H-1) is beyond the 10**-300 the exact algebra holds."""
    kind = ch07.PARAMETERS["q"]
    with pytest.raises(ValueError, match=r"^q: q\*\*\(H-1\) = 10\*\*-350 for H = 8"):
        kind.relate(kind.check(1e-50, "q"), "q", {"H": 8})
    kind.relate(kind.check("(sqrt(5) - 1)/2", "q"), "q", {"H": 32})
