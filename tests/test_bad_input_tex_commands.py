"""LaTeX in the paper can neither hide a command in TeX's ``^^`` notation nor stop the paper where it stands.

The paper reads the chapters' values (:func:`mhanw.infra.results.values_tex`) in running text and in its
tables, and every piece of LaTeX a value may hold passes one check, :func:`mhanw.infra.texout.check_tex`.
TeX reads ``^^69`` as the letter ``i`` even inside a command's name, so ``\\^^69nput{f}`` *is*
``\\input{f}``: the check refuses ``^^`` anywhere, and every way text reaches the paper (trusted LaTeX
that passed it, plain text, a sympy leaf with a symbol's or a function's name,
:func:`~mhanw.infra.texout.tex_text`, :func:`~mhanw.infra.texout.tex_math`) gives no ``^^``.
A value stands in running text: ``&``, rules and ``\\multicolumn`` belong to the rows of a table (a text
with a row end ``\\\\``, which the paper puts in its own ``tabular``), maths-only commands to ``$...$``,
font declarations to a group.
"""

from __future__ import annotations

import re
from pathlib import Path

import paper_values
import pytest
import sympy as sp

from mhanw.infra.results import Q, Tex, values_tex
from mhanw.infra.texout import check_tex, latex_of, tex_math, tex_text

PDFLATEX = paper_values.PDFLATEX
SECRET = "secret.txt"
SECRET_WORD = "TOPSECRETWORD"
#: How pdflatex's log records a file it opened: "(./secret.txt" (a mention in typeset text has no "(./").
OPENED = re.compile(r"\(\./" + re.escape(SECRET))


# --------------------------------------------------------------------------- commands hidden in ^^ notation

#: Each is a command outside the allow-list once TeX has read its ^^ (\input, \def, \openout, \catcode, \write).
HIDDEN = [
    rf"$\^^69nput{{{SECRET}}}$",
    rf"\ensuremath{{\^^69nput{{{SECRET}}}}}",
    rf"$\textbf{{\^^69nput{{{SECRET}}}}}$",
    r"$\^^64ef\^^78{1}$",
    r"$\^^6fpenout1=x$",
    r"$\^^63atcode`\%=12$",
    r"$\^^77rite18{x}$",
    r"$x\^^49$",
    rf"$^^5cinput{{{SECRET}}}$",
    rf"$\text{{^^5cinput{{{SECRET}}}}}$",
    r"$\mathrm{^^5c^^69nput}$",
    r"$x^^M$",
]


@pytest.mark.parametrize("value", HIDDEN)
def test_a_command_hidden_in_caret_notation_is_refused_by_the_check(value):
    with pytest.raises(ValueError, match=r"^value: '\^\^' "):
        check_tex(value, "value")


@pytest.mark.parametrize("value", HIDDEN)
def test_a_command_hidden_in_caret_notation_is_refused_in_record_text(value):
    if value.startswith("$"):
        with pytest.raises(ValueError, match=r"^text: '\^\^' "):
            tex_text(value)
    else:  # outside $...$ record text is plain: every ^ and backslash is escaped
        assert "^^" not in tex_text(value) and "\\ensuremath" not in tex_text(value)


@pytest.mark.parametrize("name", [rf"\^^69nput{{{SECRET}}}", r"\^^64ef\^^78{1}", r"\text{^^5cinput{f}}", r"\^^77rite"])
def test_a_symbol_or_function_named_with_caret_notation_is_refused(name):
    with pytest.raises(ValueError, match=r"^expression: the symbol .* cannot be typeset"):
        latex_of(sp.Symbol(name) + 1, "expression")
    with pytest.raises(ValueError, match=r"^expression: the symbol .* cannot be typeset"):
        latex_of(sp.Function(name)(sp.Symbol("x")), "expression")
    with pytest.raises(ValueError, match=r"^expr: the symbol .* cannot be typeset"):
        tex_math(sp.Symbol(name) * sp.Symbol("y"))
    with pytest.raises(ValueError, match=r"^expression: the expression cannot be typeset \("):
        latex_of(sp.MatrixSymbol(name, 2, 2), "expression")  # a name that is no Symbol's: the whole formula
    with pytest.raises(ValueError, match=r"^results\.law: value: the symbol .* cannot be typeset"):
        values_tex("01", {"law": sp.Symbol(name) + 1})  # the writer of the paper's values reaches the check


