"""Scenario values and files that must be refused before a chapter runs, and damaged model files.

A scenario (``scenarios/*.toml``) changes chapter parameters; every value is
checked against the range its chapter declares (``PARAMETERS`` of
``mhanw.chapters.chNN_slug``, one range check in :mod:`mhanw.infra.params` for a
notebook's parameters and a scenario's alike).  A Monte Carlo count far beyond
its default would run for days, a bandwidth of 1e-300 or a noise level of 1e308
describes no experiment, a value nested hundreds of lists deep exhausted the
stack, and a FIFO was reported as a missing file.  Each is one
:class:`~mhanw.pipeline.scenarios.ScenarioError` line naming the chapter (or
table) and the parameter.

A damaged ``config.json`` of the pretrained model (chapter 09) is refused with
:class:`~mhanw.pretrained.ModelFileError` naming it and the field, on one line,
before a weight is read: a config without ``model_type`` raised
NotImplementedError, and ``num_hidden_layers = 10**9`` was blamed on
``model.safetensors`` (which lacked layer 6).
"""

from __future__ import annotations

import importlib
import json
import os

import pytest
from nbtools import ROOT
from test_bad_input_pretrained import MODEL, _assert_names_file_and_fix, model_copy  # noqa: F401
from test_bad_input_pretrained import pytestmark as needs_model

from mhanw import pretrained
from mhanw.infra import params as P
from mhanw.pipeline import chapters, scenarios

CHAPTER_NAMES = chapters.names(ROOT)


def _module(name: str):
    return importlib.import_module(chapters.Chapter(name, ROOT / "notebooks" / f"{name}.md").module)


def _load(tmp_path, text: str):
    path = tmp_path / "mine.toml"
    path.write_text(text)
    return scenarios.load(path, ROOT)


def _refused(tmp_path, text: str) -> str:
    with pytest.raises(scenarios.ScenarioError) as info:
        _load(tmp_path, text)
    message = str(info.value)
    assert "\n" not in message and len(message) < 1000, message
    return message


# ---- every numeric parameter has a range --------------------------------------------------------------


@pytest.mark.parametrize("name", CHAPTER_NAMES)
def test_every_numeric_parameter_of_every_chapter_declares_both_ends_of_its_range(name):
    assert P.unbounded(_module(name).PARAMETERS) == []


@pytest.mark.parametrize("name", CHAPTER_NAMES)
def test_the_defaults_lie_inside_the_declared_ranges(name):
    module = _module(name)
    defaults = chapters.declared(ROOT / "notebooks" / f"{name}.md")
    P.check_parameters(defaults, module.PARAMETERS, getattr(module, "CONSTRAINTS", ()))


def test_unbounded_finds_a_number_without_an_end_also_inside_lists():
    spec = {
        "a": P.positive_int(),
        "b": P.optional(P.sequence(P.real(0.0))),
        "c": P.positive_int(1, 10),
        "d": P.bandwidth(),
        "e": P.choice("x", "y"),
    }
    assert P.unbounded(spec) == ["a", "b"]


# ---- values out of range: refused by the scenario check, naming chapter and parameter -------------------


