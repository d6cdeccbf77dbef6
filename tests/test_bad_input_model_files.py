"""Every file of the pretrained model is required and checked before it is used (chapter 09).

The loaders of :mod:`mhanw.pretrained` read six files (:data:`~mhanw.pretrained.MODEL_FILES`).  A
copy of the model folder that lacked ``sentence_bert_config.json`` loaded silently and truncated at
512 tokens instead of 256, so a long sentence got another embedding; a FIFO in place of a
configuration file was read as if absent, and a FIFO or ``/dev/zero`` that were read would never
end.  Each file must now be the regular file pip installed, and a missing one is a
:class:`~mhanw.pretrained.ModelFileError` naming it.  The integers of a configuration file are read
with at most 18 digits (the setting is named, not Python's 4300-digit limit), and every tensor's
dtype and shape is checked against what ``config.json`` implies when the weights are read.  The
damaged copies are made by the fixture of ``test_bad_input_pretrained`` (a patched ``model_path``).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import importlib
import json
import os
import re
import shutil
import signal
import struct
import sys

import numpy as np
import pytest
from test_bad_input_pretrained import MODEL, _assert_names_file_and_fix, model_copy, pytestmark  # noqa: F401

from mhanw import pretrained

LOADERS = {
    "model_config": lambda: pretrained.model_config(MODEL),
    "load_attention_weights": lambda: pretrained.load_attention_weights(MODEL),
    "Encoder": lambda: pretrained.Encoder(MODEL),
    "verify_files": lambda: pretrained.verify_files(MODEL),
}


@pytest.fixture(autouse=True)
def no_hang():
    """A Python reader blocked on a FIFO or reading /dev/zero fails the test after 30 s instead of hanging
    it (a read inside the tokenizers or safetensors libraries is not interrupted: those files are
    checked before either library sees them)."""

    def alarm(signum, frame):
        raise TimeoutError("a model file was read that never ends")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(30)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def _one_line_naming(info, path):
    _assert_names_file_and_fix(info, path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message and len(message) < 700, message
    return message


def _replace(path, make):
    """Remove ``path`` (a file, or a symlink) and put ``make(path)`` in its place."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
    make(path)


def _consistent_record(folder, monkeypatch):
    """The pinned hashes as if the damaged files were the package's: the hash check passes, so the parsers and
    the consistency checks behind it are what is tested."""
    recorded = {}
    for name in pretrained.MODEL_FILES:
        data = (folder / name).read_bytes()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
        recorded[name] = ("sha256", digest, len(data))
    monkeypatch.setattr(pretrained, "_expected_hashes", lambda model: recorded)


def _edit_json(path, **changes):
    doc = json.loads(path.read_text())
    doc.update(changes)
    path.write_text(json.dumps(doc, indent=2))


def _header(folder) -> dict:
    with open(folder / "model.safetensors", "rb") as handle:
        return json.loads(handle.read(struct.unpack("<Q", handle.read(8))[0]))


def _edit_header(folder, change, extra_data=b""):
    """Rewrite ``model.safetensors`` with ``change(header)`` applied to its JSON header (same data, and
    ``extra_data`` after it)."""
    path = folder / "model.safetensors"
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + n])
    change(header)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.unlink()  # the fixture's symlink to the installed file
    path.write_bytes(struct.pack("<Q", len(text)) + text + raw[8 + n :] + extra_data)
    return path


# ---- every file the loaders read is required and a regular file ---------------------------------------


@pytest.mark.parametrize("loader", sorted(LOADERS))
@pytest.mark.parametrize("name", pretrained.MODEL_FILES)
def test_a_missing_model_file_is_named_before_anything_is_loaded(model_copy, monkeypatch, name, loader):
    path = model_copy / name
    path.unlink()

    def nothing_read(*args, **kwargs):
        raise AssertionError("a file was read before the missing one was named")

    monkeypatch.setattr(pretrained, "_read_json", nothing_read)
    with pytest.raises(pretrained.ModelFileError, match=r": missing \(no such file\)") as info:
        LOADERS[loader]()
    _one_line_naming(info, path)


def test_without_the_sentence_transformers_config_the_model_does_not_truncate_at_512(model_copy):
    # the max_seq_length 256 of sentence_bert_config.json became 512 (max_position_embeddings) without it
    (model_copy / "sentence_bert_config.json").unlink()
    for load in (LOADERS["model_config"], lambda: pretrained.encode(["a second sentence " * 100], MODEL)):
        with pytest.raises(pretrained.ModelFileError, match="missing") as info:
            load()
        _one_line_naming(info, model_copy / "sentence_bert_config.json")


