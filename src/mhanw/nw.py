"""Kernels, the Nadaraya-Watson estimator and softmax attention (Theorem 2.1).

Theorem 2.1 of the paper states that single-head softmax attention *is* a
Nadaraya-Watson (NW) kernel regression with the exponential kernel
``K(q, k) = exp(q.k / sqrt(d_k))``.  This module implements both sides of that
identity with one engine, so that

    softmax_attention(Q, K, V) == nadaraya_watson(Q, K, V, bandwidth=sqrt(d_k),
                                                  kernel="exponential")

holds bit for bit, and the Gaussian-kernel NW estimator that every statistical
check of the companion uses (through :func:`mhanw.heads.head_estimates`, which
calls the same engine with all heads batched).

Shapes: ``queries`` ``(m, d_k)``, ``keys`` ``(n, d_k)``, ``values`` ``(n,)`` or
``(n, d_v)``; outputs ``(m,)`` or ``(m, d_v)``.  A leading head axis ``H`` on
all three (``(H, m, d_k)`` ...) evaluates H heads at once.  float32 inputs are
computed in float32 (for speed), everything else in float64.

The engine, :func:`weighted_mean`, evaluates ``softmax(L) @ V`` row by row for
the logits ``L = s (q.k + b_k)`` (``b_k = 0`` for the exponential kernel,
``-|k|^2/2`` for the Gaussian one, whose row constant ``-|q|^2/2`` cancels),
for a batch of heads, over blocks of queries so that the ``(block, n)`` logit
matrix stays in cache and ``Q K^T`` stays a matrix-matrix product.  Per block
it makes three passes:

1. one product ``[s q, ..., -c_q] . [k, ..., 1]`` gives the logits already
   shifted by an upper bound ``c_q`` of their row maximum (Gaussian:
   ``c_q = s |q|^2/2``, and the shifted logits are ``-s |q - k|^2 / 2 <= 0``;
   exponential: a Cauchy-Schwarz or coordinate-wise bound), so no pass for
   the row maximum is needed; Gaussian blocks whose logits cannot overflow
   skip the shift;
2. ``exp`` in place;
3. one product with ``[V, 1]`` gives numerators and the denominator together.

A row whose denominator shows that the bound was too loose (all weights below
``exp(-SHIFT_SLACK)``) is recomputed with its exact row maximum subtracted.

Kernels are a registry, :data:`REGISTRY` (names :data:`KERNELS`): Gaussian and
exponential (attention) on the fused path above, Laplace ``exp(-|q - k|/h)`` and
Epanechnikov ``(1 - |q - k|^2/h^2)_+`` on a blocked distance path
(:func:`_distance_heads`: per head and block of queries, squared distances from
one product, near-coincident pairs recomputed directly, then the kernel's
weights and one product with ``[V, 1]``).  Each :class:`Kernel` states its
normalisation and what its bandwidth means.  A compact kernel leaves a query
with no key in its window; its estimate there is the mean value of its nearest
keys (:data:`EMPTY_WINDOW`, counted by :func:`empty_windows`), never NaN.

Finite inputs never give NaN or inf.  A head whose scale or input size could
make a logit overflow or lose its precision to rounding (``s M^2`` above
``2^FAST_LOG2_RANGE``, ``M`` the largest norm of a query or key: bandwidths
down to the smallest subnormal, inputs of 1e200, ``scale=1e308``) is evaluated
in log space: queries and keys are divided by powers of two, the row maximum is
subtracted from the bounded products, and the scale, carried as mantissa and
exponent, is applied last, so that each weight is its exact limit,
``exp(-inf) = 0`` for every key but the maximal ones (nearest-neighbour
weights for a vanishing bandwidth).  The weight matrices
(:func:`kernel_weights`, :func:`attention_weights`) always take this path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .infra.validate import as_float_array, one_of, positive_int, positive_scalar, real_scalar

__all__ = [
    "Kernel",
    "REGISTRY",
    "KERNELS",
    "EMPTY_WINDOW",
    "nadaraya_watson",
    "softmax_attention",
    "kernel_weights",
    "attention_weights",
    "leave_one_out",
    "empty_windows",
    "logit_scale",
    "weighted_mean",
    "nadaraya_watson_loop",
]


@dataclass(frozen=True)
class Kernel:
    """One kernel of the registry :data:`REGISTRY`: what it computes and what its bandwidth means.

    Every kernel is evaluated as normalised weights ``w_i(q) = K(q, k_i) / sum_l K(q, k_l)``, so a
    constant factor of ``K`` (the one that would make it a probability density) never enters an
    estimate; :attr:`normalisation` states it all the same, for densities and for the kernel-overlap
    integrals of the theory.

    Parameters
    ----------
    name : str
        The registry key (what ``kernel=`` takes).
    formula : str
        ``K(q, k)`` for bandwidth ``h`` (``|.|`` the Euclidean norm in ``R^{d_k}``).
    normalisation : str
        The constant ``c_d(h)`` for which ``c_d(h) K(q, k)`` is a density in ``q - k`` on ``R^d`` (or
        why there is none).
    bandwidth : str
        What ``h`` means.
    scale_power : int
        The engine's logit multiplier is ``s = h^-scale_power`` (:func:`logit_scale`).
    degree : int
        The kernel's argument is homogeneous of this degree in ``(q, k)`` (``q.k``, ``|q - k|^2``: 2;
        ``|q - k|``: 1): scaling the inputs by ``c`` is scaling ``s`` by ``c^degree``.
    compact : bool
        Whether ``K`` vanishes outside a window ``|q - k| < h``; where a query has no key in its window
        the estimate is the mean value of its nearest keys (see :data:`EMPTY_WINDOW`).
    fused : bool
        Evaluated by the fused softmax path of :func:`weighted_mean` (logits linear in ``q.k``); the
        others by the blocked distance path.
    """

    name: str
    formula: str
    normalisation: str
    bandwidth: str
    scale_power: int
    degree: int
    compact: bool
    fused: bool

    def log_density_constant(self, d: int, bandwidth: float) -> float:
        """``ln c_d(h)`` of :meth:`density_constant`, from ``lgamma`` and logarithms.

        Finite for every ``d`` and ``h`` the checks accept, where ``c_d(h)`` itself may lie beyond a
        double.

        Parameters
        ----------
        d : int >= 1
            The dimension of ``u = q - k``.
        bandwidth : float > 0
            ``h``.

        Returns
        -------
        float
            ``ln c_d(h)``.

        Raises
        ------
        ValueError
            Naming ``kernel`` for the exponential kernel, which is not a function of ``q - k`` and has no
            normalising constant; naming ``d`` or ``bandwidth`` for a value out of range.
        """
        d = positive_int(d, "d")
        h = positive_scalar(bandwidth, "bandwidth")
        half, log_h, log_pi = 0.5 * d, math.log(h), math.log(math.pi)
        if self.name == "gaussian":
            return -half * (math.log(2.0 * math.pi) + 2.0 * log_h)
        if self.name == "laplace":
            return math.lgamma(half) - math.log(2.0) - half * log_pi - math.lgamma(d) - d * log_h
        if self.name == "epanechnikov":
            return math.log(d + 2) + math.lgamma(half + 1.0) - math.log(2.0) - half * log_pi - d * log_h
        raise ValueError(f"kernel: {self.name!r} is not a function of q - k and has no normalising constant")

    def density_constant(self, d: int, bandwidth: float) -> float:
        """:attr:`normalisation` as a number: ``c_d(h)`` with ``int c_d(h) K(u) du = 1`` over ``R^d``.

        :meth:`log_density_constant` is finite where this is beyond a double.

        Parameters
        ----------
        d : int >= 1
            The dimension of ``u = q - k``.
        bandwidth : float > 0
            ``h``.

        Returns
        -------
        float
            ``c_d(h)``.

        Raises
        ------
        ValueError
            Naming ``kernel`` for the exponential kernel, which has none; naming ``d, bandwidth`` when
            ``c_d(h)`` is beyond the range of a double (it over- or underflows: the Laplace constant at
            ``d = 200``); naming ``d`` or ``bandwidth`` for a value out of range.
        """
        log_c = self.log_density_constant(d, bandwidth)
        if not _LOG_DOUBLE_RANGE[0] < log_c < _LOG_DOUBLE_RANGE[1]:
            raise ValueError(
                f"d, bandwidth: the {self.name} density constant c_d(h) at d = {d}, h = {bandwidth!r} is "
                f"10^{log_c / math.log(10.0):.4g}, beyond the range of a double; use log_density_constant"
            )
        return math.exp(log_c)


#: ``(ln of the smallest normal double, ln of the largest double)``: a constant outside is not a double.
_LOG_DOUBLE_RANGE = (math.log(np.finfo(float).tiny), math.log(np.finfo(float).max))


#: The kernels of the engine, by name.  Every function of the package that names a kernel accepts
#: any of them (:mod:`mhanw.heads` calls the exponential one ``"attention"``, with tied projections).
REGISTRY = {
    "gaussian": Kernel(
        "gaussian",
        "exp(-|q - k|^2 / (2 h^2))",
        "(2 pi h^2)^(-d/2): the N(0, h^2 I_d) density",
        "the standard deviation of the Gaussian density in every coordinate",
        2,
        2,
        False,
        True,
    ),
    "exponential": Kernel(
        "exponential",
        "exp(q.k / h)",
        "none: not a function of q - k, not integrable; the softmax of attention",
        "a temperature: h = sqrt(d_k) is softmax attention (beta = 1/h)",
        1,
        2,
        False,
        True,
    ),
    "laplace": Kernel(
        "laplace",
        "exp(-|q - k| / h)",
        "Gamma(d/2) / (2 pi^(d/2) Gamma(d) h^d): the isotropic Laplace density (the distance |q - k| is then "
        "Gamma(d, h))",
        "the scale of the distance: the weight falls by e per distance h (mean distance d h under the density)",
        1,
        1,
        False,
        False,
    ),
    "epanechnikov": Kernel(
        "epanechnikov",
        "(1 - |q - k|^2 / h^2)_+",
        "(d + 2) Gamma(d/2 + 1) / (2 pi^(d/2) h^d): the Epanechnikov density on the ball of radius h",
        "the radius of the window: keys at distance h or more get weight 0",
        2,
        2,
        True,
        False,
    ),
}
#: The names of the kernels, what every ``kernel=`` argument takes.
KERNELS = tuple(REGISTRY)
#: Kernels of the fused softmax path (Gaussian and exponential logits); the others take the blocked
#: distance path.
FUSED_KERNELS = tuple(k for k, v in REGISTRY.items() if v.fused)
#: What a compact kernel gives a query with no key in its window: the mean value of its nearest keys
#: (ties included), the limit of the estimate as the window shrinks to the nearest distance from
#: above, and the Gaussian estimate's limit as ``h -> 0``.  Never NaN; :func:`empty_windows` counts
#: such queries, so that a chapter can report how often it happened.
EMPTY_WINDOW = "nearest keys"
_MAXEXP = {np.dtype(np.float64): 1024, np.dtype(np.float32): 128}  # np.finfo(dtype).maxexp

#: Largest number of logits in one block (``heads x queries x keys``): 2 MiB
#: of float64, measured fastest on a 1 MiB L2 cache at the simulations' shapes.
BLOCK_ENTRIES = 1 << 18
#: Fewest queries in one block, whatever ``n``: Q K^T stays a matrix-matrix
#: product (32 x 1e6 keys is 256 MB in float64).
MIN_BLOCK_ROWS = 32

#: Logits (after the shift) are floored here before ``exp`` in float64: a weight
#: below ``exp(-700)`` next to a maximal weight above ``exp(-SHIFT_SLACK)`` cannot
#: change the sum, and ``exp`` of numbers whose result is subnormal or zero takes
#: a slow path on x86 (about 15-200 ns instead of 1 ns).  float32 ``exp`` has no
#: such slow path.
LOGIT_FLOOR = {np.dtype(np.float64): -700.0}
#: A row whose shifted logits are all below ``-SHIFT_SLACK`` (denominator below
#: ``exp(-SHIFT_SLACK)``) is recomputed with its exact maximum subtracted, so
#: that its weights keep full relative precision.
SHIFT_SLACK = {np.dtype(np.float64): 600.0, np.dtype(np.float32): 60.0}
#: Largest ``log2(s M^2)`` (scale times the largest squared norm of a query or
#: key) evaluated in the fast path; larger ones take the log-space path.
FAST_LOG2_RANGE = {np.dtype(np.float64): 40.0, np.dtype(np.float32): 12.0}
#: Values of at most this width get a column of ones appended, so that one
#: product gives numerators and denominators; wider values are read in place
#: (no copy), and the denominators take a pass over the weights.
ONES_MAX_DV = 8
#: Keys of at least this many dimensions, given to :func:`weighted_mean` as an
#: array, are read in place (no augmented copy).
PLAIN_MIN_DK = 32
#: Gaussian rows whose shift ``s |q|^2 / 2`` is below this need none: their
#: weights are at most ``exp(SHIFT_FREE)``, far from overflow.
SHIFT_FREE = {np.dtype(np.float64): 300.0, np.dtype(np.float32): 30.0}
#: ``exp(-SHIFT_SLACK)``: rows whose denominator is below it are recomputed exactly.
_TINY = {dt: np.exp(-slack) for dt, slack in SHIFT_SLACK.items()}


# --------------------------------------------------------------------------- inputs


def _real_array(value, name, ndim):
    """A finite float array, checked.

    Finite float array (ints or floats; :func:`as_float_array` rejects other dtypes);
    float32 input stays float32, anything else becomes float64.
    """
    if isinstance(value, np.ndarray) and value.dtype == np.float32:
        if (
            value.ndim not in ((ndim,) if isinstance(ndim, int) else ndim)
            or value.size == 0
            or not np.all(np.isfinite(value))
        ):
            as_float_array(value, name, ndim=ndim)  # raises the standard message
        return value
    return as_float_array(value, name, ndim=ndim)


def _check_qkv(queries, keys, values=None, need_values=False):
    """Queries, keys and values with matching shapes, checked.

    Validate shapes ``(m, d_k)``, ``(n, d_k)``, ``(n,)|(n, d_v)``, or the same
    with a leading batch (head) axis ``H``: ``(H, m, d_k)``, ``(H, n, d_k)``,
    ``(H, n)|(H, n, d_v)``.
    """
    q = _real_array(queries, "queries", (2, 3))
    k = _real_array(keys, "keys", q.ndim)
    if q.shape[-1] != k.shape[-1] or q.shape[:-2] != k.shape[:-2]:
        want = q.shape[:-2] + ("n", q.shape[-1])
        raise ValueError(f"keys: expected shape {want} to match queries of shape {q.shape}, got {k.shape}")
    if values is None:
        if need_values:
            raise ValueError("values: expected an array (n,) or (n, d_v) of responses, got None")
        return q, k, None
    v = _real_array(values, "values", (q.ndim - 1, q.ndim))
    if v.shape[: q.ndim - 1] != k.shape[:-1]:
        raise ValueError(f"values: expected leading shape {k.shape[:-1]} (one row per key), got shape {v.shape}")
    return q, k, v


# --------------------------------------------------------------------------- scales


def logit_scale(kernel: str, bandwidth: float | None = None, beta: float | None = None):
    """The logit multiplier as ``(mantissa, exponent)``, ``scale = mantissa * 2**exponent``.

    ``s = h^-p`` for ``bandwidth=h``, ``p`` the kernel's :attr:`Kernel.scale_power`: ``1/h^2``
    (Gaussian, Epanechnikov), ``1/h`` (exponential, Laplace); for the exponential kernel also
    ``beta`` itself.  Split this way the scale of a bandwidth down to the smallest subnormal
    neither overflows nor divides by zero; for ordinary bandwidths ``mantissa * 2**exponent``
    is bitwise ``1/(h*h)`` (resp. ``1/h``).

    Parameters
    ----------
    kernel : str
        One of :data:`KERNELS`.
    bandwidth : float > 0, optional
        ``h``; required unless the kernel is exponential and ``beta`` is given.
    beta : float, optional
        The exponential kernel's logit multiplier itself (an inverse temperature), used when
        ``bandwidth`` is None.

    Returns
    -------
    tuple of (float, int)
        ``(mantissa, exponent)``.

    Raises
    ------
    ValueError
        Naming ``bandwidth`` when neither a bandwidth nor (for the exponential kernel) ``beta`` is given,
        or the argument that is out of range.
    """
    one_of(kernel, "kernel", KERNELS)
    if bandwidth is None:
        if beta is None or kernel != "exponential":
            raise ValueError(
                f"bandwidth: expected a positive bandwidth (or, for the exponential kernel, beta), "
                f"got bandwidth=None and beta={beta!r} with kernel={kernel!r}"
            )
        mant, expo = np.frexp(real_scalar(beta, "beta"))
        return float(mant), int(expo)
    mant, expo = np.frexp(positive_scalar(bandwidth, "bandwidth"))  # h = mant 2^expo, mant in [0.5, 1)
    if REGISTRY[kernel].scale_power == 2:
        return 1.0 / (mant * mant), -2 * int(expo)
    return 1.0 / mant, -int(expo)


def _scale_arrays(scale, B):
    """``(mantissa, exponent)`` as two ``(B,)`` arrays (float64, int64)."""
    mant, expo = scale
    mant = np.full(B, mant, dtype=np.float64) if np.ndim(mant) == 0 else np.asarray(mant, dtype=np.float64)
    expo = np.full(B, expo, dtype=np.int64) if np.ndim(expo) == 0 else np.asarray(expo, dtype=np.int64)
    return mant, expo


# --------------------------------------------------------------------------- the engine


def _block_shape(B: int, m: int, n: int, block_entries: int):
    """The heads and rows of one block of logits.

    ``(heads, rows)`` of one block of logits: at least MIN_BLOCK_ROWS queries (or
    all ``m``), as many heads as fit in ``block_entries``.
    """
    rows = min(m, max(MIN_BLOCK_ROWS, block_entries // max(n, 1)))
    heads = max(1, min(B, block_entries // max(rows * n, 1)))
    return heads, rows


def _sqnorm(x, axis=-1, out=None):
    """Squared norms along an axis, inf where they overflow.

    ``|x|^2`` along ``axis`` (-1, or 1 of a ``(B, d, n)`` array), inf where it overflows
    (the caller silences the overflow warning).
    """
    if x.shape[axis] == 1:  # einsum is pathologically slow for one column
        return np.square(x[..., 0] if axis == -1 else x[:, 0], out=out)
    return np.einsum("...d,...d->..." if axis == -1 else "bdn,bdn->bn", x, x, out=out)


def _fast_ok(qsq, kmax2, mant, expo, dtype):
    """Per head: whether the shifted fast path is exact.

    Per head: can no product of the shifted fast path overflow, and does every
    product that underflows stay negligible?  (Else the log-space path runs.)

    ``qsq`` ``(B, m)``: squared norms of the queries, ``kmax2`` ``(B, 1)``: the
    largest squared norm of a key (``inf`` where they overflow); the largest of
    all, ``M^2``, bounds every ``|q.k|``, ``|k|^2`` and ``|q|^2``.
    """
    top = _MAXEXP[dtype] - 8  # powers of two of headroom
    log_m2 = np.log2(np.maximum(np.maximum(qsq.max(axis=1), kmax2[:, 0]), 1e-300).astype(np.float64))
    log_s = np.log2(np.maximum(np.abs(mant), 1e-300)) + expo
    # s M^2 <= 2^FAST_LOG2_RANGE: the rounding error of a shifted logit,
    # about eps s M^2 (d+2), stays far below the range of exp, so that a
    # logit bounded above by 0 cannot round to one whose exp overflows.
    ok = (log_m2 < top) & (log_s + log_m2 <= FAST_LOG2_RANGE[dtype])
    # |log2 s| <= 200: a product that underflows (a term below 2^-1022 before it
    # meets s) then stays below 2^-300 after it.
    return ok & ((mant == 0) | (np.abs(log_s) <= 200))


def _augment(q, kat, kernel, s, qsq, ksq, kmax2):
    """Augmented queries, shifts and bounds of the fast path.

    ``kat`` ``(B, w, n)``: keys transposed in rows ``:d``; if ``w > d`` (the
    augmented layout) its rows after ``d`` are filled here: for the Gaussian
    kernel ``-|k|^2/2``, then ones.  ``qsq`` ``(B, m)``, ``ksq`` ``(B, n)``
    squared norms.  Returns ``qa`` ``(B, m, w)``, such that ``qa . kat = L - c_q``
    in the augmented layout (``qa = s q`` in the plain one, ``w = d``); the
    shift ``c_q`` ``(B, m)``, an upper bound of the row maximum of the logits
    ``L``:

    - Gaussian: ``[s q, s, -c_q] . [k, -|k|^2/2, 1]`` with ``c_q = s |q|^2/2``,
      so that ``L - c_q = -s |q - k|^2 / 2 <= 0``;
    - exponential: ``[s q, -c_q] . [k, 1]`` with ``c_q`` the smaller of the
      Cauchy-Schwarz bound ``|s q| max|k|`` and the coordinate-wise one.
    """
    dtype = q.dtype
    B, m, d = q.shape
    w = kat.shape[1]
    st = s.astype(dtype, copy=False)[:, None]
    qa = np.empty((B, m, w), dtype)
    sq = np.multiply(q, st[..., None], out=qa[..., :d])
    if kernel == "gaussian":
        c = np.multiply(qsq, 0.5 * st)
        if w > d:
            np.multiply(ksq, -0.5, out=kat[:, d])
            qa[..., d] = st
    else:
        kmax = np.sqrt(kmax2)  # (B, 1) largest key norm
        qnorm = np.abs(s)[:, None] * np.sqrt(qsq)  # |s q|, (B, m)
        kt = kat[:, :d]
        hi = np.maximum(sq, 0) @ kt.max(axis=2)[..., None] + np.minimum(sq, 0) @ kt.min(axis=2)[..., None]
        c = np.minimum(qnorm * kmax, hi[..., 0])
    if w > d:
        kat[:, -1] = 1.0
        np.negative(c, out=qa[..., -1])
    return qa, c


def _weighted_sums(L, v, ones):
    """Numerators and denominators of the weights against the values.

    Numerators ``(..., r, d_v)`` and denominators ``(..., r)`` of the weights ``L``
    ``(..., r, n)`` against ``v`` ``(..., n, d_v[+1])``, whose last column is ones
    if ``ones`` (then one product gives both).
    """
    r = np.matmul(L, v)
    if ones:
        return r[..., :-1], r[..., -1]
    return r, L.sum(axis=-1)


def _exact_rows(qa, kat, bias, v, ones, floor):
    """The weighted means of rows whose shift bound was too loose.

    Weighted means of rows whose shift bound was too loose, with the exact row
    maximum subtracted: ``qa`` ``(r, w)`` without the shift, ``kat`` ``(w, n)``,
    ``bias`` ``(n,)`` or None (added to the logits), ``v`` ``(n, d_v[+1])`` values
    (then ones, if ``ones``); returns ``(r, d_v)``.
    """
    L = qa @ kat
    if bias is not None:
        L += bias
    L -= L.max(axis=1, keepdims=True)
    if floor is not None:
        np.maximum(L, floor, out=L)
    np.exp(L, out=L)
    num, den = _weighted_sums(L, v, ones)
    return num / den[:, None]


def _fast_heads(q, kat, va, kernel, s, qsq, ksq, kmax2, out, block_entries, s_abs_max=None):
    """The three passes of the module docstring for heads whose scales pass :func:`_fast_ok`.

    ``q`` ``(b, m, d)``; ``kat`` ``(b, w, n)`` with the keys transposed in rows
    ``:d`` (see :func:`_augment`; ``w = d``: a view of the caller's keys, and
    the bias and shift take a pass each over the logits instead of a column of
    the product); ``va`` ``(b|1, n, d_v[+1])``: values, then ones if
    ``d_v <= ONES_MAX_DV``; ``ksq``
    ``(b, n)`` squared key norms, ``kmax2`` ``(b, 1)`` their maxima; ``out`` ``(b, m, d_v)``;
    ``s_abs_max``: ``max |s|`` if the caller knows it.  A block whose
    Gaussian shifts are all below ``SHIFT_FREE`` (no ``exp`` can overflow)
    skips the shift: one column less in the product.
    """
    dtype = q.dtype
    b, m, d = q.shape
    n = kat.shape[2]
    ones = va.shape[-1] == out.shape[-1] + 1
    floor = LOGIT_FLOOR.get(dtype)
    qa, c = _augment(q, kat, kernel, s, qsq, ksq, kmax2)
    w = kat.shape[1]
    aug = w > d
    bias = None if aug or kernel != "gaussian" else (-0.5 * s.astype(dtype))[:, None] * ksq  # (b, n)
    tiny = _TINY[dtype]
    # decided once for these heads, from the largest |s|, |q| and |k|: shift
    # (Gaussian: only if an unshifted weight could come near overflow), and
    # floor (only if a logit, shifted or not, can fall below the floor:
    # L - c_q >= -s (|q| + |k|)^2 / 2 (Gaussian), >= -2 |s q| |k| (exponential))
    smax = float(np.abs(s).max()) if s_abs_max is None else s_abs_max
    if dtype == np.float64:  # math.sqrt and np.sqrt: both the correctly rounded square root
        qk = smax * (math.sqrt(float(qsq.max())) + math.sqrt(float(kmax2.max()))) ** 2
    else:  # the float32 square roots, rounded to float32, as before
        qk = smax * (float(np.sqrt(qsq.max())) + float(np.sqrt(kmax2.max()))) ** 2
    shift = kernel != "gaussian" or float(c.max()) > SHIFT_FREE[dtype]
    floor = floor if floor is not None and 0.5 * qk > -floor - 10 else None
    cols = w if shift or not aug else w - 1
    hb, rb = _block_shape(b, m, n, block_entries)
    buf = np.empty((hb, rb, n), dtype)
    for h0 in range(0, b, hb):
        hs = slice(h0, min(b, h0 + hb))
        vb = va if va.shape[0] == 1 else va[hs]
        for r0 in range(0, m, rb):
            rs = slice(r0, min(m, r0 + rb))
            L = np.matmul(qa[hs, rs, :cols], kat[hs, :cols], out=buf[: hs.stop - h0, : rs.stop - r0])
            if bias is not None:
                L += bias[hs, None, :]
            if shift and not aug:
                L -= c[hs, rs, None]
            if floor is not None:
                np.maximum(L, floor, out=L)
            np.exp(L, out=L)
            num, den = _weighted_sums(L, vb, ones)
            np.divide(num, den[..., None], out=out[hs, rs])
            if not den.min() >= tiny:  # also NaN
                bad = ~(den >= tiny)
                e = w - 1 if aug else w  # without the shift column
                for j, i in zip(*np.nonzero(bad), strict=True):
                    h = h0 + j
                    out[h, r0 + i] = _exact_rows(
                        qa[h, r0 + i : r0 + i + 1, :e],
                        kat[h, :e],
                        None if bias is None else bias[h],
                        va[0 if va.shape[0] == 1 else h],
                        ones,
                        floor,
                    )[0]


#: Largest binary exponent of an input's largest entry for which the logits are computed without
#: rescaling (:func:`_moderate`).
MODERATE_EXPONENT = 64


def _moderate(eq, ek: int, mant: float, expo: int, d: int) -> bool:
    """Whether a head's logits can be formed directly.

    Whether a head's logits can be formed directly: every query row's and the keys' largest entry
    within ``2**(+-MODERATE_EXPONENT)``, and the scale times the largest logit difference
    (``4 d 2**(eq + ek)`` bounds it) far from overflow, the scale itself a normal double.
    """
    e_max = int(np.max(eq)) if np.size(eq) else 0
    e_min = int(np.min(eq)) if np.size(eq) else 0
    if max(abs(e_max), abs(e_min), abs(ek)) > MODERATE_EXPONENT or not -1000 < expo < 1000:
        return False
    scale = np.ldexp(mant, expo)
    return bool(
        np.isfinite(scale)
        and scale > np.finfo(np.float64).tiny
        and np.log2(scale) + e_max + max(ek, e_max) + np.log2(4.0 * max(d, 1)) < 1000
    )


def _log_space_logits(q, k, kernel, mant, expo, exclude=None):
    """The exact shifted logits of one head, for any finite inputs.

    Exact shifted logits ``L - max_k L`` of one head, ``(m, n)`` float64, for any finite
    inputs and any scale ``mant * 2**expo``: queries (per row) and keys are divided
    by powers of two before the product, the row maximum is subtracted from the
    bounded products, and only then is the scale applied, with ``ldexp``; a
    product that overflows becomes ``-inf`` (weight 0), never NaN.  ``exclude``: for a single
    query row, the index of a key left out (logit ``-inf``) before the maximum is taken, so that
    the largest remaining logit is exactly 0 (a leave-one-out row).
    """
    q = np.asarray(q, np.float64)
    k = np.asarray(k, np.float64)
    if mant < 0:  # only the exponential kernel has signed scales: s q.k = |s| (-q).k
        q, mant = -q, -mant
    eq = np.frexp(np.abs(q).max(axis=1))[1].astype(np.int64)  # (m,)
    ek = int(np.frexp(np.abs(k).max())[1])
    if _moderate(eq, ek, mant, expo, q.shape[1]):
        # The same arithmetic without the powers of two, which change no rounding when nothing
        # under- or overflows: the products, the row maximum and the scale as in the general path.
        A = q @ k.T
        if kernel == "gaussian":
            A -= 0.5 * _sqnorm(k)[None, :]
        if exclude is not None:
            A[:, exclude] = -np.inf
        A -= A.max(axis=1, keepdims=True)
        A *= np.ldexp(mant, expo)
        return A
    qs = np.ldexp(q, -eq[:, None])
    ks = np.ldexp(k, -ek)
    A = qs @ ks.T  # |A| <= d_k
    if kernel == "gaussian":
        # q.k - |k|^2/2 = 2^(ek + e) (2^(eq - e) A - 2^(ek - e) |ks|^2/2), e = max(eq, ek)
        e = np.maximum(eq, ek)
        half = 0.5 * _sqnorm(ks)
        A = np.ldexp(A, (eq - e)[:, None]) - np.ldexp(half[None, :], (ek - e)[:, None])
        E = expo + ek + e
    else:
        E = expo + eq + ek
    if exclude is not None:
        A[:, exclude] = -np.inf
    A -= A.max(axis=1, keepdims=True)
    A *= mant
    with np.errstate(over="ignore", under="ignore"):
        A = np.ldexp(A, E[:, None])
    return A


def _log_space_mean(q, k, va, ones, kernel, mant, expo, rb):
    """The weighted mean of one head from :func:`_log_space_logits`, ``rb`` rows at a time."""
    out = np.empty((q.shape[0], va.shape[1] - ones))
    va = np.asarray(va, np.float64)
    for r0 in range(0, q.shape[0], rb):
        L = _log_space_logits(q[r0 : r0 + rb], k, kernel, mant, expo)
        np.maximum(L, LOGIT_FLOOR[np.dtype(np.float64)], out=L)
        np.exp(L, out=L)
        num, den = _weighted_sums(L, va, ones)
        out[r0 : r0 + rb] = num / den[:, None]
    return out


# --------------------------------------------------------------------------- the distance path

#: Squared distances below this fraction of ``|q|^2 + |k|^2`` lose their relative precision in
#: ``|q|^2 + |k|^2 - 2 q.k``; they are recomputed as ``|q - k|^2`` directly.
CANCELLATION = 2.0**-20


#: Largest binary exponent an input entry keeps in the distance path: squares of entries up to
#: ``2**SCALED_EXPONENT`` summed over any dimension stay finite.
SCALED_EXPONENT = 480


def _scaled_pair(q, k):
    """Queries and keys divided by one power of two into a safe range.

    ``q``, ``k`` (float64) divided by one power of two ``2^e``, only as far as needed to bring their
    largest entry within ``2**(+-SCALED_EXPONENT)`` (``e = 0`` for ordinary inputs), so that no square
    overflows and the distances of keys far smaller than the largest one do not underflow (a key of
    1e200 beside keys of order 1 leaves their distances intact); returns ``(qs, ks, e)``.
    """
    q = np.asarray(q, np.float64)
    k = np.asarray(k, np.float64)
    top = max(float(np.abs(q).max()), float(np.abs(k).max()))
    t = int(np.frexp(top)[1]) if top > 0 else 0
    e = t - SCALED_EXPONENT if t > SCALED_EXPONENT else t + SCALED_EXPONENT if t < -SCALED_EXPONENT else 0
    return np.ldexp(q, -e), np.ldexp(k, -e), e


def _distance_weights(qs, ks, ksq, kernel, mant, expo, self_start=None):
    """Unnormalised weights of one head on the distance path.

    Unnormalised weights ``(r, n)`` of one head's queries ``qs`` ``(r, d)`` and keys ``ks`` ``(n, d)``
    (scaled, see :func:`_scaled_pair`; ``ksq`` their squared norms), the scale ``mant 2^expo`` already
    including the inputs' power of two (:attr:`Kernel.degree`).

    Laplace: ``exp(-s (|q - k| - min_k |q - k|))``, the row maximum 1.  Epanechnikov:
    ``(1 - s |q - k|^2)_+``; a row with every weight 0 (no key in the window) gets the indicator of
    its nearest keys (:data:`EMPTY_WINDOW`).  Every row has a positive sum; never NaN.
    ``self_start``: the queries are the keys ``self_start, self_start + 1, ...`` themselves, and
    each is left out of its own row (weight 0; leave-one-out, needs ``n >= 2``).
    """
    qsq = _sqnorm(qs)
    D2 = qs @ ks.T
    D2 *= -2.0
    D2 += qsq[:, None]
    D2 += ksq[None, :]
    small = D2 < CANCELLATION * (qsq[:, None] + ksq[None, :])
    if small.any():  # near-coincident points: the expansion cancels, recompute those directly
        i, j = np.nonzero(small)
        diff = qs[i] - ks[j]
        D2[i, j] = np.einsum("ij,ij->i", diff, diff)
    np.maximum(D2, 0.0, out=D2)
    if self_start is not None:
        rows = np.arange(qs.shape[0])
        D2[rows, self_start + rows] = np.inf
    with np.errstate(over="ignore", under="ignore"):
        if kernel == "laplace":
            np.sqrt(D2, out=D2)
            D2 -= D2.min(axis=1, keepdims=True)
            D2 *= -mant
            W = np.ldexp(D2, expo)  # -inf where s times the excess distance overflows: weight 0
            np.maximum(W, LOGIT_FLOOR[np.dtype(np.float64)], out=W)
            return np.exp(W, out=W)
        W = np.ldexp(D2 * mant, expo)
    W = np.subtract(1.0, W, out=W)
    np.maximum(W, 0.0, out=W)
    empty = ~(W.max(axis=1) > 0.0)
    if empty.any():
        rows = D2[empty]
        W[empty] = rows == rows.min(axis=1, keepdims=True)
    return W


def _distance_heads(q, keys, va, ones, kernel, mant, expo, out, block_entries):
    """:func:`weighted_mean` for the kernels of the distance path.

    :func:`weighted_mean` for the kernels of the distance path (:data:`FUSED_KERNELS` excluded):
    per head, blocks of queries against all keys, float64 inside.  ``keys(h)`` gives the keys
    ``(n, d)`` of head ``h``; ``va`` ``(B|1, n, d_v[+1])`` as in :func:`weighted_mean`.
    """
    B, m, d = q.shape
    degree = REGISTRY[kernel].degree
    va64 = np.asarray(va, np.float64)
    for h in range(B):
        qs, ks, e = _scaled_pair(q[h], keys(h))
        ksq = _sqnorm(ks)
        n = ks.shape[0]
        rb = min(m, max(MIN_BLOCK_ROWS, block_entries // max(n, 1)))
        vh = va64[0 if va64.shape[0] == 1 else h]
        for r0 in range(0, m, rb):
            W = _distance_weights(qs[r0 : r0 + rb], ks, ksq, kernel, mant[h], expo[h] + degree * e)
            num, den = _weighted_sums(W, vh, ones)
            out[h, r0 : r0 + rb] = num / den[:, None]


def _value_exponent(v, n: int, dtype) -> int:
    """The power of two the values are divided by before they are summed.

    The power of two ``e`` the values ``v`` are divided by (exactly) before ``n`` of them are summed
    with weights at most 1: their binary exponent when the sum could overflow ``dtype``, else 0.
    """
    if not v.size:
        return 0
    vmax = max(float(v.max()), -float(v.min()))
    return int(np.frexp(vmax)[1]) if vmax * n >= 2.0 ** (_MAXEXP[dtype] - 2) else 0


def _loo_mean(k, v, kernel, mant, expo, block_entries=None):
    """Leave-one-out weighted means of one head.

    Leave-one-out weighted means of one head: row ``i`` is the estimate at key ``k_i`` from the
    other ``n - 1`` keys ``(n, d)`` and values ``v`` ``(n, d_v)``; ``(n, d_v)`` float64, exact weights
    (log space for the fused kernels), ``rb`` rows at a time.
    """
    n = k.shape[0]
    v = np.asarray(v, np.float64)
    out = np.empty((n, v.shape[1]))
    rb = max(1, min(n, (BLOCK_ENTRIES if block_entries is None else block_entries) // n))
    ev = _value_exponent(v, n, np.dtype(np.float64))
    if ev:
        v = np.ldexp(v, -ev)
    if kernel in FUSED_KERNELS:
        for r0 in range(0, n, rb):
            L = _log_space_logits(k[r0 : r0 + rb], k, kernel, mant, expo)
            rows = np.arange(L.shape[0])
            L[rows, r0 + rows] = -np.inf
            top = L.max(axis=1)
            for i in np.nonzero(~np.isfinite(top))[0]:
                # every other key's weight underflowed next to the key itself: the row again with the
                # key left out before its maximum is taken (weights of the nearest other keys, not NaN)
                L[i] = _log_space_logits(k[r0 + i : r0 + i + 1], k, kernel, mant, expo, exclude=r0 + i)[0]
                top[i] = 0.0
            L -= top[:, None]
            np.maximum(L, LOGIT_FLOOR[np.dtype(np.float64)], out=L)
            np.exp(L, out=L)
            L[rows, r0 + rows] = 0.0
            out[r0 : r0 + rb] = (L @ v) / L.sum(axis=1)[:, None]
        return np.ldexp(out, ev) if ev else out
    ks, _, e = _scaled_pair(k, k)
    ksq = _sqnorm(ks)
    for r0 in range(0, n, rb):
        W = _distance_weights(
            ks[r0 : r0 + rb], ks, ksq, kernel, mant, expo + REGISTRY[kernel].degree * e, self_start=r0
        )
        out[r0 : r0 + rb] = (W @ v) / W.sum(axis=1)[:, None]
    return np.ldexp(out, ev) if ev else out


def leave_one_out(keys, values, bandwidth, kernel="gaussian") -> np.ndarray:
    """Leave-one-out Nadaraya-Watson at the design points.

    Row ``i`` is ``sum_{l != i} K(k_i, k_l) v_l / sum_{l != i} K(k_i, k_l)``: the estimate a model
    could be scored by on its own sample without matching a point to itself (the self weight
    ``K(k_i, k_i)`` is the largest of a Gaussian row).  Kernels and bandwidth as in
    :func:`nadaraya_watson` (an Epanechnikov row with no other key in its window gets the mean value of
    the nearest other keys).  Weights are exact (log space), ``O(n^2)`` work.

    Parameters
    ----------
    keys : array (n, d_k)
        Design points, ``n >= 2``.
    values : array (n,) or (n, d_v)
        Responses.
    bandwidth : float > 0
        ``h``.
    kernel : str, default "gaussian"
        One of :data:`KERNELS`.

    Returns
    -------
    numpy.ndarray
        ``(n,)`` or ``(n, d_v)``, like ``values``.

    Raises
    ------
    ValueError
        Naming ``values`` when its rows do not match the keys, ``keys`` for fewer than 2 keys, or the
        argument that is not finite, of the wrong shape or out of range.
    """
    one_of(kernel, "kernel", KERNELS)
    h = positive_scalar(bandwidth, "bandwidth")
    k = _real_array(keys, "keys", 2)
    v = _real_array(values, "values", (1, 2))
    if v.shape[0] != k.shape[0]:
        raise ValueError(f"values: expected {k.shape[0]} rows (one per key), got shape {v.shape}")
    if k.shape[0] < 2:
        raise ValueError(f"keys: leave-one-out needs at least 2 keys, got shape {k.shape}")
    mant, expo = logit_scale(kernel, bandwidth=h)
    out = _loo_mean(k, v.reshape(v.shape[0], -1), kernel, mant, expo)
    return out[:, 0] if v.ndim == 1 else out


def empty_windows(queries, keys, bandwidth, kernel="epanechnikov") -> np.ndarray:
    """For a compact kernel, which queries have no key in their window ``|q - k| < h``.

    There the estimate is the mean value of the nearest keys (:data:`EMPTY_WINDOW`).

    Parameters
    ----------
    queries : array (m, d_k)
        Evaluation points.
    keys : array (n, d_k)
        Design points.
    bandwidth : float > 0
        ``h``, the window's radius.
    kernel : str, default "epanechnikov"
        One of :data:`KERNELS`.

    Returns
    -------
    numpy.ndarray of bool
        ``(m,)``: True where the window is empty (all False for a kernel that is not compact).

    Raises
    ------
    ValueError
        Naming ``queries`` for an array that is not 2-D, or the argument that is not finite, of the wrong
        shape or out of range.
    """
    one_of(kernel, "kernel", KERNELS)
    h = positive_scalar(bandwidth, "bandwidth")
    q, k, _ = _check_qkv(queries, keys)
    if q.ndim != 2:
        raise ValueError(f"queries: expected a 2-D array (m, d_k), got shape {q.shape}")
    if not REGISTRY[kernel].compact:
        return np.zeros(q.shape[0], dtype=bool)
    qs, ks, e = _scaled_pair(q, k)
    mant, expo = logit_scale(kernel, bandwidth=h)
    rb = max(1, BLOCK_ENTRIES // (k.shape[0] * k.shape[1]))
    out = np.empty(q.shape[0], dtype=bool)
    for r0 in range(0, q.shape[0], rb):
        D2 = ((qs[r0 : r0 + rb, None, :] - ks[None, :, :]) ** 2).sum(axis=-1)
        with np.errstate(over="ignore"):
            out[r0 : r0 + rb] = ~np.any(np.ldexp(D2 * mant, expo + REGISTRY[kernel].degree * e) < 1.0, axis=1)
    return out


def weighted_mean(q, k, v, kernel, scale, block_entries=None) -> np.ndarray:
    """The softmax-weighted mean ``softmax(L) @ v`` for a batch of heads: the one engine.

    This is the estimator of Theorem 2.1 and the head estimate of every Monte Carlo check.  Only the
    kernel and the arrays' dimensions and dtypes are checked (the hot path):
    :func:`nadaraya_watson`, :func:`softmax_attention` and :func:`mhanw.heads.head_estimates` check
    the values and call it.

    Parameters
    ----------
    q : array (B, m, d_k)
        Queries per head, finite, float64 or float32.
    k : array (B, n, d_k), or a pair (X, W)
        Keys per head, of q's dtype; the pair, ``X`` ``(n, p)`` and ``W``
        ``(B, p, d_k)``, stands for the keys ``X @ W[h]`` of projection heads,
        which are then projected a few heads at a time, never all at once.
    v : array (B, n, d_v) or (1, n, d_v)
        Values per head, or one set shared by all heads.
    kernel : str
        One of :data:`KERNELS`.  Logits ``s (q.k - |k|^2/2)`` (Gaussian, ``s > 0``; equal to
        ``-s |q - k|^2 / 2`` up to a row constant) or ``s q.k`` (exponential),
        both on the fused path; ``-s |q - k|`` (Laplace) or the weights
        ``(1 - s |q - k|^2)_+`` (Epanechnikov) on the blocked distance path, one head at a time.
    scale : tuple (mantissa, exponent)
        Scalars or ``(B,)`` arrays: ``s = mantissa * 2**exponent`` per head, see :func:`logit_scale`.
    block_entries : int, optional
        Entries of one block of logits, and of the keys prepared at once (default
        :data:`BLOCK_ENTRIES`).

    Returns
    -------
    numpy.ndarray
        ``(B, m, d_v)`` of q's dtype: rows are convex combinations of the rows of ``v``, never NaN for
        finite input.

    Raises
    ------
    ValueError
        Naming ``kernel`` for an unknown kernel, or ``q``, ``k`` or ``v`` when it is not a 3-D float
        array.
    """
    # Cheap checks only (this is the hot path; the public wrappers check values):
    # any kernel but "gaussian" would silently run the exponential kernel.
    one_of(kernel, "kernel", KERNELS)
    for name, arr in (("q", q), ("v", v)) + ((("k", k),) if not isinstance(k, tuple) else ()):
        if not isinstance(arr, np.ndarray) or arr.ndim != 3 or arr.dtype.kind != "f":
            raise ValueError(
                f"{name}: expected a 3-D float array, got {type(arr).__name__} "
                f"{getattr(arr, 'shape', '')} {getattr(arr, 'dtype', '')}".rstrip()
            )
    block_entries = BLOCK_ENTRIES if block_entries is None else block_entries
    dtype = q.dtype
    B, m, d = q.shape
    projected = isinstance(k, tuple)
    n = k[0].shape[0] if projected else k.shape[1]
    keys = (lambda h: k[0] @ k[1][h]) if projected else (lambda h: k[h])  # (n, d) of head h
    mant, expo = _scale_arrays(scale, B)
    ev = _value_exponent(v, n, dtype)
    ones = v.shape[-1] <= ONES_MAX_DV
    if ones:
        va = np.empty(v.shape[:-1] + (v.shape[-1] + 1,), dtype)
        va[..., :-1] = np.ldexp(v, -ev) if ev else v
        va[..., -1] = 1.0
    else:
        va = np.ldexp(v, -ev).astype(dtype, copy=False) if ev else v
    if kernel not in FUSED_KERNELS:
        out = np.empty((B, m, v.shape[-1]), np.float64)
        _distance_heads(q, keys, va, ones, kernel, mant, expo, out, block_entries)
        out = out.astype(dtype, copy=False)
        return np.ldexp(out, ev).astype(dtype, copy=False) if ev else out
    shared = va.shape[0] == 1
    # heads whose keys are prepared at once: their keys, weighted values and
    # one block of logits within the budget
    hc = max(1, min(B, block_entries // ((d + 2) * n)))
    # augmented layout (see _augment), unless the keys are given and wide: then
    # the product dominates, and a copy of the keys is not worth a pass less
    augmented = projected or d < PLAIN_MIN_DK
    width = d + (2 if kernel == "gaussian" else 1)
    kat_buf = np.empty((hc, width, n), dtype) if augmented else None
    out = np.empty((B, m, v.shape[-1]), dtype)
    with np.errstate(over="ignore"):  # squared norms that overflow are inf: the log-space path takes them
        for h0 in range(0, B, hc):
            hs = slice(h0, min(B, h0 + hc))
            if not augmented:
                kat = np.swapaxes(k[hs], 1, 2)  # a view: BLAS reads the keys transposed
                ksq = _sqnorm(k[hs])
            else:
                assert kat_buf is not None
                kat = kat_buf[: hs.stop - h0]
                if projected:
                    np.matmul(np.swapaxes(k[1][hs], 1, 2), k[0].T, out=kat[:, :d])
                else:
                    kat[:, :d] = np.swapaxes(k[hs], 1, 2)
                ksq = _sqnorm(kat[:, :d], axis=1)
            qsq = _sqnorm(q[hs])
            kmax2 = ksq.max(axis=1, keepdims=True)
            ok = _fast_ok(qsq, kmax2, mant[hs], expo[hs], dtype)
            runs = [(0, len(ok))] if ok.all() else list(_runs(ok))
            for h in np.nonzero(~ok)[0]:
                out[h0 + h] = _log_space_mean(
                    q[h0 + h],
                    keys(h0 + h),
                    va[0 if shared else h0 + h],
                    ones,
                    kernel,
                    mant[h0 + h],
                    expo[h0 + h],
                    _block_shape(1, m, n, block_entries)[1],
                )
            for a, z in runs:
                g = slice(h0 + a, h0 + z)
                _fast_heads(
                    q[g],
                    kat[a:z],
                    va if shared else va[g],
                    kernel,
                    np.ldexp(mant[g], expo[g]),
                    qsq[a:z],
                    ksq[a:z],
                    kmax2[a:z],
                    out[g],
                    block_entries,
                )
    return np.ldexp(out, ev).astype(dtype, copy=False) if ev else out


class ProjectedHeads:
    """:func:`weighted_mean` of projection heads with per-call constants computed once.

    The Monte Carlo drivers evaluate the same heads (projections ``W``
    ``(B, p, d_k)``, kernel, scales) on thousands of small samples; at
    ``n`` in the hundreds and a few queries the engine's own arithmetic takes
    less time than its preparation.  This object prepares once what does not
    depend on the sample (scales as arrays, ``|s|``, the key-projection view,
    the bound on ``M^2`` below which every head passes :func:`_fast_ok`), and
    :meth:`__call__` evaluates float64 samples whose scales and sizes take the
    plain fast path (no log space, no rescaled values, all heads prepared at
    once) with the very same operations as :func:`weighted_mean`, so bit for
    bit the same result; any other sample is handed to :func:`weighted_mean`.
    Inputs are not checked (internal callers only).
    """

    #: Relative margin below the exact limits of :func:`_fast_ok`: a sample within
    #: it is decided by :func:`_fast_ok` itself (in :func:`weighted_mean`).
    _MARGIN = 1.0 - 2.0**-20

    def __init__(self, W, kernel, scale, block_entries=None):
        one_of(kernel, "kernel", KERNELS)
        self.W = W
        self.kernel = kernel
        self.scale = scale
        self.block_entries = BLOCK_ENTRIES if block_entries is None else block_entries
        B, _, d = W.shape
        self.mant, self.expo = _scale_arrays(scale, B)
        with np.errstate(over="ignore"):  # a scale that overflows never takes the fast path (m2_limit)
            self.s = np.ldexp(self.mant, self.expo)
        self.s_abs_max = float(np.abs(self.s).max())
        self.Wt = np.swapaxes(W[0:B], 1, 2)  # the view weighted_mean projects the keys with
        self.width = d + (2 if kernel == "gaussian" else 1)
        # _fast_ok for float64, with the largest M^2 of all heads: ok for every head if
        # M^2 <= 2^(FAST_LOG2_RANGE - log2 s) and M^2 < 2^top, and |log2 s| <= 200 (or s = 0)
        dtype = np.dtype(np.float64)
        log_s = np.log2(np.maximum(np.abs(self.mant), 1e-300)) + self.expo
        scales_ok = bool(np.all((self.mant == 0) | (np.abs(log_s) <= 200)))
        with np.errstate(over="ignore"):  # tiny scales: no limit but 2^top
            limit = min(2.0 ** (_MAXEXP[dtype] - 8), float(np.exp2(FAST_LOG2_RANGE[dtype] - log_s).min()))
        self.m2_limit = limit * self._MARGIN if scales_ok else -1.0
        self.v_limit = 2.0 ** (_MAXEXP[dtype] - 2)
        # below it no sum of n weights (each at most exp(SHIFT_FREE) < 2^440) times values overflows
        self.quiet_limit = 2.0 ** (_MAXEXP[dtype] - 2 - 440)

    def query_norms(self, q):
        """``|q|^2`` ``(B, m)`` of queries ``(B, m, d_k)`` (computed as :func:`weighted_mean` does)."""
        return _sqnorm(q[0 : q.shape[0]])

    def __call__(self, q, X, y, qsq=None, qsq_max=None, bounded=False):
        """The weighted means of the responses for every head.

        Weighted means ``(B, m)`` of the responses ``y`` ``(n,)`` for queries ``q``
        ``(B, m, d_k)`` and keys ``X @ W[h]`` (``X`` ``(n, p)``): ``weighted_mean(q, (X, W),
        y[None, :, None], kernel, scale)[..., 0]`` bit for bit.  ``qsq``, ``qsq_max``:
        :meth:`query_norms` of ``q`` and its maximum, if known; ``bounded``: the caller
        knows that no squared key norm can overflow.
        """
        n = X.shape[0]
        B, m, d = q.shape
        vmax = max(float(y.max()), -float(y.min()))
        hc = max(1, min(B, self.block_entries // ((d + 2) * n)))
        if (
            self.kernel not in FUSED_KERNELS
            or q.dtype != np.float64
            or X.dtype != np.float64
            or hc < B
            or not vmax * n < self.v_limit
        ):
            return weighted_mean(q, (X, self.W), y[None, :, None], self.kernel, self.scale, self.block_entries)[..., 0]
        va = np.empty((1, n, 2))
        va[0, :, 0] = y
        va[0, :, 1] = 1.0
        kat = np.empty((B, self.width, n))
        np.matmul(self.Wt, X.T, out=kat[:, :d])
        if bounded:
            ksq = _sqnorm(kat[:, :d], axis=1)
        else:
            with np.errstate(over="ignore"):
                ksq = _sqnorm(kat[:, :d], axis=1)
        if qsq is None:
            qsq = self.query_norms(q)
            qsq_max = None
        kmax2 = ksq.max(axis=1, keepdims=True)
        m2 = max(float(qsq.max()) if qsq_max is None else qsq_max, float(kmax2.max()))
        if not m2 <= self.m2_limit:  # (also NaN) some head may need the log-space path: decided exactly there
            return weighted_mean(q, (X, self.W), y[None, :, None], self.kernel, self.scale, self.block_entries)[..., 0]
        out = np.empty((B, m, 1))
        if bounded and vmax * n < self.quiet_limit:
            _fast_heads(q, kat, va, self.kernel, self.s, qsq, ksq, kmax2, out, self.block_entries, self.s_abs_max)
        else:  # as in weighted_mean (an unshifted Gaussian weight may reach exp(SHIFT_FREE))
            with np.errstate(over="ignore"):
                _fast_heads(q, kat, va, self.kernel, self.s, qsq, ksq, kmax2, out, self.block_entries, self.s_abs_max)
        return out[..., 0]


def _runs(flags):
    """Maximal runs ``(start, stop)`` of True in ``flags``."""
    start = None
    for i, f in enumerate(list(flags) + [False]):
        if f and start is None:
            start = i
        elif not f and start is not None:
            yield start, i
            start = None


def _mean(q, k, v, kernel, scale):
    """:func:`weighted_mean` for the shapes of :func:`_check_qkv` (with or without head axis)."""
    dtype = np.result_type(q, k, v)
    batched = q.ndim == 3
    if not batched:
        q, k, v = q[None], k[None], v[None]
    vec = v.ndim == 2
    if vec:
        v = v[..., None]
    q, k, v = (np.asarray(a, dtype=dtype) for a in (q, k, v))
    out = weighted_mean(q, k, v, kernel, scale)
    if vec:
        out = out[..., 0]
    return out if batched else out[0]


def _weights(q, k, kernel, scale):
    """Normalised weights of one head.

    Normalised weights ``(m, n)`` of one head (float64): from the exact log-space logits
    (fused kernels), or from :func:`_distance_weights` (the others).
    """
    mant, expo = scale
    if kernel in FUSED_KERNELS:
        L = _log_space_logits(q, k, kernel, mant, expo)
        np.exp(L, out=L)
    else:
        qs, ks, e = _scaled_pair(q, k)
        L = _distance_weights(qs, ks, _sqnorm(ks), kernel, mant, expo + REGISTRY[kernel].degree * e)
    L /= L.sum(axis=1, keepdims=True)
    return L


# --------------------------------------------------------------------------- public


def _attention_scale(q, scale):
    if scale is None:
        return logit_scale("exponential", bandwidth=np.sqrt(q.shape[-1]))
    return logit_scale("exponential", beta=float(as_float_array(scale, "scale", ndim=0)))


def softmax_attention(queries, keys, values, scale=None) -> np.ndarray:
    """Single-head softmax attention ``softmax(Q K^T * scale) V`` (Theorem 2.1).

    Parameters
    ----------
    queries : array (m, d_k)
        The queries ``Q``.
    keys : array (n, d_k)
        The keys ``K``.
    values : array (n,) or (n, d_v)
        The values ``V``.
    scale : float, optional
        Multiplier of the logits, the inverse temperature ``beta``; defaults to
        ``1/sqrt(d_k)``.  Any finite real number is accepted; for logits too
        large for ``exp`` the result is the limit (the mean of the values of
        the maximal logits).

    Returns
    -------
    numpy.ndarray
        ``(m,)`` or ``(m, d_v)``: each row is the attention-weighted mean of the values.

    Raises
    ------
    ValueError
        Naming the argument that is not finite or whose shape does not match the others.
    """
    q, k, v = _check_qkv(queries, keys, values, need_values=True)
    return _mean(q, k, v, "exponential", _attention_scale(q, scale))


def nadaraya_watson(queries, keys, values, bandwidth, kernel="gaussian") -> np.ndarray:
    """Nadaraya-Watson regression ``sum_i K(q, k_i) v_i / sum_l K(q, k_l)`` (Theorem 2.1).

    Parameters
    ----------
    queries : array (m, d_k)
        Points at which the regression is evaluated.
    keys : array (n, d_k)
        Design points.
    values : array (n,) or (n, d_v)
        Responses.
    bandwidth : float > 0
        ``h``.  For ``kernel="gaussian"`` the weights are
        ``exp(-|q - k|^2 / (2 h^2))``; for ``kernel="exponential"`` they are
        ``exp(q.k / h)``, so that ``h = sqrt(d_k)`` gives softmax attention;
        ``"laplace"``: ``exp(-|q - k| / h)``; ``"epanechnikov"``:
        ``(1 - |q - k|^2 / h^2)_+`` (see :data:`REGISTRY` for each kernel's
        normalisation and the meaning of ``h``).
        Any positive float; as ``h -> 0`` the Gaussian, Laplace and
        Epanechnikov estimates tend to the mean of the values of the nearest
        keys, which is what a bandwidth too small for ``1/h^2`` to be a float
        returns; a query with no key in the Epanechnikov window gets that
        mean too (:data:`EMPTY_WINDOW`).
    kernel : str, default "gaussian"
        One of :data:`KERNELS`.

    Returns
    -------
    numpy.ndarray
        ``(m,)`` or ``(m, d_v)``.

    Raises
    ------
    ValueError
        Naming the argument that is not finite, of the wrong shape or out of range.
    """
    one_of(kernel, "kernel", KERNELS)
    h = positive_scalar(bandwidth, "bandwidth")
    q, k, v = _check_qkv(queries, keys, values, need_values=True)
    return _mean(q, k, v, kernel, logit_scale(kernel, bandwidth=h))


def kernel_weights(queries, keys, bandwidth, kernel="gaussian") -> np.ndarray:
    """Normalised NW weights ``w_i(q)``, each row summing to 1.

    Same kernels and conventions as :func:`nadaraya_watson`; materialises the full weight matrix
    (float64, exact: computed in log space), so use it for diagnostics on moderate ``m * n``.

    Parameters
    ----------
    queries : array (m, d_k)
        Evaluation points.
    keys : array (n, d_k)
        Design points.
    bandwidth : float > 0
        ``h``.
    kernel : str, default "gaussian"
        One of :data:`KERNELS`.

    Returns
    -------
    numpy.ndarray
        ``(m, n)`` float64 weights.

    Raises
    ------
    ValueError
        Naming the argument that is not finite, of the wrong shape or out of range.
    """
    one_of(kernel, "kernel", KERNELS)
    h = positive_scalar(bandwidth, "bandwidth")
    q, k, _ = _check_qkv(queries, keys)
    return _weights(q, k, kernel, logit_scale(kernel, bandwidth=h))


def attention_weights(queries, keys, scale=None) -> np.ndarray:
    """Softmax attention weights ``softmax(Q K^T * scale)``.

    Parameters
    ----------
    queries : array (m, d_k)
        The queries ``Q``.
    keys : array (n, d_k)
        The keys ``K``.
    scale : float, optional
        The inverse temperature; defaults to ``1/sqrt(d_k)``.

    Returns
    -------
    numpy.ndarray
        ``(m, n)`` float64 weights, each row summing to 1.

    Raises
    ------
    ValueError
        Naming the argument that is not finite or whose shape does not match.
    """
    q, k, _ = _check_qkv(queries, keys)
    return _weights(q, k, "exponential", _attention_scale(q, scale))


def nadaraya_watson_loop(queries, keys, values, kernel_function) -> np.ndarray:
    """Reference NW estimator written as the textbook double loop.

    Slow and not overflow-safe; it exists to check the vectorised estimators against the definition.

    Parameters
    ----------
    queries : array (m, d_k)
        Evaluation points.
    keys : array (n, d_k)
        Design points.
    values : array (n,) or (n, d_v)
        Responses.
    kernel_function : callable
        ``kernel_function(q, k)`` returns the (unnormalised) kernel value for one query ``(d_k,)`` and
        one key ``(d_k,)``.

    Returns
    -------
    numpy.ndarray
        ``(m,)`` or ``(m, d_v)``.

    Raises
    ------
    ValueError
        Naming the argument that is not finite or whose shape does not match.
    """
    q, k, v = _check_qkv(queries, keys, values, need_values=True)
    out = np.empty((q.shape[0],) + v.shape[1:])
    for a in range(q.shape[0]):
        num = np.zeros(v.shape[1:])
        den = 0.0
        for i in range(k.shape[0]):
            w = kernel_function(q[a], k[i])
            num = num + w * v[i]
            den += w
        out[a] = num / den
    return out
