"""What reaches the paper's LaTeX, and the numbers a table or a sentence prints, are checked by one rule each.

The paper is built by pdflatex from the chapters' values (:func:`mhanw.infra.results.values_tex`), so a
value must never be able to end, hide, redefine or read into the document: LaTeX passes
:func:`~mhanw.infra.texout.check_tex`, an allow-list of the commands the project's values use
(:data:`~mhanw.infra.texout.TEX_COMMANDS`) with balanced braces, environments and maths.  Record text
(:func:`~mhanw.infra.texout.tex_text`) escapes TeX specials inside its ``$...$`` too.  A number a table,
a value or a sentence prints (:func:`~mhanw.infra.tables.pm`, :func:`~mhanw.infra.tables.fmt`,
:func:`~mhanw.infra.texout.format_mean_se`, :func:`~mhanw.infra.prose.number_word`,
:func:`~mhanw.infra.prose.ranges`, :func:`~mhanw.infra.texout.printed_integer`) takes a bounded number of
characters, or is refused naming the argument.
"""

from __future__ import annotations

import re

import paper_values
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mhanw.infra import prose, tables, texout
from mhanw.infra.results import Q, Tex, values_tex
from mhanw.infra.texout import check_tex, latex_of, tex_escape, tex_text

PDFLATEX = paper_values.PDFLATEX

# --------------------------------------------------------------------------- values cannot take over the paper

TAKEOVERS = [
    (r"\iffalse", r"\\iffalse"),
    (r"\end{document}", "document"),
    (r"\input{/etc/passwd}", r"\\input"),
    (r"\csname relax\endcsname", r"\\csname"),
    (r"\verb|x|", r"\\verb"),
    (r"\catcode`\%=12", r"\\catcode"),
    (r"\def\HDIpa{x}", r"\\def"),
    (r"\write18{rm -rf x}", r"\\write"),
    (r"\openout1=x.tex", r"\\openout"),
    (r"\immediate", r"\\immediate"),
    (r"\makeatletter", r"\\makeatletter"),
    (r"\include{x}", r"\\include"),
    (r"\renewcommand{\HDIpa}{x}", r"\\renewcommand"),
    (r"\begin{document}", "document"),
    (r"\begin{comment}", "comment"),
    (r"$x^^5cinput{f}$", r"\^\^"),
    (r"\@@end", r"control symbol \\@"),
    (r"\frac@x", "internal"),
    (r"\begingroup\small", r"\\begingroup without"),
    (r"\begin{tabular}{l}", "without its"),
    (r"\end{tabular}", "without its"),
    (r"$\left( x$", r"\\left without"),
    (r"$x^$", "without its argument"),
    (r"$x_$", "without its argument"),
    (r"${x^}$", "without its argument"),
    (r"$x^2^3$", "double superscript"),
    (r"$x_1_2$", "double subscript"),
    (r"$x^a_b^c$", "double superscript"),
]


from test_bad_input_tex_commands import BREAKS_RUNNING_TEXT  # noqa: E402  (the same refusal, for running text)


@pytest.mark.parametrize("value,why", TAKEOVERS + BREAKS_RUNNING_TEXT)
def test_tex_that_could_take_over_or_stop_the_paper_is_refused_naming_the_argument(value, why):
    with pytest.raises(ValueError, match=rf"^value: .*{why}"):
        check_tex(value, "value")


@pytest.mark.parametrize("leaf", ["tex", "plain", "expr", "number", "estimate"])
def test_every_leaf_of_the_paper_values_passes_the_check(leaf, monkeypatch):
    """One check for every leaf: LaTeX that slipped past its formatter (or a :class:`Tex` made by hand) is
    refused, naming the leaf's path."""
    from mhanw.infra import results

    for function in ("tex_escape", "latex_of", "format_number", "format_mean_se"):
        monkeypatch.setattr(results, function, lambda *args, **kwargs: r"\input{x}")
    value = {"tex": Tex(r"\input{x}"), "plain": "x", "expr": sp.Symbol("x"), "number": Q(1.5), "estimate": Q(1.0, 0.1)}
    with pytest.raises(ValueError, match=r"^results\.bad: value: the command \\input "):
        values_tex("01", {"bad": value[leaf]})


