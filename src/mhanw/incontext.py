"""Softmax attention trained from scratch on in-context regression: Nadaraya-Watson heads with a learned metric.

**The task.**  A sequence holds ``n`` context tokens ``(x_i, y_i)``, ``x_i`` in ``R^d``,
``y_i = m(x_i) + sigma eps_i``, and ``T`` query tokens ``(x_q, 0)``; the regression function ``m`` is
drawn afresh for every sequence from a task family (:class:`TaskFamily`).  One attention layer reads
the context and predicts ``m(x_q)`` at every query.  The queries attend to the context only (not to
each other), so ``T`` queries are ``T`` sequences that share their context.  Trained on many random
tasks, the layer learns one regression estimator for the whole family; its error on fresh tasks is
the test MSE ``mean (f(x_q) - m(x_q))^2``.

**The model** (:class:`Architecture`).  ``H`` heads of size ``d_k = D / H`` at a budget ``D``; head
``h`` has its own ``W_Q^h``, ``W_K^h`` ``(d, d_k)``, value map ``W_V^h`` ``(c, d_k)`` and output map
``W_O^h`` ``(d_k,)``.  Queries and keys read the inputs, values read the responses: with
``A_h = W_Q^h W_K^h^T / sqrt(d_k)`` ``(d, d)`` (the query-key circuit) head ``h``'s output at a
query ``x_q`` is

    m_h(x_q) = sum_i w_hi(x_q) y_i,   w_hi(x_q) = exp(x_q^T A_h x_i) / sum_l exp(x_q^T A_h x_l),

a Nadaraya-Watson estimate with the kernel ``K_h(x, x') = exp(x^T A_h x')``, a learned metric, and the
layer's prediction is ``f(x_q) = sum_h a_h m_h(x_q)`` with ``a_h = W_V^h . W_O^h`` (the value and
output maps of a head meet only through this coefficient, since a response is one number).  For a
symmetric circuit ``x^T A x' = -(x - x')^T A (x - x')/2 + (x^T A x + x'^T A x')/2``: on the sphere
``|x| = r`` and for ``A = beta I`` the second term is the constant ``beta r^2``, so a head with an
isotropic circuit is exactly the Gaussian-kernel smoother of bandwidth ``1/sqrt(beta)`` (hence the
default input law ``"uniform-sphere"``, ``r = sqrt d``).  Any other circuit also tilts the weights
towards the keys where ``x'^T A x'`` is large (and a non-symmetric one towards ``A^T x_q``, not ``x_q``):
a concentrated head need not be a local one, which :func:`evaluate` tells apart (``n_eff/n`` against
the distance ratio).

Options: ``layers = 2`` (the first layer writes its prediction into a scratch channel ``s`` of every
token, and the second layer's values read ``(y, s)``: ``c = 2``, e.g. it can smooth the residuals
``y - s``); ``mlp = m > 0`` (after each attention layer a ReLU network of width ``m`` reads
``(x, s)`` of a token and adds to its ``s``); ``tied = True`` (every head shares one set of weights:
the negative control of head diversity, whose heads are one by construction).

**Training** (:func:`train`): Adam on the squared error at the queries of fresh tasks, every
configuration of a run trained in lockstep on the same task draws (common random numbers) and
vectorised over seeds (a leading seed axis on every weight).  The gradient is analytic
(:func:`loss_and_grad`; the tests check it against central finite differences): on the batches of
:data:`PAPER` it took three to five times less CPU than the ``autograd`` package (1.9.1) on the same
forward pass, measured side by side, so it adds no dependency.
An optional penalty ``lambda sum_{j<k} tr(P_j P_k)/d_k`` on the keys' column spaces
(:func:`mhanw.training.orthogonality_penalty`) is the positive control of head diversity.

**Measurements.**  :func:`hdi_keys` (HDI_PA of the ``W_K^h``, :func:`mhanw.diversity.head_diversity_index`;
random heads: :func:`mhanw.diversity.haar_expected_hdi` ``(d, d_k)``), :func:`hdi_circuits` (HDI_PA of
the circuits ``A_h`` as lines in ``R^(d x d)``, whose expectation for independent random heads is
exactly ``1 - 1/d^2``, :func:`circuit_haar_hdi`), :func:`evaluate` (test MSE, the heads' error
correlation, ``n_eff/n`` per head by :func:`mhanw.locality.effective_sample_size`, the weighted
distance ratio, the inverse temperatures).  Decision helpers: :func:`trend` (a change is positive,
negative or neither at ``k`` s.e.), :func:`best_head_size` (the best ``d_k`` on a grid with a
bootstrap over seeds), :func:`compare_laws` and :func:`growth` (does ``d_k*`` grow with ``n``, which
law fits it).  Experiments: :func:`heads_apart`, :func:`head_size_sweep`, at the sizes
:data:`QUICK` and :data:`PAPER`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from . import data as _data
from .constants import MAX_REPLICATES, check_entries, check_work
from .diversity import haar_expected_hdi, head_diversity_index
from .infra.estimates import Estimate
from .infra.sweep import _single_blas_thread, spawn_streams
from .infra.validate import (
    as_float_array,
    as_seed_sequence,
    boolean,
    brief,
    nonnegative_scalar,
    one_of,
    positive_int,
    positive_ints,
    positive_scalar,
    sequence,
)
from .locality import effective_sample_size
from .training import orthogonality_penalty

__all__ = [
    "APART_CONFIGS",
    "APART_KEYS",
    "Architecture",
    "DIRECTIONS",
    "Evaluation",
    "FAMILIES",
    "HeadSizeEstimate",
    "LAWS",
    "LawFit",
    "PAPER",
    "QUICK",
    "SIZE_KEYS",
    "TASK_KINDS",
    "TaskBatch",
    "TaskFamily",
    "TrainRun",
    "best_head_size",
    "circuit_haar_hdi",
    "circuits",
    "compare_laws",
    "direction",
    "draw_tasks",
    "evaluate",
    "fresh_tasks",
    "growth",
    "head_outputs",
    "head_size_sweep",
    "heads_apart",
    "hdi_circuits",
    "hdi_keys",
    "init_params",
    "inverse_temperature",
    "law_decision",
    "law_values",
    "loss_and_grad",
    "predict",
    "slope",
    "train",
    "trend",
]

#: Most entries of the largest intermediate array one training step allocates per configuration
#: (the attention weights, seeds x tasks x heads x targets x context): 2**26 doubles, 512 MiB.
MAX_STEP_ENTRIES = 1 << 26

#: Largest learning rate Adam accepts here: a step of Adam moves every weight by about ``lr``, so
#: beyond 10 the first step already throws weights of order one far past any useful value.
MAX_LR = 10.0

#: Adam's constants (Kingma & Ba): the moment decay rates and the denominator's guard.
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8


# --------------------------------------------------------------------------- the architecture


@dataclass(frozen=True)
class Architecture:
    """One attention model: input dimension ``d``, budget ``D = H d_k``, ``heads`` ``H`` (Thm 2.1's NW heads, trained).

    Parameters
    ----------
    d : int, 1 <= d <= 4096
        The input dimension.
    budget : int, 1 <= budget <= 4096
        ``D``, the width of the layer, ``H d_k``.
    heads : int
        ``H``, a divisor of ``budget`` (``d_k = D / H`` must be a whole number).
    layers : int
        1 or 2 attention layers (the second reads the first's prediction from the scratch channel).
    mlp : int, 0 <= mlp <= 4096
        The hidden width of the ReLU network after each layer, 0 for none.
    tied : bool
        Whether all heads share their weights (the negative control of head diversity).

    Raises
    ------
    ValueError
        Naming ``heads`` when it does not divide the budget, or the field that is out of range.
    """

    d: int
    budget: int
    heads: int
    layers: int = 1
    mlp: int = 0
    tied: bool = False

    def __post_init__(self):
        positive_int(self.d, "d", maximum=4096, what="input dimensions")
        positive_int(self.budget, "budget", maximum=4096, what="the width D of the layer")
        positive_int(self.heads, "heads", maximum=self.budget, what="at most D heads, each of size d_k >= 1")
        if self.budget % self.heads:
            raise ValueError(
                f"heads: expected a divisor of the budget D = {self.budget} (d_k = D / H whole), got H = {self.heads}"
            )
        positive_int(self.layers, "layers", maximum=2, what="one or two attention layers")
        positive_int(self.mlp, "mlp", minimum=0, maximum=4096, what="the hidden width of the MLP")
        boolean(self.tied, "tied")

    @property
    def d_k(self) -> int:
        """The head size ``D / H``."""
        return self.budget // self.heads

    def channels(self, layer: int) -> int:
        """Value channels of ``layer``: the response alone for the first, ``(y, s)`` after it.

        Parameters
        ----------
        layer : int
            The layer, 0 for the first.

        Returns
        -------
        int
            1 for the first layer, 2 for a later one.
        """
        return 1 if layer == 0 else 2

    def label(self) -> str:
        """A short label of the model, for tables and messages.

        Returns
        -------
        str
            ``"D=16, H=4, d_k=4"`` and the options that differ from the defaults (``", 2 layers"``,
            ``", MLP m"``, ``", tied"``).
        """
        extra = "".join(
            [
                f", {self.layers} layers" if self.layers > 1 else "",
                f", MLP {self.mlp}" if self.mlp else "",
                ", tied" if self.tied else "",
            ]
        )
        return f"D={self.budget}, H={self.heads}, d_k={self.d_k}{extra}"


def _architecture(arch, name: str = "arch") -> Architecture:
    if not isinstance(arch, Architecture):
        raise ValueError(f"{name}: expected an mhanw.incontext.Architecture, got {type(arch).__name__} {brief(arch)}")
    return arch


def _param_shapes(arch: Architecture) -> dict:
    """The weights' shapes without the seed axis: ``Q{l}``, ``K{l}`` ``(H, d, d_k)``, ``V{l}`` ``(H, c, d_k)``,
    ``O{l}`` ``(H, d_k)`` and, with an MLP, ``W1{l}`` ``(d + 1, m)``, ``b1{l}`` ``(m,)``, ``W2{l}`` ``(m,)``.
    """
    H, d, k = arch.heads, arch.d, arch.d_k
    shapes = {}
    for layer in range(arch.layers):
        shapes[f"Q{layer}"] = (H, d, k)
        shapes[f"K{layer}"] = (H, d, k)
        shapes[f"V{layer}"] = (H, arch.channels(layer), k)
        shapes[f"O{layer}"] = (H, k)
        if arch.mlp:
            shapes[f"W1{layer}"] = (d + 1, arch.mlp)
            shapes[f"b1{layer}"] = (arch.mlp,)
            shapes[f"W2{layer}"] = (arch.mlp,)
    return shapes


def init_params(arch: Architecture, rngs) -> dict:
    """Random weights, one set per generator of ``rngs`` (the seed axis, first).

    Gaussian with variance 1/fan-in: ``W_Q``, ``W_K`` ``N(0, 1/d)`` (so the keys' column spaces are
    uniformly distributed, Haar, and the logits are of order one on the sphere of radius ``sqrt d``),
    ``W_V`` ``N(0, 1)``, ``W_O`` ``N(0, 1/D)`` (each head's coefficient ``a_h`` has variance ``1/H``),
    the MLP ``N(0, 1/fan-in)`` with zero biases and ``W2 = 0`` (it starts as the identity).  Tied
    heads copy head 0.  Each generator draws in the order of the weights' keys.

    Parameters
    ----------
    arch : Architecture
        The model.
    rngs : sequence of numpy.random.Generator
        One generator per seed, at least one.

    Returns
    -------
    dict of str to numpy.ndarray
        Per layer ``l``: ``Q{l}``, ``K{l}`` ``(S, H, d, d_k)``, ``V{l}`` ``(S, H, c, d_k)``, ``O{l}``
        ``(S, H, d_k)`` and, with an MLP, ``W1{l}`` ``(S, d + 1, m)``, ``b1{l}`` ``(S, m)``, ``W2{l}``
        ``(S, m)``; ``S = len(rngs)``.

    Raises
    ------
    ValueError
        Naming ``rngs`` when it is empty, ``rngs[i]`` when an entry is no Generator, or ``arch`` when it is
        no Architecture.
    """
    arch = _architecture(arch)
    rngs = list(sequence(rngs, "rngs", "numpy Generators"))
    if not rngs:
        raise ValueError("rngs: expected at least one numpy Generator (one per seed), got none")
    for i, r in enumerate(rngs):
        if not isinstance(r, np.random.Generator):
            raise ValueError(f"rngs[{i}]: expected a numpy.random.Generator, got {type(r).__name__}")
    fan_in = {"Q": arch.d, "K": arch.d, "V": 1, "O": arch.budget, "W1": arch.d + 1}
    out = {}
    for key, shape in _param_shapes(arch).items():
        stem = key[:-1]  # the name without its layer digit
        if stem in ("b1", "W2"):
            out[key] = np.zeros((len(rngs),) + shape)
            continue
        scale = 1.0 / math.sqrt(fan_in[stem])
        out[key] = np.stack([r.standard_normal(shape) for r in rngs]) * scale
        if arch.tied and stem in ("Q", "K", "V", "O"):
            out[key][:] = out[key][:, :1]
    return out


# --------------------------------------------------------------------------- the forward pass and its gradient


def _softmax(L: np.ndarray) -> np.ndarray:
    """Softmax over the last axis of ``L``, in place and stable (the largest logit subtracted first)."""
    L -= L.max(axis=-1, keepdims=True)
    np.exp(L, out=L)
    L /= L.sum(axis=-1, keepdims=True)
    return L


def _project(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``X`` ``(S, B, N, d)`` through every head's ``W`` ``(S, H, d, k)``: ``(S, B, H, N, k)``."""
    S, H, d, k = W.shape
    P = np.matmul(X, W.transpose(0, 2, 1, 3).reshape(S, 1, d, H * k))  # (S, B, N, H k)
    return P.reshape(X.shape[:3] + (H, k)).transpose(0, 1, 3, 2, 4)


def _unproject(X: np.ndarray, G: np.ndarray) -> np.ndarray:
    """The gradient in ``W`` ``(S, H, d, k)`` of ``_project(X, W)`` given its cotangent ``G`` ``(S, B, H, N, k)``."""
    S, B, H, N, k = G.shape
    Gr = np.ascontiguousarray(G.transpose(0, 1, 3, 2, 4)).reshape(S, B * N, H * k)
    out = np.einsum("sni,snj->sij", X.reshape(S, B * N, X.shape[-1]), Gr, optimize=True)
    return out.reshape(S, -1, H, k).transpose(0, 2, 1, 3)


def _attend(Qw, Kw, Xt, Xc, vals, coef):
    """One attention layer's output at the targets ``Xt`` ``(S, B, N, d)`` over the context ``Xc``
    ``(S, B, n, d)`` with value channels ``vals`` ``(S, B, n, c)`` and head coefficients ``coef``
    ``(S, H, c)``: ``(S, B, N)``, and the cache for :func:`_attend_back`.
    """
    scale = 1.0 / math.sqrt(Qw.shape[-1])
    Qh = _project(Xt, Qw * scale)  # (S, B, H, N, k), the scale folded into the queries
    Kh = _project(Xc, Kw)  # (S, B, H, n, k)
    Wt = _softmax(np.matmul(Qh, Kh.swapaxes(-1, -2)))  # (S, B, H, N, n)
    u = np.einsum("sbnc,shc->sbhn", vals, coef)  # each head's value per context token
    uhat = np.matmul(Wt, u[..., None])  # (S, B, H, N, 1): each head's output
    return uhat[..., 0].sum(axis=2), (Qh, Kh, Wt, u, uhat, Xt, Xc, vals, scale)


def _attend_back(dout, cache):
    """Gradients of :func:`_attend` in ``(Qw, Kw, coef)`` and in the head values ``u``, given ``dout`` ``(S, B, N)``."""
    Qh, Kh, Wt, u, uhat, Xt, Xc, vals, scale = cache
    # out_t = sum_h sum_i W_hti u_hi; through the softmax, d logit_hti = W_hti (u_hi - uhat_ht) dout_t
    dL = u[:, :, :, None, :] - uhat
    dL *= Wt
    dL *= dout[:, :, None, :, None]
    dQ = _unproject(Xt, np.matmul(dL, Kh)) * scale
    dK = _unproject(Xc, np.matmul(dL.swapaxes(-1, -2), Qh))
    g = np.matmul(dout[:, :, None, None, :], Wt)[:, :, :, 0, :]  # d out / d u_hi, (S, B, H, n)
    dcoef = np.einsum("sbhn,sbnc->shc", g, vals)
    return dQ, dK, dcoef, g


def _mlp(params, layer, X, s):
    """The ReLU network after ``layer``: ``s + relu([x, s] W1 + b1) W2`` at every token, and its cache."""
    W1, b1, W2 = params[f"W1{layer}"], params[f"b1{layer}"], params[f"W2{layer}"]
    Z = np.concatenate([X, s[..., None]], axis=-1)  # (S, B, N, d + 1)
    pre = np.matmul(Z, W1[:, None]) + b1[:, None, None, :]
    act = np.maximum(pre, 0.0)
    return s + np.einsum("sbnm,sm->sbn", act, W2), (Z, pre, act)


def _mlp_back(params, layer, ds, cache):
    """Gradients of :func:`_mlp` in its weights and in ``s`` given ``ds``."""
    Z, pre, act = cache
    W1, W2 = params[f"W1{layer}"], params[f"W2{layer}"]
    dW2 = np.einsum("sbnm,sbn->sm", act, ds)
    dpre = ds[..., None] * W2[:, None, None, :] * (pre > 0)
    dW1 = np.einsum("sbni,sbnm->sim", Z, dpre)
    db1 = dpre.sum(axis=(1, 2))
    ds_in = ds + np.einsum("sbnm,sm->sbn", dpre, W1[:, -1, :])
    return {f"W1{layer}": dW1, f"b1{layer}": db1, f"W2{layer}": dW2}, ds_in


def _coefficients(params, layer):
    """``a_hc = W_V^h[c] . W_O^h`` ``(S, H, c)``: what head ``h`` adds per unit of its NW estimate of channel ``c``."""
    return np.einsum("shck,shk->shc", params[f"V{layer}"], params[f"O{layer}"])


def _forward(arch: Architecture, params: dict, X, Y, Xq, keep: bool):
    """The predictions ``(S, B, T)`` at the queries, and the caches for the backward pass when ``keep``."""
    S, B, n, _ = X.shape
    s_q = np.zeros(Xq.shape[:3], dtype=Xq.dtype)
    s_c = np.zeros((S, B, n), dtype=X.dtype) if arch.layers > 1 else None
    caches = []
    for layer in range(arch.layers):
        last = layer == arch.layers - 1
        vals = Y[..., None] if layer == 0 else np.stack([Y, s_c], axis=-1)
        coef = _coefficients(params, layer)
        Qw, Kw = params[f"Q{layer}"], params[f"K{layer}"]
        out_q, cache_q = _attend(Qw, Kw, Xq, X, vals, coef)
        out_c, cache_c = _attend(Qw, Kw, X, X, vals, coef) if not last else (None, None)
        s_q = s_q + out_q
        if not last:
            s_c = s_c + out_c
        mq = mc = None
        if arch.mlp:
            s_q, mq = _mlp(params, layer, Xq, s_q)
            if not last:
                s_c, mc = _mlp(params, layer, X, s_c)
        if keep:
            caches.append((vals, coef, cache_q, cache_c, mq, mc))
    return s_q, caches


def _backward(arch: Architecture, params: dict, df, caches) -> dict:
    """Gradients of every weight given ``df`` ``(S, B, T)``, the cotangent of the predictions."""
    grads = {}
    ds_q = df
    ds_c = None
    for layer in reversed(range(arch.layers)):
        vals, coef, cache_q, cache_c, mq, mc = caches[layer]
        if arch.mlp:
            g, ds_q = _mlp_back(params, layer, ds_q, mq)
            if mc is not None:
                g2, ds_c = _mlp_back(params, layer, ds_c, mc)
                for key in g:
                    g[key] = g[key] + g2[key]
            grads.update(g)
        dQ, dK, dcoef, gu = _attend_back(ds_q, cache_q)
        if cache_c is not None:
            dQ2, dK2, dcoef2, gu2 = _attend_back(ds_c, cache_c)
            dQ, dK, dcoef, gu = dQ + dQ2, dK + dK2, dcoef + dcoef2, gu + gu2
        V, O = params[f"V{layer}"], params[f"O{layer}"]
        grads[f"Q{layer}"], grads[f"K{layer}"] = dQ, dK
        grads[f"V{layer}"] = dcoef[..., None] * O[:, :, None, :]
        grads[f"O{layer}"] = np.einsum("shc,shck->shk", dcoef, V)
        if layer > 0:
            # vals = (Y, s_c): the scratch channel's gradient flows to the layers below
            # (the queries' scratch reaches the layer below through the residual connection unchanged)
            dvals_s = np.einsum("sbhn,sh->sbn", gu, coef[:, :, 1])
            ds_c = dvals_s if ds_c is None else ds_c + dvals_s
    return grads


# --------------------------------------------------------------------------- tasks


#: The kinds of task family: a Gaussian-process prior (random Fourier features), a named regression
#: function of :mod:`mhanw.data` under a random rotation and scale, and the null family ``m = 0``.
TASK_KINDS = ("gp", "function", "null")

#: Most random Fourier features of a GP task (each task costs ``(n + T) d features`` operations).
MAX_FEATURES = 4096


@dataclass(frozen=True)
class TaskFamily:
    """A law of regression tasks ``m`` on ``R^d`` with inputs ``inputs`` and Gaussian noise of sd ``sigma``.

    ``c`` below is a per-task scale, log-uniform on ``[1/scale_range, scale_range]`` (1 when
    ``scale_range = 1``): tasks of different smoothness.

    Parameters
    ----------
    kind : {"gp", "function", "null"}
        ``"gp"``: ``m`` from the Gaussian process with the squared-exponential kernel
        ``k(x, x') = amplitude^2 exp(-sum_l (x_l - x'_l)^2 / (2 (c ell_l)^2))``, approximated by
        ``features`` random Fourier features (``m(x) = amplitude sqrt(2/M) sum_j a_j cos(w_j . x + b_j)``,
        ``a_j ~ N(0, 1)``, ``w_j ~ N(0, diag(c ell)^-2)``, ``b_j ~ U(0, 2 pi)``; the covariance is exact as
        ``M`` grows).  ``"function"``: ``m(x) = amplitude g(c R x)`` with ``g`` the regression function
        ``regression`` of :mod:`mhanw.data`, ``R`` a Haar-random rotation per task when ``rotate`` (the
        family is then rotation invariant: isotropic) and the identity otherwise.  ``"null"``: ``m = 0``
        (the responses are noise): nothing to learn, a control.
    d : int, 1 <= d <= 4096
        The input dimension.
    sigma : float, 0 <= sigma <= 1e6
        The noise standard deviation.
    inputs : str
        The input law (:func:`mhanw.data.input_distribution`), default uniform on the sphere of radius
        ``sqrt d``.
    lengthscale : float in [1e-6, 1e6]
        The GP's first lengthscale ``ell_1``.
    anisotropy : float in [1, 1e6]
        The ratio ``ell_d / ell_1``: ``ell_l = lengthscale * anisotropy^((l-1)/(d-1))``; 1 gives a
        rotation-invariant (isotropic) family, more makes the first coordinates matter most.
    features : int, 1 <= features <= 4096
        ``M``, the random Fourier features of a GP task.
    regression : str
        The regression function of a ``"function"`` family (a catalogue name or a formula of
        :mod:`mhanw.data`), defined in dimension ``d``.
    rotate : bool
        Whether a ``"function"`` family rotates every task by a Haar rotation.
    scale_range : float in [1, 1e6]
        The range of the per-task scale ``c``.
    amplitude : float in [1e-6, 1e6]
        The scale of ``m``.

    Raises
    ------
    ValueError
        Naming ``anisotropy`` or ``scale_range`` when below 1, ``regression`` when it needs more than ``d``
        dimensions, ``sigma`` or the field that is out of range.
    """

    kind: str
    d: int
    sigma: float = 0.1
    inputs: str = "uniform-sphere"
    lengthscale: float = 1.0
    anisotropy: float = 1.0
    features: int = 64
    regression: str = "iso_cos"
    rotate: bool = True
    scale_range: float = 1.0
    amplitude: float = 1.0

    def __post_init__(self):
        one_of(self.kind, "kind", TASK_KINDS)
        positive_int(self.d, "d", maximum=4096, what="input dimensions")
        nonnegative_scalar(self.sigma, "sigma")
        if self.sigma > 1e6:
            raise ValueError(f"sigma: expected a noise level of at most 1e6, got {brief(self.sigma)}")
        _data.input_distribution(self.inputs).check_dimension(self.d)
        for name in ("lengthscale", "anisotropy", "scale_range", "amplitude"):
            value = positive_scalar(getattr(self, name), name)
            if not 1e-6 <= value <= 1e6:
                raise ValueError(f"{name}: expected a number in [1e-6, 1e6], got {brief(value)}")
        if self.anisotropy < 1 or self.scale_range < 1:
            raise ValueError(f"{'anisotropy' if self.anisotropy < 1 else 'scale_range'}: expected a ratio >= 1")
        positive_int(self.features, "features", maximum=MAX_FEATURES, what="random Fourier features")
        boolean(self.rotate, "rotate")
        if self.kind == "function":
            g = _data.regression_function(self.regression)
            if g.min_dim > self.d:
                raise ValueError(f"regression: {self.regression!r} needs d >= {g.min_dim}, got d = {self.d}")

    @property
    def isotropic(self) -> bool:
        """Whether the law of the tasks is rotation invariant (with rotation-invariant inputs)."""
        if self.kind == "gp":
            return self.anisotropy == 1.0
        if self.kind == "function":
            return self.rotate or _data.regression_function(self.regression).isotropic
        return True

    def lengthscales(self) -> np.ndarray:
        """The GP's lengthscales ``ell_l = lengthscale * anisotropy^((l-1)/(d-1))``.

        Returns
        -------
        numpy.ndarray, shape (d,)
            ``ell_1 .. ell_d``, increasing from ``lengthscale`` to ``lengthscale * anisotropy``.
        """
        t = np.arange(self.d) / max(self.d - 1, 1)
        return self.lengthscale * self.anisotropy**t

    def label(self) -> str:
        """A short label of the family, for tables and figures.

        Returns
        -------
        str
            ``"GP (lengthscale 2, isotropic)"``, ``"GP (lengthscale 1, anisotropy 16)"``, the regression
            function's name (``", rotated"`` when it is) or ``"null (m = 0)"``.
        """
        if self.kind == "gp":
            shape = "isotropic" if self.anisotropy == 1 else f"anisotropy {self.anisotropy:g}"
            return f"GP (lengthscale {self.lengthscale:g}, {shape})"
        if self.kind == "function":
            return f"{self.regression}{', rotated' if self.rotate else ''}"
        return "null (m = 0)"


@dataclass(frozen=True)
class TaskBatch:
    """Tasks for ``S`` seeds, ``B`` tasks each, with ``n`` context points and ``T`` queries per task.

    Parameters
    ----------
    X : numpy.ndarray, shape (S, B, n, d)
        The context inputs.
    Y : numpy.ndarray, shape (S, B, n)
        Their noisy responses.
    Xq : numpy.ndarray, shape (S, B, T, d)
        The query inputs.
    Yq : numpy.ndarray, shape (S, B, T)
        The queries' noisy responses (the training target).
    Mq : numpy.ndarray, shape (S, B, T)
        The regression function at the queries (the test target).
    """

    X: np.ndarray
    Y: np.ndarray
    Xq: np.ndarray
    Yq: np.ndarray
    Mq: np.ndarray

    @property
    def shape(self) -> tuple:
        """``(S, B, n, T)``."""
        return self.X.shape[:3] + (self.Xq.shape[2],)


def _task_values(family: TaskFamily, rng: np.random.Generator, Z: np.ndarray) -> np.ndarray:
    """``m`` at the points ``Z`` ``(B, N, d)`` of ``B`` fresh tasks of ``family``, ``(B, N)``."""
    B, N, d = Z.shape
    c = np.exp(rng.uniform(-1.0, 1.0, B) * math.log(family.scale_range)) if family.scale_range > 1 else np.ones(B)
    if family.kind == "null":
        return np.zeros((B, N))
    if family.kind == "gp":
        M = family.features
        omega = rng.standard_normal((B, d, M)) / (family.lengthscales()[None, :, None] * c[:, None, None])
        phase = rng.uniform(0.0, 2.0 * math.pi, (B, 1, M))
        a = rng.standard_normal((B, M, 1))
        # the cosines in single precision (six times faster; the arguments are of order ten, so their
        # rounding, about 1e-6, is far below any noise level)
        arg = (np.matmul(Z, omega) + phase).astype(np.float32)
        return family.amplitude * math.sqrt(2.0 / M) * np.matmul(np.cos(arg, out=arg), a.astype(np.float32))[..., 0]
    g = _data.regression_function(family.regression)
    if family.rotate:
        G, R = np.linalg.qr(rng.standard_normal((B, d, d)))
        rot = G * np.sign(np.diagonal(R, axis1=-2, axis2=-1))[:, None, :]  # Haar
        Z = np.matmul(Z, rot)
    Z = Z * c[:, None, None]
    return family.amplitude * g(Z.reshape(B * N, d)).reshape(B, N)


def draw_tasks(family: TaskFamily, rngs, tasks: int, n: int, queries: int) -> TaskBatch:
    """``tasks`` fresh tasks per generator of ``rngs`` (one per seed).

    Each generator draws, in order: the inputs (context then queries, all tasks at once, by
    :func:`mhanw.data.sample_inputs`), the tasks' parameters, the noise.

    Parameters
    ----------
    family : TaskFamily
        The law of the tasks.
    rngs : sequence of numpy.random.Generator
        One generator per seed, at least one.
    tasks : int >= 1
        ``B``, tasks per seed.
    n : int >= 2
        Context points per task.
    queries : int >= 1
        ``T``, query points per task.

    Returns
    -------
    TaskBatch
        Arrays with the leading axes ``(S, B)``, ``S = len(rngs)``.

    Raises
    ------
    ValueError
        Naming ``family`` when it is no TaskFamily, ``rngs`` when empty, ``rngs[i]`` when an entry is no
        Generator, or the size that is out of range.
    """
    if not isinstance(family, TaskFamily):
        raise ValueError(f"family: expected an mhanw.incontext.TaskFamily, got {type(family).__name__}")
    rngs = list(sequence(rngs, "rngs", "numpy Generators"))
    if not rngs:
        raise ValueError("rngs: expected at least one numpy Generator (one per seed), got none")
    tasks = positive_int(tasks, "tasks")
    n = positive_int(n, "n", minimum=2, what="context points")
    queries = positive_int(queries, "queries")
    check_entries("tasks, n, queries", len(rngs), tasks, n + queries, family.d)
    if family.kind == "gp":
        check_entries("tasks, n, queries", len(rngs), tasks, n + queries, family.features)
    out = {k: [] for k in ("X", "Y", "Xq", "Yq", "Mq")}
    for i, rng in enumerate(rngs):
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rngs[{i}]: expected a numpy.random.Generator, got {type(rng).__name__}")
        Z = _data.sample_inputs(rng, tasks * (n + queries), family.d, family.inputs).reshape(
            tasks, n + queries, family.d
        )
        m = _task_values(family, rng, Z)
        noise = family.sigma * rng.standard_normal((tasks, n + queries))
        out["X"].append(Z[:, :n])
        out["Xq"].append(Z[:, n:])
        out["Y"].append(m[:, :n] + noise[:, :n])
        out["Yq"].append(m[:, n:] + noise[:, n:])
        out["Mq"].append(m[:, n:])
    return TaskBatch(**{k: np.ascontiguousarray(np.stack(v)) for k, v in out.items()})


# --------------------------------------------------------------------------- loss, gradient, prediction


def _check_params(arch: Architecture, params, seeds: int | None = None, name: str = "params") -> dict:
    """``params`` if it maps every weight of ``arch`` to a finite array of its shape (one leading seed axis)."""
    if not isinstance(params, dict):
        raise ValueError(f"{name}: expected a dict of weights (init_params), got {type(params).__name__}")
    shapes = _param_shapes(arch)
    missing = [k for k in shapes if k not in params]
    if missing or set(params) - set(shapes):
        raise ValueError(f"{name}: expected the weights {sorted(shapes)}, got {sorted(map(str, params))}")
    out = {}
    for key, shape in shapes.items():
        value = as_float_array(params[key], f"{name}[{key!r}]")
        S = seeds if seeds is not None else value.shape[0] if value.ndim else 0
        if value.shape != (S,) + shape:
            raise ValueError(f"{name}[{key!r}]: expected shape {(S,) + shape} (seeds first), got {value.shape}")
        seeds = S
        out[key] = value
    return out


def _check_batch(arch: Architecture, tasks, seeds: int) -> TaskBatch:
    """``tasks`` if it is a :class:`TaskBatch` of finite arrays of consistent shapes, ``seeds`` seeds of inputs in
    ``R^d``; else ``ValueError`` naming ``tasks``.
    """
    if not isinstance(tasks, TaskBatch):
        raise ValueError(f"tasks: expected an mhanw.incontext.TaskBatch (draw_tasks), got {type(tasks).__name__}")
    X = as_float_array(tasks.X, "tasks.X", ndim=4)
    Xq = as_float_array(tasks.Xq, "tasks.Xq", ndim=4)
    S, B, n, d = X.shape
    T = Xq.shape[2]
    arrays = {f: as_float_array(getattr(tasks, f), f"tasks.{f}", ndim=3) for f in ("Y", "Yq", "Mq")}
    if (
        (S, d) != (seeds, arch.d)
        or Xq.shape != (S, B, T, d)
        or arrays["Y"].shape != (S, B, n)
        or any(arrays[f].shape != (S, B, T) for f in ("Yq", "Mq"))
    ):
        raise ValueError(
            f"tasks: expected {seeds} seeds of tasks with inputs in R^{arch.d} and matching shapes, got X "
            f"{X.shape}, Y {arrays['Y'].shape}, Xq {Xq.shape}, Yq {arrays['Yq'].shape}, Mq {arrays['Mq'].shape}"
        )
    check_entries("tasks", S, B, arch.heads, T + (n if arch.layers > 1 else 0), n)
    return TaskBatch(X=X, Y=arrays["Y"], Xq=Xq, Yq=arrays["Yq"], Mq=arrays["Mq"])


def predict(arch: Architecture, params: dict, tasks: TaskBatch) -> np.ndarray:
    """The layer's predictions ``f(x_q) = sum_h a_h m_h(x_q)`` at the queries of ``tasks``.

    Parameters
    ----------
    arch : Architecture
        The model.
    params : dict of str to numpy.ndarray
        Its weights, seeds first (:func:`init_params`, a snapshot of :func:`train`).
    tasks : TaskBatch
        Tasks of as many seeds as ``params``, inputs in ``R^d``.

    Returns
    -------
    numpy.ndarray, shape (S, B, T)
        The predictions.

    Raises
    ------
    ValueError
        Naming ``params`` when the logits overflow a double (or the weights do not fit ``arch``), ``tasks``
        when the batch does not fit.
    """
    arch = _architecture(arch)
    params = _check_params(arch, params)
    tasks = _check_batch(arch, tasks, next(iter(params.values())).shape[0])
    with np.errstate(over="raise", invalid="raise"):
        try:
            return _forward(arch, params, tasks.X, tasks.Y, tasks.Xq, keep=False)[0]
        except FloatingPointError:
            raise ValueError("params: the logits overflow a double; the weights are too large") from None


def _loss_grad(arch: Architecture, params: dict, tasks: TaskBatch, lam: float, gradient: bool):
    """:func:`loss_and_grad` on checked inputs, in the precision of the inputs."""
    S = params["Q0"].shape[0]
    with np.errstate(over="ignore", invalid="ignore"):
        f, caches = _forward(arch, params, tasks.X, tasks.Y, tasks.Xq, keep=gradient)
        r = f - tasks.Yq
        loss = np.mean(r * r, axis=(1, 2), dtype=np.float64)
    pen = np.zeros(S)
    pen_grad = None
    if lam > 0 and np.all(np.isfinite(loss)):
        pen_grad = np.empty_like(params["K0"])
        for s in range(S):
            pen[s], g = orthogonality_penalty(params["K0"][s], gradient)
            if gradient:
                pen_grad[s] = g
    total = loss + lam * pen
    if not gradient or not np.all(np.isfinite(total)):
        return total, None
    with np.errstate(over="ignore", invalid="ignore"):
        grads = _backward(arch, params, r * (2.0 / (r.shape[1] * r.shape[2])), caches)
    if lam > 0:
        grads["K0"] = grads["K0"] + lam * pen_grad
    if arch.tied:  # one set of weights shared by every head: its gradient is the sum over the heads
        for key, g in grads.items():
            if key[0] in "QKVO":
                grads[key] = np.broadcast_to(g.sum(axis=1, keepdims=True), g.shape).copy()
    return total, grads


def _penalty(value, arch: Architecture, name: str = "penalty") -> float:
    lam = nonnegative_scalar(value, name)
    if lam > 0 and (arch.d_k >= arch.d or arch.heads < 2):
        raise ValueError(
            f"{name}: the orthogonality penalty needs at least 2 heads of size d_k < d = {arch.d}, "
            f"got H = {arch.heads}, d_k = {arch.d_k} (a head of size d spans all of R^d)"
        )
    return lam


def loss_and_grad(arch: Architecture, params: dict, tasks: TaskBatch, penalty: float = 0.0, gradient: bool = True):
    """Per-seed training loss and its analytic gradient.

    The loss of seed ``s`` is ``mean_{b, t} (f(x_q) - y_q)^2`` over its tasks and queries, plus
    ``penalty * sum_{j<k} tr(P_j P_k)/d_k`` on the first layer's keys
    (:func:`mhanw.training.orthogonality_penalty`) when ``penalty > 0``; the seeds are independent, so
    the gradient of their sum is each seed's own.  The gradient is backpropagation written out.

    Parameters
    ----------
    arch : Architecture
        The model.
    params : dict of str to numpy.ndarray
        Its weights, seeds first.
    tasks : TaskBatch
        The training tasks, as many seeds as ``params``.
    penalty : float >= 0
        The weight ``lambda`` of the orthogonality penalty (positive only for at least 2 heads of size
        ``d_k < d``).
    gradient : bool
        Whether to compute the gradient.

    Returns
    -------
    tuple (numpy.ndarray, dict or None)
        The loss ``(S,)`` and the gradient (a dict of the weights' shapes), or ``None`` when not asked or
        when the loss is not finite.
    """
    arch = _architecture(arch)
    params = _check_params(arch, params)
    tasks = _check_batch(arch, tasks, params["Q0"].shape[0])
    return _loss_grad(arch, params, tasks, _penalty(penalty, arch), boolean(gradient, "gradient"))


# --------------------------------------------------------------------------- training


def _seed_streams(seed, seeds: int) -> list:
    """Per seed ``s``: its ``(init, train, test)`` seed sequences, children of child ``s`` of ``seed``
    (:func:`mhanw.infra.sweep.spawn_streams`: they depend on ``(seed, s)`` only).
    """
    return [tuple(child.spawn(3)) for child in spawn_streams(seed, seeds)]


def _init_rng(init: np.random.SeedSequence, arch: Architecture) -> np.random.Generator:
    """The generator of the initial weights of ``arch``'s shape: every configuration of one shape (free,
    penalised, tied) starts from the same draws.
    """
    key = (arch.d, arch.budget, arch.heads, arch.layers, arch.mlp)
    return np.random.default_rng(np.random.SeedSequence(init.entropy, spawn_key=init.spawn_key + key))


def fresh_tasks(family: TaskFamily, seed, seeds: int, tasks: int, n: int, queries: int) -> TaskBatch:
    """The fresh test tasks of seeds ``0..seeds-1`` of ``seed`` (the streams no training step reads).

    They are the same for every configuration trained with that ``seed`` at context length ``n`` (common
    random numbers).

    Parameters
    ----------
    family : TaskFamily
        The law of the tasks.
    seed : int or numpy.random.SeedSequence
        The root seed of the training run.
    seeds : int >= 1
        ``S``, the number of seeds.
    tasks : int >= 1
        ``B``, tasks per seed.
    n : int >= 2
        Context points per task.
    queries : int >= 1
        ``T``, query points per task.

    Returns
    -------
    TaskBatch
        The test tasks, leading axes ``(S, B)``.
    """
    seeds = positive_int(seeds, "seeds", maximum=MAX_REPLICATES, what="seeds")
    rngs = [np.random.default_rng(test) for _, _, test in _seed_streams(seed, seeds)]
    return draw_tasks(family, rngs, tasks, n, queries)


#: The learning-rate schedule: cosine from ``lr`` down to ``LR_FLOOR * lr`` at the last step.
LR_FLOOR = 0.1


@dataclass(frozen=True)
class TrainRun:
    """Configurations trained in lockstep by :func:`train`.

    Parameters
    ----------
    archs : tuple of Architecture
        The ``J`` configurations.
    penalties : tuple of float
        The orthogonality penalty of each configuration.
    steps : numpy.ndarray, shape (K,)
        The recorded steps (0 the initialisation, the last the end).
    snapshots : tuple of tuple of dict
        ``snapshots[j][r]``: the weights (float64, seeds first) of configuration ``j`` at recorded step ``r``.
    loss : numpy.ndarray, shape (J, steps, S)
        The training loss of each step (on that step's fresh tasks, before the update).
    cpu_seconds : float
        The process CPU time of training.
    """

    archs: tuple
    penalties: tuple
    steps: np.ndarray
    snapshots: tuple
    loss: np.ndarray
    cpu_seconds: float = field(default=0.0)


def _check_sizes(seeds, steps, tasks, queries, n, lr, record_every):
    seeds = positive_int(seeds, "seeds", maximum=10_000, what="seeds trained side by side")
    steps = positive_int(steps, "steps", maximum=MAX_REPLICATES, what="optimiser steps")
    tasks = positive_int(tasks, "tasks", maximum=1 << 20, what="tasks per step and seed")
    queries = positive_int(queries, "queries", maximum=1 << 20, what="queries per task")
    n = positive_int(n, "n", minimum=2, maximum=1 << 20, what="context points")
    lr = positive_scalar(lr, "lr")
    if lr > MAX_LR:
        raise ValueError(f"lr: expected a learning rate of at most {MAX_LR:g}, got {brief(lr)}")
    record_every = positive_int(
        record_every if record_every is not None else steps, "record_every", maximum=MAX_REPLICATES
    )
    return seeds, steps, tasks, queries, n, lr, record_every


def train(
    archs,
    family: TaskFamily,
    n: int,
    seed,
    seeds: int,
    steps: int,
    tasks: int,
    queries: int,
    lr: float,
    penalties=None,
    record_every: int | None = None,
    precision: str = "single",
) -> TrainRun:
    """Train the configurations ``archs`` from scratch, in lockstep, on in-context regression.

    ``seeds`` independent runs of each (seed ``s`` has its own initial weights and tasks); at every step
    every seed draws ``tasks`` fresh tasks of ``family`` with context length ``n`` and ``queries`` queries
    each, and **every configuration trains on the same draws** (common random numbers); configurations of
    one shape start from the same weights.  Adam (:data:`ADAM_BETAS`, :data:`ADAM_EPS`) with a cosine
    learning rate from ``lr`` to ``LR_FLOOR * lr``.  The work (attention weights computed, summed over
    steps, seeds, tasks and configurations) is bounded by :data:`mhanw.constants.MAX_WORK` and one step's
    largest array by :data:`MAX_STEP_ENTRIES`, before anything runs (:func:`mhanw.constants.check_work`).

    Parameters
    ----------
    archs : sequence of Architecture
        The configurations, at least one, each on ``R^d`` of the family.
    family : TaskFamily
        The law of the training tasks.
    n : int >= 2
        Context points per task.
    seed : int or numpy.random.SeedSequence
        The root of every stream (initial weights, training tasks, test tasks of :func:`fresh_tasks`).
    seeds : int >= 1
        ``S``, independent runs.
    steps : int >= 1
        Optimiser steps.
    tasks : int >= 1
        Tasks per step and seed.
    queries : int >= 1
        Queries per task.
    lr : float, 0 < lr <= MAX_LR
        The initial learning rate.
    penalties : sequence of float, optional
        One ``lambda >= 0`` per configuration (default 0), the weight of the orthogonality penalty of
        :func:`loss_and_grad`.
    record_every : int, optional
        Record the weights every ``record_every`` steps (default: at the start and the end only).
    precision : {"single", "double"}
        float32 arithmetic (about twice as fast) or float64.

    Returns
    -------
    TrainRun
        The recorded weights and the training losses.

    Raises
    ------
    ValueError
        Naming ``lr`` and the step when a loss or gradient is not finite (no path with NaN is ever
        returned); ``archs``, ``archs[i]``, ``family``, ``penalties`` or ``tasks`` when they do not fit;
        or the size that is out of range.
    """
    import time

    archs = tuple(_architecture(a, f"archs[{i}]") for i, a in enumerate(sequence(archs, "archs", "Architectures")))
    if not archs:
        raise ValueError("archs: expected at least one Architecture, got none")
    if not isinstance(family, TaskFamily):
        raise ValueError(f"family: expected an mhanw.incontext.TaskFamily, got {type(family).__name__}")
    for i, a in enumerate(archs):
        if a.d != family.d:
            raise ValueError(f"archs[{i}]: expected inputs in R^{family.d} (the family's d), got d = {a.d}")
    seeds, steps, tasks, queries, n, lr, record_every = _check_sizes(seeds, steps, tasks, queries, n, lr, record_every)
    penalties = (0.0,) * len(archs) if penalties is None else tuple(sequence(penalties, "penalties", "numbers"))
    if len(penalties) != len(archs):
        raise ValueError(f"penalties: expected one per configuration ({len(archs)}), got {len(penalties)}")
    penalties = tuple(_penalty(p, a, f"penalties[{i}]") for i, (p, a) in enumerate(zip(penalties, archs)))
    dtype = {"single": np.float32, "double": np.float64}[one_of(precision, "precision", ("single", "double"))]
    work = 0
    for a in archs:
        targets = queries + (n if a.layers > 1 else 0)
        if seeds * tasks * a.heads * targets * n > MAX_STEP_ENTRIES:
            raise ValueError(
                f"tasks: one step of {a.label()} needs seeds x tasks x H x targets x n = {seeds} x "
                f"{tasks} x {a.heads} x {targets} x {n} attention weights, more than the "
                f"{MAX_STEP_ENTRIES} allowed; use fewer tasks or seeds per step"
            )
        work += steps * seeds * tasks * a.heads * targets * n
    check_work(
        "steps, seeds, tasks, queries, n",
        work,
        f"training {len(archs)} configuration(s) for {steps} steps of {seeds} seeds x {tasks} tasks x {queries} "
        f"queries over {n} context points (attention weights, forward and backward)",
        "use fewer steps, seeds, tasks, queries or heads",
    )
    check_entries("tasks", seeds, tasks, n + queries, family.d)

    t0 = time.process_time()
    streams = _seed_streams(seed, seeds)
    train_rngs = [np.random.default_rng(tr) for _, tr, _ in streams]
    params = []
    for a in archs:
        p = init_params(a, [_init_rng(init, a) for init, _, _ in streams])
        params.append({k: v.astype(dtype) for k, v in p.items()})
    moments = [
        ({k: np.zeros_like(v) for k, v in p.items()}, {k: np.zeros_like(v) for k, v in p.items()}) for p in params
    ]
    grid = sorted(set(range(0, steps + 1, record_every)) | {0, steps})
    snapshots = [[{k: v.astype(np.float64) for k, v in p.items()}] for p in params]
    losses = np.empty((len(archs), steps, seeds))
    b1, b2 = ADAM_BETAS
    with _single_blas_thread():
        for step in range(1, steps + 1):
            batch = draw_tasks(family, train_rngs, tasks, n, queries)
            batch = TaskBatch(*(getattr(batch, f).astype(dtype) for f in ("X", "Y", "Xq", "Yq", "Mq")))
            rate = lr * (LR_FLOOR + (1 - LR_FLOOR) * 0.5 * (1 + math.cos(math.pi * (step - 1) / max(steps - 1, 1))))
            for j, a in enumerate(archs):
                loss, grads = _loss_grad(a, params[j], batch, penalties[j], True)
                bad = grads is None or not all(np.all(np.isfinite(g)) for g in grads.values())
                if bad:
                    s = int(np.flatnonzero(~np.isfinite(loss))[0]) if not np.all(np.isfinite(loss)) else 0
                    raise ValueError(
                        f"lr: training of {a.label()} diverged at step {step} (the loss or gradient "
                        f"of seed {s} is not finite: {loss[s]!r}); a smaller learning rate than "
                        f"{lr:g} keeps it finite"
                    )
                losses[j, step - 1] = loss
                m1, m2 = moments[j]
                c1, c2 = 1 - b1**step, 1 - b2**step
                for key, g in grads.items():
                    m1[key] *= b1
                    m1[key] += (1 - b1) * g
                    m2[key] *= b2
                    m2[key] += (1 - b2) * g * g
                    params[j][key] -= (rate / c1) * m1[key] / (np.sqrt(m2[key] / c2) + ADAM_EPS)
                if step in grid:
                    snapshots[j].append({k: v.astype(np.float64) for k, v in params[j].items()})
    return TrainRun(
        archs=archs,
        penalties=penalties,
        steps=np.asarray(grid),
        snapshots=tuple(map(tuple, snapshots)),
        loss=losses,
        cpu_seconds=time.process_time() - t0,
    )


# --------------------------------------------------------------------------- measurements


def _query_keys(params, layer) -> tuple[np.ndarray, np.ndarray]:
    """``W_Q``, ``W_K`` of ``layer`` from ``params`` (a dict of weights, seeds first), checked: finite arrays of
    one shape ``(S, H, d, d_k)``; else ``ValueError`` naming ``params`` or ``layer``.
    """
    layer = positive_int(layer, "layer", minimum=0, maximum=1, what="one or two attention layers")
    if not isinstance(params, dict) or f"Q{layer}" not in params or f"K{layer}" not in params:
        raise ValueError(
            f"params: expected a dict of weights with 'Q{layer}' and 'K{layer}' (init_params, a "
            f"training snapshot), got {brief(params)}"
        )
    Q = as_float_array(params[f"Q{layer}"], f"params['Q{layer}']", ndim=4)
    K = as_float_array(params[f"K{layer}"], f"params['K{layer}']", ndim=4)
    if Q.shape != K.shape:
        raise ValueError(f"params['K{layer}']: expected the shape of W_Q {Q.shape}, got {K.shape}")
    return Q, K


def _per_seed_hdi(stacks: np.ndarray, what: str) -> np.ndarray:
    """:func:`mhanw.diversity.head_diversity_index` of each seed's heads ``stacks`` ``(S, H, p, k)``; a head it
    refuses (a zero head has no subspace) is blamed on ``params``.
    """
    try:
        return np.array([head_diversity_index(w) for w in stacks])
    except ValueError as exc:
        raise ValueError(f"params: the {what} have no HDI_PA ({exc})") from None


def circuits(params: dict, layer: int = 0) -> np.ndarray:
    """The query-key circuits ``A_h = W_Q^h W_K^h^T / sqrt(d_k)`` of ``layer``: each head's learned metric.

    Parameters
    ----------
    params : dict of str to numpy.ndarray
        The weights, seeds first (:func:`init_params`, a snapshot of :func:`train`), with ``Q{layer}`` and
        ``K{layer}`` of one shape ``(S, H, d, d_k)``.
    layer : int
        The attention layer, 0 or 1.

    Returns
    -------
    numpy.ndarray, shape (S, H, d, d)
        The circuits, each of rank at most ``d_k``.
    """
    Q, K = _query_keys(params, layer)
    return np.matmul(Q, K.swapaxes(-1, -2)) / math.sqrt(Q.shape[-1])


def hdi_keys(params: dict, layer: int = 0) -> np.ndarray:
    """HDI_PA of the keys' column spaces ``range(W_K^h)`` per seed (the index of Thm 4.2 on trained heads).

    Random heads give :func:`mhanw.diversity.haar_expected_hdi` ``(d, d_k)``.

    Parameters
    ----------
    params : dict of str to numpy.ndarray
        The weights, seeds first (:func:`init_params`, a snapshot of :func:`train`), with ``Q{layer}`` and
        ``K{layer}`` of one shape ``(S, H, d, d_k)``.
    layer : int
        The attention layer, 0 or 1.

    Returns
    -------
    numpy.ndarray, shape (S,)
        :func:`mhanw.diversity.head_diversity_index` of each seed's keys.

    Raises
    ------
    ValueError
        Naming ``params`` when there are fewer than 2 heads, ``d_k > d``, or a head has no subspace.
    """
    _, K = _query_keys(params, layer)
    if K.shape[1] < 2 or K.shape[3] > K.shape[2]:
        raise ValueError(f"params: HDI_PA needs at least 2 heads of size d_k <= d, got W_K of shape {K.shape[1:]}")
    return _per_seed_hdi(K, "keys")


def hdi_circuits(params: dict, layer: int = 0) -> np.ndarray:
    """HDI_PA of the circuits ``A_h`` as lines in ``R^(d x d)`` per seed.

    ``1 - mean_{j<k} <A_j, A_k>_F^2 / (|A_j|_F^2 |A_k|_F^2)`` (:func:`mhanw.diversity.head_diversity_index`
    of the flattened circuits); random heads: :func:`circuit_haar_hdi`.

    Parameters
    ----------
    params : dict of str to numpy.ndarray
        The weights, seeds first (:func:`init_params`, a snapshot of :func:`train`), with ``Q{layer}`` and
        ``K{layer}`` of one shape ``(S, H, d, d_k)``.
    layer : int
        The attention layer, 0 or 1.

    Returns
    -------
    numpy.ndarray, shape (S,)
        The HDI_PA of each seed's circuits.

    Raises
    ------
    ValueError
        Naming ``params`` when there are fewer than 2 heads or a circuit is zero.
    """
    A = circuits(params, layer)
    S, H, d, _ = A.shape
    if H < 2:
        raise ValueError(f"params: HDI_PA needs at least 2 heads, got {H}")
    return _per_seed_hdi(A.reshape(S, H, d * d, 1), "circuits")


def circuit_haar_hdi(d: int) -> float:
    """The expected :func:`hdi_circuits` of independent random heads: ``1 - 1/d^2`` exactly.

    For fixed ``A`` and ``A' = U B V^T`` with ``U``, ``V`` independent Haar rotations (the law of a
    circuit whose ``W_Q`` and ``W_K`` have rotation-invariant laws, such as Gaussian weights),
    ``E <A, A'>_F^2 = |A|_F^2 |B|_F^2 / d^2``, so the mean squared cosine is ``1/d^2``: the Haar
    expectation of lines in ``R^(d^2)``, :func:`mhanw.diversity.haar_expected_hdi` ``(d^2, 1)``.

    Parameters
    ----------
    d : int, 1 <= d <= 4096
        The input dimension.

    Returns
    -------
    float
        ``1 - 1/d^2``.
    """
    d = positive_int(d, "d", maximum=4096)
    return haar_expected_hdi(d * d, 1)


def inverse_temperature(params: dict, layer: int = 0) -> np.ndarray:
    """Each head's inverse temperature ``|A_h|_F / sqrt(min(d_k, d))``.

    The RMS of the circuit's singular values over its rank, ``beta`` for ``A_h = beta P`` (``P`` a
    projector), so that an isotropic head on the sphere is the Gaussian smoother of bandwidth
    ``1/sqrt(beta)`` (Thm 2.1).

    Parameters
    ----------
    params : dict of str to numpy.ndarray
        The weights, seeds first (:func:`init_params`, a snapshot of :func:`train`), with ``Q{layer}`` and
        ``K{layer}`` of one shape ``(S, H, d, d_k)``.
    layer : int
        The attention layer, 0 or 1.

    Returns
    -------
    numpy.ndarray, shape (S, H)
        The inverse temperatures.
    """
    A = circuits(params, layer)
    k = np.shape(params[f"Q{layer}"])[-1]
    return np.linalg.norm(A, axis=(-2, -1)) / math.sqrt(min(k, A.shape[-1]))


def head_outputs(arch: Architecture, params: dict, tasks: TaskBatch):
    """The first layer's heads at the queries: each head's NW estimate of the response and its weights (Thm 2.1).

    Parameters
    ----------
    arch : Architecture
        The model.
    params : dict of str to numpy.ndarray
        Its weights, seeds first.
    tasks : TaskBatch
        Tasks of as many seeds as ``params``.

    Returns
    -------
    tuple (numpy.ndarray, numpy.ndarray)
        The estimates ``m_h(x_q) = sum_i w_hi(x_q) y_i``, shape ``(S, B, H, T)``, and the attention weights
        ``w_hi(x_q)``, shape ``(S, B, H, T, n)``.

    Raises
    ------
    ValueError
        Naming ``params`` when the logits overflow a double.
    """
    arch = _architecture(arch)
    params = _check_params(arch, params)
    tasks = _check_batch(arch, tasks, params["Q0"].shape[0])
    scale = 1.0 / math.sqrt(arch.d_k)
    with np.errstate(over="ignore", invalid="ignore"):
        Wt = _softmax(
            np.matmul(_project(tasks.Xq, params["Q0"] * scale), _project(tasks.X, params["K0"]).swapaxes(-1, -2))
        )
    if not np.all(np.isfinite(Wt)):
        raise ValueError("params: the logits overflow a double; the weights are too large")
    return np.matmul(Wt, tasks.Y[:, :, None, :, None])[..., 0], Wt


@dataclass(frozen=True)
class Evaluation:
    """A trained layer measured on fresh tasks, per seed (what :func:`evaluate` returns).

    Parameters
    ----------
    mse : numpy.ndarray, shape (S,)
        The test MSE, ``mean (f - m)^2`` at the queries.
    error_corr : numpy.ndarray, shape (S,)
        The mean over pairs of heads of the correlation of their errors ``m_h(x_q) - m(x_q)`` over tasks and
        queries; NaN for one head.
    neff : numpy.ndarray, shape (S, H)
        Each head's ``n_eff/n``, mean over queries (:func:`mhanw.locality.effective_sample_size`).
    neff_layer : numpy.ndarray, shape (S,)
        ``n_eff/n`` of the layer's combined weights ``|sum_h a_h w_hi|`` normalised (NaN when every
        coefficient is 0).
    distance_ratio : numpy.ndarray, shape (S, H)
        ``sum_i w_hi |x_i - x_q|^2`` over ``mean_i |x_i - x_q|^2``, mean over tasks and queries: 1 for a
        global average, small for a local one.
    beta : numpy.ndarray, shape (S, H)
        The heads' inverse temperatures (:func:`inverse_temperature`).
    coef : numpy.ndarray, shape (S, H)
        The heads' coefficients ``a_h``.
    """

    mse: np.ndarray
    error_corr: np.ndarray
    neff: np.ndarray
    neff_layer: np.ndarray
    distance_ratio: np.ndarray
    beta: np.ndarray
    coef: np.ndarray


def _error_correlation(err: np.ndarray) -> np.ndarray:
    """Mean pairwise correlation of the heads' errors ``err`` ``(S, H, N)`` per seed; NaN for one head."""
    S, H, _ = err.shape
    if H < 2:
        return np.full(S, np.nan)
    iu = np.triu_indices(H, 1)
    out = np.empty(S)
    with np.errstate(invalid="ignore", divide="ignore"):
        for s in range(S):
            out[s] = np.corrcoef(err[s])[iu].mean()
    return out


def evaluate(arch: Architecture, params: dict, tasks: TaskBatch) -> Evaluation:
    """Measure a trained (one-layer or deeper) model on fresh ``tasks``.

    Parameters
    ----------
    arch : Architecture
        The model.
    params : dict of str to numpy.ndarray
        Its weights, seeds first.
    tasks : TaskBatch
        Fresh test tasks of as many seeds as ``params`` (:func:`fresh_tasks`).

    Returns
    -------
    Evaluation
        The test MSE and, for the first layer's heads, their error correlation, ``n_eff/n``, distance ratio,
        inverse temperature and coefficient, per seed.
    """
    arch = _architecture(arch)
    params = _check_params(arch, params)
    f = predict(arch, params, tasks)
    mse = np.mean((f - tasks.Mq) ** 2, axis=(1, 2))
    heads, Wt = head_outputs(arch, params, tasks)
    S, B, H, T, n = Wt.shape
    err = (heads - tasks.Mq[:, :, None, :]).transpose(0, 2, 1, 3).reshape(S, H, B * T)
    neff = np.empty((S, H))
    for s in range(S):
        for h in range(H):
            neff[s, h] = effective_sample_size(Wt[s, :, h].reshape(B * T, n)).mean() / n
    coef = _coefficients(params, 0)[:, :, 0]
    combined = np.abs(np.einsum("sh,sbhtn->sbtn", coef, Wt)).reshape(S, B * T, n)
    total = combined.sum(axis=-1, keepdims=True)
    neff_layer = np.full(S, np.nan)  # a layer whose coefficients are all 0 weighs no point: no n_eff
    for s in range(S):
        if np.all(total[s] > 0):
            neff_layer[s] = effective_sample_size(combined[s] / total[s]).mean() / n
    D2 = ((tasks.Xq[:, :, :, None, :] - tasks.X[:, :, None, :, :]) ** 2).sum(axis=-1)  # (S, B, T, n)
    ratio = np.einsum("sbhtn,sbtn->sbht", Wt, D2) / D2.mean(axis=-1)[:, :, None, :]
    return Evaluation(
        mse=mse,
        error_corr=_error_correlation(err),
        neff=neff,
        neff_layer=neff_layer,
        distance_ratio=ratio.mean(axis=(1, 3)),
        beta=inverse_temperature(params),
        coef=coef,
    )


# --------------------------------------------------------------------------- decisions


#: The words of :func:`direction`.
DIRECTIONS = ("positive", "negative", "neither")

#: A change smaller than this in absolute value is rounding, not a move: :func:`direction` calls it
#: ``"neither"`` whatever its standard error (the HDI of tied heads is 0 up to about 1e-16, and a
#: paired difference of such values can have an s.e. smaller still).
ROUNDING = 1e-12


def direction(estimate: Estimate, n_se: float) -> str:
    """The direction of an estimated change at ``n_se`` standard errors.

    A mean within :data:`ROUNDING` of 0 is ``"neither"`` (as for tied heads, whose HDI is 0 at every step);
    otherwise a zero standard error decides by the sign alone.

    Parameters
    ----------
    estimate : Estimate
        A scalar mean with its standard error.
    n_se : float >= 0
        The threshold in standard errors.

    Returns
    -------
    str
        ``"positive"`` when ``mean > n_se * se``, ``"negative"`` when ``mean < -n_se * se``, else
        ``"neither"`` (:data:`DIRECTIONS`).

    Raises
    ------
    ValueError
        Naming ``estimate`` when it is not a scalar Estimate or its s.e. is NaN (fewer than two seeds), or
        ``n_se`` when negative.
    """
    if not isinstance(estimate, Estimate) or np.ndim(estimate.mean) != 0:
        raise ValueError(f"estimate: expected a scalar mhanw.infra.estimates.Estimate, got {brief(estimate)}")
    n_se = nonnegative_scalar(n_se, "n_se")
    mean, se = float(estimate.mean), float(estimate.se)
    if math.isnan(se):
        raise ValueError("estimate: the standard error is NaN (fewer than 2 seeds); no direction can be decided")
    if abs(mean) <= ROUNDING:
        return "neither"
    if mean > n_se * se:
        return "positive"
    if mean < -n_se * se:
        return "negative"
    return "neither"


def trend(start, end, n_se: float) -> tuple[str, Estimate]:
    """The change ``end - start`` of a quantity along training, paired over seeds, and its direction.

    Parameters
    ----------
    start : array_like, shape (S,)
        The quantity per seed at the start, ``S >= 2``, finite.
    end : array_like, shape (S,)
        The same seeds, in the same order, at the end.
    n_se : float >= 0
        The threshold of :func:`direction` in standard errors.

    Returns
    -------
    tuple (str, Estimate)
        The :func:`direction` word and the paired change with its s.e.

    Raises
    ------
    ValueError
        Naming ``end`` when its shape differs from ``start``'s or there are fewer than 2 seeds.
    """
    a = as_float_array(start, "start", ndim=1)
    b = as_float_array(end, "end", ndim=1)
    if a.shape != b.shape or a.size < 2:
        raise ValueError(f"end: expected one value per seed like start {a.shape} (at least 2), got {b.shape}")
    change = Estimate.paired(b, a)
    return direction(change, n_se), change


def slope(x, values) -> Estimate:
    """The least-squares slope of ``values`` on ``x``, fitted seed by seed, with its mean and s.e. over seeds.

    How a measured quantity (``n_eff/n``, a log inverse temperature, a distance ratio) changes along ``x``
    (e.g. ``log2 n``); :func:`direction` reads it.

    Parameters
    ----------
    x : array_like, shape (N,)
        The abscissae, at least two distinct.
    values : array_like, shape (N, S)
        The quantity at each ``x`` for each of ``S >= 2`` seeds.

    Returns
    -------
    Estimate
        The mean over seeds of the per-seed slope and its standard error.

    Raises
    ------
    ValueError
        Naming ``values`` when its shape does not fit ``x`` or there are fewer than 2 seeds, or ``x`` when
        its values are all equal.
    """
    x = as_float_array(x, "x", ndim=1)
    y = as_float_array(values, "values", ndim=2)
    if y.shape[0] != x.size or y.shape[1] < 2:
        raise ValueError(f"values: expected shape ({x.size}, S) with S >= 2 seeds, got {y.shape}")
    xc = x - x.mean()
    if not np.any(xc != 0):
        raise ValueError(f"x: expected at least two distinct values, got {brief(x)}")
    per_seed = xc @ (y - y.mean(axis=0)) / np.sum(xc * xc)
    return Estimate.from_samples(per_seed)


def _refined_argmin(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The minimiser over the grid ``x`` ``(K,)`` of each row of ``y`` ``(R, K)``, refined by the parabola
    through the smallest value and its two neighbours (clamped to them); the grid's end where the
    smallest value is at an end.
    """
    i = np.argmin(y, axis=1)
    out = x[i].astype(float)
    inner = (i > 0) & (i < x.size - 1)
    if np.any(inner):
        r = np.flatnonzero(inner)
        j = i[r]
        x0, x1, x2 = x[j - 1], x[j], x[j + 1]
        y0, y1, y2 = y[r, j - 1], y[r, j], y[r, j + 1]
        num = (x1 - x0) ** 2 * (y1 - y2) - (x1 - x2) ** 2 * (y1 - y0)
        den = (x1 - x0) * (y1 - y2) - (x1 - x2) * (y1 - y0)
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.where(den != 0, x1 - 0.5 * num / np.where(den != 0, den, 1.0), x1)
        out[r] = np.clip(v, x0, x2)
    return out


@dataclass(frozen=True)
class HeadSizeEstimate:
    """The best head size at one budget and one ``n``, from test MSEs over seeds (:func:`best_head_size`, Thm 6.1).

    Parameters
    ----------
    d_k : numpy.ndarray, shape (K,)
        The grid of head sizes, increasing.
    mse : Estimate
        The mean test MSE per head size with its s.e. over seeds, shape ``(K,)``.
    log2_best : float
        The estimate of ``log2 d_k*`` (the grid's minimiser refined by a parabola in ``log2 d_k``).
    se_log2 : float
        Its bootstrap standard error over seeds.
    interval : tuple (float, float)
        The bootstrap 2.5 and 97.5 % points of ``d_k*``.
    at_edge : float
        The share of bootstrap replicates whose minimum is at an end of the grid (then ``d_k*`` may lie
        beyond it).
    boot_log2 : numpy.ndarray, shape (R,)
        The bootstrap replicates of ``log2 d_k*``.
    """

    d_k: np.ndarray
    mse: Estimate
    log2_best: float
    se_log2: float
    interval: tuple
    at_edge: float
    boot_log2: np.ndarray

    @property
    def best(self) -> float:
        """The estimate of ``d_k*``, ``2**log2_best``."""
        return float(2.0**self.log2_best)

    @property
    def censored(self) -> bool:
        """Whether the estimate is at an end of the grid in the data or in half the replicates or more."""
        x = np.log2(self.d_k)
        return bool(self.log2_best <= x.min() or self.log2_best >= x.max() or self.at_edge >= 0.5)


def best_head_size(d_k_values, mse, n_boot: int, seed) -> HeadSizeEstimate:
    """Estimate the best head size ``d_k*`` from test MSEs over seeds (Thm 6.1, trained heads).

    The point estimate minimises the mean MSE over the grid and refines it by the parabola in
    ``log2 d_k`` through the smallest mean and its neighbours; its uncertainty is a bootstrap over seeds
    (the same resample of the seeds for every head size).

    Parameters
    ----------
    d_k_values : array_like, shape (K,)
        At least 3 increasing positive head sizes.
    mse : array_like, shape (K, S)
        The test MSE of each head size for ``S >= 2`` seeds, paired: seed ``s`` saw the same tasks at
        every head size.
    n_boot : int >= 2
        Bootstrap resamples.
    seed : int or numpy.random.SeedSequence
        The seed of the bootstrap.

    Returns
    -------
    HeadSizeEstimate
        The estimate of ``d_k*``, its bootstrap s.e., interval and replicates.

    Raises
    ------
    ValueError
        Naming ``d_k_values`` when fewer than 3 or not increasing and positive, ``mse`` when its shape does
        not fit, or ``n_boot`` when out of range.
    """
    k = as_float_array(d_k_values, "d_k_values", ndim=1)
    if k.size < 3 or np.any(k <= 0) or np.any(np.diff(k) <= 0):
        raise ValueError(f"d_k_values: expected at least 3 increasing positive head sizes, got {brief(k)}")
    y = as_float_array(mse, "mse", ndim=2)
    if y.shape[0] != k.size or y.shape[1] < 2:
        raise ValueError(f"mse: expected shape ({k.size}, S) with S >= 2 seeds, got {y.shape}")
    n_boot = positive_int(n_boot, "n_boot", minimum=2, maximum=10**6, what="bootstrap resamples")
    check_entries("n_boot", n_boot, y.size)
    rng = np.random.default_rng(as_seed_sequence(seed))
    x = np.log2(k)
    S = y.shape[1]
    point = float(_refined_argmin(x, y.mean(axis=1)[None, :])[0])
    idx = rng.integers(0, S, size=(n_boot, S))
    boot_means = y[:, idx].mean(axis=2).T  # (R, K)
    boot = _refined_argmin(x, boot_means)
    edge = np.mean((np.argmin(boot_means, axis=1) == 0) | (np.argmin(boot_means, axis=1) == k.size - 1))
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return HeadSizeEstimate(
        d_k=k,
        mse=Estimate.from_samples(y),
        log2_best=point,
        se_log2=float(boot.std(ddof=1)),
        interval=(float(2**lo), float(2**hi)),
        at_edge=float(edge),
        boot_log2=boot,
    )


#: The laws of ``d_k*(n)`` compared by :func:`compare_laws`, each up to a constant factor:
#: Theorem 6.1's printed ``(ln n)^(2/(4+d))``, the M1 law ``2 ln n / ln ln n`` (:mod:`mhanw.scaling`,
#: model ``"M1"``) and a constant.
LAWS = ("printed", "M1", "constant")


def law_values(law: str, n_values, d: int) -> np.ndarray:
    """A law of ``d_k*(n)`` of :data:`LAWS` at the sample sizes ``n_values``, up to its constant factor (Thm 6.1).

    Parameters
    ----------
    law : {"printed", "M1", "constant"}
        ``(ln n)^(2/(4+d))`` as Theorem 6.1 prints it, ``2 ln n / ln ln n`` (model ``"M1"`` of
        :mod:`mhanw.scaling`) or 1.
    n_values : array_like, shape (N,)
        Sample sizes above ``e`` (so that ``ln ln n > 0``).
    d : int, 1 <= d <= 4096
        The input dimension.

    Returns
    -------
    numpy.ndarray, shape (N,)
        The law's values.

    Raises
    ------
    ValueError
        Naming ``n_values`` when a size is at most ``e``, or ``law`` or ``d`` when out of range.
    """
    one_of(law, "law", LAWS)
    n = as_float_array(n_values, "n_values", ndim=1)
    if np.any(n <= math.e):
        raise ValueError(f"n_values: expected sample sizes above e = 2.718 (ln ln n > 0), got {brief(n)}")
    d = positive_int(d, "d", maximum=4096)
    if law == "printed":
        return np.log(n) ** (2.0 / (4.0 + d))
    if law == "M1":
        return 2.0 * np.log(n) / np.log(np.log(n))
    return np.ones_like(n)


@dataclass(frozen=True)
class LawFit:
    """One law fitted to ``log2 d_k*(n)`` with a free constant factor (:func:`compare_laws`, Thm 6.1).

    Parameters
    ----------
    law : str
        The law, one of :data:`LAWS`.
    log2_factor : float
        The fitted ``log2`` of its constant factor.
    chi2 : float
        The weighted residual sum of squares.
    dof : int
        Its degrees of freedom, ``N - 1``.
    p_value : float
        The chi-square tail probability of ``chi2``.
    wins : float
        The share of bootstrap replicates in which this law's weighted residual was the smallest.
    """

    law: str
    log2_factor: float
    chi2: float
    dof: int
    p_value: float
    wins: float


def _usable(estimates, n_values, name="estimates"):
    est = list(sequence(estimates, name, "HeadSizeEstimates"))
    n = as_float_array(n_values, "n_values", ndim=1)
    if len(est) != n.size:
        raise ValueError(f"{name}: expected one estimate per sample size ({n.size}), got {len(est)}")
    for i, e in enumerate(est):
        if not isinstance(e, HeadSizeEstimate):
            raise ValueError(f"{name}[{i}]: expected a HeadSizeEstimate, got {type(e).__name__}")
    R = {e.boot_log2.size for e in est}
    if len(R) != 1:
        raise ValueError(f"{name}: expected the same number of bootstrap replicates for every n, got {sorted(R)}")
    keep = np.array([not e.censored for e in est])
    return est, n, keep


def compare_laws(n_values, estimates, d: int) -> dict:
    """Fit each law of :data:`LAWS` to the uncensored estimates of ``log2 d_k*`` (Thm 6.1, trained heads).

    Least squares weighted by the bootstrap variances, with one free factor per law.  The ``p_value`` is
    the chi-square tail of the weighted residual (``dof = N - 1``); a law whose p-value is small does not
    describe ``d_k*(n)`` at this size.  Two laws can only be told apart by the data where their
    ``log d_k*`` differ by more than the estimates' standard errors across the range of ``n``.

    Parameters
    ----------
    n_values : array_like, shape (N,)
        The sample sizes, above ``e``.
    estimates : sequence of HeadSizeEstimate
        One per sample size, all with the same number of bootstrap replicates.
    d : int, 1 <= d <= 4096
        The input dimension of the printed law.

    Returns
    -------
    dict of str to LawFit
        ``{law: LawFit}``; empty when fewer than two estimates are uncensored (an estimate at an end of the
        head-size grid is a bound, not a value).
    """
    from scipy.stats import chi2 as _chi2

    d = positive_int(d, "d", maximum=4096)
    est, n, keep = _usable(estimates, n_values)
    if keep.sum() < 2:
        return {}
    y = np.array([e.log2_best for e in est])[keep]
    w = 1.0 / np.maximum(np.array([e.se_log2 for e in est])[keep], 1e-12) ** 2
    boot = np.stack([e.boot_log2 for e in est], axis=1)[:, keep]  # (R, N)
    curves = {law: np.log2(law_values(law, n[keep], d)) for law in LAWS}

    def residual(values, curve):
        c = np.sum(w * (values - curve), axis=-1, keepdims=True) / w.sum()
        return c[..., 0], np.sum(w * (values - curve - c) ** 2, axis=-1)

    boot_res = np.stack([residual(boot, curves[law])[1] for law in LAWS])  # (L, R)
    winner = np.argmin(boot_res, axis=0)
    out = {}
    for i, law in enumerate(LAWS):
        c, r = residual(y, curves[law])
        dof = int(keep.sum() - 1)
        out[law] = LawFit(
            law=law,
            log2_factor=float(c),
            chi2=float(r),
            dof=dof,
            p_value=float(_chi2.sf(r, dof)),
            wins=float(np.mean(winner == i)),
        )
    return out


def law_decision(fits: dict, alpha: float) -> str:
    """Which law describes ``d_k*(n)`` (Thm 6.1, trained heads).

    Parameters
    ----------
    fits : dict of str to LawFit
        The fits of :func:`compare_laws`.
    alpha : float >= 0
        The level below which a law's p-value rejects it.

    Returns
    -------
    str
        The one law whose p-value is at least ``alpha`` when exactly one is; ``"none"`` when every law is
        rejected; ``"cannot tell"`` when several are not rejected or there is nothing to fit.

    Raises
    ------
    ValueError
        Naming ``fits`` when it is not a dict of LawFit, or ``alpha`` when negative.
    """
    if not isinstance(fits, dict) or not all(isinstance(f, LawFit) for f in fits.values()):
        raise ValueError(f"fits: expected the dict law -> LawFit of compare_laws, got {brief(fits)}")
    alpha = nonnegative_scalar(alpha, "alpha")
    if not fits:
        return "cannot tell"
    kept = [law for law, f in fits.items() if f.p_value >= alpha]
    if not kept:
        return "none"
    return kept[0] if len(kept) == 1 else "cannot tell"


def growth(n_values, estimates) -> Estimate | None:
    """The slope of ``log2 d_k*`` on ``log2 n`` over the uncensored estimates, with its bootstrap s.e. (Thm 6.1).

    The replicates of the estimates at different ``n`` are independent resamples, paired by index.  The
    slope is positive when the best head size grows with ``n`` (:func:`direction` decides at ``k`` s.e.).

    Parameters
    ----------
    n_values : array_like, shape (N,)
        The sample sizes.
    estimates : sequence of HeadSizeEstimate
        One per sample size, all with the same number of bootstrap replicates.

    Returns
    -------
    Estimate or None
        The slope and its bootstrap s.e.; ``None`` when fewer than two estimates are uncensored (nothing to
        fit).
    """
    est, n, keep = _usable(estimates, n_values)
    if keep.sum() < 2:
        return None
    x = np.log2(n[keep])
    xc = x - x.mean()
    y = np.array([e.log2_best for e in est])[keep]
    boot = np.stack([e.boot_log2 for e in est], axis=1)[:, keep]
    slope = float(np.sum(xc * (y - y.mean())) / np.sum(xc * xc))
    boot_slope = (boot - boot.mean(axis=1, keepdims=True)) @ xc / np.sum(xc * xc)
    return Estimate(slope, float(boot_slope.std(ddof=1)))


# --------------------------------------------------------------------------- the experiments


def _family(spec, d: int, name: str) -> TaskFamily:
    """A :class:`TaskFamily` from a dict of its fields (``d`` from the experiment)."""
    if isinstance(spec, TaskFamily):
        if spec.d != d:
            raise ValueError(f"{name}: expected a family on R^{d}, got d = {spec.d}")
        return spec
    if not isinstance(spec, dict):
        raise ValueError(f"{name}: expected a dict of TaskFamily fields, got {type(spec).__name__}")
    try:
        return TaskFamily(d=d, **spec)
    except TypeError as exc:
        raise ValueError(f"{name}: {exc}") from None


def _sizes(sizes, keys, name: str) -> dict:
    if not isinstance(sizes, dict):
        raise ValueError(f"{name}: expected a dict of sizes, got {type(sizes).__name__}")
    missing = [k for k in keys if k not in sizes]
    if missing:
        raise ValueError(f"{name}: missing the key(s) {', '.join(map(repr, missing))}")
    extra = [k for k in sizes if k not in keys]
    if extra:
        raise ValueError(f"{name}: unknown key(s) {', '.join(map(repr, extra))}")
    return sizes


#: The keys of the heads-apart experiment's sizes (:func:`heads_apart`).
APART_KEYS = (
    "d",
    "budget",
    "heads",
    "n",
    "seeds",
    "steps",
    "tasks",
    "queries",
    "lr",
    "penalty",
    "record_every",
    "test_tasks",
    "test_queries",
    "families",
)

#: The configurations of :func:`heads_apart`: free heads (the paper's reading), the positive control
#: (the orthogonality penalty) and the negative control (tied heads).
APART_CONFIGS = ("free", "penalised", "tied")


def heads_apart(sizes: dict, seed) -> dict:
    """Do trained heads move apart?  HDI_PA along training of free, penalised and tied heads (Thm 4.2).

    For each task family, train free heads, the same heads with the orthogonality penalty and tied heads, in
    lockstep from the same initial weights on the same tasks; at every recorded step measure, on the same
    fresh test tasks, HDI_PA of the keys (:func:`hdi_keys`), of the circuits (:func:`hdi_circuits`), the
    heads' error correlation and the test MSE.

    Parameters
    ----------
    sizes : dict
        The keys of :data:`APART_KEYS` (e.g. ``QUICK["apart"]``): ``d``, ``budget``, ``heads`` (at least 2
        heads of size ``d_k < d``), the training sizes of :func:`train`, ``penalty > 0``, ``record_every``,
        ``test_tasks``, ``test_queries`` and ``families`` (a non-empty dict name -> TaskFamily fields).
    seed : int or numpy.random.SeedSequence
        The root of every stream.

    Returns
    -------
    dict
        ``{family: {"family": TaskFamily, "steps": (K,), "haar": 1 - d_k/d, "haar_circuit": 1 - 1/d^2,
        "cpu_seconds": float, config: {"hdi", "hdi_circuit", "error_corr", "mse": (K, S)}}}`` with
        ``config`` in :data:`APART_CONFIGS`.

    Raises
    ------
    ValueError
        Naming ``sizes['families']`` when it is not a non-empty dict, or ``sizes`` when there are fewer than
        2 heads or ``d_k >= d`` (or a key is missing or out of range).
    """
    sz = _sizes(sizes, APART_KEYS, "sizes")
    fams = sz["families"]
    if not isinstance(fams, dict) or not fams:
        raise ValueError(f"sizes['families']: expected a non-empty dict of task families, got {brief(fams)}")
    arch = Architecture(sz["d"], sz["budget"], sz["heads"])
    if arch.heads < 2 or arch.d_k >= arch.d:
        raise ValueError(
            f"sizes: the heads-apart experiment needs at least 2 heads of size d_k < d, got "
            f"{arch.label()} on R^{arch.d}"
        )
    archs = (arch, arch, replace(arch, tied=True))
    penalty = positive_scalar(sz["penalty"], "sizes['penalty']")
    out = {}
    for fname, spec in fams.items():
        family = _family(spec, arch.d, f"sizes['families'][{fname!r}]")
        run = train(
            archs,
            family,
            sz["n"],
            seed,
            sz["seeds"],
            sz["steps"],
            sz["tasks"],
            sz["queries"],
            sz["lr"],
            penalties=(0.0, penalty, 0.0),
            record_every=sz["record_every"],
        )
        test = fresh_tasks(family, seed, sz["seeds"], sz["test_tasks"], sz["n"], sz["test_queries"])
        res = {
            "family": family,
            "steps": run.steps,
            "haar": haar_expected_hdi(arch.d, arch.d_k),
            "haar_circuit": circuit_haar_hdi(arch.d),
            "cpu_seconds": run.cpu_seconds,
        }
        for name, a, snaps in zip(APART_CONFIGS, archs, run.snapshots):
            rows = {"hdi": [], "hdi_circuit": [], "error_corr": [], "mse": []}
            for p in snaps:
                ev = evaluate(a, p, test)
                rows["hdi"].append(hdi_keys(p))
                rows["hdi_circuit"].append(hdi_circuits(p))
                rows["error_corr"].append(ev.error_corr)
                rows["mse"].append(ev.mse)
            res[name] = {k: np.array(v) for k, v in rows.items()}
        out[fname] = res
    return out


#: The keys of the head-size experiment's sizes (:func:`head_size_sweep`).
SIZE_KEYS = (
    "d",
    "budgets",
    "heads",
    "n_values",
    "seeds",
    "steps",
    "tasks",
    "queries",
    "lr",
    "test_tasks",
    "test_queries",
    "family",
    "n_boot",
)


def head_size_sweep(sizes: dict, seed) -> dict:
    """Many small heads or few big ones?  The best head size of trained layers as ``n`` grows (Thm 6.1).

    For each context length ``n``, train ``H`` heads of size ``D / H`` for every budget ``D`` and every
    ``H`` of that budget, all in lockstep on the same tasks (common random numbers across every head count
    and budget), and measure each on the same fresh test tasks: the test MSE, each head's ``n_eff/n``, the
    layer's ``n_eff/n``, the distance ratio and the inverse temperature (:func:`evaluate`; head quantities
    averaged over the heads).  Then, per budget, the best head size at each ``n``
    (:func:`best_head_size`), its growth with ``n`` (:func:`growth`) and the laws (:func:`compare_laws`).

    Parameters
    ----------
    sizes : dict
        The keys of :data:`SIZE_KEYS` (e.g. ``QUICK["size"]``): ``d``, ``budgets``, ``heads`` (a dict
        budget -> at least 3 distinct head counts dividing it), ``n_values`` (each at least 3), the training
        sizes of :func:`train`, ``test_tasks``, ``test_queries``, ``family`` (TaskFamily fields) and
        ``n_boot``.
    seed : int or numpy.random.SeedSequence
        The root of every stream.

    Returns
    -------
    dict
        ``{D: {"heads": (K,), "d_k": (K,), "n_values": (N,), "mse", "neff", "neff_layer",
        "distance_ratio", "beta": (N, K, S), "estimates": [HeadSizeEstimate per n], "growth": Estimate or
        None, "laws": {law: LawFit}}}`` per budget, plus ``"family"``: the TaskFamily and
        ``"cpu_seconds"``: the training's.

    Raises
    ------
    ValueError
        Naming ``sizes['heads']`` or ``sizes['heads'][D]`` when the head counts of a budget are missing or
        fewer than 3 distinct, or the key of ``sizes`` that is missing or out of range.
    """
    sz = _sizes(sizes, SIZE_KEYS, "sizes")
    d = positive_int(sz["d"], "sizes['d']", maximum=4096)
    family = _family(sz["family"], d, "sizes['family']")
    budgets = positive_ints(sz["budgets"], "sizes['budgets']", maximum=4096)
    n_values = positive_ints(sz["n_values"], "sizes['n_values']", minimum=3, maximum=1 << 20)
    if not isinstance(sz["heads"], dict):
        raise ValueError(f"sizes['heads']: expected a dict budget -> head counts, got {brief(sz['heads'])}")
    archs = {}
    for D in budgets:
        if D not in sz["heads"]:
            raise ValueError(f"sizes['heads']: missing the head counts of the budget {D}")
        heads = sorted(positive_ints(sz["heads"][D], f"sizes['heads'][{D}]", maximum=D), reverse=True)
        if len(heads) < 3 or len(set(heads)) != len(heads):
            raise ValueError(f"sizes['heads'][{D}]: expected at least 3 distinct head counts, got {heads}")
        archs[D] = [Architecture(d, D, H) for H in heads]  # head sizes increasing
    every = [a for D in budgets for a in archs[D]]
    names = ("mse", "neff", "neff_layer", "distance_ratio", "beta")
    rows = {D: {k: [] for k in names} for D in budgets}
    cpu = 0.0
    for n in n_values:
        run = train(every, family, n, seed, sz["seeds"], sz["steps"], sz["tasks"], sz["queries"], sz["lr"])
        cpu += run.cpu_seconds
        test = fresh_tasks(family, seed, sz["seeds"], sz["test_tasks"], n, sz["test_queries"])
        at_n = {D: {k: [] for k in names} for D in budgets}
        for a, snaps in zip(every, run.snapshots):
            ev = evaluate(a, snaps[-1], test)
            got = at_n[a.budget]
            got["mse"].append(ev.mse)
            got["neff"].append(ev.neff.mean(axis=1))
            got["neff_layer"].append(ev.neff_layer)
            got["distance_ratio"].append(ev.distance_ratio.mean(axis=1))
            got["beta"].append(ev.beta.mean(axis=1))
        for D in budgets:
            for k in names:
                rows[D][k].append(np.array(at_n[D][k]))
    out = {"family": family, "cpu_seconds": cpu}
    for D in budgets:
        res = {k: np.array(v) for k, v in rows[D].items()}
        d_k = [a.d_k for a in archs[D]]
        estimates = [best_head_size(d_k, m, sz["n_boot"], seed) for m in res["mse"]]
        res.update(
            heads=np.array([a.heads for a in archs[D]]),
            d_k=np.array(d_k),
            n_values=np.array(n_values),
            estimates=estimates,
            growth=growth(n_values, estimates),
            laws=compare_laws(n_values, estimates, d),
        )
        out[D] = res
    return out


#: The task families of both experiments (on ``R^8``, inputs uniform on the sphere of radius ``sqrt 8``,
#: noise sd 0.1): an isotropic GP, an anisotropic GP whose lengthscales grow from 1 to 16 along the
#: coordinates (the first few matter), and the null family.
FAMILIES = {
    "isotropic": dict(kind="gp", lengthscale=2.0, anisotropy=1.0),
    "anisotropic": dict(kind="gp", lengthscale=1.0, anisotropy=16.0),
    "null": dict(kind="null"),
}

#: The sizes of a quick run (both experiments, every control): about 20 CPU-seconds on a 2-core machine.
QUICK = {
    "apart": dict(
        d=8,
        budget=8,
        heads=4,
        n=32,
        seeds=8,
        steps=200,
        tasks=8,
        queries=8,
        lr=0.03,
        penalty=1.0,
        record_every=50,
        test_tasks=32,
        test_queries=8,
        families=FAMILIES,
    ),
    "size": dict(
        d=8,
        budgets=(16, 64),
        heads={16: (1, 2, 4, 8, 16), 64: (2, 4, 8, 16, 32)},
        n_values=(16, 64, 256),
        seeds=3,
        steps=150,
        tasks=8,
        queries=8,
        lr=0.03,
        test_tasks=32,
        test_queries=8,
        family=FAMILIES["anisotropic"],
        n_boot=500,
    ),
}

#: The sizes of the paper's run (20 seeds per setting for the heads, 5 per (D, H, n) cell): about 330
#: CPU-seconds on a 2-core machine (70 for the heads, 260 for the head sizes).  At the budget 64 the heads
#: go down to d_k = 2 (64 heads of size 1 would cost as much again as the rest of the sweep).
PAPER = {
    "apart": dict(
        d=8,
        budget=8,
        heads=4,
        n=64,
        seeds=20,
        steps=400,
        tasks=16,
        queries=8,
        lr=0.03,
        penalty=1.0,
        record_every=50,
        test_tasks=64,
        test_queries=8,
        families=FAMILIES,
    ),
    "size": dict(
        d=8,
        budgets=(16, 64),
        heads={16: (1, 2, 4, 8, 16), 64: (1, 2, 4, 8, 16, 32)},
        n_values=(16, 32, 64, 128, 256, 512),
        seeds=5,
        steps=400,
        tasks=12,
        queries=8,
        lr=0.03,
        test_tasks=64,
        test_queries=8,
        family=FAMILIES["anisotropic"],
        n_boot=2000,
    ),
}
