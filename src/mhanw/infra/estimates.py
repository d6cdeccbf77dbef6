"""A Monte Carlo estimate with its standard error, and the paired comparisons built from it.

Every Monte Carlo result of the library (integrated MSEs, head-size budgets,
nested weightings) is a stack of per-replicate samples.  :class:`Estimate`
turns such samples into ``mean`` and standard error ``se = sd/sqrt(R)``
(``ddof = 1``), vectorised over any leading "settings" axes, and compares two
of them replicate by replicate (common random numbers):

- :meth:`Estimate.from_samples`: the mean of ``R`` samples and its s.e.;
- :meth:`Estimate.paired`: the paired difference ``mean(a - b)`` with s.e.
  ``sd(a - b)/sqrt(R)``;
- :meth:`Estimate.relative`: the relative change ``mean(a)/mean(b) - 1`` with
  the delta-method s.e. ``sd(a - r b)/(sqrt(R) mean(b))``, ``r = mean(a)/mean(b)``;
- :attr:`Estimate.z`: ``mean/se`` with IEEE semantics, so a NaN s.e. gives a
  NaN z-score (never 0) and a zero s.e. gives ``+-inf`` (or NaN for ``0/0``);
- :meth:`Estimate.exceeds`: the 3-s.e. rule; it raises on a NaN s.e. instead
  of reading it as "not significant".

:class:`ReplicatedErrors` gives a result type holding per-replicate
``errors`` (replicates on the last axis) its ``estimate``, ``mean`` and ``se``.

Samples must be finite; fewer than two replicates give a NaN s.e.  Samples near the largest double
(``1e308``) are averaged with a rescaling instead of overflowing; a result that itself exceeds the
double range raises ``ValueError``.  An :class:`Estimate` unpacks as ``mean, se = estimate``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..constants import N_SE
from .validate import as_float_array, brief, nonnegative_scalar

__all__ = ["Estimate", "ReplicatedErrors"]


def _samples(samples, name: str, axis: int) -> tuple[np.ndarray, int]:
    x = as_float_array(samples, name, ndim=None, allow_empty=True)
    if x.ndim == 0:
        raise ValueError(f"{name}: expected an array with a replicate axis, got a scalar")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis: expected an axis of {name} (shape {x.shape}), got {axis}")
    if x.shape[axis] == 0:
        raise ValueError(f"{name}: expected at least one replicate on axis {axis}, got shape {x.shape}")
    return x, x.shape[axis]


def _pair(a, b, axis: int) -> tuple[np.ndarray, np.ndarray, int]:
    x, R = _samples(a, "a", axis)
    y, Rb = _samples(b, "b", axis)
    if Rb != R:
        raise ValueError(f"b: expected {R} replicates on axis {axis} to match a, got {Rb}")
    return x, y, R


def _se(x: np.ndarray, R: int, axis: int) -> np.ndarray:
    """``sd(x)/sqrt(R)`` along ``axis`` (ddof = 1); NaN for fewer than 2 replicates."""
    if R < 2:
        return np.full(np.delete(x.shape, axis % x.ndim), np.nan)
    return x.std(axis=axis, ddof=1) / np.sqrt(R)


def _moments(x: np.ndarray, R: int, axis: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Mean and ``sd/sqrt(R)`` of finite samples along ``axis``, without overflow near the largest double.

    The plain sums are used whenever they stay finite (the usual case, bit for bit); otherwise the
    samples are divided by their largest magnitude first and the results scaled back.  A mean or s.e.
    beyond the double range raises ``ValueError`` naming ``name``.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        mean, se = x.mean(axis=axis), _se(x, R, axis)
        if np.all(np.isfinite(mean)) and np.all(np.isfinite(se) | (R < 2)):
            return mean, se
        scale = np.max(np.abs(x), axis=axis, keepdims=True)
        scale = np.where(scale > 0, scale, 1.0)
        y = x / scale
        s = np.squeeze(scale, axis=axis)
        mean, se = y.mean(axis=axis) * s, _se(y, R, axis) * s
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(se) | (R < 2))):
        raise ValueError(f"{name}: the mean or standard error exceeds the largest double (about 1.8e308)")
    return mean, se


def _difference(x: np.ndarray, y: np.ndarray, name: str) -> np.ndarray:
    """``x - y``, or ``ValueError`` naming ``name`` when a difference of finite samples overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        d = x - y
    if not np.all(np.isfinite(d)):
        raise ValueError(f"{name}: a paired difference of the samples exceeds the largest double (about 1.8e308)")
    return d