NOT_REGULAR = {
    "a FIFO": (lambda p: os.mkfifo(p), "a FIFO"),
    "a directory": (lambda p: p.mkdir(), "a directory"),
    "a link to /dev/zero": (lambda p: p.symlink_to("/dev/zero"), r"a character device \(through a symbolic link\)"),
    "a link to nothing": (
        lambda p: p.symlink_to(p.with_name("no-such-file")),
        r"missing \(a symbolic link to nothing\)",
    ),
    "a loop of links": (lambda p: p.symlink_to(p), "cannot be read"),
}


@pytest.mark.parametrize("loader", ["model_config", "Encoder", "verify_files"])
@pytest.mark.parametrize("kind", sorted(NOT_REGULAR))
@pytest.mark.parametrize(
    "name", ["1_Pooling/config.json", "modules.json", "config.json", "model.safetensors", "tokenizer.json"]
)
def test_a_model_file_that_is_no_regular_file_is_named_and_never_read(model_copy, name, kind, loader):
    make, what = NOT_REGULAR[kind]
    path = model_copy / name
    _replace(path, make)
    with pytest.raises(pretrained.ModelFileError, match=what) as info:  # a FIFO was read as absent, or blocked
        LOADERS[loader]()
    _one_line_naming(info, path)


@pytest.fixture
def installed_copy(tmp_path, monkeypatch):
    """An installed-like package (its own name in each test) holding a copy of the model folder, located
    by the real :func:`~mhanw.pretrained.model_path` (no patch)."""
    module = "fake_minilm_" + re.sub(r"\W", "_", tmp_path.name)
    package = tmp_path / module
    package.mkdir()
    (package / "__init__.py").write_text("")
    folder = package / "model"
    shutil.copytree(
        pretrained.model_path(MODEL),
        folder,
        symlinks=True,
        ignore=lambda d, names: [n for n in names if n == "model.safetensors"],
    )
    (folder / "model.safetensors").symlink_to(pretrained.model_path(MODEL) / "model.safetensors")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    spec = pretrained.MODELS[MODEL]
    monkeypatch.setitem(pretrained.MODELS, MODEL, dataclasses.replace(spec, module=module))
    yield folder
    sys.modules.pop(module, None)


@pytest.mark.parametrize(
    "name,make",
    [
        ("model.safetensors", lambda p: p.mkdir()),
        ("model.safetensors", lambda p: p.symlink_to("/dev/zero")),
        ("tokenizer.json", lambda p: os.mkfifo(p)),
        ("sentence_bert_config.json", None),
    ],
)
def test_model_path_names_the_damaged_file_on_one_line_not_a_missing_package(installed_copy, name, make):
    # was ModelNotInstalledError, an ImportError over several lines saying the package "lacks" the file
    path = installed_copy / name
    if make is None:
        path.unlink()
    else:
        _replace(path, make)
    for load in (lambda: pretrained.model_path(MODEL), LOADERS["model_config"]):
        with pytest.raises(pretrained.ModelFileError) as info:
            load()
        assert not isinstance(info.value, ImportError)
        _one_line_naming(info, path)


def test_a_package_without_its_model_folder_is_still_not_installed(installed_copy):
    shutil.rmtree(installed_copy)
    with pytest.raises(pretrained.ModelNotInstalledError, match="--force-reinstall"):
        pretrained.model_path(MODEL)


# ---- configuration integers are read safely and named -------------------------------------------------


def _append_setting(path, key, number_text):
    text = path.read_text().rstrip()
    assert text.endswith("}")
    doc = json.loads(text)
    doc.pop(key, None)
    path.write_text(json.dumps(doc)[:-1] + f', "{key}": {number_text}}}')


@pytest.mark.parametrize("loader", ["model_config", "load_attention_weights", "Encoder"])
@pytest.mark.parametrize(
    "file,key",
    [
        ("config.json", "num_hidden_layers"),
        ("config.json", "hidden_size"),
        ("config.json", "pad_token_id"),
        ("config.json", "layer_norm_eps"),
        ("sentence_bert_config.json", "max_seq_length"),
    ],
)
@pytest.mark.parametrize("digits,sign", [(5001, ""), (5001, "-"), (4300, ""), (19, "")])
def test_an_integer_of_many_digits_names_its_file_and_setting(model_copy, loader, file, key, digits, sign):
    # 5001 digits was Python's "Exceeds the limit (4300 digits) for integer string conversion" ValueError
    path = model_copy / file
    _append_setting(path, key, sign + "1" + "0" * (digits - 1))
    with pytest.raises(pretrained.ModelFileError) as info:
        LOADERS[loader]()
    message = _one_line_naming(info, path)
    assert message.startswith(f"{path}: '{key}': expected ") and f"an integer of {digits} digits" in message


def test_an_integer_of_many_digits_in_a_setting_not_read_is_a_damaged_file(model_copy):
    path = model_copy / "config.json"
    _append_setting(path, "initializer_range", "1" + "0" * 5000)
    with pytest.raises(pretrained.ModelFileError) as info:
        pretrained.model_config(MODEL)
    _one_line_naming(info, path)


