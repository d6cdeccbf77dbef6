"""mhanw: the reproducible companion to *Multi-Head Attention as Ensemble
Nadaraya-Watson Estimation* (E. Fokoue, arXiv 2605.20271, 2026).

One module per idea of the paper; the README maps theorem -> module -> notebook,
and ``book/claims.md`` states each claim and how it is checked.

- :mod:`mhanw.nw`        kernels, the Nadaraya-Watson estimator, softmax attention (Thm 2.1)
- :mod:`mhanw.locality`  effective sample size and the large-n limit of the exponential kernel (Thm 2.1)
- :mod:`mhanw.data`      reference data-generating processes and regression functions
- :mod:`mhanw.heads`     head families, head outputs, combination rules, integrated MSE (Sec. 3-5)
- :mod:`mhanw.decomposition` bias-variance-covariance decomposition (Thm 3.1)
- :mod:`mhanw.diversity` principal angles, cross-Gram matrices, HDI, Lemma 4.1 (Sec. 4)
- :mod:`mhanw.hdi_mse`   IMSE against the HDI: configurations, paired summaries, frame bound (Thm 4.2, 5.1)
- :mod:`mhanw.sweep`     seeded, parallel sweeps with common random numbers
- :mod:`mhanw.scaling`   sympy MSE models and the optimal head size (Thm 6.1)
- :mod:`mhanw.derivation` the head-size law derived step by step, checked and classified (Thm 6.1)
- :mod:`mhanw.budget`    real NW heads under a fixed budget D = H d_k, averaged or summed (Thm 6.1)
- :mod:`mhanw.weighting` uniform, geometric, Fibonacci and oracle head weights (Thm 7.1)
- :mod:`mhanw.pretrained` offline weights and a numpy encoder of all-MiniLM-L6-v2 (beyond the paper)
- :mod:`mhanw.figures`   one plotting style, deterministic saving
- :mod:`mhanw.texout`    numbers and sympy expressions as LaTeX macros
"""

__version__ = "0.1.0"