@pytest.mark.parametrize("leaf", ["tex", "plain", "expr", "number", "estimate"])
def test_every_leaf_of_the_paper_values_reaches_the_caret_check(leaf, monkeypatch):
    from mhanw.infra import results

    hidden = r"\ensuremath{\^^69nput{x}}"
    for function in ("format_number", "format_mean_se", "tex_escape", "latex_of"):
        monkeypatch.setattr(results, function, lambda *args, **kwargs: hidden)
    value = {"tex": Tex(hidden), "plain": "x", "expr": sp.Symbol("x"), "number": Q(1.5), "estimate": Q(1.0, 0.1)}
    with pytest.raises(ValueError, match=r"^results\.a: value: '\^\^' "):
        values_tex("01", {"a": value[leaf]})


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed")
def test_no_entry_point_lets_pdflatex_read_a_file(tmp_path):
    (tmp_path / SECRET).write_text(SECRET_WORD + "\n")
    # the danger is real: the body that used to be accepted makes pdflatex read the file
    control = paper_values.pdflatex(
        tmp_path, f"\\newcommand{{\\X}}{{{HIDDEN[0]}}}\\begin{{document}}Before \\X{{}} after.\\end{{document}}"
    )
    assert control.returncode == 0 and OPENED.search((tmp_path / "doc.log").read_text(errors="replace"))
    tries = [
        lambda v: Tex(check_tex(v, "value")),  # LaTeX the writer trusts has passed the check
        lambda v: Tex(tex_text(v)),
        lambda v: v,  # plain text
        lambda v: sp.Symbol(v.strip("$")),
        lambda v: sp.Function(v.strip("$"))(sp.Symbol("x")),
    ]
    tree = {}
    for i, value in enumerate(HIDDEN):
        for j, attempt in enumerate(tries):
            try:  # whatever a way into the paper keeps goes into the paper below
                leaf = attempt(value)
                values_tex("01", {"leaf": leaf})
            except ValueError:
                continue
            tree[f"try{i}-{j}"] = leaf
    tree["good"] = Tex(check_tex(r"$x^{2}$ and \texttt{ok}", "value"))
    assert len(tree) > len(HIDDEN)  # plain text and record text outside maths are kept, escaped
    values = values_tex("01", tree)
    assert "^^" not in values
    uses = " ".join(f"Before \\val{{01.{key}}} after." for key in tree)
    run = paper_values.pdflatex(tmp_path, f"\\begin{{document}}{uses}\\end{{document}}", values)
    assert run.returncode == 0, run.stdout[-2000:]
    assert not OPENED.search((tmp_path / "doc.log").read_text(errors="replace"))
    text = paper_values.pdf_text(tmp_path)
    if text is not None:
        assert SECRET_WORD not in text and "after." in text


# --------------------------------------------------------------------------- running text and the rows of a table