@pytest.mark.parametrize("file", ["config.json", "sentence_bert_config.json", "1_Pooling/config.json"])
def test_a_key_given_twice_is_a_damaged_file(model_copy, file):
    path = model_copy / file
    text = path.read_text().rstrip()
    key = next(iter(json.loads(text)))
    path.write_text(text[:-1] + f', "{key}": 1}}')
    with pytest.raises(pretrained.ModelFileError, match=f"key '{key}' appears twice") as info:
        pretrained.model_config(MODEL)
    _one_line_naming(info, path)


@pytest.mark.parametrize("key,value", [("hidden_size", 384.0), ("num_hidden_layers", 6.0), ("vocab_size", 3.0522e4)])
def test_a_size_written_as_a_float_is_refused(model_copy, key, value):
    path = model_copy / "config.json"
    _edit_json(path, **{key: value})
    with pytest.raises(pretrained.ModelFileError, match=rf"'{key}': expected an integer") as info:
        pretrained.model_config(MODEL)
    _one_line_naming(info, path)


# ---- every tensor's dtype and shape against config.json -----------------------------------------------

Q = "encoder.layer.0.attention.self.query.weight"
TENSOR_LOADERS = {
    "load_tensors": lambda: pretrained.load_tensors(MODEL),
    "load_attention_weights": LOADERS["load_attention_weights"],
    "Encoder": LOADERS["Encoder"],
}


@pytest.mark.parametrize("loader", sorted(TENSOR_LOADERS))
@pytest.mark.parametrize(
    "tensor,change,expected,found",
    [
        # was "weight: expected a 1-D or 2-D float array, got shape (384, 384) of int32" (no file named)
        (Q, dict(dtype="I32"), "float32 of shape (384, 384)", "int32 of shape (384, 384)"),
        # the next three loaded, and encode() failed with a numpy broadcasting or matmul error
        (
            "embeddings.word_embeddings.weight",
            dict(shape=[15261, 768]),
            "float32 of shape (30522, 384)",
            "float32 of shape (15261, 768)",
        ),
        (
            "encoder.layer.0.intermediate.dense.weight",
            dict(shape=[384, 1536]),
            "float32 of shape (1536, 384)",
            "float32 of shape (384, 1536)",
        ),
        ("embeddings.LayerNorm.weight", dict(shape=[192, 2]), "float32 of shape (384,)", "float32 of shape (192, 2)"),
        (
            "embeddings.position_ids",
            dict(dtype="I32", shape=[2, 512]),
            "int64 of shape (1, 512)",
            "int32 of shape (2, 512)",
        ),
    ],
)
def test_a_tensor_of_another_dtype_or_shape_is_named_with_both(model_copy, loader, tensor, change, expected, found):
    path = _edit_header(model_copy, lambda header: header[tensor].update(change))
    with pytest.raises(pretrained.ModelFileError) as info:
        TENSOR_LOADERS[loader]()
    message = _one_line_naming(info, path)
    assert f"tensor {tensor!r}: expected {expected}" in message and f"found {found}" in message, message


@pytest.mark.parametrize(
    "key,value,tensor",
    [
        ("intermediate_size", 1000, "encoder.layer.0.intermediate.dense.weight"),
        ("vocab_size", 100, "embeddings.word_embeddings.weight"),
        ("max_position_embeddings", 1000, "embeddings.position_embeddings.weight"),
        ("type_vocab_size", 3, "embeddings.token_type_embeddings.weight"),
    ],
)
def test_a_size_of_config_json_the_tensors_do_not_have_is_refused(model_copy, monkeypatch, key, value, tensor):
    # with a RECORD matching the changed file, these loaded and encoded without a word
    _edit_json(model_copy / "config.json", **{key: value})
    _consistent_record(model_copy, monkeypatch)
    for load in TENSOR_LOADERS.values():
        with pytest.raises(pretrained.ModelFileError) as info:
            load()
        message = _one_line_naming(info, model_copy / "model.safetensors")
        assert f"tensor {tensor!r}: expected" in message and f"'{key}' {value}" in message, message
        pretrained._tensors_at.cache_clear()


def test_fewer_layers_in_config_json_than_in_the_weights_is_refused(model_copy, monkeypatch):
    _edit_json(model_copy / "config.json", num_hidden_layers=5)  # loaded five of the six layers
    _consistent_record(model_copy, monkeypatch)
    with pytest.raises(
        pretrained.ModelFileError,
        match=r"tensor 'encoder\.layer\.5\..*': unexpected, "
        r"config\.json \('num_hidden_layers' 5\)",
    ) as info:
        pretrained.load_attention_weights(MODEL)
    _one_line_naming(info, model_copy / "model.safetensors")


