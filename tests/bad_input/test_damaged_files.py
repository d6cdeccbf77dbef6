"""A damaged or old file the pipeline reads (a job's timing, reference/performance.json, a run's
run.json, build/stability.json, a claims ledger, a chapter's results) gives one line naming the file,
never a raw KeyError, AttributeError or JSON error that names none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from timeouts import within

from mhanw.pipeline import __main__ as cli
from mhanw.pipeline import book, ledger, measure, robustness, stability

DAMAGED = ["{", "", "\xff\xfe", "[1, 2]", '"text"', "null"]


def _call(monkeypatch, capsys, root: Path, *argv: str) -> tuple[int, str]:
    monkeypatch.setattr(cli, "ROOT", root)
    with within(20.0):
        status = cli.main(list(argv))
    return status, capsys.readouterr().err


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("latin-1") if "\xff" in text else text.encode())
    return path


def _one_line_naming(status: int, err: str, path: Path) -> None:
    assert status == 1, err
    line = err.strip()
    assert line.startswith("*** ") and "\n" not in line and str(path) in line, err


@pytest.mark.parametrize("text", [*DAMAGED, '{"chapter": "x"}', '{"run": "default", "cpu_s": "a lot", "wall_s": 1}'])
def test_a_damaged_or_old_timing_names_its_file(tmp_path, monkeypatch, capsys, text):
    path = _write(tmp_path / "build" / "timings" / "default" / "05_x.json", text)
    _one_line_naming(*_call(monkeypatch, capsys, tmp_path, "timings"), path)


@pytest.mark.parametrize("text", [*DAMAGED, '{"measurements": [{"label": "make all"}]}', '{"measurements": [3]}'])
def test_a_damaged_or_old_performance_file_names_itself(tmp_path, text):
    path = _write(tmp_path / "reference" / "performance.json", text)
    with within(5.0), pytest.raises(measure.MeasureError, match=rf"^{path}: "):
        measure.table(path)


def test_the_books_performance_page_names_a_damaged_performance_file(tmp_path):
    path = _write(tmp_path / measure.DEFAULT_FILE, '{"measurements": [{"label": "old"}]}')
    with pytest.raises(measure.MeasureError, match=rf"^{path}: measurement 0"):
        book.prepare_page(book.MEASURED_MARK, "performance", tmp_path, _Resolver())


class _Resolver:
    def markdown(self, text, where):
        return text


@pytest.mark.parametrize("text", [*DAMAGED, '{"parameters": ["05_x"]}', '{"parameters": {"05_x": 3}}'])
def test_a_damaged_or_old_run_json_names_its_file(tmp_path, text):
    folder = tmp_path / "build" / "scenarios" / "s" / "ledger"
    _write(folder / "claims.json", "[]")
    path = _write(folder / "run.json", text)
    with within(5.0), pytest.raises(ValueError, match=rf"^{path}: "):
        robustness.load_run(folder / "claims.json")


@pytest.mark.parametrize("text", [*DAMAGED, "{}", '{"claim": "x"}', '[{"claim": "x"}]', "[[1]]"])
def test_a_damaged_ledger_names_its_file(tmp_path, monkeypatch, capsys, text):
    path = _write(tmp_path / "build" / "claims.json", text)
    with pytest.raises(ValueError, match=rf"^{path}: "):
        ledger.load_ledger(path)
    _one_line_naming(*_call(monkeypatch, capsys, tmp_path, "verdicts", str(path)), path)


@pytest.mark.parametrize("text", ["{", "[]", '{"claims": []}', '{"claims": [{"claim": "x"}], "seeds": []}'])
def test_a_damaged_or_old_stability_file_names_itself(tmp_path, monkeypatch, capsys, text):
    path = _write(tmp_path / "build" / "stability.json", text)
    with pytest.raises(ValueError, match=rf"^{path}: "):
        stability.load(path)
    (tmp_path / "paper" / "generated").mkdir(parents=True)
    _one_line_naming(*_call(monkeypatch, capsys, tmp_path, "robustness", "--stability"), path)


@pytest.mark.parametrize("text", ["{", "\xff", "[1]"])
def test_a_damaged_results_file_names_itself(tmp_path, text):
    path = _write(tmp_path / "results" / "05_x.json", text)
    with pytest.raises(ValueError, match=rf"^{path}: "):
        ledger.collect(tmp_path / "results")
    with pytest.raises(ValueError, match=rf"^{path}: "):
        ledger.stopped_chapters(tmp_path / "results")


def test_a_good_timing_is_still_read(tmp_path, monkeypatch, capsys):
    t = {"chapter": "05_x", "run": "default", "mode": "full", "fidelity": "quick", "wall_s": 2.0, "cpu_s": 1.5}
    _write(tmp_path / "build" / "timings" / "default" / "05_x.json", json.dumps(t))
    status, err = _call(monkeypatch, capsys, tmp_path, "timings")
    assert status == 0, err
    assert json.loads((tmp_path / "build" / "timings.json").read_text())["total_cpu_s"] == 1.5
