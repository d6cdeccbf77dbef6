"""Sphinx configuration of the companion's book (`make book`).

The sources are assembled by :mod:`mhanw.pipeline.book` in ``build/book-src/``:
the executed chapters (``build/notebooks/*.ipynb``, never executed again), a
front page, the ledger page, any ``book/*.md`` page and the API reference's
module pages.  The book's own
directives (``{dropdown}``) and plain page titles come from
:mod:`mhanw.pipeline.sphinxext`.  Everything a page needs is in the
output folder (MathJax from the ``sphinx-mathjax-offline`` package, the paper
PDF, the figures), so the book reads without a network.  Every page opens with one line saying
at which size (quick or paper) and from which commit the book was built (``build_info.json``).
"""

import json
from pathlib import Path

project = "mhanw"
author = "the mhanw companion"
copyright = "2026, the mhanw companion"

extensions = [
    "myst_nb",
    "sphinx-mathjax-offline",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "mhanw.pipeline.sphinxext",
]

# The API reference (api.md and api/mhanw.NAME.md, written by mhanw.pipeline.book): autodoc imports the
# library; numpydoc renders the numpy-style sections (Parameters, Returns, Raises, ...).
autosummary_generate = False  # the module pages are written by the book's build, not by autosummary
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the numpydoc sections give the types, with shapes
numpydoc_show_class_members = False  # autoclass :members: lists them, with their own docstrings
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# Executed by the pipeline; the book only reads the outputs.
nb_execution_mode = "off"
nb_output_stderr = "show"  # none is expected; tests/test_book.py fails on any
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_dmath_double_inline = True  # $$...$$ inside a paragraph or list item, as the chapters write it
nb_render_markdown_format = "myst"  # markdown outputs (derivations) may hold $math$ too
myst_heading_anchors = 3
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]

master_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
html_theme = "alabaster"
html_theme_options = {
    "page_width": "1180px",
    "sidebar_width": "250px",
    "fixed_sidebar": True,
    "show_relbars": True,
    "font_family": "DejaVu Sans, Verdana, sans-serif",
    "head_font_family": "DejaVu Sans, Verdana, sans-serif",
    "code_font_family": "DejaVu Sans Mono, monospace",
}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}
html_static_path = ["_static"]
html_extra_path = ["extra"]
html_css_files = ["mhanw.css"]
html_title = "mhanw: the chapters"
html_show_sourcelink = False
html_copy_source = False
html_last_updated_fmt = None
html_show_sphinx = False


# What the book is (its size and commit): written by mhanw.pipeline.book (build_info) beside this file.
_BUILD_INFO = Path(__file__).with_name("build_info.json")


def _build_line(app, pagename, templatename, context, doctree):
    """Every page with a body opens with the line that says at which size and from which commit it was built."""
    if "body" in context and _BUILD_INFO.is_file():
        context["body"] = json.loads(_BUILD_INFO.read_text(encoding="utf-8"))["html"] + context["body"]


def setup(app):
    app.connect("html-page-context", _build_line)
    # SVG output: no web fonts, which browsers refuse to load from file:// pages.
    app.config.mathjax_path = "mathjax/tex-svg.js"
    # MathJax on every page: chapter titles with math appear in every page's navigation.
    app.set_html_assets_policy("always")