def test_an_extra_tensor_is_refused(model_copy, monkeypatch):
    end = max(v["data_offsets"][1] for k, v in _header(model_copy).items() if k != "__metadata__")
    path = _edit_header(
        model_copy,
        lambda header: header.update(extra={"dtype": "F32", "shape": [1], "data_offsets": [end, end + 4]}),
        extra_data=bytes(4),
    )
    _consistent_record(model_copy, monkeypatch)
    with pytest.raises(pretrained.ModelFileError, match="tensor 'extra': unexpected") as info:
        pretrained.load_tensors(MODEL)
    _one_line_naming(info, path)


def test_a_huge_type_vocabulary_is_a_bad_setting(model_copy):
    path = model_copy / "config.json"
    _edit_json(path, type_vocab_size=10**9)
    with pytest.raises(pretrained.ModelFileError, match=r"'type_vocab_size': expected an integer from 1 to") as info:
        pretrained.model_config(MODEL)
    _one_line_naming(info, path)


# ---- the files against each other ---------------------------------------------------------------------


def test_a_truncation_length_beyond_the_positions_is_refused(model_copy, monkeypatch):
    # 1048576 was clamped to 512 without a word: long sentences got other embeddings
    path = model_copy / "sentence_bert_config.json"
    _edit_json(path, max_seq_length=1 << 20)
    _consistent_record(model_copy, monkeypatch)
    with pytest.raises(pretrained.ModelFileError, match=r"'max_seq_length': expected at most the 512 positions"):
        pretrained.model_config(MODEL)


def test_a_pad_id_other_than_the_tokenizers_is_refused(model_copy, monkeypatch):
    path = model_copy / "config.json"
    _edit_json(path, pad_token_id=30521)
    _consistent_record(model_copy, monkeypatch)
    with pytest.raises(
        pretrained.ModelFileError,
        match=r"'pad_token_id': expected the padding id 0 of "
        r"tokenizer\.json, found 30521",
    ) as info:
        pretrained.Encoder(MODEL)
    _one_line_naming(info, path)


def test_a_token_id_beyond_the_word_embeddings_is_refused(model_copy, monkeypatch):
    path = model_copy / "tokenizer.json"
    doc = json.loads(path.read_text())
    doc["model"]["vocab"]["[UNK]"] = 99999  # an unknown word would index past the 30522 rows
    path.write_text(json.dumps(doc))
    _consistent_record(model_copy, monkeypatch)
    with pytest.raises(
        pretrained.ModelFileError,
        match=r"token ids: expected ids below config\.json's "
        r"'vocab_size' 30522, found 99999",
    ) as info:
        pretrained.Encoder(MODEL)
    _one_line_naming(info, path)


# ---- good files load exactly as before ----------------------------------------------------------------


def test_the_expected_tensors_are_exactly_those_of_the_installed_file():
    cfg = pretrained.model_config(MODEL)
    stored = pretrained.load_tensors(MODEL)
    expected = pretrained.expected_tensors(cfg)
    assert set(stored) - set(pretrained._OPTIONAL_TENSORS) == set(expected)
    for name, (dtype, shape, _) in expected.items():
        assert (stored[name].dtype, stored[name].shape) == (dtype, shape)


SENTENCES = ["hello world", "a second sentence " * 100]


@pytest.fixture(scope="module")
def installed_embeddings():
    """Embeddings of :data:`SENTENCES` by the installed model (a module fixture: set up before any copy)."""
    return pretrained.Encoder(MODEL).encode(SENTENCES)


def test_an_intact_copy_gives_the_installed_models_embeddings_bit_for_bit(installed_embeddings, model_copy):
    cfg = pretrained.model_config(MODEL)
    assert (cfg["max_seq_length"], cfg["type_vocab_size"], cfg["path"]) == (256, 2, str(model_copy))
    copy = pretrained.Encoder(MODEL).encode(SENTENCES)
    np.testing.assert_array_equal(copy, installed_embeddings)
    # the long sentence is truncated at 256 tokens (at 512 its embedding began 0.00039, -0.03829, 0.0157)
    np.testing.assert_allclose(copy[1, :3], [-0.00749576, -0.02414397, 0.00524902], atol=5e-8)


def test_positions_fewer_than_the_truncation_length_name_the_changed_file(model_copy, monkeypatch):
    # the two files disagree; with pip's RECORD the sha256 names config.json, the one changed
    path = model_copy / "config.json"
    _edit_json(path, max_position_embeddings=4)
    with pytest.raises(pretrained.ModelFileError, match="sha256") as info:
        pretrained.model_config(MODEL)
    _one_line_naming(info, path)
    _consistent_record(model_copy, monkeypatch)
    with pytest.raises(pretrained.ModelFileError, match=r"'max_seq_length': expected at most the 4 positions"):
        pretrained.model_config(MODEL)
