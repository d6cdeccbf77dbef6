"""Head diversity of a trained transformer: per-layer HDI, null models, redundancy, ablations (chapter 9).

The paper proposes the head diversity index (HDI) as a diagnostic computable
from trained weights and reports it for no model.  This module holds the
analysis that notebook ``09_pretrained_head_diversity`` runs on the weights of
:func:`mhanw.pretrained.load_attention_weights`; the HDI itself, in all three
normalizations, is :mod:`mhanw.diversity` (:func:`~mhanw.diversity.head_diversity_indices`,
and :func:`~mhanw.diversity.hdi_from_gram` for the permutation null).

Objects whose diversity is measured, per layer (:data:`OBJECTS`)
    ``"query"``, ``"key"``, ``"value"``: the per-head projections ``W^h`` of
    shape ``(d, d_k)``.  ``"qk_circuit"``: the query-key circuit
    ``M_h = W_Q^h (W_K^h)^T`` (``d x d``, rank ``d_k``), which is what a head's
    attention logits ``x_q^T M_h x_k / sqrt(d_k)`` depend on.  The pair
    ``(W_Q^h, W_K^h)`` is fixed by ``M_h`` only up to
    ``(W_Q^h A, W_K^h A^{-T})``, so the circuit is represented by its
    *balanced factor* (:func:`circuit_factors`)
    ``Z_h = [U_h S_h^{1/2}; V_h S_h^{1/2}]`` of shape ``(2d, d_k)``, with
    ``M_h = U_h S_h V_h^T`` the compact SVD.  ``Z_h`` is unique up to
    ``Z_h O`` (``O`` orthogonal), to which all three HDIs are invariant, so the
    HDI of ``{Z_h}`` is a function of the circuits alone.  The range of
    ``Z_h`` pairs each query direction with its key direction; for independent
    Haar ``W_Q``, ``W_K`` with orthonormal columns, ``E[HDI_PA] = 1 - d_k/(2d)``.

Null models for "more or less diverse than chance"
    - :func:`random_subspace_null`: independent Haar heads of the same shape
      (``E[HDI_PA] = 1 - d_k/d``).
    - :func:`row_permutation_null`: keeps a layer's weight matrices and
      reassigns their rows (the ``H d_k`` outputs of the ``[out, in]`` matrix)
      to heads at random; for the circuit, the same reassignment is applied to
      the query and key rows, so each rank-one term ``q_r k_r^T`` stays whole.
      :func:`null_summary` gives the z-score and a two-sided permutation
      p-value.

Redundancy and ablation
    :func:`redundancy` is the mean over the other heads of the layer of
    :func:`mhanw.diversity.pair_overlaps`, the principal-angle overlap
    ``tr(P_j P_j')/d_k`` (the mean squared cosine of the principal angles);
    :func:`ablation_effects` turns :meth:`mhanw.pretrained.Encoder.ablate_each_head`
    into ``1 - cos`` changes of the sentence embeddings;
    :func:`spearman_permutation` correlates the two with a (optionally
    stratified) permutation p-value.

The printed formula's scale (:func:`paper_scale_decomposition`)
    ``1 - HDI_printed = mean_{j<j'} RV_jj' n_j n_j' / d_k^2`` exactly, with
    ``n_j = ||W_j^T W_j||_F`` and ``RV_jj'`` the RV coefficient; the factor
    ``S = mean n_j n_j' / d_k^2`` carries the weights' scale (it grows as
    ``c^4`` under ``W -> cW``), the rest ``G = (1 - HDI_printed)/S`` is
    geometry.

All HDI values are returned in the order of :data:`mhanw.diversity.NORMALIZATIONS`
(``"paper"``, ``"principal_angles"``, ``"rv"``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from .. import diversity
from .. import heads as _heads
from .. import pretrained as _pretrained
from ..constants import MAX_REPLICATES, RANK_RTOL
from ..diversity import NORMALIZATIONS
from ..infra import params as P
from ..infra import verdicts as V
from ..infra.estimates import Estimate
from ..infra.notebook import notebook_helper
from ..infra.prose import count_of, join_list
from ..infra.validate import as_float_array, as_seed_sequence, boolean, brief, one_of, positive_int, sequence
from ..infra.verdicts import (
    FAILS,
    HOLDS,
    N_SE,
    UNDECIDED,
    Statistic,
    Verdict,
    checked,
    guard,
    predicate,
    significant_effect,
)

__all__ = [
    "NORM_LABEL",
    "OBJ_LABEL",
    "REPORT_INPUTS",
    "chance_call",
    "nulls_figure",
    "report",
    "setup",
    "DIVERSITY_CLAIM",
    "NORMALIZATIONS",
    "OBJECTS",
    "ablation_effects",
    "circuit_factors",
    "diversity_sentence",
    "diversity_verdict",
    "excess_spectrum_summary",
    "hdi_table_latex",
    "guard_text",
    "head_spectra",
    "head_spectrum_null",
    "layer_hdi",
    "layer_objects",
    "layer_spectrum_null",
    "leading_share",
    "null_summary",
    "paper_scale_decomposition",
    "permute_rows",
    "printed_invariance_verdict",
    "printed_scale_verdict",
    "qk_circuits",
    "random_subspace_null",
    "r2_bootstrap",
    "layer_contrast",
    "redundancy",
    "redundancy_verdict",
    "row_permutation_null",
    "shared_directions_verdict",
    "spearman_permutation",
    "spectrum_jackknife",
    "stratified_jackknife_se",
]

#: The per-head objects whose diversity is measured, in table order.
OBJECTS = ("query", "key", "value", "qk_circuit")
#: The names the chapter's tables give the objects and the normalizations of the HDI.
OBJ_LABEL = {"query": "W_Q", "key": "W_K", "value": "W_V", "qk_circuit": "W_Q W_K^T"}
NORM_LABEL = {"paper": "printed", "principal_angles": "PA", "rv": "RV"}


# --------------------------------------------------------------------------- the chapter's parameters


#: The most sentences of one run: ten times the 50 shipped (the ablation takes about 0.6 s per sentence).
MAX_SENTENCES = 500


def _sentences_kind() -> P.Kind:
    """``None`` (the shipped sentences) or a list of 3 to :data:`MAX_SENTENCES` distinct non-empty strings
    (a repeated sentence would count as independent evidence in the standard errors over sentences)."""

    def check(value, name):
        if value is None:
            return None
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise P.ParameterError(f"{name}: expected None or a list of sentences, got {brief(value)}")
        if len(value) < 3 or not all(isinstance(v, str) and v.strip() for v in value):
            raise P.ParameterError(f"{name}: expected at least 3 non-empty sentences (strings)")
        if len(value) > MAX_SENTENCES:
            raise P.ParameterError(
                f"{name}: expected at most {MAX_SENTENCES} sentences (ten times the 50 shipped; "
                f"the ablation encodes each once per head), got {len(value)}"
            )
        if len({v.strip() for v in value}) < len(value):
            raise P.ParameterError(
                f"{name}: expected distinct sentences (a repeat would count twice in the "
                f"standard errors over sentences)"
            )
        return tuple(value)

    return P.Kind("None (the shipped sentences) or a list of >= 3 sentences", check)


#: Papermill parameters of notebook 09 (``None``: the fidelity's default size, see :data:`SIZES`).
PARAMETERS = {
    **P.STANDARD,
    "model": P.choice(*sorted(_pretrained.MODELS)),
    "n_perm": P.optional(P.positive_int(2, 50_000, why="100 times the paper's 500")),
    "n_spectral": P.optional(P.positive_int(2, 5_000, why="100 times the paper's 50")),
    "n_haar": P.optional(P.positive_int(2, 20_000, why="100 times the paper's 200")),
    "n_sentences": P.optional(P.positive_int(3, 50, why="the 50 shipped sentences")),
    "n_perm_spearman": P.optional(P.positive_int(2, 2_000_000, why="100 times the paper's 20000")),
    "sentences": _sentences_kind(),
}
#: The sentences are either the shipped ones (how many: ``n_sentences``) or the user's own, not both.
CONSTRAINTS = (
    P.require(
        "n_sentences",
        lambda p: p["n_sentences"] is None or p["sentences"] is None,
        "n_sentences left as None when sentences are given (their number is len(sentences))",
    ),
)

#: The size parameters that override :data:`SIZES` when not ``None``.
SIZE_PARAMETERS = ("n_perm", "n_spectral", "n_haar", "n_sentences", "n_perm_spearman")

#: Sizes by fidelity: permutations of the row null per layer, draws of the layer-spectrum null per
#: layer, Haar draws, how many of the shipped sentences, permutations of the Spearman test, and the
#: number of null draws whose principal-cosine spectra are kept.
SIZES = {
    "quick": dict(n_perm=20, n_spectrum=20, n_haar=10, n_sentences=10, n_perm_spearman=2000, n_spectral=20),
    "paper": dict(n_perm=500, n_spectrum=100, n_haar=200, n_sentences=50, n_perm_spearman=20000, n_spectral=50),
}


def chapter_sizes(params) -> dict:
    """The sizes of a run: :data:`SIZES` of ``params["fidelity"]``, overridden by the non-``None`` size
    parameters (:data:`SIZE_PARAMETERS`, each checked by its kind of :data:`PARAMETERS`, so a direct call
    refuses what :func:`setup` would); with the user's own ``sentences``, ``n_sentences`` is their number."""
    if not isinstance(params, Mapping):
        raise ValueError(f"params: expected the chapter's checked parameters (a mapping), got {type(params).__name__}")
    if params.get("fidelity") not in SIZES:
        raise ValueError(
            f"params: expected 'fidelity' to be one of {', '.join(map(repr, SIZES))}, "
            f"got {brief(params.get('fidelity'))}"
        )
    out = dict(SIZES[params["fidelity"]])
    for key in SIZE_PARAMETERS:
        if params.get(key) is not None:
            out[key] = PARAMETERS[key].check(params[key], key)
    if params.get("sentences") is not None:
        out["n_sentences"] = len(PARAMETERS["sentences"].check(params["sentences"], "sentences"))
    out["n_spectrum"] = min(out["n_spectrum"], out["n_perm"])
    return out


def setup(namespace: dict) -> tuple:
    """The start of notebook 09 whose globals are ``namespace``: ``(params, sizes, streams, weights)``.

    ``params``: the checked parameters (a bad one stops with one line naming it); ``sizes``: the
    :data:`SIZES` of the fidelity with the non-``None`` size parameters applied (:func:`chapter_sizes`);
    ``streams``: six children of ``SeedSequence(seed)`` (Haar baseline, row null, Spearman tests,
    layer-spectrum null, head-spectrum null, R^2 bootstrap); ``weights``: the model's attention weights
    (:func:`mhanw.pretrained.load_attention_weights`).  Sets the figure style."""
    import matplotlib.pyplot as plt

    from ..infra.notebook import start

    params, _, streams = start(namespace, PARAMETERS, CONSTRAINTS, SIZES, 6)
    plt.rcParams.update({"legend.fontsize": 7})  # nothing under 7 pt at print size
    return params, chapter_sizes(params), streams, _pretrained.load_attention_weights(params["model"])


