"""One plotting style for every figure, and deterministic saving.

Every notebook calls :func:`use_style` once and saves each figure with
:func:`save`, which writes ``<figures_dir>/<name>.pdf`` (for the paper) and
``<name>.png`` (for reading the notebooks) without timestamps or software
strings, so that two builds give byte-identical files.  Inside a Jupyter
kernel, :func:`save` also shows the PNG as the cell's output, so that the
executed notebook carries every figure where its text discusses it.

Sizes are in inches, for the paper's text width (:data:`TEXT_WIDTH`).  Every
figure must be legible at print size: :func:`legibility_problems` lists what is
not (a figure wider than the text width, visible text under :data:`MIN_TEXT_PT`
points); :func:`save` records the list in the figure's notebook output and, with
``MHANW_STRICT_FIGURES=1`` in the environment, refuses to save such a figure.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import matplotlib
import matplotlib.figure
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from .validate import brief

#: Text width of the companion paper (article, 1 in margins on A4/letter), inches.
TEXT_WIDTH = 6.3
#: Height of a one-row panel figure, inches.
ROW_HEIGHT = 2.35
#: Most panels in one row: at the text width each is then 0.2 in wide, already too narrow to read
#: (10**12 panels asked matplotlib for all of their memory).
MAX_PANELS = 32
#: Largest width or height of a figure, inches (A0 paper is 46.8 in tall; a larger size is a typo).
MAX_INCHES = 100.0
#: Resolution of the PNG copies.
PNG_DPI = 150
#: Smallest legible text at print size (the figure at the text width), points.
MIN_TEXT_PT = 7.0
#: Environment variable that turns the legibility problems of a figure into an error.
STRICT_ENV = "MHANW_STRICT_FIGURES"

_NAME = re.compile(r"^[0-9]{2}_[a-z0-9_]+$")

#: The one error-bar convention of every figure: a bar (or band) reaches this many standard errors on
#: each side of its estimate.  :func:`errorbar` and :func:`half_width` apply it; :data:`ERROR_BARS` says it.
ERROR_BAR_SE = 2
#: The convention as every caption that draws error bars says it.
ERROR_BARS = (
    f"Error bars are \u00b1{ERROR_BAR_SE} Monte Carlo standard errors (paired where settings share replicates)."
)

#: Set by the pipeline for a run that keeps only a chapter's records (:func:`records_only`).
_RECORDS_ONLY = False


def records_only(on: bool) -> None:
    """Make :func:`save` close figures without rendering or writing them (``on=True``), or restore it.

    The pipeline's records mode (seeds, the scenarios' ledgers) keeps a chapter's
    verdict records and macros only; rendering a PDF and a PNG of every figure would
    be most of the cost of a quick chapter.  Names and arguments are still checked.
    """
    global _RECORDS_ONLY
    _RECORDS_ONLY = bool(on)


def use_style() -> None:
    """Set the companion's seaborn theme and matplotlib defaults (idempotent)."""
    sns.set_theme(context="paper", style="whitegrid", palette="colorblind", font_scale=0.95)
    plt.rcParams.update(
        {
            "figure.dpi": 110,
            "figure.constrained_layout.use": True,
            "axes.titlesize": 8.5,
            "axes.labelsize": 8,
            "legend.fontsize": 7,
            "legend.frameon": False,
            "xtick.labelsize": 7,
            "ytick.labelsize": 7,
            "lines.markersize": 4,
            "errorbar.capsize": 2,
            "pdf.fonttype": 42,
            "svg.hashsalt": "mhanw",
            "path.simplify": False,
            # Math in DejaVu Sans, as the default "dejavusans" set, but with primes and
            # missing glyphs from STIX: that set takes them from the bundled BaKoMa (cm*)
            # fonts, whose 'head' timestamps predate 1970 and make fontTools warn on
            # every PDF that embeds them.
            "mathtext.fontset": "custom",
            "mathtext.rm": "DejaVu Sans",
            "mathtext.sf": "DejaVu Sans",
            "mathtext.it": "DejaVu Sans:italic",
            "mathtext.bf": "DejaVu Sans:bold",
            "mathtext.bfit": "DejaVu Sans:italic:bold",
            "mathtext.cal": "DejaVu Sans:italic",
            "mathtext.tt": "DejaVu Sans Mono",
            "mathtext.fallback": "stixsans",
        }
    )