@pytest.mark.parametrize(
    "table, key, value, chapter",
    [
        ("all", "n_jobs", "1000000", "04_head_diversity_index"),
        ("all", "n_jobs", "1e6", "04_head_diversity_index"),
        ("chapters.03_covariance_bound", "symbolic_bandwidth", "1e-300", "03_covariance_bound"),
        ("all", "sigma", "1e308", "01_attention_is_nadaraya_watson"),
        ("all", "bandwidth", "1e-300", "02_bias_variance_covariance"),
        ("chapters.09_pretrained_head_diversity", "n_perm", "100000000", "09_pretrained_head_diversity"),
        ("chapters.09_pretrained_head_diversity", "n_perm_spearman", "100000000", "09_pretrained_head_diversity"),
        ("chapters.10_training_heads", "n_seeds", "100000000", "10_training_heads"),
        ("chapters.10_training_heads", "penalty", "1e300", "10_training_heads"),
        ("chapters.01_attention_is_nadaraya_watson", "beta", "1e-300", "01_attention_is_nadaraya_watson"),
        ("chapters.01_attention_is_nadaraya_watson", "consistency_query", "1e308", "01_attention_is_nadaraya_watson"),
        (
            "chapters.01_attention_is_nadaraya_watson",
            "sample_sizes",
            "[100, 100000000000]",
            "01_attention_is_nadaraya_watson",
        ),
        ("chapters.02_bias_variance_covariance", "n_train", "10000000", "02_bias_variance_covariance"),
        ("chapters.02_bias_variance_covariance", "pair_point", "[0.0, 1e300, 0.0, 0.0]", "02_bias_variance_covariance"),
        ("chapters.06_optimal_head_size", "sim_n", "[300, 1000000000]", "06_optimal_head_size"),
        ("chapters.08_ensembles_across_domains", "bandwidths", "[0.1, 1e300]", "08_ensembles_across_domains"),
        ("chapters.04_head_diversity_index", "matched_configs", "100000000", "04_head_diversity_index"),
        ("all", "seed", str(2**64), "01_attention_is_nadaraya_watson"),
    ],
)
def test_a_value_outside_its_declared_range_is_refused_naming_chapter_and_parameter(
    tmp_path, table, key, value, chapter
):
    message = _refused(tmp_path, f"[{table}]\n{key} = {value}\n")
    assert f"{chapter}: {key}" in message and "expected" in message


@pytest.mark.parametrize(
    "module, key, value",
    [
        ("ch09_pretrained_head_diversity", "n_perm", 10**8),
        ("ch10_training_heads", "n_seeds", 10**8),
        ("ch03_covariance_bound", "symbolic_bandwidth", 1e-300),
        ("ch04_head_diversity_index", "sigma", 1e308),
        ("ch04_head_diversity_index", "n_jobs", 10**6),
        ("ch04_head_diversity_index", "n_jobs", 10**400),
    ],
)
def test_the_same_range_holds_for_a_notebook_parameter(module, key, value):
    kind = importlib.import_module(f"mhanw.chapters.{module}").PARAMETERS[key]
    with pytest.raises(P.ParameterError, match=rf"^{key}: expected .*\(.+\), got "):  # the why of the range
        kind.check(value, key)


@pytest.mark.parametrize(
    "table, key, value",
    [
        ("chapters.09_pretrained_head_diversity", "n_perm", "50000"),  # the top of the range
        ("chapters.10_training_heads", "n_seeds", "500"),
        ("all", "sigma", "100.0"),
        ("all", "bandwidth", "0.001"),
        ("all", "n_jobs", "256"),
    ],
)
def test_a_value_at_the_end_of_its_range_is_accepted(tmp_path, table, key, value):
    scenario = _load(tmp_path, f"[{table}]\n{key} = {value}\n")
    assert scenario.changed


@pytest.mark.parametrize("path", sorted((ROOT / "scenarios").glob("*.toml")), ids=lambda p: p.stem)
def test_the_shipped_scenarios_still_load(path):
    assert scenarios.load(path, ROOT).changed


# ---- the shape of a value: depth and size, without recursion -------------------------------------------


@pytest.mark.parametrize("depth", [4, 50, 400, 900])
def test_a_value_nested_deeply_is_one_error_not_a_recursion_error(tmp_path, depth):
    message = _refused(tmp_path, "[all]\nsigma = " + "[" * depth + "]" * depth + "\n")
    # by the value's check, or (deeper than the TOML reader's stack) by the reader, naming the file
    assert message.endswith(
        ("[all] sigma: lists nested more than 3 deep", "mine.toml: nested too deeply to be a scenario")
    )


def test_a_file_of_nothing_but_brackets_is_one_error(tmp_path):
    message = _refused(tmp_path, "[all]\nsigma = " + "[" * 500_000 + "\n")
    assert "mine.toml" in message