@pytest.mark.parametrize(
    "value",
    [
        r"\begingroup\small\setlength{\tabcolsep}{3pt}\begin{tabular}{llc}\toprule a & b \\ \midrule"
        r" $W_Q^h W_K^{h\top}$ & $0.5$\,{\scriptsize$(-1.2)$} & \multicolumn{2}{c}{x} \\ \bottomrule\end{tabular}"
        r"\endgroup",
        r"\ensuremath{\operatorname{MSE}{\left(k \right)} = \frac{c_{B}}{k^{2}} + \frac{c_{V} k^{\frac{k}{2} + 1}}{D n}}",
        r"\ensuremath{k^*\propto(\ln n)^{\frac{2}{d + 4}}}",
        r"$c_B/k^{1}$ & bias $\propto k^{-1/2}$ \\ x & y",
        r"it differs from $\ensuremath{0.5}$ by \ensuremath{0.012 \pm 0.001} ($z=\ensuremath{12}$; holds) and",
        r"$\HDIpa \le 1$",
        r"$\mathbb{E}[\hat\gamma] = \bar\rho$",
        r"\texttt{student-t:3}",
        r"$x_{1}^{2}{}^{2}$",
        r"$\sum_{j}^{H} a_j$",
        r"$\left[\begin{matrix}1 & 0\\0 & 1\end{matrix}\right]$",
        r"$e^{W\left(2 \ln{\left(n \right)}\right)}$",
        "holds",
        r"\ensuremath{x_{1}^{4}}",
        r"50\% of $m$",
        r"a \\ b",
        "{a}{b}",
        "line one\nline two",
        r"\{literal\}",
        r"$\frac{1}{2}$ and $x$",
    ],
)
def test_tex_the_chapters_write_is_kept(value):
    assert check_tex(value, "value") == value


def test_a_command_outside_the_allow_list_is_refused_naming_it():
    for command in (r"\OtherB", r"\val", r"\mhvalue", r"\verdictis"):  # no value reads or defines another
        with pytest.raises(ValueError, match=rf"^value: the command \{command} is not one"):
            check_tex(f"see {command}{{}}", "value")


@pytest.mark.parametrize(
    "name,why",
    [
        ("x%", "comment sign"),
        ("y#", "parameter sign"),
        ("a&b", "alignment sign"),
        (r"\input{f}", r"\\input"),
        ("x}", "unbalanced braces"),
        ("ρ", "not printable ASCII"),
        (r"\iffalse", r"\\iffalse"),
        ("z$", "unpaired"),
    ],
)
def test_a_symbol_whose_name_cannot_be_typeset_is_refused_naming_it(name, why):
    expression = sp.Symbol(name) + sp.Symbol("k")
    with pytest.raises(ValueError, match=rf"^expression: the symbol .*{why}"):
        latex_of(expression, "expression")
    with pytest.raises(ValueError, match=rf"^expr: the symbol .*{why}"):
        texout.tex_math(expression)
    with pytest.raises(ValueError, match=rf"^expression: the symbol .*{why}"):
        latex_of(sp.Function(name)(sp.Symbol("k")), "expression")
    with pytest.raises(ValueError, match=rf"^results\.bad: value: the symbol .*{why}"):
        values_tex("01", {"bad": expression})


def test_the_symbol_names_the_project_uses_are_kept():
    names = ["k^{*}", r"\text{numerical}", "C_12", "c_V", "Lambda", "d_k", "mu_0", "x1"]
    law = values_tex("01", {"law": sum(sp.Symbol(n) for n in names)})
    assert r"\text{numerical}" in law and "k^{*}" in law
    assert texout.tex_math(sp.Symbol("x1") ** 4) == "x_{1}^{4}"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from(
            list("ab$%#&{}\\^_ 1@")
            + [r"\input", r"\frac", r"\end{document}", r"\begin{tabular}", r"\left(", r"\right)"]
        ),
        max_size=12,
    ).map("".join)
)
def test_check_tex_gives_a_verdict_naming_the_argument_on_any_text(text):
    try:
        assert check_tex(text, "value") == text
    except ValueError as exc:
        assert str(exc).startswith("value: ") and "\n" not in str(exc)
    else:  # what is accepted holds no command outside the allow-list
        assert not [w for w in re.findall(r"\\([A-Za-z]+)", text) if w not in texout.TEX_COMMANDS]