def panels(ncols: int, *, height: float = ROW_HEIGHT, width: float = TEXT_WIDTH, **kwargs):
    """A one-row figure of ``ncols`` panels at the paper's width; returns ``(fig, axes)``."""
    from .validate import positive_int, positive_scalar

    ncols = positive_int(ncols, "ncols", maximum=MAX_PANELS, what="panels in one row")
    height, width = positive_scalar(height, "height"), positive_scalar(width, "width")
    for what, v in (("height", height), ("width", width)):
        if v > MAX_INCHES:
            raise ValueError(f"{what}: expected at most {MAX_INCHES:g} inches, got {brief(v)}")
    fig, axes = plt.subplots(1, ncols, figsize=(width, height), squeeze=False, **kwargs)
    return fig, axes[0]


class SavedFigure(list):
    """The paths ``[pdf, png]`` written by :func:`save`; shows nothing as a cell's value
    (the figure itself is already displayed, and a path would name this machine)."""

    def _ipython_display_(self):
        pass


def _in_kernel() -> bool:
    """True inside a Jupyter kernel (papermill, JupyterLab), False in plain Python."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def caption_text(caption: str | None, error_bars: bool = False) -> str:
    """The caption as displayed: ``caption`` (sentences saying what to see, Markdown with ``$math$``),
    then :data:`ERROR_BARS` when the figure draws error bars.  ``ValueError`` naming ``caption`` when it
    is not a sentence (it must end with a full stop)."""
    if caption is None:
        if error_bars:
            raise ValueError("caption: a figure with error bars needs a caption that says what to see")
        return ""
    if not isinstance(caption, str) or not caption.strip() or not caption.rstrip().endswith((".", ".)")):
        raise ValueError(f"caption: expected one or more sentences ending with a full stop, got {caption!r}")
    return caption.strip() + (" " + ERROR_BARS if error_bars else "")


#: A panel's title that names it: "(a) ...", "(b) ..." (the letter is the panel's name).
_PANEL_TITLE = re.compile(r"^\s*\(([a-z])\)")


def panel_boxes(fig) -> dict[str, list[float]]:
    """Where each panel of a drawn figure lies, for cropping its PNG: ``{name: [left, top, right,
    bottom]}`` as fractions of the image's width and height, measured from its top-left corner, each
    box the panel's axes with its title, labels and tick labels. A panel is named by the letter of
    its title ("(b) the cross term" -> ``"b"``; axes sharing a letter are one panel) and, every
    panel, by its place among the figure's axes in drawing order (``"1"``, ``"2"``, ...; colour bars
    are not panels).  The book's front page shows one panel of a claim's key figure this way."""
    from matplotlib.axes import Axes

    renderer = fig.canvas.get_renderer()
    to_fraction = fig.transFigure.inverted()
    boxes: dict[str, list[float]] = {}

    def add(key, bbox):
        (x0, y0), (x1, y1) = to_fraction.transform([[bbox.x0, bbox.y0], [bbox.x1, bbox.y1]])
        box = [max(0.0, x0), max(0.0, 1 - y1), min(1.0, x1), min(1.0, 1 - y0)]
        if key in boxes:
            old = boxes[key]
            box = [min(old[0], box[0]), min(old[1], box[1]), max(old[2], box[2]), max(old[3], box[3])]
        boxes[key] = box

    place = 0
    for ax in fig.findobj(Axes):
        if not ax.get_visible() or ax.get_label() == "<colorbar>" or hasattr(ax, "_colorbar"):
            continue
        bbox = ax.get_tightbbox(renderer)
        if bbox is None or not np.all(np.isfinite(bbox.extents)):
            continue
        place += 1
        add(str(place), bbox)
        title = next((t for t in (ax.get_title("left"), ax.get_title(), ax.get_title("right")) if t), "")
        m = _PANEL_TITLE.match(title)
        if m:
            add(m.group(1), bbox)
    return {k: [round(float(v), 4) for v in box] for k, box in boxes.items()}


def show_png(
    png: Path, name: str, problems: list[str] | None = None, caption: str = "", panels: dict | None = None
) -> None:
    """Display the PNG file ``png`` as an image output of the running cell, then its caption.

    The output's metadata names the figure (``{"mhanw": {"figure": name}}``), so
    that tools reading the executed notebook can find it, holds its ``caption`` and
    its ``panels`` (:func:`panel_boxes`), and lists its legibility ``problems`` when
    there are any (``"legibility": [...]``; see :func:`legibility_problems`), which the
    tests of a build read.  The caption is shown under the image as Markdown (the book
    renders it as the figure's caption).
    """
    from IPython.display import Image, Markdown, display

    meta: dict[str, object] = {"figure": name}
    if caption:
        meta["caption"] = caption
    if panels:
        meta["panels"] = dict(panels)
    if problems:
        meta["legibility"] = list(problems)
    display(Image(data=Path(png).read_bytes(), format="png"), metadata={"mhanw": meta})
    if caption:
        display(Markdown(f"*{caption}*"), metadata={"mhanw": {"caption_of": name}})


def strict() -> bool:
    """True when ``MHANW_STRICT_FIGURES=1``: :func:`save` refuses an illegible figure."""
    return os.environ.get(STRICT_ENV, "").strip() not in ("", "0")


def _text_role(text) -> str:
    """What a text of a figure is, for a message: tick label, legend, title, ..."""
    from matplotlib.axis import Tick
    from matplotlib.legend import Legend
    from matplotlib.text import Annotation

    for artist in text.figure.findobj(lambda a: isinstance(a, (Tick, Legend))):
        if isinstance(artist, Tick) and (text is artist.label1 or text is artist.label2):
            return "tick label"
        if isinstance(artist, Legend) and (any(text is t for t in artist.get_texts()) or text is artist.get_title()):
            return "legend"
    if isinstance(text, Annotation):
        return "annotation"
    for axes in text.figure.axes:
        if any(
            text is t for t in (axes.title, getattr(axes, "_left_title", None), getattr(axes, "_right_title", None))
        ):
            return "title"
        if text is axes.xaxis.label or text is axes.yaxis.label:
            return "axis label"
    return "text"


def legibility_problems(fig) -> list[str]:
    """What makes ``fig`` illegible when printed at the paper's text width.

    A figure wider than :data:`TEXT_WIDTH` (it would be shrunk, and its text
    with it), and every visible, non-empty text smaller than :data:`MIN_TEXT_PT`
    points: titles, axis and tick labels, legend entries and titles,
    annotations (e.g. the numbers of a heatmap) and free text.  Returns one line
    per problem (texts of one size and kind grouped), ``[]`` when legible.  Tick
    labels are checked as the last drawing left them (:func:`save` calls this
    once the figure is drawn).
    """
    from matplotlib.text import Text

    problems = []
    width, _ = fig.get_size_inches()
    if width > TEXT_WIDTH + 1e-3:
        problems.append(f"{width:.2f} in wide, wider than the text width ({TEXT_WIDTH} in)")
    small: dict[tuple[str, float], list[str]] = {}
    for text in fig.findobj(Text):
        if not text.get_visible() or not text.get_text().strip():
            continue
        size = float(text.get_fontsize())
        if size < MIN_TEXT_PT - 1e-9:
            small.setdefault((_text_role(text), size), []).append(text.get_text().strip())
    for (role, size), texts in sorted(small.items()):
        shown = ", ".join(repr(t) for t in texts[:3]) + (f" and {len(texts) - 3} more" if len(texts) > 3 else "")
        problems.append(f"{role} at {size:g} pt: {shown}")
    return problems


def save(fig, name: str, figures_dir, caption: str | None = None, *, error_bars: bool = False) -> SavedFigure:
    """Save ``fig`` as ``<figures_dir>/<name>.pdf`` and ``.png``, show it with its caption, and close it.

    ``caption``: what the reader should see in the figure, in sentences (Markdown,
    ``$math$`` allowed); ``error_bars=True`` adds the one convention of every
    figure, :data:`ERROR_BARS` (a figure with error bars must have a caption).

    ``name`` must look like ``NN_slug`` (two digits, lower case), the notebook's
    name optionally followed by ``_panel``: the pipeline publishes only the
    figures whose name starts with the notebook's.  Metadata that would change
    from build to build (dates, software versions in PNG) is left out.  In a
    Jupyter kernel the PNG is displayed as the cell's output (see
    :func:`show_png`).  Returns the two paths (a list that displays nothing).

    The drawn figure is checked by :func:`legibility_problems`: with
    ``MHANW_STRICT_FIGURES=1`` a problem raises ``ValueError`` (naming ``fig``)
    and nothing is written; otherwise the problems go into the displayed
    output's metadata, where the tests of a build find them.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"name: expected 'NN_slug' (two digits, lower-case words), got {brief(name)}")
    if not isinstance(fig, matplotlib.figure.Figure):
        raise ValueError(f"fig: expected a matplotlib Figure, got {type(fig).__name__}")
    if not isinstance(figures_dir, (str, os.PathLike)) or not str(figures_dir).strip():
        raise ValueError(f"figures_dir: expected a folder path, got {brief(figures_dir)}")
    _check_size(fig)
    out = Path(figures_dir)
    text = caption_text(caption, error_bars)
    if _RECORDS_ONLY:
        plt.close(fig)
        return SavedFigure([])
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in its place, no permission
        plt.close(fig)
        raise ValueError(f"figures_dir: cannot make the folder {str(out)!r}: {exc.strerror or exc}") from None
    pdf, png = out / f"{name}.pdf", out / f"{name}.png"
    # Both files are written under temporary names in the same directory and
    # renamed only when both succeeded: a failing save leaves the previous
    # pair (or nothing) and never a truncated file or a PDF without its PNG.
    tmp_pdf = _temporary(out, pdf.name)
    tmp_png = _temporary(out, png.name)
    try:
        _draw(
            fig,
            name,
            lambda: fig.savefig(
                tmp_pdf, format="pdf", metadata={"CreationDate": None, "ModDate": None, "Creator": None}
            ),
        )
        # checked once drawn: tick labels get their text when the figure is drawn
        problems = legibility_problems(fig)
        if problems and strict():
            plt.close(fig)
            raise ValueError(
                f"fig: figure {name} is not legible at print size (at most {TEXT_WIDTH} in wide, "
                f"no text under {MIN_TEXT_PT:g} pt): " + "; ".join(problems)
            )
        _draw(fig, name, lambda: fig.savefig(tmp_png, format="png", dpi=PNG_DPI, metadata={"Software": None}))
        panels = panel_boxes(fig)
        _replace_pair((tmp_png, png), (tmp_pdf, pdf), _temporary(out, png.name + ".old"))
    finally:
        for tmp in (tmp_pdf, tmp_png):
            if tmp.exists():
                tmp.unlink()
    plt.close(fig)
    if _in_kernel():
        show_png(png, name, problems, text, panels)
    return SavedFigure([pdf, png])