def pick_sentences(records, n: int) -> list[str]:
    """``n`` of the shipped sentence records, evenly spaced: record ``floor(i len/n)`` for ``i < n`` (one
    per topic at ``n = 10`` of the 50, every one at ``n = 50``)."""
    records = sequence(records, "records", "sentence records")
    n = positive_int(n, "n", minimum=3)
    if n > len(records):
        raise ValueError(f"n: expected at most {len(records)} sentences (those shipped), got {n}")
    for i, r in enumerate(records):
        if not isinstance(r, Mapping) or not isinstance(r.get("text"), str):
            raise ValueError(f"records[{i}]: expected a sentence record with a 'text' string, got {brief(r)}")
    return [records[i * len(records) // n]["text"] for i in range(n)]


# --------------------------------------------------------------------------- inputs


def _check(W, name: str = "W") -> np.ndarray:
    return diversity.check_heads(W, name)


def _pair(WQ, WK):
    WQ = _check(WQ, "WQ")
    WK = _check(WK, "WK")
    if WQ.shape != WK.shape:
        raise ValueError(f"WK: expected the shape of WQ {WQ.shape}, got {WK.shape}")
    return WQ, WK


# --------------------------------------------------------------------------- block Gram matrices
#
# Every quantity below depends on a configuration only through its block Gram
# matrix ``B[j, j'] = W_j^T W_j'`` (``(H, H, d_k, d_k)``, :func:`mhanw.diversity.block_gram`).
# Reassigning rows to heads permutes the rows of the stacked ``[out, in]`` matrix,
# hence the rows and columns of its row Gram matrix: the permutation null never
# touches the ``d``-dimensional weights again and costs ``O(H^2 d_k^3)`` per draw.


def _blocks(G: np.ndarray, H: int, k: int) -> np.ndarray:
    """A row Gram matrix ``(H k, H k)`` cut into head blocks ``(H, H, k, k)``."""
    return G.reshape(H, k, H, k).transpose(0, 2, 1, 3)


def _right(G: np.ndarray, T: np.ndarray) -> np.ndarray:
    """``G @ blockdiag(T_1, ..., T_H)`` for ``G`` ``(m, H k)``, ``T`` ``(H, k, k')``."""
    m = G.shape[0]
    H, k, k2 = T.shape
    return (G.reshape(m, H, k).transpose(1, 0, 2) @ T).transpose(1, 0, 2).reshape(m, H * k2)


def _sandwich(T: np.ndarray, G: np.ndarray, T2=None) -> np.ndarray:
    """``blockdiag(T)^T G blockdiag(T2)`` (``T2 = T`` by default), ``G`` ``(H k, H k)``."""
    left = _right(G.T, T).T
    return _right(left, T if T2 is None else T2)


def _full(B: np.ndarray) -> np.ndarray:
    H, _, k, _ = B.shape
    return B.transpose(0, 2, 1, 3).reshape(H * k, H * k)


def _circuit_transforms(Bq: np.ndarray, Bk: np.ndarray):
    """``T_q^h``, ``T_k^h`` ``(H, k, k)`` with ``Z_h = [W_Q^h T_q^h; W_K^h T_k^h]`` the balanced
    factor of ``M_h = W_Q^h (W_K^h)^T`` (see :func:`circuit_factors`)."""
    Lq = diversity.gram_factors(Bq, "WQ")
    Lk = diversity.gram_factors(Bk, "WK")
    Uc, s, Vct = np.linalg.svd(Lq.transpose(0, 2, 1) @ Lk)  # Lq^T Lk = Uc diag(s) Vc^T
    if np.any(s[:, -1] <= RANK_RTOL * s[:, 0]):
        j = int(np.flatnonzero(s[:, -1] <= RANK_RTOL * s[:, 0])[0])
        raise ValueError(f"WQ, WK: the circuit of head {j} is rank deficient (rank < d_k = {Bq.shape[2]})")
    root = np.sqrt(s)[:, None, :]
    Tq = np.linalg.solve(Lq.transpose(0, 2, 1), Uc) * root  # Lq^{-T} Uc S^{1/2}
    Tk = np.linalg.solve(Lk.transpose(0, 2, 1), Vct.transpose(0, 2, 1)) * root
    return Tq, Tk


def _circuit_blocks(Bq: np.ndarray, Bk: np.ndarray) -> np.ndarray:
    """Block Gram ``Z_j^T Z_j'`` of the balanced circuit factors from those of ``W_Q`` and ``W_K``."""
    H, _, k, _ = Bq.shape
    Tq, Tk = _circuit_transforms(Bq, Bk)
    return _blocks(_sandwich(Tq, _full(Bq)) + _sandwich(Tk, _full(Bk)), H, k)


# --------------------------------------------------------------------------- circuits


def qk_circuits(WQ, WK) -> np.ndarray:
    """The query-key circuits ``M_h = W_Q^h (W_K^h)^T``, shape ``(H, d, d)``.

    ``WQ``, ``WK``: ``(H, d, d_k)``.  Head ``h``'s attention logit between
    tokens ``x_q`` and ``x_k`` (biases aside) is ``x_q^T M_h x_k / sqrt(d_k)``.
    """
    WQ, WK = _pair(WQ, WK)
    return WQ @ WK.transpose(0, 2, 1)


def circuit_factors(WQ, WK) -> np.ndarray:
    """Balanced factors ``Z_h = [U_h S_h^{1/2}; V_h S_h^{1/2}]`` of the QK circuits, ``(H, 2d, d_k)``.

    ``M_h = W_Q^h (W_K^h)^T = U_h S_h V_h^T`` (compact SVD, computed from the
    Cholesky factors of ``W_Q^{hT} W_Q^h`` and ``W_K^{hT} W_K^h`` without
    forming ``M_h``), so that ``Z_h[:d] Z_h[d:]^T = M_h`` and
    ``Z_h[:d]^T Z_h[:d] = Z_h[d:]^T Z_h[d:] = S_h``.  ``Z_h`` depends on
    ``(W_Q^h, W_K^h)`` only through ``M_h``, up to ``Z_h O`` with ``O``
    orthogonal.  Rank-deficient heads raise ``ValueError`` naming the head.
    """
    WQ, WK = _pair(WQ, WK)
    H = WQ.shape[0]
    idx = np.arange(H)
    Bq = np.zeros((H, H) + WQ.shape[2:] * 2)
    Bq[idx, idx] = WQ.transpose(0, 2, 1) @ WQ
    Bk = np.zeros_like(Bq)
    Bk[idx, idx] = WK.transpose(0, 2, 1) @ WK
    Tq, Tk = _circuit_transforms(Bq, Bk)
    return np.concatenate([WQ @ Tq, WK @ Tk], axis=1)


# --------------------------------------------------------------------------- redundancy


def redundancy(W) -> np.ndarray:
    """Each head's mean overlap with the other heads, ``mean_{j' != j} O[j, j']``, shape ``(H,)``.

    ``O`` is :func:`mhanw.diversity.pair_overlaps`: the mean squared cosine of
    the principal angles, 0 for a head orthogonal to all others and 1 for a
    head that every other head duplicates.
    """
    O = diversity.pair_overlaps(W)
    H = O.shape[0]
    return (O.sum(axis=1) - np.diag(O)) / (H - 1)


# --------------------------------------------------------------------------- per-layer objects and HDIs


def _check_weights(weights) -> tuple[int, int, int, int]:
    if not isinstance(weights, dict) or not all(k in weights for k in ("query", "key", "value")):
        raise ValueError("weights: expected the dict of mhanw.pretrained.load_attention_weights (query, key, value)")
    shapes = {np.shape(weights[k]) for k in ("query", "key", "value")}
    if len(shapes) != 1 or len(next(iter(shapes))) != 4:
        raise ValueError(f"weights: expected query, key, value of one shape (layers, heads, d, d_k), got {shapes}")
    return next(iter(shapes))


def _layer(weights, layer) -> int:
    L = _check_weights(weights)[0]
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer < L:
        raise ValueError(f"layer: expected an integer in [0, {L}), got {brief(layer)}")
    return int(layer)


def layer_objects(weights, layer: int) -> dict:
    """The four per-head objects of :data:`OBJECTS` for one layer, each ``(H, D, d_k)`` float64.

    ``weights`` is the dict of :func:`mhanw.pretrained.load_attention_weights`;
    ``"qk_circuit"`` holds :func:`circuit_factors` of that layer's query and key.
    """
    l = _layer(weights, layer)
    out = {k: np.asarray(weights[k][l], dtype=np.float64) for k in ("query", "key", "value")}
    out["qk_circuit"] = circuit_factors(out["query"], out["key"])
    return out


def layer_hdi(weights) -> dict:
    """HDI of every layer and object: ``{object: (n_layers, 3)}`` in ``NORMALIZATIONS`` order."""
    L = _check_weights(weights)[0]
    table = {name: np.empty((L, len(NORMALIZATIONS))) for name in OBJECTS}
    for l in range(L):
        for name, W in layer_objects(weights, l).items():
            table[name][l] = diversity.head_diversity_indices(W)
    return table


# --------------------------------------------------------------------------- null models


def permute_rows(W, perm) -> np.ndarray:
    """``W`` ``(H, d, d_k)`` with its ``H d_k`` output rows reassigned: new head ``h`` gets rows
    ``perm[h*d_k:(h+1)*d_k]`` of the stacked ``[out, in]`` matrix (row ``h*d_k + i`` is ``W[h, :, i]``)."""
    W = _check(W)
    H, d, k = W.shape
    perm = np.asarray(perm)
    if perm.shape != (H * k,) or not np.array_equal(np.sort(perm), np.arange(H * k)):
        raise ValueError(f"perm: expected a permutation of range({H * k}), got shape {perm.shape}")
    rows = W.transpose(0, 2, 1).reshape(H * k, d)[perm]
    return np.ascontiguousarray(rows.reshape(H, k, d).transpose(0, 2, 1))


def row_permutation_null(weights, layer: int, n_perm: int, seed, *, n_spectrum: int = 100) -> dict:
    """HDIs of one layer after random reassignments of rows to heads.

    For each of ``n_perm`` permutations (one stream of ``seed``, a
    ``SeedSequence`` or int) the query, key and value rows are each reassigned
    with their own permutation (:func:`permute_rows`), and the circuit with the
    query's and key's rows reassigned by one common permutation.  Returns
    ``{object: (n_perm, 3)}`` HDIs (``NORMALIZATIONS`` order) and
    ``{object + "_spectrum": (min(n_perm, n_spectrum), d_k)}``
    (:func:`mhanw.diversity.cos2_spectrum` of the first draws).  Computed from the layer's row
    Gram matrices, which a reassignment only permutes.
    """
    n_perm = positive_int(n_perm, "n_perm", maximum=MAX_REPLICATES, what="permutations")
    return _gram_null(
        weights,
        layer,
        n_perm,
        seed,
        n_spectrum,
        draw=lambda rng, n: rng.permutation(n),
        move=lambda G, perm: G[perm][:, perm],
    )


def _gram_null(weights, layer, n_draw: int, seed, n_spectrum, *, draw, move) -> dict:
    """The loop shared by the nulls that transform a layer's row Gram matrices.

    Per draw and object (in :data:`OBJECTS` order, one stream of ``seed``)
    ``t = draw(rng, H d_k)``; the object's row Gram matrix ``G`` becomes
    ``move(G, t)`` (the circuit moves the query's and key's with one common
    ``t``).  Returns the dict described in :func:`row_permutation_null`.
    """
    l = _layer(weights, layer)
    rng = np.random.default_rng(as_seed_sequence(seed))
    _, H, d, k = _check_weights(weights)
    rows = {
        name: np.asarray(weights[name][l], dtype=np.float64).transpose(0, 2, 1).reshape(H * k, d)
        for name in ("query", "key", "value")
    }
    gram = {name: A @ A.T for name, A in rows.items()}
    out = {name: np.empty((n_draw, len(NORMALIZATIONS))) for name in OBJECTS}
    n_spec = min(n_draw, positive_int(n_spectrum, "n_spectrum", minimum=0))
    out.update({f"{name}_spectrum": np.empty((n_spec, k)) for name in OBJECTS})

    def blocks(name, t):
        return _blocks(move(gram[name], t), H, k)

    for p in range(n_draw):
        ts = {name: draw(rng, H * k) for name in OBJECTS}
        B = {name: blocks(name, ts[name]) for name in ("query", "key", "value")}
        B["qk_circuit"] = _circuit_blocks(blocks("query", ts["qk_circuit"]), blocks("key", ts["qk_circuit"]))
        for name in OBJECTS:
            if p < n_spec:
                out[name][p], out[f"{name}_spectrum"][p] = diversity.hdi_from_gram(B[name], name, spectrum=True)
            else:
                out[name][p] = diversity.hdi_from_gram(B[name], name)
    return out


def _haar_orthogonal(n: int, rng) -> np.ndarray:
    """A Haar-distributed orthogonal ``(n, n)`` matrix (QR of a Gaussian matrix, signs fixed)."""
    Q, R = np.linalg.qr(rng.standard_normal((n, n)))
    return Q * np.sign(np.diag(R))


def layer_spectrum_null(weights, layer: int, n_draw: int, seed, *, n_spectrum: int = 100) -> dict:
    """HDIs of one layer's heads redrawn with the layer's own scale and singular values.

    A layer's stacked ``[out, in]`` matrix ``A = U diag(s) V^T`` (``(H d_k, d)``)
    is replaced by ``A' = U' diag(s) V'^T`` with ``U'``, ``V'`` Haar and ``s``
    the trained singular values, and ``A'`` is cut into heads as the trained
    matrix is.  Every HDI depends on the heads only through
    ``W_j^T W_j' = (A A^T)`` blocks, which a common rotation ``V'`` of the
    input space leaves unchanged, so the draw is ``A' = Q A`` with ``Q`` Haar on
    ``O(H d_k)``: the trained rows rotated into new heads.  This keeps the
    layer's scale, spectrum and input-side Gram matrix ``A^T A`` exactly, and
    (unlike :func:`row_permutation_null`) mixes rows across heads.  For the
    circuit the query and key rows are rotated by one common ``Q``, which keeps
    the layer's summed circuit ``A_Q^T A_K``.  Returns ``{object: (n_draw, 3)}``
    (``NORMALIZATIONS`` order) and ``{object + "_spectrum": (min(n_draw, n_spectrum), d_k)}``,
    like :func:`row_permutation_null`; one stream of ``seed``.
    """
    n_draw = positive_int(n_draw, "n_draw", maximum=MAX_REPLICATES, what="draws")
    return _gram_null(
        weights,
        layer,
        n_draw,
        seed,
        n_spectrum,
        draw=lambda rng, n: _haar_orthogonal(n, rng),
        move=lambda G, Q: Q @ G @ Q.T,
    )


def head_spectra(W) -> np.ndarray:
    """Singular values of each head, ``(H, d_k)`` largest first, for ``W`` ``(H, D, d_k)``."""
    return np.linalg.svd(_check(W), compute_uv=False)


def head_spectrum_null(objects: dict, n_draw: int, seed) -> dict:
    """HDIs of random heads that keep each trained head's scale and singular values.

    ``objects``: one layer's :func:`layer_objects` (``{object: (H, D, d_k)}``).
    A projection head ``W_h = U_h diag(s_h) V_h^T`` is redrawn as
    ``U_h' diag(s_h)`` with ``U_h'`` Haar on the Stiefel manifold of
    ``R^D`` (the right factor ``V_h`` changes no HDI); a circuit with
    singular values ``sigma_h`` as the balanced factor
    ``[U_h' diag(sigma_h)^{1/2}; V_h' diag(sigma_h)^{1/2}]`` of the circuit
    ``U_h' diag(sigma_h) V_h'^T`` with independent Haar ``U_h'``, ``V_h'``
    on ``R^d``.  Heads are drawn independently, so the principal-angle HDI
    has the Haar law (:func:`random_subspace_null`); the printed and RV
    indices, which weight directions by the singular values, now compare
    with heads of the trained scale.  Returns ``{object: (n_draw, 3)}``
    (``NORMALIZATIONS`` order); one stream of ``seed``.
    """
    if not isinstance(objects, dict) or not objects or not set(objects) <= set(OBJECTS):
        raise ValueError(f"objects: expected a dict with keys among {OBJECTS} (see layer_objects)")
    n_draw = positive_int(n_draw, "n_draw", maximum=MAX_REPLICATES, what="draws")
    rng = np.random.default_rng(as_seed_sequence(seed))
    spec = {}
    for name in OBJECTS:
        if name not in objects:
            continue
        W = _check(objects[name], f"objects[{name!r}]")
        spec[name] = (W.shape, head_spectra(W))
    out = {name: np.empty((n_draw, len(NORMALIZATIONS))) for name in spec}
    for p in range(n_draw):
        for name, ((H, D, k), s) in spec.items():
            if name == "qk_circuit":
                d = D // 2
                root = s[:, None, :] / np.sqrt(2.0)  # Z_h^T Z_h = 2 diag(sigma_h), so sigma_h^{1/2} = s_h / sqrt(2)
                W = np.concatenate(
                    [_heads.haar_heads(d, k, H, rng) * root, _heads.haar_heads(d, k, H, rng) * root], axis=1
                )
            else:
                W = _heads.haar_heads(D, k, H, rng) * s[:, None, :]
            out[name][p] = diversity.head_diversity_indices(W)
    return out


def random_subspace_null(n_heads: int, d: int, d_k: int, n_draw: int, seed, *, circuit: bool = False) -> np.ndarray:
    """HDIs ``(n_draw, 3)`` of independent Haar heads of shape ``(n_heads, d, d_k)`` (``NORMALIZATIONS`` order).

    ``circuit=True``: the heads are the :func:`circuit_factors` of independent
    Haar query and key projections.  Expected ``HDI_PA``: ``1 - d_k/d``
    (``1 - d_k/(2d)`` for circuits).
    """
    H = positive_int(n_heads, "n_heads", minimum=2)
    d = positive_int(d, "d")
    d_k = positive_int(d_k, "d_k")
    if d_k > d:
        raise ValueError(f"d_k: expected d_k <= d = {d}, got {d_k}")
    n_draw = positive_int(n_draw, "n_draw", maximum=MAX_REPLICATES, what="draws")
    circuit = boolean(circuit, "circuit")
    rng = np.random.default_rng(as_seed_sequence(seed))

    def haar():
        return _heads.haar_heads(d, d_k, H, rng)

    out = np.empty((n_draw, len(NORMALIZATIONS)))
    for i in range(n_draw):
        W = circuit_factors(haar(), haar()) if circuit else haar()
        out[i] = diversity.head_diversity_indices(W)
    return out


def null_summary(observed, null) -> dict:
    """Observed values against null draws, per column.

    ``observed``: scalar or ``(m,)``; ``null``: ``(n, )`` or ``(n, m)`` with
    ``n >= 2``.  Returns arrays (or floats) ``null_mean``, ``null_sd``
    (ddof = 1), ``z = (observed - null_mean)/null_sd`` and ``p`` the two-sided
    permutation p-value ``(1 + #{|null - mean| >= |observed - mean|})/(n + 1)``
    (at least ``1/(n + 1)``).
    """
    obs = as_float_array(observed, "observed", ndim=(0, 1))
    nul = as_float_array(null, "null", ndim=(1, 2))
    if nul.shape[0] < 2:
        raise ValueError(f"null: expected at least 2 draws, got shape {nul.shape}")
    if nul.shape[1:] != obs.shape:
        raise ValueError(f"null: expected shape (n,) + {obs.shape} to match observed, got {nul.shape}")
    mean = nul.mean(axis=0)
    sd = nul.std(axis=0, ddof=1)
    if np.any(sd == 0):
        raise ValueError("null: the null draws are constant (in some column); a z-score against them is undefined")
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (obs - mean) / sd
    extreme = (np.abs(nul - mean) >= np.abs(obs - mean) - 1e-15).sum(axis=0)
    p = (1.0 + extreme) / (nul.shape[0] + 1.0)
    return {"null_mean": mean[()], "null_sd": sd[()], "z": z[()], "p": p[()]}


# --------------------------------------------------------------------------- uncertainty of the shared-direction spectrum


def spectrum_jackknife(pair_spectra) -> dict:
    """The layer-averaged principal-cosine spectrum and its leave-one-head-out replicates.

    ``pair_spectra``: per layer, :func:`mhanw.diversity.pair_cos2` of its heads
    (``(H, H, d_k)``; a list or an ``(L, H, H, d_k)`` array).  The statistic is
    ``mean_l mean_{j<j'} c_l[j, j']``, the curve of the chapter's figure.
    Returns ``value`` ``(d_k,)`` and ``replicates`` ``(L, H, d_k)``: the
    statistic with head ``j`` of layer ``l`` left out (its pairs dropped from
    that layer's mean).  :func:`stratified_jackknife_se` turns replicates of
    any function of the spectrum into a standard error over heads.
    """
    C = as_float_array(pair_spectra, "pair_spectra", ndim=4)
    L, H, H2, k = C.shape
    if H2 != H or H < 3:
        raise ValueError(f"pair_spectra: expected (L, H, H, d_k) with H >= 3, got {C.shape}")
    iu = np.triu_indices(H, k=1)
    n_pairs = len(iu[0])
    layer_sum = C[:, iu[0], iu[1]].sum(axis=1)  # (L, k)
    layer_mean = layer_sum / n_pairs
    off = C.copy()
    off[:, np.arange(H), np.arange(H)] = 0.0
    without = (layer_sum[:, None, :] - off.sum(axis=2)) / (n_pairs - (H - 1))  # (L, H, k)
    total = layer_mean.sum(axis=0)
    replicates = (total[None, None, :] - layer_mean[:, None, :] + without) / L
    return {"value": total / L, "replicates": replicates}


def stratified_jackknife_se(value, replicates) -> np.ndarray:
    """Delete-one jackknife standard error with strata along axis 0.

    ``replicates``: ``(L, n, ...)``, the statistic with item ``i`` of stratum
    ``l`` left out; ``value`` the full-sample statistic ``(...)`` (used for
    the shape check).  ``se^2 = sum_l (n - 1)/n sum_i (T_li - mean_i T_li)^2``
    (heads resampled within layers, layers fixed).  With one stratum this is
    the ordinary jackknife.
    """
    R = as_float_array(replicates, "replicates", ndim=(2, 3, 4))
    v = np.asarray(value, dtype=float)
    if R.shape[2:] != v.shape:
        raise ValueError(f"replicates: expected shape (L, n) + {v.shape}, got {R.shape}")
    n = R.shape[1]
    if n < 2:
        raise ValueError("replicates: expected at least 2 items per stratum")
    dev = R - R.mean(axis=1, keepdims=True)
    return np.sqrt(((n - 1) / n * (dev**2).sum(axis=1)).sum(axis=0))[()]


def leading_share(trained, null, n_leading: int) -> float:
    """Share of the excess overlap ``e = trained - null`` (spectra ``(d_k,)``) carried by the leading ``n_leading`` angles.

    ``sum(e[:n_leading]) / sum(e)``; an excess spread evenly over the
    ``d_k`` angles gives ``n_leading/d_k``, one confined to them gives 1.
    Requires a positive total excess.
    """
    t = as_float_array(trained, "trained", ndim=1)
    n = as_float_array(null, "null", ndim=1)
    if n.shape != t.shape:
        raise ValueError(f"null: expected the shape of trained {t.shape}, got {n.shape}")
    m = positive_int(n_leading, "n_leading")
    if m > t.shape[0]:
        raise ValueError(f"n_leading: expected at most d_k = {t.shape[0]}, got {m}")
    e = t - n
    if not e.sum() > 0:
        raise ValueError("trained, null: expected a positive total excess overlap")
    return float(e[:m].sum() / e.sum())


def excess_spectrum_summary(pair_spectra, null_spectra, n_leading: int) -> dict:
    """The trained spectrum against a null's, with standard errors for every comparison.

    ``pair_spectra``: per layer :func:`mhanw.diversity.pair_cos2` (see
    :func:`spectrum_jackknife`); ``null_spectra``: ``(L, n, d_k)`` spectra of
    ``n`` null draws per layer (e.g. ``row_permutation_null(...)["key_spectrum"]``).
    The trained curve's s.e. is the stratified jackknife over heads; the null
    curve's is the s.e. of the mean over draws (its spread over draws,
    ``null_sd``, is the band of a single draw).  For the leading cosine and the
    :func:`leading_share` of the excess, the two sources add in quadrature
    (the null's through a delete-one-draw jackknife).  Returns ``trained``,
    ``trained_se``, ``null``, ``null_se``, ``null_sd`` (all ``(d_k,)``) and
    ``top``/``total``/``beyond_even``/``share`` dicts with ``value`` and ``se``
    (``total``: the summed excess over all angles; ``beyond_even``: the excess
    in the leading ``n_leading`` angles minus their even part of the total,
    ``sum(e[:m]) - m/d_k sum(e)``, which has the sign of ``share - m/d_k``
    when the total is positive and, being linear, a jackknife s.e. that does
    not blow up when the total nears zero).  The share is a ratio over the
    total, so it is estimable only when the total is positive in the full
    sample and in every jackknife replicate; otherwise its ``value`` and
    ``se`` are NaN ("not estimable", printed "–").
    """
    m = positive_int(n_leading, "n_leading")
    jk = spectrum_jackknife(pair_spectra)
    N = as_float_array(null_spectra, "null_spectra", ndim=3)
    if N.shape[2] != jk["value"].shape[0] or N.shape[1] < 2:
        raise ValueError(f"null_spectra: expected (L, n >= 2, {jk['value'].shape[0]}), got {N.shape}")
    per_draw = N.mean(axis=0)  # (n, d_k): the layer-averaged spectrum of each draw
    n = per_draw.shape[0]
    null = per_draw.mean(axis=0)
    null_loo = (null[None, :] * n - per_draw) / (n - 1)  # (n, d_k)
    trained, reps = jk["value"], jk["replicates"]
    # the share is a ratio over the total excess: defined only where every replicate's total is positive
    totals = np.concatenate(
        [(reps - null).sum(axis=-1).ravel(), (trained[None] - null_loo).sum(axis=-1), [(trained - null).sum()]]
    )

    def combined(f):
        a = np.array([[f(r, null) for r in layer] for layer in reps])
        b = np.array([f(trained, m) for m in null_loo])[None]
        return {
            "value": f(trained, null),
            "se": float(
                np.hypot(stratified_jackknife_se(f(trained, null), a), stratified_jackknife_se(f(trained, null), b))
            ),
        }

    return {
        "trained": trained,
        "trained_se": stratified_jackknife_se(trained, reps),
        "null": null,
        "null_se": per_draw.std(axis=0, ddof=1) / np.sqrt(n),
        "null_sd": per_draw.std(axis=0, ddof=1),
        "top": combined(lambda t, u: float(t[0] - u[0])),
        "top_trained": {"value": float(trained[0]), "se": float(stratified_jackknife_se(trained, reps)[0])},
        "top_null": {"value": float(null[0]), "se": float(per_draw[:, 0].std(ddof=1) / np.sqrt(n))},
        "total": combined(lambda t, u: float((t - u).sum())),
        "beyond_even": combined(lambda t, u: float((t - u)[:m].sum() - m / t.shape[0] * (t - u).sum())),
        "share": (
            combined(lambda t, u: leading_share(t, u, m))
            if np.all(totals > 0)
            else {"value": float("nan"), "se": float("nan")}
        ),
        "n_leading": m,
    }


# --------------------------------------------------------------------------- the printed formula's scale


def paper_scale_decomposition(W) -> dict:
    """``1 - HDI_printed = S * G`` exactly, for ``W`` ``(H, d, d_k)``.

    ``S = mean_{j<j'} n_j n_j' / d_k^2`` with ``n_j = ||W_j^T W_j||_F`` (the
    weights' scale: ``c^4 S`` for ``cW``) and ``G = (1 - HDI_printed)/S``, a
    weighted mean of the RV coefficients ``||W_j^T W_j'||_F^2 / (n_j n_j')``
    (geometry, scale free).  Returns ``one_minus_paper``, ``scale``,
    ``geometry`` and ``one_minus_rv`` (``1 - HDI_RV``, the unweighted mean RV).
    """
    W = _check(W)
    d_k = W.shape[2]
    B = diversity.block_gram(W)
    S = np.einsum("ijab,ijab->ij", B, B)
    n = np.sqrt(np.diag(S))
    if np.any(n == 0.0):
        raise ValueError(f"W: head {int(np.flatnonzero(n == 0.0)[0])} is zero")
    iu = np.triu_indices(W.shape[0], k=1)
    one_minus_paper = float(S[iu].mean()) / d_k**2
    scale = float(np.outer(n, n)[iu].mean()) / d_k**2
    return {
        "one_minus_paper": one_minus_paper,
        "scale": scale,
        "geometry": one_minus_paper / scale,
        "one_minus_rv": float((S / np.outer(n, n))[iu].mean()),
    }


def r2_bootstrap(x, y, n_boot: int, seed) -> dict:
    """Squared correlation of ``x`` and ``y`` (``(m,)``, e.g. ``ln S`` and ``ln(1 - HDI_printed)``) and its bootstrap s.e.

    The cases are resampled with replacement ``n_boot`` times (one stream of
    ``seed``); resamples with a constant ``x`` or ``y`` are skipped.  Returns
    ``r2``, ``se`` (ddof = 1 over resamples) and ``n_boot``.
    """
    x = as_float_array(x, "x", ndim=1)
    y = as_float_array(y, "y", ndim=1)
    if y.shape != x.shape or x.shape[0] < 3:
        raise ValueError(f"y: expected the shape of x {x.shape}, with at least 3 cases")
    n_boot = positive_int(n_boot, "n_boot", minimum=2, maximum=MAX_REPLICATES, what="resamples")
    for name, v in (("x", x), ("y", y)):
        if np.all(v == v[0]):
            raise ValueError(f"{name}: constant over the cases; its correlation is undefined")
    rng = np.random.default_rng(as_seed_sequence(seed))
    idx = rng.integers(0, x.shape[0], size=(n_boot, x.shape[0]))
    xs, ys = x[idx], y[idx]
    xs = xs - xs.mean(axis=1, keepdims=True)
    ys = ys - ys.mean(axis=1, keepdims=True)
    den = (xs * xs).sum(axis=1) * (ys * ys).sum(axis=1)
    ok = den > 0
    r2 = (xs * ys).sum(axis=1)[ok] ** 2 / den[ok]
    if ok.sum() < 2:
        raise ValueError(f"n_boot: fewer than 2 of {n_boot} resamples have a defined correlation; use more resamples")
    return {"r2": float(np.corrcoef(x, y)[0, 1] ** 2), "se": float(r2.std(ddof=1)), "n_boot": int(ok.sum())}


def layer_contrast(per_sentence, layer: int = -1) -> Estimate:
    """Mean ablation effect of one layer's heads minus that of the other layers' heads, per sentence.

    ``per_sentence``: ``(L, H, n)`` (:func:`ablation_effects`); returns the
    :class:`~mhanw.infra.estimates.Estimate` over sentences (paired: both
    means are taken on the same sentence).
    """
    E = as_float_array(per_sentence, "per_sentence", ndim=3)
    L = E.shape[0]
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or L < 2 or not -L <= layer < L:
        raise ValueError(f"layer: expected an index of one of {L} >= 2 layers, got {brief(layer)}")
    layer = layer % L
    others = np.delete(E, layer, axis=0)
    return Estimate.from_samples(E[layer].mean(axis=0) - others.mean(axis=(0, 1)))


# --------------------------------------------------------------------------- ablation


def ablation_effects(baseline, ablated) -> dict:
    """Change of sentence embeddings when one head is removed: ``1 - cos(ablated, baseline)``.

    ``baseline``: ``(n, D)``; ``ablated``: ``(L, H, n, D)`` (as returned by
    :meth:`mhanw.pretrained.Encoder.ablate_each_head`).  Returns
    ``per_sentence`` ``(L, H, n)``, ``mean`` and ``se`` ``(L, H)`` (s.e. over
    sentences, ddof = 1; needs ``n >= 2``).
    """
    b = as_float_array(baseline, "baseline", ndim=2)
    a = as_float_array(ablated, "ablated", ndim=4)
    if a.shape[2:] != b.shape:
        raise ValueError(f"ablated: expected shape (L, H) + {b.shape} to match baseline, got {a.shape}")
    n = b.shape[0]
    if n < 2:
        raise ValueError(f"baseline: expected at least 2 sentences for a standard error, got {n}")
    bn = np.linalg.norm(b, axis=1)
    an = np.linalg.norm(a, axis=3)
    if np.any(bn == 0) or np.any(an == 0):
        raise ValueError("baseline: embeddings must be non-zero")
    cos = np.einsum("lhnd,nd->lhn", a, b) / (an * bn)
    eff = 1.0 - cos
    est = Estimate.from_samples(eff)
    return {"per_sentence": eff, "mean": est.mean, "se": est.se}


def _ranks(x: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return rankdata(x)


def spearman_permutation(x, y, n_perm: int, seed, *, strata=None, alternative: str = "two-sided") -> dict:
    """Spearman correlation of ``x`` and ``y`` with a permutation p-value.

    ``x``, ``y``: ``(m,)``.  Without ``strata``: ``rho`` is Spearman's
    correlation and the null permutes ``y``.  With ``strata`` (``(m,)``
    labels, e.g. each head's layer): ``rho`` is the mean over strata of the
    within-stratum Spearman correlations and the null permutes ``y`` within
    each stratum, so that differences between strata cannot create a
    correlation.  ``p = (1 + #{T_perm at least as extreme as rho})/(n_perm + 1)``
    for ``alternative`` ``"two-sided"`` (``|T|``), ``"less"`` or ``"greater"``.
    Returns ``rho``, ``p``, ``n_perm``, ``null_sd`` (the standard deviation
    of the permutation null: the standard error of ``rho`` when the two are
    unrelated) and, with strata, ``per_stratum``
    (``{label: rho}``).
    """
    x = as_float_array(x, "x", ndim=1)
    y = as_float_array(y, "y", ndim=1)
    if y.shape != x.shape:
        raise ValueError(f"y: expected the shape of x {x.shape}, got {y.shape}")
    n_perm = positive_int(n_perm, "n_perm", maximum=MAX_REPLICATES, what="permutations")
    one_of(alternative, "alternative", ("two-sided", "less", "greater"))
    rng = np.random.default_rng(as_seed_sequence(seed))
    labels = np.zeros(x.shape[0], dtype=int) if strata is None else np.asarray(strata)
    if labels.shape != x.shape:
        raise ValueError(f"strata: expected the shape of x {x.shape}, got {labels.shape}")
    groups = [np.flatnonzero(labels == g) for g in np.unique(labels)]
    if any(len(g) < 3 for g in groups):
        raise ValueError("strata: expected at least 3 items per stratum")

    def standardized_ranks(v, idx):
        r = _ranks(v[idx])
        r = r - r.mean()
        norm = np.sqrt((r * r).sum())
        if norm == 0:
            raise ValueError("x, y: expected values that are not all tied within a stratum")
        return r / norm

    rx = [standardized_ranks(x, g) for g in groups]
    ry = [standardized_ranks(y, g) for g in groups]
    per = np.array([a @ b for a, b in zip(rx, ry)])
    rho = float(per.mean())
    null = np.zeros(n_perm)
    for a, b in zip(rx, ry):
        idx = np.argsort(rng.random((n_perm, len(b))), axis=1)  # n_perm independent permutations
        null += b[idx] @ a
    null /= len(groups)
    if alternative == "two-sided":
        extreme = np.abs(null) >= abs(rho) - 1e-12
    elif alternative == "less":
        extreme = null <= rho + 1e-12
    else:
        extreme = null >= rho - 1e-12
    out = {
        "rho": rho,
        "p": float((1 + extreme.sum()) / (n_perm + 1)),
        "n_perm": n_perm,
        "null_sd": float(null.std(ddof=1)) if n_perm > 1 else float("nan"),
    }
    if strata is not None:
        out["per_stratum"] = {g.item() if hasattr(g, "item") else g: float(r) for g, r in zip(np.unique(labels), per)}
    return out


# --------------------------------------------------------------------------- verdict rules
#
# One rule per claim the chapter checks.  Each returns a Verdict record; the
# thresholds are the named constants below, each with its reason.

#: A case is "more" ("less") diverse than chance at z >= Z_CALL (z <= -Z_CALL) against a null:
#: the project's 3-s.e. rule (a two-sided false alarm near 0.3% per case for a normal null).
Z_CALL = 3.0
#: The specialisation reading fails when MORE than this share of the (layer, object) cases is
#: significantly less diverse than chance (and holds when more than this share is more diverse and
#: none less): the claim speaks of trained heads in general, so a majority decides.
MAJORITY = 0.5
#: "Mostly the weights' scale": log S explains more than half of the variance of
#: ln(1 - HDI_printed) across the cases, by more than N_SE bootstrap standard errors.
R2_MOSTLY = 0.5
#: A model-preserving rescaling may move an index by rounding only: float64 on values of order 1.
INVARIANCE_TOL = 1e-9
#: The pruning reading needs a within-layer Spearman correlation of at least this size (negative):
#: Cohen's "large" correlation, the least at which one score orders a layer's heads usefully
#: (it explains a quarter of the variance of the ranks).  The reading fails when the data exclude it.
RHO_USEFUL = -0.5
#: "A few shared directions": the leading 4 of the d_k = 32 principal angles (one eighth).
N_LEADING = 4

SECTION = "sec:pretrained"
#: The claim of :func:`diversity_verdict`: a measurement of this one trained model (its heads against
#: chance), not the training claim itself, which chapter 10 decides per setting by training heads.
DIVERSITY_CLAIM = "pretrained/heads-more-diverse-than-chance"


def _case_counts(z_by_null: dict) -> tuple[int, int, int]:
    zs = [np.asarray(v, dtype=float) for v in z_by_null.values()]
    if not zs or len({v.shape for v in zs}) != 1 or zs[0].size == 0:
        raise ValueError("z_by_null: expected one non-empty array of z-scores of one shape per null")
    Z = np.stack([v.ravel() for v in zs])
    if not np.all(np.isfinite(Z)):
        raise ValueError("z_by_null: expected finite z-scores")
    less = int(np.all(Z <= -Z_CALL, axis=0).sum())
    more = int(np.all(Z >= Z_CALL, axis=0).sum())
    return less, more, Z.shape[1]


@checked(z_by_null=V.named(V.numbers), unit=V.text)
def diversity_verdict(z_by_null: dict, *, unit: str = "(layer, object) cases") -> Verdict:
    """The heads of this trained encoder are more diverse than chance (what the training reading predicts).

    A measurement of one distilled, fine-tuned model, claim :data:`DIVERSITY_CLAIM`: it can say that the
    reading "training drives heads towards orthogonal subspaces" is not supported for this model, not
    decide that reading in general (chapter 10 does, by training heads).

    ``z_by_null``: ``{null name: z-scores}`` of the principal-angle HDI of each
    (layer, object) case against each null (arrays of one shape).  A case is
    less (more) diverse than chance when its z is at most ``-Z_CALL`` (at least
    ``Z_CALL``) against EVERY null.  The reading fails as stated when more than
    ``MAJORITY`` of the cases are less diverse than chance, holds when more
    than ``MAJORITY`` are more diverse and none is less, and is undecided otherwise.
    """
    less, more, n = _case_counts(z_by_null)
    nulls = join_list(list(z_by_null))
    if less > MAJORITY * n:
        verdict = FAILS
    elif more > MAJORITY * n and less == 0:
        verdict = HOLDS
    else:
        verdict = UNDECIDED
    return Verdict(
        claim=DIVERSITY_CLAIM,
        statement="the heads of each layer of this trained encoder (one distilled, fine-tuned model) are more "
        "diverse than chance (a measurement of this model; whether training drives heads apart is "
        "decided where heads are trained, chapter 10)",
        verdict=verdict,
        criterion=(
            f"a {unit[:-1] if unit.endswith('s') else unit} is less (more) diverse than chance when the z-score "
            f"of its principal-angle HDI is at most -{Z_CALL:g} (at least +{Z_CALL:g}) against every null "
            f"({nulls}); the reading fails when more than {MAJORITY:.0%} of the cases are less diverse, "
            f"holds when more than {MAJORITY:.0%} are more diverse and none less"
        ),
        statistics=(
            Statistic(f"{unit} less diverse than chance", less),
            Statistic(f"{unit} more diverse than chance", more),
            Statistic(f"{unit}", n),
        ),
        section=SECTION,
    )


def _diversity_counts(record: Verdict) -> tuple[int, int, int] | None:
    """``(less, more, cases)`` of a record of :func:`diversity_verdict` (whole numbers, ``less + more <=
    cases``), or ``None`` when its statistics are not those three counts."""
    stats = {st.name: st.value for st in record.statistics}
    found = [
        [v for k, v in stats.items() if test(k)]
        for test in (lambda k: "less diverse" in k, lambda k: "more diverse" in k, lambda k: "than chance" not in k)
    ]
    if any(len(f) != 1 or f[0] < 0 or f[0] != int(f[0]) for f in found):
        return None
    less, more, n = (int(f[0]) for f in found)
    return (less, more, n) if less + more <= n else None


def _diversity_record(record, name: str) -> Verdict:
    """The record of :func:`diversity_verdict` (its claim and its three counts)."""
    if not isinstance(record, Verdict) or record.claim != DIVERSITY_CLAIM or _diversity_counts(record) is None:
        raise ValueError(
            f"{name}: expected the record of diversity_verdict (its claim and its counts of cases less "
            f"and more diverse than chance), got {brief(record)}"
        )
    return record


@checked(record=_diversity_record)
def diversity_sentence(record: Verdict) -> str:
    """The verdict of :func:`diversity_verdict` as one clause for the abstract and the summary (LaTeX-safe).

    E.g. "its heads are less diverse than chance in 17 of 24 (layer, object)
    cases, against every null, so this trained model's heads are not more
    diverse than chance".  It describes the one model measured: whether
    training drives heads apart is decided where heads are trained (chapter 10).
    """
    less, more, n = _diversity_counts(record)
    if record.verdict == FAILS:
        return (
            f"its heads are less diverse than chance in {count_of(less, n, '(layer, object) cases')}, "
            "against every null, so this trained model's heads are not more diverse than chance"
        )
    if record.verdict == HOLDS:
        return (
            f"its heads are more diverse than chance in {count_of(more, n, '(layer, object) cases')}, "
            "against every null, so this trained model's heads are more diverse than chance"
        )
    return (
        f"whether its heads are more diverse than chance {predicate(record.verdict)} (less diverse than chance "
        f"against every null: {count_of(less, n)})"
    )


@checked(r2=V.number, se=V.standard_error)
def printed_scale_verdict(r2: float, se: float) -> Verdict:
    """The printed HDI measures the heads' geometry rather than the weights' scale.

    ``r2``: share of the variance of ``ln(1 - HDI_printed)`` across the cases
    that ``log S`` (:func:`paper_scale_decomposition`) explains, with its
    bootstrap standard error ``se``.  Fails as stated when ``r2`` exceeds
    ``R2_MOSTLY`` by more than ``N_SE`` s.e.; holds when it is below by as much.
    """
    r2 = V.number(r2, "r2")
    if not 0.0 <= r2 <= 1.0:
        raise ValueError(f"r2: expected a value in [0, 1], got {brief(r2)}")
    # "holds" for the claim means the scale explains LESS than R2_MOSTLY: sign -1 on r2 - R2_MOSTLY
    verdict = significant_effect(r2 - R2_MOSTLY, se, sign=-1)
    return Verdict(
        claim="pretrained/printed-hdi-geometry",
        statement="in a trained model the printed HDI measures the geometry of the heads, not the scale of the weights",
        verdict=verdict,
        criterion=(
            f"R^2 of ln(1 - HDI_printed) on the log scale factor ln S across the (layer, object) cases; "
            f"fails when R^2 exceeds {R2_MOSTLY:g} by more than {N_SE:g} bootstrap s.e. (the scale explains "
            f"most of it), holds when it is below {R2_MOSTLY:g} by as much"
        ),
        statistics=(Statistic("R^2 of ln(1 - HDI_printed) on ln S", r2, se),),
        section=SECTION,
    )


@checked(printed_change=V.nonnegative, pa_change=V.nonnegative, rv_change=V.nonnegative)
def printed_invariance_verdict(printed_change: float, pa_change: float, rv_change: float) -> Verdict:
    """The printed HDI is unchanged by ``W_Q -> c W_Q``, ``W_K -> W_K / c``, which leaves the model unchanged.

    Arguments: the largest change of each index of the keys and queries along
    the rescaling (exact computations, no sampling error).  Fails as stated
    when the printed index moves by more than ``INVARIANCE_TOL``; holds
    otherwise (the run detects any change above that tolerance).
    """
    vals = [
        V.nonnegative(v, n)
        for v, n in ((printed_change, "printed_change"), (pa_change, "pa_change"), (rv_change, "rv_change"))
    ]
    verdict = FAILS if vals[0] > INVARIANCE_TOL else HOLDS
    return Verdict(
        claim="pretrained/printed-hdi-invariance",
        statement="the printed HDI is a property of the model: a rescaling W_Q -> c W_Q, W_K -> W_K / c, "
        "which leaves every attention logit unchanged, leaves it unchanged",
        verdict=verdict,
        criterion=(
            f"largest change of the printed HDI of the keys and queries over c in [1/2, 2]; fails above "
            f"{INVARIANCE_TOL:g} (rounding); the principal-angle and RV indices are shown for comparison"
        ),
        statistics=(
            Statistic("largest change of HDI_printed", vals[0]),
            Statistic("largest change of HDI_PA", vals[1]),
            Statistic("largest change of HDI_RV", vals[2]),
        ),
        detectable=INVARIANCE_TOL if verdict == HOLDS else None,
        section=SECTION,
    )


@checked(rho=V.number, se=V.standard_error, p=V.number)
def redundancy_verdict(rho: float, se: float, p: float) -> Verdict:
    """A redundant head (large overlap with its layer) matters less when removed.

    ``rho``: mean within-layer Spearman correlation of redundancy and ablation
    effect (keys, the pre-declared primary test); ``se``: its standard error,
    the standard deviation of the within-layer permutation null; ``p``: the
    two-sided permutation p-value.  Holds when ``rho <= -N_SE se`` (a
    significant negative correlation); fails as stated when ``rho >= N_SE se``
    (the opposite sign) or when ``rho - N_SE se > RHO_USEFUL`` (the data
    exclude a correlation large enough to pick pruning candidates); undecided otherwise.
    """
    rho = V.number(rho, "rho")
    if not -1.0 <= rho <= 1.0:
        raise ValueError(f"rho: expected a correlation in [-1, 1], got {brief(rho)}")
    s = V.standard_error(se, "se")
    p = V.number(p, "p")
    if not 0.0 < p <= 1.0:
        raise ValueError(f"p: expected a p-value in (0, 1], got {brief(p)}")
    if rho <= -N_SE * s:
        verdict = HOLDS
    elif rho >= N_SE * s or rho - N_SE * s > RHO_USEFUL:
        verdict = FAILS
    else:
        verdict = UNDECIDED
    return Verdict(
        claim="pretrained/redundancy-predicts-ablation",
        statement="within a layer, a head that overlaps more with the other heads matters less when removed, "
        "so that redundancy picks pruning candidates",
        verdict=verdict,
        criterion=(
            f"mean within-layer Spearman correlation rho of the key projections' redundancy and the ablation "
            f"effect, s.e. from the within-layer permutation null; holds when rho <= -{N_SE:g} s.e.; fails "
            f"when rho >= +{N_SE:g} s.e. or when rho - {N_SE:g} s.e. > {RHO_USEFUL:g} (a correlation large "
            f"enough to pick pruning candidates is excluded)"
        ),
        statistics=(Statistic("within-layer Spearman rho", rho, s), Statistic("permutation p", p)),
        detectable=N_SE * s,
        section=SECTION,
    )


@checked(
    share=V.number_or_not_estimable,
    se=V.number_or_not_estimable,
    n_leading=V.positive_count,
    d_k=V.positive_count,
    total=V.optional(V.estimate),
    beyond_even=V.optional(V.estimate),
    top=V.optional(V.estimate),
    top_null=V.optional(V.estimate),
    null=V.text,
)
def shared_directions_verdict(
    share: float,
    se: float,
    n_leading: int,
    d_k: int,
    *,
    total=None,
    beyond_even=None,
    top=None,
    top_null=None,
    null: str = "row-reassignment null",
) -> Verdict:
    """The excess overlap of trained heads over a null sits in a few shared directions.

    ``share``: :func:`leading_share` of the excess spectrum (its standard error
    ``se`` from :func:`excess_spectrum_summary`); an even spread gives
    ``n_leading/d_k``.  Holds when ``share - n_leading/d_k > N_SE se``; fails
    as stated when it is below the even share by as much; undecided otherwise.
    With ``total`` and ``beyond_even`` (``(value, se)`` of the total excess
    and of the leading angles' excess beyond their even part of it, from
    :func:`excess_spectrum_summary`) the rule avoids the ratio: a total at or
    below zero leaves nothing for the share to divide (undecided; fails as
    stated when it is ``N_SE`` s.e. below zero), and otherwise
    ``beyond_even`` decides by ``N_SE`` s.e. -- it has the sign of
    ``share - n_leading/d_k``, and its s.e. stays honest when the total is
    small, where the share's delta-method s.e. does not.  ``share`` and ``se``
    NaN (not estimable) are accepted only with both given.
    ``top``/``top_null``: optional ``(value, se)`` of the leading squared cosine,
    trained and under the null, reported beside the share.
    """
    n_leading = positive_int(n_leading, "n_leading")
    d_k = positive_int(d_k, "d_k")
    if n_leading > d_k:
        raise ValueError(f"n_leading: expected at most d_k = {d_k}, got {n_leading}")
    even = n_leading / d_k
    if (total is None) != (beyond_even is None):
        raise ValueError("total, beyond_even: expected both (value, se) pairs or neither")
    if math.isnan(share) and total is None:
        raise ValueError("share: NaN (not estimable) needs total and beyond_even, the (value, se) of the excess")
    if math.isnan(share) and not math.isnan(se):
        raise ValueError(f"se: expected NaN, as share is NaN (not estimable), got {se!r}")
    if math.isnan(se) and not math.isnan(share):
        raise ValueError(f"se: expected a standard error of share = {share!r}, got nan")
    if not math.isnan(se):
        se = V.standard_error(se, "se")
    leading = f"the leading {n_leading} of {d_k} angles"
    share_stats = ([Statistic(f"share of the excess in {leading}", share, se)] if not math.isnan(share) else []) + [
        Statistic("share under an even spread", even)
    ]
    if total is None:
        verdict = significant_effect(share - even, se, sign=1)
        stats = share_stats
    elif total[0] <= 0:  # no excess for the share to divide: decided by the total, the deciding number first
        verdict = FAILS if significant_effect(*total) == FAILS else UNDECIDED
        stats = [Statistic("total excess over all angles", *total)] + share_stats
    else:
        verdict = significant_effect(*beyond_even, sign=1)
        stats = [
            Statistic(f"excess in {leading} beyond their even part of the total", *beyond_even),
            *share_stats,
            Statistic("total excess over all angles", *total),
        ]
    if top is not None:
        stats.append(Statistic("leading squared cosine, trained", *V.estimate(top, "top")))
    if top_null is not None:
        stats.append(Statistic(f"leading squared cosine, {null}", *V.estimate(top_null, "top_null")))
    return Verdict(
        claim="pretrained/shared-directions",
        statement=(
            f"the excess overlap of the trained key heads over the {null} sits in a few shared directions "
            f"(the leading principal angles), not spread over all {d_k}"
        ),
        verdict=verdict,
        criterion=(
            f"share of the excess spectrum (trained minus null, mean over head pairs and layers) in the leading "
            f"{n_leading} angles, against the even share {n_leading}/{d_k}; holds (fails) when it is above "
            f"(below) it by more than {N_SE:g} s.e. (jackknife over heads within layers, and over null draws)"
            + (
                ""
                if total is None
                else f", decided on the excess in the leading angles beyond their even part of the total, which has "
                f"the sign of share minus even share and a jackknife s.e. that stays valid when the total is "
                f"small; a total at or below zero leaves no share (undecided, fails when {N_SE:g} s.e. below)"
            )
        ),
        statistics=tuple(stats),
        section=SECTION,
    )


@checked(
    last_minus_rest=V.estimate,
    key_positive_layers=V.count,
    n_layers=V.positive_count,
    pa_change=V.nonnegative,
    rv_change=V.nonnegative,
    top_excess=V.estimate,
)
def guard_text(
    *, last_minus_rest, key_positive_layers: int, n_layers: int, pa_change: float, rv_change: float, top_excess
) -> None:
    """Check the sentences of the chapter and its section that state a direction (raises
    :class:`~mhanw.infra.verdicts.VerdictGuardError` "the text says ...; the numbers say ...").

    ``last_minus_rest``, ``top_excess``: ``(value, se)`` of the last layer's mean
    ablation effect minus the other layers' (:func:`layer_contrast`) and of the
    leading squared cosine of the trained keys minus the row null's
    (:func:`excess_spectrum_summary`); ``key_positive_layers``: in how many of
    ``n_layers`` layers the keys' within-layer Spearman correlation is positive;
    ``pa_change``, ``rv_change``: the largest change of those indices along the
    model-preserving rescaling.
    """
    if key_positive_layers > n_layers:
        raise ValueError(
            f"key_positive_layers: expected at most n_layers = {n_layers}, got {brief(key_positive_layers)}"
        )
    m, se = V.estimate(last_minus_rest, "last_minus_rest")
    t, tse = V.estimate(top_excess, "top_excess")
    guard(
        bool(m > N_SE * se),
        "removing a head of the last layer changes the embeddings more than removing a head of another layer",
        f"the difference is {m:.2g} ± {se:.2g}",
    )
    guard(
        0 < int(key_positive_layers) < int(n_layers),
        "the within-layer correlations of the keys have no consistent sign",
        f"{key_positive_layers} of {n_layers} are positive",
    )
    guard(
        bool(pa_change < INVARIANCE_TOL and rv_change < INVARIANCE_TOL),
        "the principal-angle and RV indices do not move under the rescaling",
        f"they move by {pa_change:.2g} and {rv_change:.2g}",
    )
    guard(
        bool(t > N_SE * tse),
        "the leading squared cosine of trained key heads exceeds that of the row null",
        f"the difference is {t:.3g} ± {tse:.2g}",
    )


# --------------------------------------------------------------------------- the paper's table

#: How the table names the objects and the normalizations.
OBJECT_LABELS = {
    "query": r"$W_Q^h$",
    "key": r"$W_K^h$",
    "value": r"$W_V^h$",
    "qk_circuit": r"$W_Q^h W_K^{h\top}$",
}
NORMALIZATION_LABELS = {"paper": "printed", "principal_angles": "PA", "rv": "RV"}


def _z_text(z: float) -> str:
    if not np.isfinite(z):
        return r"\text{n/a}"
    return f"{z:+.0f}" if abs(z) >= 9.95 else f"{z:+.1f}"


def hdi_table_latex(observed: dict, z: dict, random: dict) -> str:
    """A booktabs ``tabular`` of the per-layer HDIs with their z-scores, for the paper.

    ``observed`` and ``z``: ``{object: (n_layers, 3)}`` (``NORMALIZATIONS``
    order, e.g. from :func:`layer_hdi` and :func:`null_summary`); ``random``:
    ``{object: (3,)}``, the mean HDI of random heads of the same shape.  One
    row per object and normalization, one column per layer (numbered from 1)
    and a last column for the random heads; each cell reads
    ``value (z)``.  Objects are those of :data:`OBJECTS` present in ``observed``.
    """
    names = [o for o in OBJECTS if o in observed]
    if not names:
        raise ValueError(f"observed: expected some of {OBJECTS}, got {sorted(observed)}")
    shapes = set()
    for o in names:
        if o not in z or o not in random:
            raise ValueError(f"z, random: expected an entry for {o!r}")
        obs = as_float_array(observed[o], "observed", ndim=2)
        zz = np.asarray(z[o], dtype=float)
        if (
            obs.shape[1] != len(NORMALIZATIONS)
            or zz.shape != obs.shape
            or np.shape(random[o]) != (len(NORMALIZATIONS),)
        ):
            raise ValueError(f"observed, z, random: expected shapes (L, 3), (L, 3), (3,) for {o!r}")
        shapes.add(obs.shape)
    if len(shapes) != 1:
        raise ValueError(f"observed: expected one shape for every object, got {shapes}")
    L = shapes.pop()[0]
    lines = [
        r"\begingroup\small\setlength{\tabcolsep}{3pt}",
        r"\begin{tabular}{ll" + "c" * L + "c}",
        r"\toprule",
        r" & & \multicolumn{" + str(L) + r"}{c}{layer} & random \\",
        r"\cmidrule(lr){3-" + str(L + 2) + r"}\cmidrule(lr){" + str(L + 3) + "-" + str(L + 3) + "}",
        r"heads & HDI & " + " & ".join(str(l + 1) for l in range(L)) + r" & Haar \\",
        r"\midrule",
    ]
    for i, o in enumerate(names):
        if i:
            lines.append(r"\addlinespace")
        for n, norm in enumerate(NORMALIZATIONS):
            cells = [f"${observed[o][l][n]:.3f}$\\,{{\\scriptsize$({_z_text(float(z[o][l][n]))})$}}" for l in range(L)]
            label = OBJECT_LABELS[o] if n == 0 else ""
            lines.append(
                f"{label} & {NORMALIZATION_LABELS[norm]} & "
                + " & ".join(cells)
                + f" & ${float(random[o][n]):.3f}$ \\\\"
            )
    lines += [r"\bottomrule", r"\end{tabular}", r"\endgroup"]
    return "\n".join(lines)


def figure_style(L: int) -> dict:
    """The colours, markers and names of the four weight objects (``OBJECTS``), the layer numbers
    ``1..L`` and the legend placement shared by chapter 9's figures."""
    import seaborn as sns

    return dict(
        colors=dict(zip(OBJECTS, sns.color_palette("colorblind", 4))),
        markers=dict(zip(OBJECTS, ("o", "s", "^", "D"))),
        names={"query": "$W_Q$", "key": "$W_K$", "value": "$W_V$", "qk_circuit": r"$W_QW_K^\top$"},
        layers=np.arange(1, L + 1),
        BELOW=dict(loc="upper center", bbox_to_anchor=(0.5, -0.22), columnspacing=0.8, handletextpad=0.4),
    )


@notebook_helper
def geometry_figure(
    excess, excess_layer, rescaled, decomp, log_s, log_g, r2, c_grid, d_k: int, L: int, style: dict, figures_dir
):
    """Chapter 9's figure of where the heads' overlap sits: (a) the excess principal-angle spectrum
    of head pairs against the row and layer nulls (``excess``, ``excess_layer``: per object, from
    :func:`excess_spectrum_summary`), (b) the printed HDI of one model under the rescaling ``c_grid``
    (``rescaled[name]``: ``(L, len(c_grid), 3)``), (c) the scale decomposition of ``1 - HDI_printed``
    (``decomp``, ``log_s``, ``log_g``, ``r2`` from :func:`r2_bootstrap`); ``d_k`` the head dimension.
    ``style``: :func:`figure_style`."""
    import matplotlib.pyplot as plt  # noqa: F401
    import seaborn as sns  # noqa: F401

    from ..infra import figures

    d_k = positive_int(d_k, "d_k")
    colors, markers, names, layers, BELOW = (style[k] for k in ("colors", "markers", "names", "layers", "BELOW"))
    NORM, PA, OBJ = NORMALIZATIONS, NORMALIZATIONS.index("principal_angles"), OBJECTS
    # where the excess overlap sits, and what the printed formula measures
    fig, (ax_a, ax_b, ax_c) = figures.panels(3, height=2.65)
    k = np.arange(1, d_k + 1)
    for name, mk in (("key", "o"), ("value", "^")):
        e = excess[name]
        ax_a.plot(
            k,
            e["trained"],
            color=colors[name],
            marker=mk,
            ms=2.5,
            markevery=[i for i in (0, 1, 3, 7, 15, 31) if i < d_k],
            label=f"{names[name]} trained",
        )
        ax_a.fill_between(
            k,
            e["trained"] - figures.half_width(e["trained_se"]),
            e["trained"] + figures.half_width(e["trained_se"]),
            color=colors[name],
            alpha=0.25,
            lw=0,
        )
        ax_a.errorbar(
            k,
            e["null"],
            yerr=figures.half_width(e["null_sd"]),
            color=colors[name],
            ls="--",
            lw=1.0,
            label=f"{names[name]} row null",
        )
    ax_a.plot(k, excess_layer["key"]["null"], color=colors["key"], ls=":", lw=1.2, label=f"{names['key']} layer null")
    ax_a.set(
        xlabel=r"principal angle $i$ (largest first)",
        ylabel=r"mean $\cos^2\theta_i$ over head pairs",
        title="(a) shared directions",
        xscale="log",
    )
    ax_a.set_xticks([t for t in (1, 2, 4, 8, 16, 32) if t <= d_k], [str(t) for t in (1, 2, 4, 8, 16, 32) if t <= d_k])
    ax_a.set_xticks([], minor=True)
    ax_a.legend(**{**BELOW, "columnspacing": 0.5}, ncol=2, handlelength=1.6)

    for name, ls in (("key", "-"), ("query", "--")):
        for l in range(L):
            ax_b.plot(
                c_grid,
                rescaled[name][l, :, NORM.index("paper")],
                color=colors[name],
                ls=ls,
                lw=0.9,
                label=f"{names[name]}, printed" if l == 0 else None,
            )
        ax_b.plot(c_grid, rescaled[name][:, :, PA].T, color=colors[name], ls=ls, lw=0.6, alpha=0.5)
    ax_b.plot([], [], color="grey", lw=0.6, label="PA (flat)")
    ax_b.set(
        xscale="log",
        xlabel=r"$c$ in $W_Q\to cW_Q$, $W_K\to W_K/c$",
        ylabel="HDI (one line per layer)",
        title="(b) one model, many printed HDIs",
    )
    ax_b.set_xticks([0.5, 1, 2], ["1/2", "1", "2"])
    ax_b.set_xticks([], minor=True)
    ax_b.legend(**BELOW, ncol=1)

    for name in OBJ:
        s = [dc["scale"] for dc in decomp[name]]
        y = [dc["one_minus_paper"] for dc in decomp[name]]
        ax_c.scatter(s, y, color=colors[name], marker=markers[name], label=names[name], s=14, zorder=3)
    grid = np.geomspace(np.exp(log_s.min()) / 1.5, np.exp(log_s.max()) * 1.5, 10)
    ax_c.fill_between(
        grid,
        grid * np.exp(log_g.min()),
        grid * np.exp(log_g.max()),
        color="grey",
        alpha=0.2,
        lw=0,
        label=r"$S\cdot G$, $G$ in its range",
    )
    ax_c.set(
        xscale="log",
        yscale="log",
        xlabel=r"scale $S=\mathrm{mean}\, n_jn_{j'}/d_k^2$",
        ylabel=r"$1-\mathrm{HDI}_{\mathrm{printed}}$",
        title=f"(c) scale: $R^2={r2['r2']:.2f}\\pm{r2['se']:.2f}$",
    )
    ax_c.legend(**BELOW, ncol=2)
    figures.save(
        fig,
        "09_pretrained_head_diversity",
        figures_dir,
        caption="(a) The mean squared cosine of each principal angle between head pairs, trained (solid, with "
        "its band) against the row null (dashed, $\\pm2$ null s.d.) and the layer null (dotted): where the "
        "solid line lies above the nulls, heads share more directions than chance. (b) The printed HDI of "
        "one and the same model as $W_Q\\to cW_Q$, $W_K\\to W_K/c$, against the flat principal-angle HDI. "
        "(c) How much of $1-\\mathrm{HDI}_{\\mathrm{printed}}$ the weights' scale $S$ explains.",
        error_bars=True,
    )


def chance_call(z: float) -> str:
    """The call of one (layer, object, normalization) case against one null, by the rule the diversity
    record counts with: ``"more"`` (diverse than chance) when ``z >= Z_CALL``, ``"less"`` when
    ``z <= -Z_CALL``, else ``"indistinguishable"``."""
    from ..infra.validate import real_scalar

    z = real_scalar(z, "z")
    return "more" if z >= Z_CALL else "less" if z <= -Z_CALL else "indistinguishable"


def _z_by_null(z_all) -> dict:
    """``z_all`` checked: null -> object (each of :data:`OBJECTS`) -> finite ``(layers, normalizations)``
    z-scores, the same number of layers throughout."""
    if not isinstance(z_all, Mapping) or not z_all:
        raise ValueError(f"z_all: expected a mapping of null models to z-scores, got {brief(z_all)}")
    out, shape = {}, None
    for lab, zz in z_all.items():
        if not isinstance(zz, Mapping) or set(zz) != set(OBJECTS):
            raise ValueError(f"z_all[{lab!r}]: expected the objects {', '.join(OBJECTS)}, got {brief(zz)}")
        out[lab] = {name: as_float_array(zz[name], f"z_all[{lab!r}][{name!r}]", ndim=2) for name in OBJECTS}
        for name, z in out[lab].items():
            if z.shape[1] != len(NORMALIZATIONS) or shape not in (None, z.shape):
                raise ValueError(
                    f"z_all[{lab!r}][{name!r}]: expected (layers, {len(NORMALIZATIONS)}) z-scores "
                    f"like the others, got shape {z.shape}"
                )
            shape = z.shape
    return out


@notebook_helper
def nulls_figure(z_all: dict, style: dict, figures_dir) -> None:
    """The figure ``09_pretrained_head_diversity_nulls``: one heat map per null model (``z_all``: null ->
    object -> ``(layers, normalizations)`` z-scores), a row per object and normalization, a column per
    layer, each cell annotated with its z-score (clipped to +-30 for the colour)."""
    z_all = _z_by_null(z_all)
    if not isinstance(style, Mapping) or not {"names", "layers"} <= set(style):
        raise ValueError(f"style: expected figure_style(L), with 'names' and 'layers', got {brief(style)}")
    import seaborn as sns

    from ..infra import figures

    names, layers = style["names"], style["layers"]
    fig, axes = figures.panels(3, height=2.4, gridspec_kw={"width_ratios": [1.45, 1.0, 1.0]})
    ylabels = [f"{names[name]} {NORM_LABEL[norm]}" for name in OBJECTS for norm in NORMALIZATIONS]
    for i, (ax, (lab, zz)) in enumerate(zip(axes, z_all.items())):
        zmat = np.array([zz[name][:, n] for name in OBJECTS for n in range(len(NORMALIZATIONS))])
        annot = np.vectorize(lambda v: f"{round(v)}" if abs(v) < 999.5 else f"{round(v / 1000)}k")(zmat)
        sns.heatmap(
            np.clip(zmat, -30, 30),
            ax=ax,
            cmap="RdBu_r",
            center=0,
            vmin=-30,
            vmax=30,
            cbar=False,
            annot=annot,
            fmt="",
            annot_kws={"fontsize": 7},
            linewidths=0.4,
            linecolor="white",
            xticklabels=layers,
            yticklabels=ylabels if i == 0 else False,
        )
        ax.tick_params(axis="both", labelsize=7, length=2, left=i == 0, bottom=True)
        ax.tick_params(axis="y", rotation=0)
        ax.set(xlabel="layer", title=f"({'abc'[i]}) {lab}")
    figures.save(
        fig,
        "09_pretrained_head_diversity_nulls",
        figures_dir,
        caption="Each cell is the $z$-score of one layer's HDI (a column) for one object and normalization "
        "(a row) against one null model (a panel): red is more diverse than that chance model, blue "
        "less, and a case counts as beyond chance only where $|z|\\ge 3$ under every null.",
    )


@notebook_helper
def ablation_figure(effects, red, within, L: int, H: int, style: dict, figures_dir):
    """Chapter 9's ablation figure: (a) the effect of removing each head (``effects['mean']``,
    ``(L, H)``), (b) that effect against the key redundancy ``red['key']`` ``(L, H)``, ±2 s.e., (c) the
    within-layer Spearman correlations ``within[name]['per_stratum']``.  ``style``: :func:`figure_style`."""
    import matplotlib.pyplot as plt  # noqa: F401
    import seaborn as sns  # noqa: F401

    from ..infra import figures

    H = positive_int(H, "H")
    colors, markers, names, layers, BELOW = (style[k] for k in ("colors", "markers", "names", "layers", "BELOW"))
    OBJ = OBJECTS
    fig, (ax_a, ax_b, ax_c) = figures.panels(3, height=2.55, gridspec_kw={"width_ratios": [1.2, 1.0, 0.85]})
    sns.heatmap(
        effects["mean"],
        ax=ax_a,
        cmap="viridis",
        norm=plt.matplotlib.colors.LogNorm(),
        xticklabels=np.arange(1, H + 1),
        yticklabels=layers,
        cbar_kws={"label": r"mean $1-\cos$", "pad": 0.02},
    )
    ax_a.tick_params(axis="both", labelsize=7, length=2, rotation=0)
    ax_a.set_xticks(np.arange(H)[::2] + 0.5, np.arange(1, H + 1)[::2])
    ax_a.set(xlabel="head", ylabel="layer", title="(a) effect of removing one head")

    layer_colors = sns.color_palette("colorblind", L)
    layer_markers = ("o", "s", "^", "v", "D", "P")
    for l in range(L):
        ax_b.errorbar(
            red["key"][l],
            effects["mean"][l],
            yerr=figures.half_width(effects["se"][l]),
            marker=layer_markers[l],
            ms=3.5,
            linestyle="none",
            color=layer_colors[l],
            mfc="white" if l % 2 else layer_colors[l],
            label=f"{l + 1}",
        )
    lo, hi = (effects["mean"] - 2 * effects["se"]).min(), (effects["mean"] + 2 * effects["se"]).max()
    ax_b.set(
        yscale="log",
        xlabel=r"redundancy of $W_{K,j}$",
        ylabel=r"mean $1-\cos$",
        title="(b) redundancy vs effect",
        ylim=(max(lo, 1e-6) / 1.5, hi * 1.5),
    )
    ax_b.legend(
        title="layer",
        title_fontsize=7,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
        ncol=6,
        columnspacing=0.3,
        handletextpad=0.05,
    )

    for i, name in enumerate(OBJ):
        rho_l = [within[name]["per_stratum"][l] for l in range(L)]
        ax_c.plot(
            layers + (i - 1.5) * 0.12,
            rho_l,
            marker=markers[name],
            linestyle="none",
            ms=3.5,
            color=colors[name],
            label=f"{names[name]}: {within[name]['rho']:+.2f}",
        )
    ax_c.axhline(0, color="k", lw=0.6)
    ax_c.set(
        xlabel="layer",
        ylabel=r"Spearman $\rho$ within the layer",
        ylim=(-1.05, 1.05),
        xticks=layers,
        yticks=[-1, -0.5, 0, 0.5, 1],
        title="(c) within layers",
    )
    ax_c.legend(
        title="mean over layers",
        title_fontsize=7,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
        ncol=2,
        columnspacing=0.4,
        handletextpad=0.1,
    )
    figures.save(
        fig,
        "09_pretrained_head_diversity_ablation",
        figures_dir,
        caption="(a) How much the sentence embeddings change ($1-\\cos$ to the intact model) when one head "
        "is removed, per layer and head. (b) That effect against the head's redundancy, one colour per "
        "layer: a redundant head that matters little sits to the right and low. (c) The Spearman "
        "correlation of redundancy and effect within each layer, per object; the pre-declared test "
        "is the keys' mean over layers.",
        error_bars=True,
    )


# --------------------------------------------------------------------------- the closing bookkeeping

#: The values of the notebook's cells that :func:`report` reads, by the names the chapter gives them.
REPORT_INPUTS = (
    "H",
    "L",
    "NORM",
    "OBJ",
    "PA",
    "c_grid",
    "calls",
    "case_calls",
    "change",
    "d",
    "d_k",
    "decomp",
    "diversity_record",
    "effects",
    "excess",
    "excess_layer",
    "fidelity",
    "haar",
    "haar_expected",
    "invariance_record",
    "key_at",
    "last_vs_rest",
    "null_mean",
    "null_sd",
    "null_spectrum",
    "observed",
    "p",
    "pooled",
    "r2",
    "r2_scale",
    "random_mean",
    "red",
    "redundancy_record",
    "rescaled",
    "scale_record",
    "seed",
    "shared_record",
    "sizes",
    "spectrum",
    "spread",
    "texts",
    "top",
    "weights",
    "within",
    "z",
    "z_all",
)


@notebook_helper
def report(ns: Mapping, macros_path, results_path) -> V.Ledger:
    """The chapter's closing bookkeeping, from the notebook's values ``ns`` (at least :data:`REPORT_INPUTS`):
    the ledger of its five records, the guards of every sentence of the text that states a direction
    (:func:`guard_text`), the macros of the paper (prefix ``Pretrained``, written to ``macros_path``; the
    table is ``\\PretrainedTable``) and the raw results (the run's fidelity, seed, sizes and model with
    every number below, written to ``results_path``).  Returns the ledger."""
    from ..infra.results import save_results
    from ..infra.texout import checked_outputs

    if not isinstance(ns, Mapping):
        raise ValueError(f"ns: expected the notebook's values (a mapping), got {type(ns).__name__}")
    missing = [k for k in REPORT_INPUTS if k not in ns]
    if missing:
        raise ValueError(f"ns: expected the notebook's values {', '.join(REPORT_INPUTS)}, missing {', '.join(missing)}")
    checked_outputs(macros_path=macros_path, results_path=results_path)  # both, before the work
    macros, payload, ledger = _report(ns)  # every value checked and formatted: nothing is written on a failure
    macros.write(macros_path, argument="macros_path")
    save_results(results_path, payload, argument="results_path")
    return ledger


def _report(ns: Mapping) -> tuple:
    """The work of :func:`report`, writing nothing: ``(macros, results ready to save, ledger)``."""
    from ..infra import prose
    from ..infra.results import json_safe
    from ..infra.texout import Macros
    from ..infra.verdicts import Ledger

    H = ns["H"]
    L = ns["L"]
    NORM = ns["NORM"]
    OBJ = ns["OBJ"]
    PA = ns["PA"]
    c_grid = ns["c_grid"]
    calls = ns["calls"]
    case_calls = ns["case_calls"]
    change = ns["change"]
    d = ns["d"]
    d_k = ns["d_k"]
    decomp = ns["decomp"]
    diversity_record = ns["diversity_record"]
    effects = ns["effects"]
    excess = ns["excess"]
    excess_layer = ns["excess_layer"]
    haar = ns["haar"]
    haar_expected = ns["haar_expected"]
    invariance_record = ns["invariance_record"]
    key_at = ns["key_at"]
    last_vs_rest = ns["last_vs_rest"]
    macros = Macros("Pretrained")
    null_mean = ns["null_mean"]
    null_sd = ns["null_sd"]
    null_spectrum = ns["null_spectrum"]
    observed = ns["observed"]
    p = ns["p"]
    pooled = ns["pooled"]
    r2 = ns["r2"]
    r2_scale = ns["r2_scale"]
    random_mean = ns["random_mean"]
    red = ns["red"]
    redundancy_record = ns["redundancy_record"]
    rescaled = ns["rescaled"]
    scale_record = ns["scale_record"]
    shared_record = ns["shared_record"]
    sizes = ns["sizes"]
    spectrum = ns["spectrum"]
    spread = ns["spread"]
    texts = ns["texts"]
    top = ns["top"]
    weights = ns["weights"]
    names = figure_style(L)["names"]  # the objects as the text names them
    results = {
        "fidelity": ns["fidelity"],
        "seed": ns["seed"],
        "sizes": sizes,
        "model": {k: weights[k] for k in ("model", "hub_id", "package")},
    }
    within = ns["within"]
    z = ns["z"]
    z_all = ns["z_all"]
    KEY = "key"
    key_calls = [calls[KEY][l][PA] for l in range(L)]
    pa_calls = [calls[name][l][PA] for name in OBJ for l in range(L)]
    haar_sd = {name: haar["circuit" if name == "qk_circuit" else "projection"][:, PA].std(ddof=1) for name in OBJ}
    below_haar = sum(
        observed[name][l, PA] < random_mean[name][PA] - 3 * haar_sd[name] for name in OBJ for l in range(L)
    )
    n_less = pa_calls.count("less")
    n_more = pa_calls.count("more")
    n_cases = len(pa_calls)
    verdict_diversity = diversity_record.verdict
    less_all = int(diversity_record.statistics[0].value)
    more_all = int(diversity_record.statistics[1].value)

    ledger = Ledger("09_pretrained_head_diversity")
    for rec in (diversity_record, shared_record, invariance_record, scale_record, redundancy_record):
        ledger.add(rec)
    results["claims"] = ledger.to_list()

    # --- sentences of the text that state a direction, checked against the numbers
    key_pos = sum(within[KEY]["per_stratum"][l] > 0 for l in range(L))
    guard_text(
        last_minus_rest=(last_vs_rest.mean, last_vs_rest.se),
        key_positive_layers=key_pos,
        n_layers=L,
        pa_change=change["principal_angles"],
        rv_change=change["rv"],
        top_excess=(excess[KEY]["top"]["value"], excess[KEY]["top"]["se"]),
    )

    def layers_text(calls_, which):
        hit = [l + 1 for l, c in enumerate(calls_) if c == which]
        return prose.ranges(hit).replace("-", "--") if hit else "none"

    def layers_phrase(calls_, which):
        """'in all six layers', 'in layers 1--5', 'in layer 3', 'in no layer' (LaTeX)."""
        hit = [l + 1 for l, c in enumerate(calls_) if c == which]
        if len(hit) == L:
            return f"in {prose.count_of(L, L, 'layers')}"
        if not hit:
            return "in no layer"
        return ("in layer " if len(hit) == 1 else "in layers ") + prose.ranges(hit).replace("-", "--")

    macros.integer("NLayers", L)
    macros.integer("NHeads", H)
    macros.integer("DModel", d)
    macros.integer("DK", d_k)
    macros.integer("NPerm", sizes["n_perm"])
    macros.integer("NHaar", sizes["n_haar"])
    macros.integer("NSpectral", sizes["n_spectral"])
    macros.integer("NSentences", len(texts))
    macros.integer("NPermSpearman", sizes["n_perm_spearman"])
    macros.integer("NHeadsTotal", L * H)
    macros.number("HaarPA", haar_expected["projection"], 3)
    macros.number("HaarCircuitPA", haar_expected["circuit"], 3)
    pa_all = np.array([observed[name][:, PA] for name in OBJ])
    macros.number("PAMin", pa_all.min(), 3)
    macros.number("PAMax", pa_all.max(), 3)
    macros.number("KeyPAMin", observed[KEY][:, PA].min(), 3)
    macros.number("KeyPAMax", observed[KEY][:, PA].max(), 3)
    macros.number("KeyZMin", z[KEY][:, PA].min(), 2)
    macros.number("KeyZMax", z[KEY][:, PA].max(), 2)
    macros.text("KeyLessLayers", layers_text(key_calls, "less"))
    macros.text("KeyMoreLayers", layers_text(key_calls, "more"))
    macros.text("KeyLessPhrase", layers_phrase(key_calls, "less"))
    rv_calls = [calls[name][l][NORM.index("rv")] for name in OBJ for l in range(L)]
    macros.integer("RVLessCount", rv_calls.count("less"))
    macros.integer("RVMoreCount", rv_calls.count("more"))
    for name, tag in (("query", "Query"), ("value", "Value"), ("qk_circuit", "Circuit")):
        macros.text(f"{tag}LessLayers", layers_text([calls[name][l][PA] for l in range(L)], "less"))
        macros.text(f"{tag}LessPhrase", layers_phrase([calls[name][l][PA] for l in range(L)], "less"))
        macros.number(f"{tag}ZMax", z[name][:, PA].max(), 2)
    macros.integer("PALessCount", n_less)
    macros.integer("PAMoreCount", n_more)
    macros.integer("PACases", n_cases)
    macros.integer("BelowHaarCount", below_haar)
    macros.text("BelowHaarCases", prose.count_of(int(below_haar), n_cases, "(layer, object) cases"))
    macros.text("RowLessCases", prose.count_of(n_less, n_cases, "(layer, object) cases"))
    macros.text("RowMoreCases", prose.count_of(n_more, n_cases, ""))
    words = {"query": "the queries", "key": "the keys", "value": "the values", "qk_circuit": "the circuits"}
    groups = {}
    for name in ("key", "query", "qk_circuit", "value"):
        groups.setdefault(layers_phrase([calls[name][l][PA] for l in range(L)], "less"), []).append(words[name])
    macros.text(
        "RowLessSentence",
        ", ".join(
            (
                f"{prose.join_list(objs)} {'is' if len(objs) == 1 else 'are'} less diverse than chance {phrase}"
                if i == 0
                else f"{prose.join_list(objs)} {phrase}"
            )
            for i, (phrase, objs) in enumerate(groups.items())
        ),
    )
    macros.text("LessCases", prose.count_of(less_all, n_cases, "(layer, object) cases"))
    macros.text("MoreCases", prose.count_of(more_all, n_cases, ""))
    for lab, tag in (("layer spectrum", "LayerSpectrum"), ("head spectrum", "HeadSpectrum")):
        macros.integer(f"{tag}LessCount", sum(case_calls[lab][name].count("less") for name in OBJ))
        macros.integer(f"{tag}MoreCount", sum(case_calls[lab][name].count("more") for name in OBJ))
    macros.text(
        "LayerSpectrumMoreList",
        prose.join_list(
            [
                f"{names[name]} {layers_phrase(case_calls['layer spectrum'][name], 'more')}"
                for name in OBJ
                if "more" in case_calls["layer spectrum"][name]
            ]
        )
        if any("more" in v for v in case_calls["layer spectrum"].values())
        else "none",
    )
    macros.number("PMin", 1 / (sizes["n_perm"] + 1), 2)
    macros.number("KeyTopCos", top[KEY][0], 2)
    macros.number("KeyTopCosNull", top[KEY][1], 2)
    macros.number("KeyTopCosSE", excess[KEY]["top_trained"]["se"], 1)
    macros.number("KeyTopCosNullSE", excess[KEY]["top_null"]["se"], 1)
    macros.number("KeyTopDiff", excess[KEY]["top"]["value"], 2)
    macros.number("KeyTopDiffSE", excess[KEY]["top"]["se"], 1)
    macros.number("KeyTopDiffZ", excess[KEY]["top"]["value"] / excess[KEY]["top"]["se"], 2)
    macros.number("KeyTopCosLayerNull", excess_layer[KEY]["top_null"]["value"], 2)
    for tag, field in (("KeyTotal", "total"), ("KeyBeyondEven", "beyond_even")):
        macros.number(tag, excess[KEY][field]["value"], 2)
        macros.number(f"{tag}SE", excess[KEY][field]["se"], 1)
    for tag, summary in (("KeyShare", excess[KEY]), ("KeyShareLayer", excess_layer[KEY])):
        if math.isnan(summary["share"]["value"]):  # not estimable (excess_spectrum_summary): said in words
            macros.text(tag, r"\mbox{not estimable}")
            macros.text(f"{tag}SE", r"\mbox{--}")
        else:
            macros.number(tag, summary["share"]["value"], 2)
            macros.number(f"{tag}SE", summary["share"]["se"], 1)
    macros.integer("NLeading", N_LEADING)
    macros.number("EvenShare", N_LEADING / d_k, 3)
    macros.number("NullBandMax", 2 * excess[KEY]["null_sd"].max(), 1)
    macros.number("KeyMeanCos", 1 - observed[KEY][:, PA].mean(), 2)
    macros.number("ScaleRsq", r2_scale, 2)
    macros.number("ScaleRsqSE", r2["se"], 1)
    macros.number("SpreadPaper", spread["1 - printed"], 2)
    macros.number("SpreadScale", spread["scale S"], 2)
    macros.number("SpreadGeometry", spread["geometry G"], 2)
    paper_all = np.array([observed[name][:, 0] for name in OBJ])
    macros.number("PaperMin", paper_all.min(), 3)
    macros.number("PaperMax", paper_all.max(), 3)
    macros.number("RescaleKeyLow", key_at[0.5], 3)
    macros.number("RescaleKeyOne", key_at[1.0], 3)
    macros.number("RescaleKeyHigh", key_at[2.0], 3)
    layer_means = effects["mean"].mean(axis=1)
    macros.number("EffectFirstLayers", layer_means[:-1].mean(), 2)
    macros.number("EffectLastLayer", layer_means[-1], 2)
    macros.number("EffectLastMinusRest", last_vs_rest.mean, 2)
    macros.number("EffectLastMinusRestSE", last_vs_rest.se, 1)
    macros.number("EffectMax", effects["mean"].max(), 2)
    macros.number("EffectMin", effects["mean"].min(), 2)
    for name, tag in zip(OBJ, ("Query", "Key", "Value", "Circuit")):
        macros.number(f"Rho{tag}", within[name]["rho"], 2)
        macros.number(f"P{tag}", within[name]["p"], 2)
        macros.number(f"PooledRho{tag}", pooled[name]["rho"], 2)
        macros.number(f"PooledP{tag}", pooled[name]["p"], 2)
    macros.number("RhoKeySE", within[KEY]["null_sd"], 1)
    macros.number("RhoUseful", RHO_USEFUL, 2)
    macros.number("RhoKeyLowest", within[KEY]["rho"] - 3 * within[KEY]["null_sd"], 2)
    macros.integer("KeyRhoPositiveLayers", key_pos)
    macros.text("KeyRhoPositive", prose.count_of(int(key_pos), L, "layers"))
    macros.text("VerdictDiversity", verdict_diversity)
    macros.text("DiversitySentence", diversity_sentence(diversity_record))
    macros.text("VerdictShared", shared_record.verdict)
    macros.text("VerdictInvariance", invariance_record.verdict)
    macros.text("VerdictScale", scale_record.verdict)
    macros.text("VerdictRedundancy", redundancy_record.verdict)
    macros.text("Table", hdi_table_latex(observed, z, random_mean))
    macros.render()  # every macro formatted here, so that a bad value stops before anything is written

    results.update(
        observed=observed,
        z=z,
        p=p,
        null_mean=null_mean,
        null_sd=null_sd,
        calls=calls,
        random_mean=random_mean,
        haar_expected=haar_expected,
        spectrum=spectrum,
        null_spectrum_mean={n: v.mean(axis=1) for n, v in null_spectrum.items()},
        z_spectral={lab: z_all[lab] for lab in ("layer spectrum", "head spectrum")},
        case_calls=case_calls,
        excess={name: {k: v for k, v in e.items()} for name, e in excess.items()},
        excess_layer_spectrum={name: {k: v for k, v in e.items()} for name, e in excess_layer.items()},
        scale_decomposition=decomp,
        r2_scale=r2_scale,
        r2_bootstrap=r2,
        spread=spread,
        rescale={"c": c_grid, **rescaled},
        rescale_change=change,
        sentences=texts,
        effects={"mean": effects["mean"], "se": effects["se"]},
        last_layer_contrast={"mean": float(last_vs_rest.mean), "se": float(last_vs_rest.se)},
        redundancy=red,
        spearman_within=within,
        spearman_pooled=pooled,
    )
    return macros, json_safe(results), ledger
