"""mhanw.infra.figures: the legibility check of a figure at print size.

A figure at the text width with text of at least 7 pt passes; one that is wider,
or whose tick labels, legend, annotations or title are smaller, is listed, and
with ``MHANW_STRICT_FIGURES=1`` :func:`figures.save` refuses it (ValueError naming
``fig``) and writes nothing.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from mhanw.infra import figures


@pytest.fixture(autouse=True)
def style():
    figures.use_style()
    yield
    plt.close("all")


def legible_figure():
    fig, axes = figures.panels(2)
    axes[0].plot([0, 1], [0, 1], label="averaged")
    axes[0].legend(title="rule")
    axes[0].set_title("(a) a title")
    axes[1].imshow([[0, 1], [1, 0]])
    axes[1].annotate("0.5", (0, 0), fontsize=7)
    fig.canvas.draw()
    return fig


def test_the_style_itself_is_legible():
    assert figures.legibility_problems(legible_figure()) == []


@pytest.mark.parametrize(
    "spoil, role",
    [
        (lambda fig, ax: ax.tick_params(labelsize=6.5), "tick label at 6.5 pt"),
        (lambda fig, ax: ax.legend(fontsize=6), "legend at 6 pt"),
        (lambda fig, ax: ax.annotate("0.13", (0, 0), fontsize=5.5), "annotation at 5.5 pt: '0.13'"),
        (lambda fig, ax: ax.set_title("(b)", fontsize=6), "title at 6 pt: '(b)'"),
        (lambda fig, ax: ax.set_xlabel("n", fontsize=6), "axis label at 6 pt: 'n'"),
        (lambda fig, ax: fig.text(0.5, 0.5, "free", fontsize=4), "text at 4 pt: 'free'"),
    ],
)
def test_small_text_is_listed_by_kind(spoil, role):
    fig = legible_figure()
    spoil(fig, fig.axes[0])
    fig.canvas.draw()
    problems = figures.legibility_problems(fig)
    assert len(problems) == 1 and role in problems[0], problems


def test_invisible_and_empty_texts_do_not_count():
    fig = legible_figure()
    fig.axes[0].annotate("hidden", (0, 0), fontsize=5).set_visible(False)
    fig.axes[0].annotate("  ", (0, 0), fontsize=5)
    assert figures.legibility_problems(fig) == []


def test_a_figure_wider_than_the_text_is_listed():
    fig = plt.figure(figsize=(figures.TEXT_WIDTH + 0.5, 2))
    assert figures.legibility_problems(fig) == [f"6.80 in wide, wider than the text width ({figures.TEXT_WIDTH} in)"]


def test_strict_save_refuses_an_illegible_figure_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(figures.STRICT_ENV, "1")
    fig = legible_figure()
    fig.axes[1].annotate("0.13", (0, 0), fontsize=5)
    with pytest.raises(ValueError, match=r"^fig: figure 01_x is not legible.*annotation at 5 pt"):
        figures.save(fig, "01_x", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_strict_save_accepts_a_legible_figure(tmp_path, monkeypatch):
    monkeypatch.setenv(figures.STRICT_ENV, "1")
    pdf, png = figures.save(legible_figure(), "01_x", tmp_path)
    assert pdf.is_file() and png.is_file()


def test_without_strict_mode_save_writes_an_illegible_figure(tmp_path, monkeypatch):
    monkeypatch.delenv(figures.STRICT_ENV, raising=False)
    fig = legible_figure()
    fig.axes[0].tick_params(labelsize=5)
    pdf, png = figures.save(fig, "01_x", tmp_path)
    assert pdf.is_file() and png.is_file()