def _check_size(fig) -> None:
    """``ValueError`` naming ``fig`` unless its size is finite, positive and at most :data:`MAX_INCHES`
    (a NaN or huge size reached the PDF backend, which failed with a message naming neither)."""
    width, height = (float(v) for v in fig.get_size_inches())
    for what, v in (("width", width), ("height", height)):
        if not (np.isfinite(v) and 0 < v <= MAX_INCHES):
            plt.close(fig)
            raise ValueError(f"fig: expected a figure {what} in (0, {MAX_INCHES:g}] inches, got {brief(v)}")


def _draw(fig, name: str, write) -> None:
    """``write()`` (a savefig); a text matplotlib cannot draw (a label's maths) becomes one line naming ``fig``."""
    try:
        write()
    except (ValueError, OverflowError, RecursionError) as exc:  # bad text, sizes, a label nested too deep
        plt.close(fig)
        reason = " ".join(str(exc).split())
        raise ValueError(f"fig: matplotlib cannot draw figure {name} ({type(exc).__name__}: {reason[:200]})") from None


def _replace_pair(first: tuple[Path, Path], second: tuple[Path, Path], backup: Path) -> None:
    """Rename two finished temporaries onto their targets as one step: when the second rename
    fails, the first target is put back as it was (``backup`` holds its old bytes), so a
    PNG never sits beside a PDF of another drawing."""
    (tmp1, target1), (tmp2, target2) = first, second
    had_first = target1.exists()
    try:
        if had_first:
            shutil.copy2(target1, backup)
        os.replace(tmp1, target1)
        try:
            os.replace(tmp2, target2)
        except BaseException:
            if had_first:
                os.replace(backup, target1)
            else:
                target1.unlink(missing_ok=True)
            raise
    finally:
        backup.unlink(missing_ok=True)