@dataclass(frozen=True)
class Estimate:
    """``mean`` and standard error ``se`` of a Monte Carlo quantity, arrays of one shape (or scalars).

    Build it with :meth:`from_samples`, :meth:`paired` or :meth:`relative`;
    index it like its arrays (``estimate[i]``); unpack it as ``mean, se``.
    """

    mean: np.ndarray | float
    se: np.ndarray | float

    def __post_init__(self):
        as_float_array(self.mean, "mean", allow_empty=True)
        se = np.asarray(self.se)
        if se.dtype.kind not in "iuf":
            raise ValueError(f"se: expected real standard errors, got {type(self.se).__name__} {brief(self.se)}")
        se = se.astype(float)
        if np.any(np.isinf(se)) or np.any(se < 0):
            raise ValueError(
                f"se: expected standard errors >= 0 and finite (NaN for fewer than 2 replicates), got {brief(self.se)}"
            )
        if np.shape(self.mean) != np.shape(self.se):
            raise ValueError(f"se: expected the shape of mean {np.shape(self.mean)}, got {np.shape(self.se)}")

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_samples(cls, samples, axis: int = -1) -> Estimate:
        """Mean over the replicate ``axis`` of ``samples`` (shape ``(..., R)`` by default) and ``sd/sqrt(R)``."""
        x, R = _samples(samples, "samples", axis)
        mean, se = _moments(x, R, axis, "samples")
        return cls(mean[()], se[()])

    @classmethod
    def paired(cls, a, b, axis: int = -1) -> Estimate:
        """Paired difference ``mean(a - b)`` with s.e. ``sd(a - b)/sqrt(R)``; ``a``, ``b`` broadcast, same ``R``."""
        x, y, R = _pair(a, b, axis)
        mean, se = _moments(_difference(x, y, "b"), R, axis, "b")
        return cls(mean[()], se[()])

    @classmethod
    def relative(cls, a, b, axis: int = -1) -> Estimate:
        """Relative change ``mean(a)/mean(b) - 1`` with its paired delta-method s.e.

        With ``r = mean(a)/mean(b)``: ``se = sd(a - r b)/(sqrt(R) mean(b))``
        (ddof = 1), exactly 0 when ``a`` is ``b``.  ``b`` broadcasts against ``a``.  A base with mean 0
        (the relative change is undefined) raises ``ValueError`` naming ``b``.
        """
        x, y, R = _pair(a, b, axis)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            base = y.mean(axis=axis, keepdims=True)
            if np.any(base == 0):
                raise ValueError(f"b: the mean of b is 0 (on axis {axis}); a change relative to it is undefined")
            ratio = x.mean(axis=axis, keepdims=True) / base
            if R < 2:
                se = np.full(np.shape(np.squeeze(ratio, axis=axis)), np.nan)
            else:
                se = np.squeeze(
                    (x - ratio * y).std(axis=axis, ddof=1, keepdims=True) / (np.sqrt(R) * np.abs(base)), axis=axis
                )
        change = np.squeeze(ratio - 1.0, axis=axis)
        if not (np.all(np.isfinite(change)) and np.all(np.isfinite(se) | (R < 2))):
            raise ValueError(
                "b: the relative change or its s.e. exceeds the largest double (a mean of b near 0, "
                "or samples near 1e308)"
            )
        return cls(change[()], np.asarray(se)[()])

    # ------------------------------------------------------------------ reading

    @property
    def z(self):
        """``mean/se`` elementwise: NaN where ``se`` is NaN, ``+-inf`` where ``se = 0 != mean``, NaN for ``0/0``."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return (np.asarray(self.mean, dtype=float) / np.asarray(self.se, dtype=float))[()]

    def exceeds(self, n_se: float = N_SE):
        """``mean > n_se * se`` elementwise (significantly positive by the ``n_se``-s.e. rule).

        Raises ``ValueError`` if some ``se`` is NaN (fewer than two replicates):
        an undefined standard error is never read as "not significant"; ``n_se`` must be a finite number >= 0.
        """
        n_se = nonnegative_scalar(n_se, "n_se")
        se = np.asarray(self.se, dtype=float)
        if np.any(np.isnan(se)):
            raise ValueError("se: the standard error is NaN (fewer than 2 replicates); significance is undefined")
        return (np.asarray(self.mean, dtype=float) > n_se * se)[()]

    def __getitem__(self, index) -> Estimate:
        return Estimate(np.asarray(self.mean)[index][()], np.asarray(self.se)[index][()])

    def __iter__(self):
        yield self.mean
        yield self.se

    def __len__(self) -> int:
        return 2


class ReplicatedErrors:
    """Mixin for a result with per-replicate ``errors`` of shape ``(..., R)``: ``estimate``, ``mean``, ``se``."""

    errors: np.ndarray

    @property
    def estimate(self) -> Estimate:
        """The mean error over replicates with its Monte Carlo s.e., shape ``errors.shape[:-1]`` each."""
        return Estimate.from_samples(self.errors)

    @property
    def mean(self) -> Any:  # an array ``errors.shape[:-1]``; a float for one row of errors
        """Mean error over the replicates (last axis)."""
        return self.estimate.mean

    @property
    def se(self) -> Any:  # an array ``errors.shape[:-1]``; a float for one row of errors
        """Monte Carlo standard error ``sd/sqrt(R)`` (ddof = 1; NaN for one replicate)."""
        return self.estimate.se
