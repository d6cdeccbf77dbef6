"""A macro's LaTeX can neither hide a command in TeX's ``^^`` notation nor stop the paper where it stands.

The paper is built by pdflatex from the chapters' macros (:class:`mhanw.infra.texout.Macros`), and every
body passes one check, :func:`mhanw.infra.texout.check_tex`.  TeX reads ``^^69`` as the letter ``i`` even
inside a command's name, so ``\\^^69nput{f}`` *is* ``\\input{f}``: the check refuses ``^^`` anywhere, and
every entry point (``Macros.text``, ``number``, ``mean_se``, ``plain``, ``expr`` with a symbol's or a
function's name, :func:`~mhanw.infra.texout.tex_text`, :func:`~mhanw.infra.texout.tex_math`) reaches it.
A macro of ``Macros.text`` stands in running text: ``&``, rules and ``\\multicolumn`` belong to the rows
of a table (a text with a row end ``\\\\``, which the paper puts in its own ``tabular``), maths-only
commands to ``$...$``, font declarations to a group.  Macro names are letters and nothing else.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import sympy as sp

from mhanw.infra import texout
from mhanw.infra.texout import Macros, check_tex, tex_math, tex_text

PDFLATEX = shutil.which("pdflatex")
PREAMBLE = (
    "\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage{amsmath,amssymb}\\usepackage{booktabs}"
    "\\newcommand{\\HDIpa}{\\mathrm{HDI}_{\\mathrm{PA}}}"
)
SECRET = "secret.txt"
SECRET_WORD = "TOPSECRETWORD"
#: How pdflatex's log records a file it opened: "(./secret.txt" (a mention in typeset text has no "(./").
OPENED = re.compile(r"\(\./" + re.escape(SECRET))


def _pdflatex(folder, body: str) -> subprocess.CompletedProcess:
    (folder / "doc.tex").write_text(f"{PREAMBLE}{body}\n")
    return subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "doc.tex"],
        cwd=folder,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=120,
    )


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
def test_a_command_hidden_in_caret_notation_is_refused_by_macro_text(value):
    m = Macros("TX")
    with pytest.raises(ValueError, match=r"^value: '\^\^' .*\(macro \\TXa\)$"):
        m.text("a", value)
    assert len(m) == 0


@pytest.mark.parametrize("value", HIDDEN)
def test_a_command_hidden_in_caret_notation_is_refused_in_record_text(value):
    if value.startswith("$"):
        with pytest.raises(ValueError, match=r"^text: '\^\^' "):
            tex_text(value)
    else:  # outside $...$ record text is plain: every ^ and backslash is escaped
        assert "^^" not in tex_text(value) and "\\ensuremath" not in tex_text(value)


@pytest.mark.parametrize("name", [rf"\^^69nput{{{SECRET}}}", r"\^^64ef\^^78{1}", r"\text{^^5cinput{f}}", r"\^^77rite"])
def test_a_symbol_or_function_named_with_caret_notation_is_refused(name):
    with pytest.raises(ValueError, match=r"^expression: the symbol .* cannot be typeset .*\(macro \\TXa\)$"):
        Macros("TX").expr("a", sp.Symbol(name) + 1)
    with pytest.raises(ValueError, match=r"^expression: the symbol .* cannot be typeset"):
        Macros("TX").expr("a", sp.Function(name)(sp.Symbol("x")))
    with pytest.raises(ValueError, match=r"^expr: the symbol .* cannot be typeset"):
        tex_math(sp.Symbol(name) * sp.Symbol("y"))
    with pytest.raises(ValueError, match=r"^expression: the expression cannot be typeset \("):
        Macros("TX").expr("a", sp.MatrixSymbol(name, 2, 2))  # a name that is no Symbol's: the whole formula


@pytest.mark.parametrize(
    "method,value", [("number", 1.5), ("mean_se", (1.0, 0.1)), ("plain", "x"), ("expr", sp.Symbol("x")), ("text", "x")]
)
def test_every_macro_method_reaches_the_caret_check(method, value, monkeypatch):
    hidden = r"\ensuremath{\^^69nput{x}}"
    for function in ("format_number", "format_mean_se", "tex_escape", "latex_of"):
        monkeypatch.setattr(texout, function, lambda *args, **kwargs: hidden)
    args = value if isinstance(value, tuple) else (hidden if method == "text" else value,)
    with pytest.raises(ValueError, match=r"^value: '\^\^' .*\(macro \\TXa\)$"):
        getattr(Macros("TX"), method)("a", *args)


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed")
def test_no_entry_point_lets_pdflatex_read_a_file(tmp_path):
    (tmp_path / SECRET).write_text(SECRET_WORD + "\n")
    # the danger is real: the body that used to be accepted makes pdflatex read the file
    control = _pdflatex(
        tmp_path, f"\\newcommand{{\\X}}{{{HIDDEN[0]}}}\\begin{{document}}Before \\X{{}} after.\\end{{document}}"
    )
    assert control.returncode == 0 and OPENED.search((tmp_path / "doc.log").read_text(errors="replace"))
    m = Macros("TX")
    tries = [
        lambda k, v: m.text(k, v),
        lambda k, v: m.text(k, tex_text(v)),
        lambda k, v: m.plain(k, v),
        lambda k, v: m.expr(k, sp.Symbol(v.strip("$"))),
        lambda k, v: m.expr(k, sp.Function(v.strip("$"))(sp.Symbol("x"))),
    ]
    for i, value in enumerate(HIDDEN):
        for j, attempt in enumerate(tries):
            try:  # whatever an entry point keeps goes into the paper below
                attempt(f"Try{chr(65 + i)}{chr(65 + j)}", value)
            except ValueError:
                pass
    assert not [body for body in m._defs.values() if "^^" in body]
    m.text("Good", r"$x^{2}$ and \texttt{ok}")
    m.write(tmp_path / "macros.tex")
    uses = " ".join(f"Before \\TX{name}{{}} after." for name in m._defs)
    run = _pdflatex(tmp_path, f"\\input{{macros.tex}}\\begin{{document}}{uses}\\end{{document}}")
    assert run.returncode == 0, run.stdout[-2000:]
    assert not OPENED.search((tmp_path / "doc.log").read_text(errors="replace"))
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", "doc.pdf", "-"], cwd=tmp_path, capture_output=True, text=True).stdout
        assert SECRET_WORD not in text and "after." in text


# --------------------------------------------------------------------------- running text and the rows of a table

#: Bodies that stopped pdflatex where the macro stood in running text ("Before \TXa{} after."), with what
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


#: What the chapters write (from the generated macro files), and forms close to the edge of each rule.
KEPT = [
    r"mean deviation of each query from its limit $\exp(-\lVert q\rVert^2/d_k)$ at the worst $d_k$: "
    r"\TXNeffLimitDev{} per cent of the keys; the predicted limit \TXIsNeffLimit{} (\TXVerdictNeffLimit)",
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
def test_the_macro_text_the_chapters_write_is_kept(value):
    m = Macros("TX")
    m.text("Kept", value)
    assert m.render().endswith(f"\\newcommand{{\\TXKept}}{{{value}}}\n")


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed")
def test_what_macro_text_keeps_compiles_in_running_text_and_in_a_table(tmp_path):
    m = Macros("TX")
    for i, value in enumerate(KEPT):
        m.text(f"Kept{chr(65 + i)}", value)
    for i, value in enumerate(ROWS):
        m.text(f"Rows{chr(65 + i)}", value)
    for name in ("NeffLimitDev", "IsNeffLimit", "VerdictNeffLimit"):
        m.number(name, 0.5)
    m.write(tmp_path / "macros.tex")
    uses = " ".join(f"Before \\TXKept{chr(65 + i)}{{}} after." for i in range(len(KEPT)))
    tables = "".join(
        f"\\begin{{tabular}}{{lll}}\\toprule \\TXRows{chr(65 + i)} \\\\ \\bottomrule\\end{{tabular}} "
        for i in range(len(ROWS))
    )
    run = _pdflatex(tmp_path, f"\\input{{macros.tex}}\\begin{{document}}{uses} {tables} The end.\\end{{document}}")
    assert run.returncode == 0, run.stdout[-2000:]


# --------------------------------------------------------------------------- macro names are letters only

BAD_NAMES = ["a\n", "a\n\n", "\na", " a", "a ", "a1", "", "á", "a-b", "a\t", "a\x00"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_macro_name_or_prefix_with_anything_but_letters_is_refused(name):
    with pytest.raises(ValueError, match=r"^prefix: expected letters only"):
        Macros(f"TX{name}" if name else name)
    m = Macros("TX")
    m.text("a", "x")
    with pytest.raises(ValueError, match=r"^name: expected letters only"):
        m.text(f"a{name}" if name.strip() else name, "y")
    assert m.render().count("\\newcommand") == 1


def test_a_name_with_a_final_newline_no_longer_defines_a_macro_twice():
    m = Macros("TX")
    m.text("a", "x")
    with pytest.raises(ValueError, match="^name: "):
        m.text("a\n", "y")  # was two \newcommand{\TXa...}: pdflatex stopped
    assert re.findall(r"\\newcommand\{\\(\w+)\}", m.render()) == ["TXa"]


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
    from mhanw.infra.texout import Macros

    with pytest.raises(ValueError, match=rf"^value: .*{re.escape(says)}"):
        Macros("X").text("A", text)


def test_a_scenario_description_of_more_than_a_paragraph_is_refused(tmp_path):
    from mhanw.pipeline import scenarios
    from mhanw.pipeline.scenarios import ScenarioError

    root = Path(__file__).resolve().parents[1]
    for bad in ["x" * (scenarios.MAX_DESCRIPTION + 1), "one\\n\\ntwo"]:
        path = tmp_path / "long.toml"
        path.write_text(f'description = "{bad}"\n')
        with pytest.raises(ScenarioError, match="description: expected one paragraph"):
            scenarios.load(path, root)