# --------------------------------------------------------------------------- record text: maths and non-strings


@pytest.mark.parametrize(
    "text,tex",
    [
        ("$%$", r"$\%$"),
        ("$#$", r"$\#$"),
        ("$&$", r"$\&$"),
        ("$a \\% b$", r"$a \% b$"),
        ("$ρ ≤ 1$", r"${\rho} {\le} 1$"),
        ("$m_{\\cos,1.5}$ and HDI_PA <= 1", r"$m_{\cos,1.5}$ and $\HDIpa$ $\le$ 1"),
    ],
)
def test_tex_specials_inside_record_maths_are_escaped(text, tex):
    assert tex_text(text) == tex  # '$%$' passed through raw: the rest of the values file became a comment
    assert check_tex(tex_text(text), "value") == tex


@pytest.mark.parametrize(
    "text,why",
    [
        ("$}$", "unbalanced braces"),
        ("${$", "unbalanced braces"),
        ("$\\$", "unpaired"),
        ("$x^$", "without its argument"),
        ("$\\input{f}$", r"the command \\input"),
        ("$\\iffalse$", r"the command \\iffalse"),
        ("$x^^5c$", r"\^\^"),
    ],
)
def test_record_maths_that_cannot_be_typeset_is_refused_naming_text(text, why):
    with pytest.raises(ValueError, match=rf"^text: .*{why}"):
        tex_text(text)


@pytest.mark.parametrize("bad", [None, 5, 1.5, b"x", ["a"], True])
def test_text_that_is_not_a_string_is_refused_naming_it(bad):
    for function in (tex_text, tex_escape):
        with pytest.raises(ValueError, match="^text: expected a string"):
            function(bad)


def test_adjacent_record_maths_never_merge_into_another_command():
    assert tex_text("<=d_k") == r"$\le d_{k}$"  # was $\led_{k}$: an undefined command
    assert tex_text("->beta") == r"$\to\beta$"
    from mhanw.infra import notation

    assert notation.markdown_text("<=d_k") == r"$\le d_{k}$"  # the chapters and the book join maths alike
    assert tex_text("m = x1^2^2") == "m = x1$^{2}{}^{2}$"
    assert tex_text("^(_)") == r"\textasciicircum{}(\_)"  # was $^{_}$: a script without its argument


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from(
            [
                "d_k",
                "^",
                "(",
                ")",
                "1/4",
                "*",
                "sqrt(",
                "ln ",
                "HDI_PA",
                "<=",
                "~",
                "sum_j",
                "||G||_F",
                "x",
                " ",
                "_",
                "{",
                "}",
                "\\",
                "%",
                "#",
                "&",
                "ρ",
                "rho",
                "$",
                "e_1",
                "m_{\\cos,1.2}",
                "'",
                "^(",
                "beta",
                "±",
            ]
        ),
        max_size=8,
    ).map("".join)
)
def test_record_text_becomes_macro_text_or_is_refused_naming_text(text):
    """Property: whatever a record says, tex_text gives LaTeX that the check keeps, or a one-line refusal."""
    try:
        tex = tex_text(text)
    except ValueError as exc:
        assert str(exc).startswith("text: ") and "\n" not in str(exc)
        return
    assert check_tex(tex, "value") == tex


# --------------------------------------------------------------------------- numbers a table or a sentence prints

EXTREMES = [
    (1, 5e-324),
    (1, 1e-300),
    (1e308, 1),
    (1e300, 1e299),
    (0, 5e-324),
    (1e-310, 1e-311),
    (1e308, 1e307),
    (-1e300, 3e298),
    (1e-18, 1e-19),
    (1e20, 1.0),
    (-2.5e-200, 1e-203),
    (0.5, 1e-16),
    (1.7976931348623157e308, 1.7976931348623157e308),
]
_NUMBER = re.compile(r"-?\d[\d.]*(?:e[+-]\d+)?")