@pytest.mark.parametrize(
    "text",
    [
        "[chapters.07_structured_weighting]\nangles_deg = [" + ", ".join(["1"] * 200_000) + "]\n",
        "[chapters.02_bias_variance_covariance]\npoints = [" + ", ".join(["[1.0, 1.0]"] * 6_000) + "]\n",
    ],
)
def test_a_value_of_too_many_entries_is_refused_before_a_chapter_sees_it(tmp_path, text):
    message = _refused(tmp_path, text)
    assert "more than 10000 entries" in message


def test_a_message_shows_a_long_value_shortened(tmp_path):
    # 9000 angles pass the shape check; the chapter's constraint (len + 1 <= d) printed all of them
    message = _refused(
        tmp_path, "[chapters.07_structured_weighting]\nangles_deg = [" + ", ".join(["1"] * 9_000) + "]\n"
    )
    assert message.count("1.0") < 100 and "angles_deg" in message


@pytest.mark.parametrize("value", ["{ a = 1 }", "[{ a = 1 }]", "1979-05-27T07:32:00Z", "[[1, 2], [3, { b = 2 }]]"])
def test_a_value_that_is_not_a_literal_is_refused(tmp_path, value):
    message = _refused(tmp_path, f"[all]\nsigma = {value}\n")
    assert "[all] sigma: expected a string, number, boolean or a list" in message


# ---- the scenario file itself ---------------------------------------------------------------------------


def test_a_fifo_is_refused_as_not_a_regular_file_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    with pytest.raises(scenarios.ScenarioError, match=r"pipe\.toml: is a FIFO \(named pipe\), expected a regular"):
        scenarios.load(fifo, ROOT)


def test_a_device_is_refused_as_not_a_regular_file():
    with pytest.raises(scenarios.ScenarioError, match=r"^/dev/null: is a character device, expected a regular"):
        scenarios.load("/dev/null", ROOT)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: None, "no such scenario file"),
        (lambda p: p.mkdir(), "is a folder"),
        (
            lambda p: p.write_bytes(b"#" * (scenarios.MAX_BYTES + 1)),
            f"a scenario file is at most {scenarios.MAX_BYTES}",
        ),
        (lambda p: p.write_bytes(b"[all]\nsigma = 0.7\n\xff"), "not UTF-8"),
    ],
)
def test_a_bad_scenario_path_is_named(tmp_path, make, message):
    path = tmp_path / "mine.toml"
    make(path)
    with pytest.raises(scenarios.ScenarioError, match=rf"^{path}: .*{message}"):
        scenarios.load(path, ROOT)


