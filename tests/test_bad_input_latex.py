"""Text that reaches LaTeX or matplotlib's mathtext is rendered by one module, and checked.

:mod:`mhanw.infra.texout` is the one place that turns text into LaTeX or
mathtext: :func:`~mhanw.infra.texout.tex_escape` (plain text),
:func:`~mhanw.infra.texout.tex_text` (record text), :func:`~mhanw.infra.texout.tex_math`
(a formula, identical in LaTeX and mathtext).  :func:`~mhanw.infra.texout.check_tex` refuses what
would stop pdflatex and lose every later value of the paper (an unescaped ``%`` or ``#``, a
trailing backslash, unpaired ``$``, unbalanced braces); a chapter parameter
that could not be printed (``inputs = "student-t:3_0"``) or drawn is refused
when the parameters are checked, naming it.  Where pdflatex is installed, the
paper's values (:func:`mhanw.infra.results.values_tex`) are compiled for real.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import paper_values
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mhanw import data
from mhanw.chapters import ch01_attention_is_nadaraya_watson as ch01
from mhanw.chapters import ch04_head_diversity_index as ch04
from mhanw.infra import params as P
from mhanw.infra import texout
from mhanw.infra.results import Q, Tex, values_tex
from mhanw.infra.texout import check_mathtext, check_tex, tex_escape, tex_math, tex_text

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
PDFLATEX = paper_values.PDFLATEX


@pytest.mark.parametrize(
    "value,why",
    [
        ("50%", "comment sign"),
        ("a trailing backslash\\", "trailing backslash"),
        ("#1", "parameter sign"),
        ("$x", "unpaired"),
        ("{", "unbalanced"),
        ("}{", "unbalanced"),
        ("a\x00b", "not printable ASCII"),
        ("x_1 and a^b", "outside maths"),
        ("±", "not printable ASCII"),
    ],
)
def test_tex_that_would_stop_pdflatex_is_refused(value, why):
    with pytest.raises(ValueError, match=rf"^value: .*{why}"):
        check_tex(value, "value")  # "50%" made pdflatex read the rest of the file as a comment


def test_plain_text_is_escaped_by_the_one_function():
    text = "50% of x_1 & #2 ~ {a} \\ $ ^"
    body = values_tex("01", {"note": text}).splitlines()[-1]
    assert body == "\\mhvalue{01.note}{" + tex_escape(text) + "}"
    assert check_tex(tex_escape(text), "value") != text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=40))
def test_any_plain_text_escapes_to_text_a_macro_accepts(text):
    """Property: whatever a user writes, :func:`tex_escape` makes it LaTeX that :func:`check_tex` accepts."""
    text = "".join(ch for ch in text if ord(ch) >= 32)
    check_tex(tex_escape(text), "value")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("ab$%#{}\\^_ 12")), max_size=16))
def test_check_tex_gives_a_verdict_on_any_text(text):
    """Property: any text is either accepted as it is or refused with one line naming the argument."""
    try:
        assert check_tex(text, "value") == text
    except ValueError as exc:
        assert str(exc).startswith("value: ") and "\n" not in str(exc)


def test_an_input_law_that_cannot_be_printed_is_refused_at_the_parameter_check():
    # Python's float() read '3_0' as 30, and the chapter printed the law in \texttt{}, where '_' stops pdflatex
    for value in ("student-t:3_0", "student-t:2^3"):
        with pytest.raises(P.ParameterError, match="^neff_inputs: "):
            P.inputs().check(value, "neff_inputs")
    namespace = _ch01_defaults()
    namespace["neff_inputs"] = "student-t:3_0"
    with pytest.raises(P.ParameterError, match="^neff_inputs: "):
        P.check_parameters(namespace, ch01.PARAMETERS, ch01.CONSTRAINTS)
    assert P.inputs().check("student-t:3", "neff_inputs") == "student-t:3"


def _ch01_defaults() -> dict:
    from mhanw.pipeline import chapters

    return chapters.declared(ROOT / "notebooks" / "01_attention_is_nadaraya_watson.md")  # its parameters cell


def test_a_formula_is_rendered_not_pasted_into_labels():
    # x1^2^2 was pasted as "$m = x1^2^2$": "Double superscript" in the paper and in matplotlib
    label = ch04.regression_label("x1^2^2")
    assert label == "$m = x_{1}^{4}$"
    check_mathtext(label, "regression")
    check_tex(label, "value")
    assert ch04.regression_label("iso_cos") == ch04.REGRESSION_LABELS["iso_cos"]
    assert ch04.regression_label("iso_cos8") == r"$m = \mathrm{iso\_cos8}$"
    with pytest.raises(ValueError, match="^spec: "):
        ch04.regression_label("x1^^2")
    assert P.regression(dimension=4).check("x1^2^2", "regression") == "x1^2^2"


def test_a_label_matplotlib_cannot_draw_is_named():
    with pytest.raises(ValueError, match=r"^regression: matplotlib cannot draw the label .*Double superscript"):
        check_mathtext("$m = x1^2^2$", "regression")


def test_a_figure_that_cannot_be_drawn_or_sized_is_named(tmp_path):
    import matplotlib.pyplot as plt

    from mhanw.infra import figures

    fig, ax = plt.subplots()
    ax.set_title("$m = x1^2^2$")
    with pytest.raises(ValueError, match=r"^fig: matplotlib cannot draw figure 04_bad .*Double superscript"):
        figures.save(fig, "04_bad", tmp_path)
    fig, ax = plt.subplots(figsize=(1e308, 2.0))  # the PDF backend failed, naming neither
    with pytest.raises(ValueError, match=r"^fig: expected a figure width in \(0, 100\] inches"):
        figures.save(fig, "04_bad", tmp_path)
    with pytest.raises(ValueError, match="^height: "):
        figures.panels(2, height=1e308)
    assert not list(tmp_path.iterdir())
    fig, ax = plt.subplots()
    ax.set_title(ch04.regression_label("x1^2^2"))
    assert all(p.exists() for p in figures.save(fig, "04_good", tmp_path))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from(
            [
                "x1",
                "x2",
                "r",
                "2",
                "0.5",
                "+",
                "-",
                "*",
                "/",
                "^",
                "**",
                "(",
                ")",
                "sin(",
                "exp(",
                "sqrt(",
                "abs(",
                "log(1+",
                "pi",
                "E",
            ]
        ),
        min_size=1,
        max_size=12,
    )
)
def test_any_formula_a_user_may_give_renders_in_mathtext_and_latex(pieces):
    """Property: a formula the parser accepts is drawn by mathtext and stands in a macro as rendered."""
    text = "".join(pieces)
    try:
        f = data.regression_function(text)
    except ValueError:
        return
    if f.expression is not None:
        label = f"$m = {tex_math(f.expression)}$"
        check_mathtext(label, "regression")
        check_tex(label, "value")


def test_record_text_with_stacked_exponents_is_valid_latex():
    assert tex_text("m = x1^2^2") == "m = x1$^{2}{}^{2}$"  # was $^{2}^{2}$: a Double superscript
    assert tex_text("d_k^(1/4)") == "$d_{k}^{1/4}$"  # a subscript then a superscript stay as they were


def test_the_ledger_renders_record_text_with_the_one_implementation():
    """The claims table and the robustness sections use :mod:`mhanw.infra.texout`'s functions, not copies."""
    from mhanw.pipeline import ledger, robustness

    assert ledger.tex_text is tex_text and ledger.tex_escape is tex_escape
    assert robustness.tex_text is tex_text and robustness.tex_escape is tex_escape


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed")
def test_the_paper_values_compile_with_pdflatex(tmp_path):
    tree = {
        "plain": "50% of x_1 & #2 ~ {a} \\ $ ^ ±",
        "label": Tex(ch04.regression_label("x1^2^2")),
        "formula": Tex(r"\ensuremath{" + tex_math(data.regression_function("sin(x1)+x2**2/2").expression) + "}"),
        "record": Tex(tex_text("m = x1^2^2 and d_k^(1/4), HDI_PA <= 1")),
        "big": 10**17,
        "estimate": Q(0.51083, 0.00123),
    }
    for key, value in tree.items():
        if isinstance(value, Tex):  # trusted by the writer: what the formatters made passes the check
            check_tex(value, key)
    uses = " ".join(f"\\val{{01.{key}}}." for key in tree)
    run = paper_values.pdflatex(
        tmp_path, f"\\begin{{document}}{uses} The end.\\end{{document}}", values_tex("01", tree)
    )
    assert run.returncode == 0, run.stdout[-2000:]
    assert "The end." in (paper_values.pdf_text(tmp_path) or "The end.")


def test_huge_numbers_are_formatted_or_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^x: expected a finite real number \(within the range of a double"):
        texout.format_number(10**400)  # was a bare OverflowError
    with pytest.raises(ValueError, match=r"^mean: "):
        texout.format_mean_se(10**400, 1.0)
    big = values_tex("01", {"big": 10**17})  # an exact integer: written digit by digit, no float involved
    assert "\\mhvalue{01.big}{\\ensuremath{100\\,000\\,000\\,000\\,000\\,000}}" in big
    with pytest.raises(ValueError, match=r"^results\.huge: value: expected an integer of at most 18 digits"):
        values_tex("01", {"huge": 10**400})  # no count a paper prints (401 digits, 133 thin spaces on one line)