#: Values that stopped pdflatex where they stood in running text ("Before \val{01.a} after."), with what
#: the refusal says.
BREAKS_RUNNING_TEXT = [
    ("a & b", "alignment sign &"),
    (r"\hline", r"table command \\hline"),
    (r"\toprule", r"table command \\toprule"),
    (r"\multicolumn{2}{c}{x}", r"table command \\multicolumn"),
    (r"\frac12", r"\\frac outside maths"),
    (r"\alpha", r"\\alpha outside maths"),
    (r"\sum", "outside maths"),
    (r"\sqrt{2}", "outside maths"),
    (r"\limits", "outside maths"),
    (r"\not", "outside maths"),
    (r"\hbar", "outside maths"),
    (r"\operatorname{x}", "outside maths"),
    (r"\boldsymbol{x}", "outside maths"),
    (r"\left(", "outside maths"),
    (r"$\bigl( x$", "not one a macro may use"),
    (r"\substack{x}", "outside maths"),
    (r"\begin{array}{c}x\end{array}", "'array' outside maths"),
    (r"\begin{cases}x\end{cases}", "'cases' outside maths"),
    (r"\ensuremath{x$y$}", r"a \$ inside maths"),
    (r"\mathbb{R}", "outside maths"),
    (r"\begin{aligned}x\end{aligned}", "'aligned' outside maths"),
    (r"$\middle|$", r"\\middle without its opening command \\left"),
    (r"$\limits$", "not after an operator"),
    (r"\begin{tabular}{q}x\end{tabular}", "column specification"),
    (r"$\^{}$", r"text accent \\\^ inside maths"),
    (r"\tiny", r"declaration \\tiny outside a group"),
    (r"\tt", "outside a group"),
    (r"\setlength{\tabcolsep}{500pt}", "outside a group"),
    (r"\HDIpa", "outside maths"),
    (r"\|", "outside maths"),
    (r"\cdots", "outside maths"),
    (r"$\ensuremath{\sqrt}$", "without its argument"),
    (r"$\frac{1}$", "second argument"),
    (r"$x_\tiny$", "without its argument"),
    (r"$x_\operatorname{y}$", "without its argument"),
    (r"\text x", "in braces"),
    (r"\^", "without its argument"),
    (r"$\(x\)$", r"\\\( inside maths"),
    (r"{$x}$", "closing brace inside maths"),
    (r"$\left x\right)$", "without its delimiter"),
    ("a$$", r"\$\$"),
    (r"$a \\ b$", "row end"),
    (r"$a & b$ \\ c", "alignment sign"),
    (r"\begin{tabular}{l}{a & b}\end{tabular}", "alignment sign"),
    (r"a \\ b \hline c", r"rule \\hline not at the start of a row"),
    (r"a \\ b \multicolumn{1}{c}{x}", "start of a cell"),
    (r"\setlength{\tabcolsep}{x}", r"arguments .* of \\setlength"),
    (r"\tabcolsep", r"outside \\setlength"),
    (r"${x$}$", r"a \$ inside maths"),
    (r"$\left( x$", r"\\left without its \\right"),
]


def test_a_formula_gets_no_bare_alignment_sign_and_no_table_rows():
    for value in ("a & b \\\\ c & d", r"a \\ \hline b"):
        with pytest.raises(ValueError, match=r"^text: "):
            check_tex(value, "text", alignment=False)
    assert check_tex(r"$\left[\begin{matrix}1 & 0\\0 & 1\end{matrix}\right]$", "text", alignment=False)


