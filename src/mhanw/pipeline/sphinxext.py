"""The book's own Sphinx extension (listed in ``book/conf.py``): what a lesson needs and Sphinx lacks offline.

- ``{dropdown}``: a collapsible block for a deep reading, rendered as HTML ``<details>`` (no script, no
  network, no sphinx-design)::

      ```{dropdown} Three readings of the theorem: S-bound, S-true, S-weak
      Text, $math$, lists, tables ... (``:open:`` shows it unfolded)
      ```

- Page titles without TeX: a title with math (chapter 08's ``$1-\\bar\\rho$``) keeps its typeset math in the
  page, but the browser's ``<title>`` and the search index get plain text (:func:`plain_tex`: ``1-ρ̄``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import Directive, directives

# --------------------------------------------------------------------------- TeX as plain text

_GREEK = {
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "epsilon": "ε",
    "varepsilon": "ε",
    "zeta": "ζ",
    "eta": "η",
    "theta": "θ",
    "vartheta": "ϑ",
    "iota": "ι",
    "kappa": "κ",
    "lambda": "λ",
    "mu": "μ",
    "nu": "ν",
    "xi": "ξ",
    "pi": "π",
    "rho": "ρ",
    "sigma": "σ",
    "tau": "τ",
    "upsilon": "υ",
    "phi": "φ",
    "varphi": "φ",
    "chi": "χ",
    "psi": "ψ",
    "omega": "ω",
    "Gamma": "Γ",
    "Delta": "Δ",
    "Theta": "Θ",
    "Lambda": "Λ",
    "Xi": "Ξ",
    "Pi": "Π",
    "Sigma": "Σ",
    "Phi": "Φ",
    "Psi": "Ψ",
    "Omega": "Ω",
}
_SYMBOLS = {
    "le": "≤",
    "leq": "≤",
    "ge": "≥",
    "geq": "≥",
    "ne": "≠",
    "neq": "≠",
    "approx": "≈",
    "sim": "∼",
    "propto": "∝",
    "to": "→",
    "rightarrow": "→",
    "infty": "∞",
    "cdot": "·",
    "times": "×",
    "pm": "±",
    "sum": "Σ",
    "prod": "Π",
    "ell": "ℓ",
    "ldots": "…",
    "dots": "…",
    "cdots": "⋯",
    "in": "∈",
    "partial": "∂",
    "nabla": "∇",
    "top": "ᵀ",
    "perp": "⊥",
    "lVert": "‖",
    "rVert": "‖",
    "Vert": "‖",
    "lvert": "|",
    "rvert": "|",
    "ln": "ln",
    "log": "log",
    "exp": "exp",
    "min": "min",
    "max": "max",
    "langle": "⟨",
    "rangle": "⟩",
}
_ACCENTS = {
    "bar": "\u0304",
    "overline": "\u0304",
    "hat": "\u0302",
    "widehat": "\u0302",
    "tilde": "\u0303",
    "vec": "\u20d7",
    "dot": "\u0307",
}
_SUP = str.maketrans("0123456789+-=()nik", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱᵏ")
_SUB = str.maketrans("0123456789+-=()aeijkox", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑᵢⱼₖₒₓ")
_GROUP = r"\{((?:[^{}]|\{[^{}]*\})*)\}"


def _script(body: str, table: dict, mark: str) -> str:
    """A super- or subscript in Unicode when every character has one, else ``^(body)`` / ``_body``."""
    if body and all(ord(c) in table for c in body):
        return body.translate(table)
    return f"{mark}{body}" if re.fullmatch(r"[\w*′]+", body) else f"{mark}({body})"


def plain_tex(text: str) -> str:
    """Text with TeX math (``$...$``, ``\\(...\\)``) as plain Unicode for a page title or a search entry:
    ``Breiman's $1-\\bar\\rho$`` -> ``Breiman's 1-ρ̄``.  Unknown commands lose their backslash; no
    ``$``, ``\\`` or brace is left."""
    s = str(text)
    s = re.sub(r"\\\(|\\\)|\\\[|\\\]|\$", "", s)
    for _ in range(4):  # nested groups, innermost first
        s = re.sub(
            r"\\(?:mathrm|mathbf|mathit|mathsf|mathcal|text|textrm|operatorname|boldsymbol)\s*" + _GROUP, r"\1", s
        )
        s = re.sub(r"\\frac\s*" + _GROUP + r"\s*" + _GROUP, r"(\1)/(\2)", s)
        s = re.sub(
            r"\\sqrt\s*" + _GROUP,
            lambda m: "√" + (m.group(1) if re.fullmatch(r"\\?\w+(_\w|_\{\w+\})?", m.group(1)) else f"({m.group(1)})"),
            s,
        )
        s = re.sub(r"\\(" + "|".join(_ACCENTS) + r")\s*" + _GROUP, lambda m: m.group(2) + _ACCENTS[m.group(1)], s)
        s = re.sub(r"\^\s*" + _GROUP, lambda m: _script(m.group(1), _SUP, "^"), s)
        s = re.sub(r"_\s*" + _GROUP, lambda m: _script(m.group(1), _SUB, "_"), s)
    s = re.sub(r"\\(" + "|".join(_ACCENTS) + r")\s*(\\[A-Za-z]+|\w)", lambda m: m.group(2) + _ACCENTS[m.group(1)], s)
    s = re.sub(r"\\sqrt\s*(\\[A-Za-z]+|\w)", r"√\1", s)
    s = re.sub(r"\\([A-Za-z]+)", lambda m: _GREEK.get(m.group(1), _SYMBOLS.get(m.group(1), m.group(1))), s)
    # accents written before a command (\bar\rho) are now before the letter: move the mark after it
    s = re.sub("([\u0304\u0302\u0303\u20d7\u0307])(\\w)", r"\2\1", s)
    s = re.sub(r"\^(\w)", lambda m: _script(m.group(1), _SUP, "^"), s)
    s = re.sub(r"_(\w)", lambda m: _script(m.group(1), _SUB, "_"), s)
    s = re.sub(r"\\[,;:! ]|~", " ", s).replace("\\", "").replace("{", "").replace("}", "")
    s = (
        s.replace("---", "\u2014").replace("--", "\u2013").replace("``", "\u201c").replace("''", "\u201d")
    )  # TeX dashes, quotes
    return re.sub(r"\s+", " ", s).strip()


# --------------------------------------------------------------------------- {dropdown}


class details(nodes.General, nodes.Element):
    """A collapsible block: its first child is a :class:`summary`."""


class summary(nodes.TextElement):
    """The always-visible line of a :class:`details` block."""


class Dropdown(Directive):
    """``{dropdown} Title`` (``:open:`` to show it unfolded, ``:class:`` for more classes)."""

    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec = {"open": directives.flag, "class": directives.class_option, "name": directives.unchanged}

    def run(self):
        title = self.arguments[0] if self.arguments else "Details"
        node = details(classes=["mhanw-dropdown", *self.options.get("class", [])], open="open" in self.options)
        text_nodes, messages = self.state.inline_text(title, self.lineno)
        node += summary(title, "", *text_nodes)
        body = nodes.container(classes=["mhanw-dropdown-body"])
        self.state.nested_parse(self.content, self.content_offset, body)
        node += body
        self.add_name(node)
        return [node, *messages]


def _visit_details(self, node):
    self.body.append(self.starttag(node, "details", "", **({"open": "open"} if node.get("open") else {})))


def _depart_details(self, node):
    self.body.append("</details>\n")


def _visit_summary(self, node):
    self.body.append(self.starttag(node, "summary", ""))


def _depart_summary(self, node):
    self.body.append("</summary>\n")


def _skip(self, node):
    pass


# --------------------------------------------------------------------------- titles


def _plain_long_title(app, doctree):
    """The page's ``<title>`` and search title as plain text (after Sphinx's title collector)."""
    env = app.env
    docname = env.current_document.docname
    node = env.longtitles.get(docname)
    if node is not None and node.findall(lambda n: n.tagname == "math"):
        env.longtitles[docname] = nodes.title(text=plain_tex(node.astext()))


def _plain_page_title(app, pagename, templatename, context, doctree):
    if context.get("title"):
        context["title"] = plain_tex(re.sub(r"<[^>]+>", "", context["title"]))


def _plain_search_titles(app, exception):
    """Section titles of the search index (``alltitles``) as plain text too."""
    if exception is not None:
        return
    path = Path(app.outdir) / "searchindex.js"
    if not path.is_file():
        return
    text = path.read_text(encoding="utf-8")
    m = re.fullmatch(r"(Search\.setIndex\()(.*)(\)\s*)", text, flags=re.S)
    if not m:
        return
    index = json.loads(m.group(2))
    index["titles"] = [plain_tex(t) for t in index.get("titles", [])]
    merged: dict = {}
    for title, where in index.get("alltitles", {}).items():
        merged.setdefault(plain_tex(title), []).extend(where)
    index["alltitles"] = merged
    path.write_text(
        m.group(1) + json.dumps(index, ensure_ascii=False, separators=(",", ":")) + m.group(3), encoding="utf-8"
    )


def setup(app):
    app.add_node(details, html=(_visit_details, _depart_details), latex=(_skip, _skip), text=(_skip, _skip))
    app.add_node(summary, html=(_visit_summary, _depart_summary), latex=(_skip, _skip), text=(_skip, _skip))
    app.add_directive("dropdown", Dropdown)
    app.connect("doctree-read", _plain_long_title, priority=900)
    app.connect("html-page-context", _plain_page_title)
    app.connect("build-finished", _plain_search_titles)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