def _temporary(directory: Path, name: str) -> Path:
    """A new empty file in ``directory`` for writing ``name`` before its rename."""
    from .texout import new_file_mode

    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=".tmp")
    os.close(fd)
    os.chmod(tmp, new_file_mode())  # a figure is an ordinary file, not a private one
    return Path(tmp)


def half_width(se):
    """The half-width of an error bar or band for standard errors ``se`` (a number or an array):
    :data:`ERROR_BAR_SE` times ``se``.  For plots drawn without :func:`errorbar` (bands, heatmaps)."""
    if se is None or isinstance(se, (str, bytes, dict)):
        raise ValueError(f"se: expected standard errors, got {brief(se)}")
    try:
        raw = np.asarray(se, dtype=float)
    except (TypeError, ValueError, OverflowError):  # 10**400, a ragged list, objects
        raise ValueError(
            f"se: expected standard errors (real numbers within a double's range), got {brief(se)}"
        ) from None
    out = ERROR_BAR_SE * raw
    if np.any(out < 0):
        raise ValueError("se: a standard error is negative")
    return out


def errorbar(ax, x, mean, se, *, label=None, **kwargs):
    """Points with error bars of the one convention, +-:data:`ERROR_BAR_SE` standard errors.

    ``se`` is the Monte Carlo standard error the caller computed (not the bar's half-width), in the
    units of ``mean``.  ``x`` and ``mean`` have one size (a NaN leaves a gap); ``se`` has that size or
    is one number."""
    for name, v in (("x", x), ("mean", mean), ("se", se)):
        if v is None or isinstance(v, (str, bytes, dict)):
            raise ValueError(f"{name}: expected numbers, got {brief(v)}")
    n_x, n_mean, n_se = np.size(x), np.size(mean), np.size(se)
    if n_mean != n_x or n_se not in (1, n_x):
        raise ValueError(f"mean, se: expected one value per x ({n_x}), got {n_mean} and {n_se}")
    kwargs.setdefault("marker", "o")
    kwargs.setdefault("linestyle", "-")
    return ax.errorbar(x, mean, yerr=half_width(se), label=label, **kwargs)


__all__ = [
    "TEXT_WIDTH",
    "ROW_HEIGHT",
    "MIN_TEXT_PT",
    "use_style",
    "panels",
    "save",
    "show_png",
    "errorbar",
    "half_width",
    "ERROR_BAR_SE",
    "ERROR_BARS",
    "legibility_problems",
    "strict",
]

if os.environ.get("MPLBACKEND", "").lower() not in ("", "agg"):
    matplotlib.use("Agg", force=True)
