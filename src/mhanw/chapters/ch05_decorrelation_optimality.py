"""Chapter 05: is decorrelation optimal?  Random configurations, blind heads, the frame bound (Thm 5.1).

Notebook ``05_decorrelation_optimality`` checks Thm 5.1 in three parts:

- (i) orthogonal heads against random configurations: the experiment of
  chapter 04, :func:`random_configuration_imse` (re-exported from
  :mod:`mhanw.chapters.ch04_head_diversity_index`, with
  :func:`rank_correlation`), at two regression functions;
- (ii) :func:`blind_configurations`: identical, partially shared and
  orthogonal heads in ``R^4`` for ``m = blind`` (signal along ``e_1`` only),
  where orthogonality makes one head blind;
- (iv) the frame bound: :func:`mhanw.diversity.maximize_hdi` and
  :func:`mhanw.diversity.frame_tightness` (theory, not chapter code).
"""

from __future__ import annotations

import numpy as np

from .ch04_head_diversity_index import random_configuration_imse, rank_correlation

__all__ = ["blind_configurations", "random_configuration_imse", "rank_correlation"]


def blind_configurations() -> dict:
    """Thm 5.1 (ii): two heads in ``R^4``, ``d_k = 2``, for ``m = blind`` (signal along ``e_1``).

    - ``"identical"``: ``span{e1, e2}`` twice (HDI_PA 0);
    - ``"shared"``: ``(span{e1, e2}, span{e1, e3})``, both heads see ``e_1`` (HDI_PA 1/2);
    - ``"orthogonal"``: ``(span{e1, e2}, span{e3, e4})``, the second head is blind (HDI_PA 1).

    Returns a dict of arrays ``(2, 4, 2)`` in this order.
    """
    e = np.eye(4)  # columns e_1 .. e_4
    first = e[:, [0, 1]]
    return {
        "identical": np.stack([first, first]),
        "shared": np.stack([first, e[:, [0, 2]]]),
        "orthogonal": np.stack([first, e[:, [2, 3]]]),
    }
