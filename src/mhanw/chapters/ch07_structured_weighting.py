"""Chapter 07: structured head weights evaluated out of sample on real NW heads (Thm 7.1).

The exact part of the chapter (the graded error model, the crossover
``kappa*``) is :mod:`mhanw.weighting`.  This module holds the Monte Carlo part:
:func:`nested_errors` evaluates every weighting as heads are added in quality
order, with the quality order and the oracle weights fitted on one set of
replicates (:func:`mhanw.weighting.quality_order`,
:func:`mhanw.weighting.fitted_weights`) and the errors measured on an
independent one (:func:`mhanw.montecarlo.error_moments`), so that no weighting
sees the data it is evaluated on.  Comparisons are paired
(:class:`mhanw.infra.estimates.Estimate`): every weighting and head count is
evaluated on the same replicates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..infra.estimates import Estimate, ReplicatedErrors
from ..infra.validate import as_float_array, one_of, positive_int
from ..weighting import GOLDEN_Q, ORACLES, SCHEMES, _ratio, _symmetric_matrix, fitted_weights, quality_order

__all__ = ["NestedErrors", "nested_errors"]


@dataclass(frozen=True)
class NestedErrors(ReplicatedErrors):
    """Errors of weightings as heads are added in quality order (Thm 7.1, real heads).

    Attributes
    ----------
    order : ``(H,)`` head indices, best first, from the fitting matrix
    schemes : names of the weightings, in the order of ``errors``
    errors : ``(S, H, R)``; ``errors[s, k - 1, r] = a' M_r a`` for weighting
        ``s`` of the best ``k`` heads on evaluation replicate ``r``
    weights : ``{scheme: [a_1, ..., a_H]}``, ``a_k`` of shape ``(k,)`` in
        quality order (the oracles fitted on the fitting matrix)

    ``mean``, ``se`` and ``estimate`` are the MSE per scheme and number of heads, ``(S, H)``.
    """

    order: np.ndarray
    schemes: tuple
    errors: np.ndarray
    weights: dict

    def samples(self, scheme: str, k: int | None = None) -> np.ndarray:
        """Per-replicate errors ``(R,)`` of ``scheme`` with its best ``k`` heads (default all)."""
        H = self.errors.shape[1]
        k = H if k is None else positive_int(k, "k")
        if k > H:
            raise ValueError(f"k: expected at most {H} heads, got {k}")
        return self.errors[self.schemes.index(one_of(scheme, "scheme", self.schemes)), k - 1]

    def paired_difference(self, a: str, b: str, k: int | None = None, k_b: int | None = None) -> Estimate:
        """``MSE_a - MSE_b`` with its paired s.e., ``k`` heads (default all) for ``a`` and ``k_b`` (default ``k``) for ``b``.

        ``k_b = 1`` compares with the best single head.  Unpacks as ``diff, se``.
        """
        H = self.errors.shape[1]
        k = H if k is None else positive_int(k, "k")
        k_b = k if k_b is None else positive_int(k_b, "k_b")
        for name, kk in (("k", k), ("k_b", k_b)):
            if kk > H:
                raise ValueError(f"{name}: expected at most {H} heads, got {kk}")
        one_of(a, "a", self.schemes)
        one_of(b, "b", self.schemes)
        return Estimate.paired(self.samples(a, k), self.samples(b, k_b))


def nested_errors(M_fit, M_eval, schemes=SCHEMES + ORACLES, *, q: float = GOLDEN_Q) -> NestedErrors:
    """Evaluate weightings out of sample as heads are added in quality order (Thm 7.1, real heads).

    Parameters
    ----------
    M_fit : ``(H, H)``
        Error second-moment matrix estimated on replicates *independent* of
        ``M_eval``.  It alone decides the quality order
        (:func:`mhanw.weighting.quality_order`) and the oracle weights, so that
        no weighting sees the data it is evaluated on.
    M_eval : ``(R, H, H)`` or ``(H, H)``
        Per-replicate matrices (e.g. :func:`mhanw.montecarlo.error_moments`) on
        which every weighting is evaluated: ``a' M_r a``, replicate by
        replicate (common random numbers across weightings and head counts).
    schemes : names from :data:`mhanw.weighting.SCHEMES` and :data:`mhanw.weighting.ORACLES`
    q : ratio of the geometric weights

    For ``k = 1..H`` the best ``k`` heads (by ``M_fit``) are combined with each
    scheme's weights for ``k`` heads (the oracles of ``M_fit[S_k, S_k]``).
    """
    M_fit = _symmetric_matrix(M_fit, "M_fit")
    H = M_fit.shape[0]
    M_eval = as_float_array(M_eval, "M_eval", ndim=(2, 3))
    M_eval = M_eval[None] if M_eval.ndim == 2 else M_eval
    if M_eval.shape[1:] != (H, H):
        raise ValueError(f"M_eval: expected shape (R, {H}, {H}) to match M_fit, got {M_eval.shape}")
    if isinstance(schemes, str):
        schemes = (schemes,)
    schemes = tuple(one_of(s, "schemes", SCHEMES + ORACLES) for s in schemes)
    if not schemes or len(set(schemes)) != len(schemes):
        raise ValueError(f"schemes: expected distinct scheme names, got {schemes!r}")
    q = _ratio(q, "q")
    order = quality_order(M_fit)
    fit = M_fit[np.ix_(order, order)]
    ev = M_eval[:, order][:, :, order]
    errors = np.empty((len(schemes), H, M_eval.shape[0]))
    weights = {s: [] for s in schemes}
    for k in range(1, H + 1):
        sub = ev[:, :k, :k]
        for i, s in enumerate(schemes):
            a = fitted_weights(s, fit[:k, :k], q=q)
            weights[s].append(a)
            errors[i, k - 1] = np.einsum("i,rij,j->r", a, sub, a)
    return NestedErrors(order=order, schemes=schemes, errors=errors, weights=weights)
