"""Tests of mhanw.pipeline.measure: the measurement records behind the book's Performance page."""

import sys

import pytest

from mhanw.pipeline import measure


def test_a_measurement_counts_the_cpu_of_the_children_and_is_kept(tmp_path):
    code = "import os\ns=0\nif os.fork()==0:\n    for i in range(2_000_000): s+=i\n    os._exit(0)\nos.wait()"
    record = measure.run("two processes", [sys.executable, "-c", code], tmp_path, note="n")
    assert record["exit_status"] == 0 and record["cpu_s"] > 0.02 and record["wall_s"] >= record["cpu_s"] / 2 - 1
    assert record["cpus"] >= 1 and record["note"] == "n"
    path = tmp_path / "perf.json"
    measure.append(path, record)
    measure.append(path, {**record, "cpu_s": 1.5})  # same label and commit: replaced, not repeated
    rows = measure.load(path)
    assert len(rows) == 1 and rows[0]["cpu_s"] == 1.5
    text = measure.table(path)
    assert "| two processes |" in text and "| 2 |" not in text.splitlines()[0]


def test_a_failed_command_is_recorded_with_its_status(tmp_path):
    record = measure.run("fails", [sys.executable, "-c", "raise SystemExit(3)"], tmp_path)
    assert record["exit_status"] == 3
    path = tmp_path / "p.json"
    measure.append(path, record)
    assert "(exit status 3)" in measure.table(path)


@pytest.mark.parametrize(
    "label, command, words",
    [("", ["true"], "^label: "), ("x", [], "^command: "), ("x", ["/no/such/program"], "^command: ")],
)
def test_bad_arguments_are_one_line_errors(tmp_path, label, command, words):
    with pytest.raises(measure.MeasureError, match=words):
        measure.run(label, command, tmp_path)


@pytest.mark.parametrize("text", ["{", "[]", '{"measurements": 3}', "\udcff"])
def test_a_bad_measurements_file_is_refused(tmp_path, text):
    path = tmp_path / "p.json"
    path.write_text(text, encoding="utf-8", errors="surrogateescape")
    with pytest.raises(measure.MeasureError, match=str(path)):
        measure.load(path)


def test_no_file_is_an_empty_table(tmp_path):
    assert measure.load(tmp_path / "none.json") == [] and "No measurement" in measure.table(tmp_path / "none.json")