def test_a_file_that_cannot_be_read_is_named(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    path = tmp_path / "mine.toml"
    path.write_text("[all]\nsigma = 0.7\n")
    path.chmod(0)
    with pytest.raises(scenarios.ScenarioError, match=rf"^{path}: cannot be opened"):
        scenarios.load(path, ROOT)


def test_a_symlink_to_a_scenario_loads(tmp_path):
    target = tmp_path / "real.toml"
    target.write_text("[all]\nsigma = 0.7\n")
    (tmp_path / "link.toml").symlink_to(target)
    assert scenarios.load(tmp_path / "link.toml", ROOT).params_for("02_bias_variance_covariance") == {"sigma": 0.7}


# ---- damaged model configuration: ModelFileError naming config.json and the field, on one line ------------


def _write_config(path, **changes):
    cfg = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            cfg.pop(key, None)
        else:
            cfg[key] = value
    path.write_text(json.dumps(cfg))


LOADERS = {
    "model_config": lambda: pretrained.model_config(MODEL),
    "load_attention_weights": lambda: pretrained.load_attention_weights(MODEL),
    "Encoder": lambda: pretrained.Encoder(MODEL),
}


@needs_model
@pytest.mark.parametrize("loader", sorted(LOADERS))
@pytest.mark.parametrize(
    "key, value",
    [
        ("model_type", None),
        ("model_type", "gpt2"),
        ("model_type", 7),
        ("hidden_act", None),
        ("hidden_act", "relu"),
        ("position_embedding_type", "relative_key"),
        ("num_hidden_layers", 10**9),
        ("num_hidden_layers", 10**400),
        ("num_attention_heads", 10**6),
        ("hidden_size", 2**40),
        ("intermediate_size", 10**12),
        ("vocab_size", -3),
        ("max_position_embeddings", 10**9),
        ("num_hidden_layers", "6"),
        ("num_hidden_layers", [6]),
        ("num_hidden_layers", 6.5),
        ("num_hidden_layers", True),
        ("layer_norm_eps", 10**400),
        ("layer_norm_eps", 1e308),
        ("layer_norm_eps", 0.0),
        ("pad_token_id", 10**8),
    ],
)
def test_a_bad_config_field_names_config_json_and_the_field_on_one_line(model_copy, loader, key, value):
    path = model_copy / "config.json"
    _write_config(path, **{key: value})
    with pytest.raises(pretrained.ModelFileError) as info:
        LOADERS[loader]()
    message = str(info.value)
    assert message.startswith(f"{path}: '{key}': ") and "expected" in message, message
    assert "\n" not in message and len(message) < 600, message
    _assert_names_file_and_fix(info, path)


@needs_model
def test_a_config_field_is_checked_before_any_weight_is_read(model_copy, monkeypatch):
    _write_config(model_copy / "config.json", num_hidden_layers=10**9)

    def no_weights(*args, **kwargs):
        raise AssertionError("the weights were read before config.json was checked")

    monkeypatch.setattr(pretrained, "load_tensors", no_weights)
    with pytest.raises(
        pretrained.ModelFileError,
        match=r"config\.json: 'num_hidden_layers': expected an integer "
        r"from 1 to 256, found 1000000000 ",
    ):
        pretrained.load_attention_weights(MODEL)


@needs_model
@pytest.mark.parametrize("text", ["[" * 100_000, " " * (pretrained.MAX_CONFIG_BYTES + 1), "[1, 2]", "{"])
def test_a_config_that_is_no_json_object_is_one_line(model_copy, text):
    path = model_copy / "config.json"
    path.write_text(text)
    with pytest.raises(pretrained.ModelFileError) as info:
        pretrained.model_config(MODEL)
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)
    _assert_names_file_and_fix(info, path)


@needs_model
def test_a_pooling_other_than_the_mean_is_a_damaged_file(model_copy):
    path = model_copy / "1_Pooling" / "config.json"
    if not path.exists():
        pytest.skip("the package ships no pooling configuration")
    cfg = json.loads(path.read_text())
    cfg.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    path.write_text(json.dumps(cfg))
    with pytest.raises(pretrained.ModelFileError, match=r"pooling modes: expected only 'pooling_mode_mean_tokens'"):
        pretrained.model_config(MODEL)


@needs_model
def test_every_model_file_error_is_one_line(model_copy):
    # a damaged weights file: the safetensors library's error, folded onto the line
    weights = model_copy / "model.safetensors"
    data = weights.read_bytes()
    weights.unlink()
    weights.write_bytes(data[:1000])
    with pytest.raises(pretrained.ModelFileError) as info:
        pretrained.load_tensors(MODEL)
    assert str(info.value).startswith(f"{weights}: ") and "\n" not in str(info.value)


@needs_model
def test_the_intact_model_still_loads_with_its_sizes():
    cfg = pretrained.model_config(MODEL)
    assert (cfg["n_layers"], cfg["n_heads"], cfg["d_model"], cfg["max_seq_length"]) == (6, 12, 384, 256)


@pytest.mark.parametrize("bad", [None, 3, b"x.toml", "/tmp/a\x00b.toml"])
def test_a_scenario_path_that_is_not_a_path_is_named(bad):
    """None, a number or a path with a NUL byte: one ScenarioError naming ``path`` (raw TypeError or
    'embedded null byte' before)."""
    from pathlib import Path

    from mhanw.pipeline import scenarios

    with pytest.raises(scenarios.ScenarioError, match=r"^path: "):
        scenarios.load(bad, Path("."))