def _longest_number(text: str) -> int:
    return max(len(n) for n in _NUMBER.findall(text.replace("\\,", "")))


@pytest.mark.parametrize("mean,se", EXTREMES)
def test_an_estimate_prints_in_a_bounded_number_of_characters(mean, se):
    # format_mean_se(1, 5e-324) printed 324 decimals; pm(0, 5e-324) divided by 10.0**-324 == 0
    for text in (tables.pm(mean, se), texout.format_mean_se(mean, se)):
        assert _longest_number(text) <= texout.MAX_NUMBER_CHARS and len(text) <= 70, text
    assert check_tex(Q(mean, se).tex(), "value") == f"\\ensuremath{{{texout.format_mean_se(mean, se)}}}"


def test_an_se_below_the_means_precision_prints_each_number_on_its_own():
    assert tables.pm(1, 5e-324) == "1 ± 4.9e-324"
    assert texout.format_mean_se(1, 5e-324) == r"1.00 \pm 5\times 10^{-324}"
    assert texout.format_mean_se(1e300, 1e299) == r"(1.0 \pm 0.1)\times 10^{300}"  # was 301 digits
    assert tables.pm(1e308, 1e307) == "(1.00 ± 0.10)e+308"


@pytest.mark.parametrize(
    "mean,se,text,tex",
    [
        (0.51316, 0.0039, "0.5132 ± 0.0039", r"0.513 \pm 0.004"),
        (12345.6, 12.3, "12346 ± 12", r"12350 \pm 10"),
        (1.23e-5, 4.5e-7, "(1.230 ± 0.045)e-5", r"0.0000123 \pm 0.0000004"),
        (123.4, 12.0, "123 ± 12", r"120 \pm 10"),
        (0.51083, 0.00123, "0.5108 ± 0.0012", r"0.511 \pm 0.001"),
        (1.5, 0.0, "1.5 ± 0", r"1.50 \pm 0"),
    ],
)
def test_ordinary_estimates_print_as_before(mean, se, text, tex):
    assert tables.pm(mean, se) == text and texout.format_mean_se(mean, se) == tex


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.floats(allow_nan=False, allow_infinity=False), st.floats(min_value=0, allow_nan=False, allow_infinity=False))
def test_any_finite_estimate_prints_bounded(mean, se):
    """Property: every finite mean and s.e. >= 0 prints, each number in at most MAX_NUMBER_CHARS characters."""
    for text in (tables.pm(mean, se), texout.format_mean_se(mean, se)):
        assert _longest_number(text) <= texout.MAX_NUMBER_CHARS, text


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: tables.pm(10**400, 1), "mean"),
        (lambda: tables.pm(1, 10**400), "se"),
        (lambda: texout.format_mean_se(10**400, 1), "mean"),
        (lambda: prose.number_word(10**400), "k"),
        (lambda: prose.number_word(10**18), "k"),
        (lambda: prose.ranges([1, 10**400]), "values"),
        (lambda: prose.ranges([1e300]), "values"),
        (lambda: prose.count_of(10**400, 10**400), "k"),
        (lambda: prose.count_clause(1, 10**19, "heads", "falls", "fall"), "n"),
        (lambda: texout.printed_integer(10**5000, "value"), "value"),
        (lambda: texout.printed_integer(1e300, "value"), "value"),
        (lambda: texout.printed_integer(10**18, "value"), "value"),
        (lambda: values_tex("01", {"n": 10**18}), r"results\.n: value"),
    ],
)
def test_a_number_beyond_what_a_reader_reads_is_refused_naming_the_argument(call, name):
    # pm(10**400, 1) raised OverflowError; a count of 10**5000 hit Python's 4300-digit limit
    with pytest.raises(ValueError, match=rf"^{name}: "):
        call()