#: What the chapters write (from the generated value files), and forms close to the edge of each rule.
KEPT = [
    r"mean deviation of each query from its limit $\exp(-\lVert q\rVert^2/d_k)$ at the worst $d_k$: "
    r"\ensuremath{0.012 \pm 0.001} per cent of the keys; the predicted limit holds (\emph{holds})",
    r"\ensuremath{m \left(a_{1} + a_{2} - 1\right) \left(2 B_{1} a_{1} + a_{2} m - m\right)}",
    r"\ensuremath{\operatorname{MSE}{\left(k \right)} = \frac{c_{B}}{k^{2}} + \frac{c_{V} k^{\frac{k}{2} + 1}}{D n}}",
    r"by symmetry $M\mathbf 1\propto\mathbf 1$, so uniform weights are the affine oracle",
    r"\ensuremath{\frac{\left(\rho \left(q - 1\right) + \sqrt{q^{2} \rho^{2} + 3}\right)^{2}}{\left(3 q + 1\right)^{2}}}",
    "\\begingroup\\small\\setlength{\\tabcolsep}{3pt}\n\\begin{tabular}{llccc}\n\\toprule\n & & \\multicolumn{2}{c}{layer}"
    " & random \\\\\n\\cmidrule(lr){3-4}\\cmidrule(lr){5-5}\nheads & HDI & 1 & 2 & Haar \\\\\n\\midrule\n$W_Q^h$ & printed"
    " & $0.944$\\,{\\scriptsize$(+55)$} & $0.955$\\,{\\scriptsize$(-14)$} & $0.997$ \\\\\n\\addlinespace\n & PA & $0.8$ &"
    " $0.7$ & $0.9$ \\\\\n\\bottomrule\n\\end{tabular}\\endgroup",
    r"$\left(\middle|\right)$ and $\sum\limits_{j} a_j$, \(x\), $\text{a $x$ b}$, \^{}, \'e, {\tiny x}, "
    r"\begingroup\tiny y\endgroup, \ensuremath{\text{\ensuremath{x}}}, $\sqrt[3]{x}$, $\mathbb{E}[\hat\gamma]$",
]
#: The rows of a table (chapters 06 and 10): used inside the paper's own tabular.
ROWS = [
    r"M1 & 5\,/\,102 & 0.66 \\ M2 & 1\,/\,512 & 0.62 \\ M3 & 3\,/\,170 & 0.47",
    r"iso & $2$ & $0.52 \pm 0.04$ \\ iso & $4$ & $-0.07 \pm 0.07$ \\ \midrule aniso & \multicolumn{2}{c}{--}",
]


@pytest.mark.parametrize("value", KEPT + ROWS)
def test_the_latex_the_chapters_write_is_kept(value):
    assert check_tex(value, "value") == value


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed")
def test_what_the_check_keeps_compiles_in_running_text_and_in_a_table(tmp_path):
    tree = {
        "kept": {str(i): Tex(check_tex(value, "value")) for i, value in enumerate(KEPT)},
        "rows": {str(i): Tex(check_tex(value, "value")) for i, value in enumerate(ROWS)},
    }
    uses = " ".join(f"Before \\val{{01.kept.{i}}} after." for i in range(len(KEPT)))
    tables = "".join(
        f"\\begin{{tabular}}{{lll}}\\toprule \\val{{01.rows.{i}}} \\\\ \\bottomrule\\end{{tabular}} "
        for i in range(len(ROWS))
    )
    body = f"\\begin{{document}}{uses} {tables} The end.\\end{{document}}"
    run = paper_values.pdflatex(tmp_path, body, values_tex("01", tree))
    assert run.returncode == 0, run.stdout[-2000:]


# --------------------------------------------------------------------------- what stops pdflatex


@pytest.mark.parametrize(
    "text, says",
    [
        (r"$\root 3 \of x$", "not one a macro may use"),  # plain TeX: 'File ended while scanning' in LaTeX
        (r"$\big x$", "not one a macro may use"),  # needs a delimiter: 'Missing delimiter'
        (r"$a \lt b$", "not one a macro may use"),
        (r"$\mathscr{A}$", "not one a macro may use"),  # not defined
        ("$x\n\ny$", "a blank line"),
        ("\\textbf{a\n  \nb}", "a blank line"),
        ("x" * 10_001, "a line of more than"),
        (("x" * 9_000 + "\n") * 12, "more than 100,000 characters"),
    ],
)
def test_tex_that_stops_pdflatex_is_refused(text, says):
    """Each of these passed check_tex and then stopped pdflatex with the paper's preamble."""
    with pytest.raises(ValueError, match=rf"^value: .*{re.escape(says)}"):
        check_tex(text, "value")


def test_a_scenario_description_of_more_than_a_paragraph_is_refused(tmp_path):
    from mhanw.pipeline import scenarios
    from mhanw.pipeline.scenarios import ScenarioError

    root = Path(__file__).resolve().parents[1]
    for bad in ["x" * (scenarios.MAX_DESCRIPTION + 1), "one\\n\\ntwo"]:
        path = tmp_path / "long.toml"
        path.write_text(f'description = "{bad}"\n')
        with pytest.raises(ScenarioError, match="description: expected one paragraph"):
            scenarios.load(path, root)