def test_a_huge_integer_in_a_table_is_shown_in_scientific_form():
    from fractions import Fraction

    assert tables.fmt(10**400) == "1e+400" and tables.fmt(-(10**19)) == "-1e+19"  # was 401 and 20 digits
    assert tables.fmt(10**5000) == "1e+5000" and tables.fmt(Fraction(3 * 10**400)) == "3e+400"
    assert tables.fmt(2**64) == "1.845e+19" and tables.fmt(2**64, 2) == "1.8e+19"
    assert tables.fmt(10**18 - 1) == "999999999999999999" and tables.fmt(20000) == "20000"
    assert tables.show({"n": [10**400, 3]}).rows == [["1e+400"], ["3"]]
    assert (
        prose.number_word(10**18 - 1) == "999999999999999999"
        and prose.ranges([10**17, 10**17 + 1]) == "100000000000000000-100000000000000001"
    )


def test_digit_count_never_writes_the_integer_out():
    for k in (1, 9, 10, 17, 18, 19, 400, 4300, 5000, 100000):
        assert texout.digit_count(10**k) == k + 1 and texout.digit_count(10**k - 1) == k


# --------------------------------------------------------------------------- pdflatex reads what is accepted


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed")
def test_what_the_checks_accept_compiles_with_pdflatex(tmp_path):
    tree: dict = {
        # '$±5' gave '\\$$\\pm$5', which is valid: an escaped $ then maths
        "plain": {
            str(i): text
            for i, text in enumerate(["$±5", "±$±", "50% of $x_1 & #2 ~ {a} \\ $ ^", "ρ ≤ 1 and $", "\\$±"])
        },
        "record": {
            str(i): Tex(check_tex(tex_text(text), "value"))
            for i, text in enumerate(["$%$ and $&$", "$ρ ≤ 1$", "<=d_k and ->beta", "^(_)", "sqrt(d_k)^(1/4)"])
        },
        "estimate": {str(i): Q(mean, se) for i, (mean, se) in enumerate(EXTREMES)},
        "count": 10**18 - 1,
        "law": sp.Symbol("k^{*}") + sp.Symbol(r"\text{numerical}") / sp.Symbol("d_k"),
        "table": Tex(check_tex(r"\begin{tabular}{ll}a & $b$ \\ \end{tabular}", "value")),
    }
    values = values_tex("01", tree)
    names = re.findall(r"^\\mhvalue\{(01\.[^}]*)\}", values, re.M)
    assert len(names) >= 5 + 5 + len(EXTREMES) + 3
    uses = " ".join(f"\\val{{{name}}}." for name in names)
    run = paper_values.pdflatex(tmp_path, f"\\begin{{document}}{uses} The end.\\end{{document}}", values)
    assert run.returncode == 0, run.stdout[-2000:]
    assert "The end." in (paper_values.pdf_text(tmp_path) or "The end.")


@pytest.mark.parametrize(
    "make",
    [
        lambda: (lambda x: (x.append(x), x)[1])([]),
        lambda: (lambda d: (d.__setitem__("a", d), d)[1])({}),
        lambda: __import__("functools").reduce(lambda a, _: [a], range(5000), []),
        lambda: (v for v in [1, 2]),
    ],
)
def test_a_cell_that_contains_itself_or_nests_deeply_is_named(make):
    """A table cell holding itself, nested 5000 deep, or an iterator: one ValueError naming ``x``."""
    from mhanw.infra import tables

    with pytest.raises(ValueError, match=r"^x: "):
        tables.fmt(make())
    assert tables.fmt([[1, 2], [3, 4]]) == "[1, 2, 3, 4]" or tables.fmt([[1, 2], [3, 4]])


def test_a_long_double_beyond_a_double_prints_as_its_value_not_infinity():
    """np.longdouble('1e4000') is finite: a cell shows 1e+4000, not the ∞ of its float() conversion."""
    import numpy as np

    from mhanw.infra import tables

    assert tables.fmt(np.longdouble("1e4000")) == "1e+4000"
    assert tables.fmt(np.longdouble("inf")) == "∞" and tables.fmt(float("-inf")) == "−∞"
