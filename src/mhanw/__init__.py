"""mhanw: the reproducible companion to *Multi-Head Attention as Ensemble Nadaraya-Watson Estimation*.

The paper is E. Fokoue, arXiv 2605.20271, 2026.

Four kinds of code, kept apart (the book's Architecture page, ``book/architecture.md``, says the same):

**Theory** (``mhanw.<module>``, :data:`THEORY_MODULES`): general and reusable, no chapter names, no
verdict thresholds; the public API, documented in the book's API reference.

- :mod:`mhanw.nw`           the kernel registry, the one blocked weighted-mean engine, NW regression, attention (Thm 2.1)
- :mod:`mhanw.locality`     effective sample size and the large-n limit of the exponential kernel (Thm 2.1)
- :mod:`mhanw.data`         data-generating processes and regression functions
- :mod:`mhanw.heads`        head families, head outputs, combination rules incl. concat (W_V, W_O) (Sec. 3-5)
- :mod:`mhanw.montecarlo`   Monte Carlo over training samples: IMSE, pointwise estimates, error moments
- :mod:`mhanw.decomposition` bias-variance-covariance decomposition, Breiman's quantities (Thm 3.1)
- :mod:`mhanw.diversity`    principal angles, orthonormal bases, the HDI in all normalizations, the frame bound
  (Sec. 4, Thm 5.1)
- :mod:`mhanw.comparisons`  the configurations compared by their IMSE and the statistics of the comparisons
  (Thm 4.2, 5.1)
- :mod:`mhanw.covariance`   covariance of two heads: the printed bound and its first-order form (Lemma 4.1)
- :mod:`mhanw.comparisons`  head configurations compared by their IMSE and the statistics of the comparison (Thm 4.2, 5.1)
- :mod:`mhanw.training`     heads trained by gradient descent on the leave-one-out loss (Thm 5.1's interpretation)
- :mod:`mhanw.incontext`    softmax attention trained from scratch on in-context regression: NW heads with a learned metric (Thm 5.1, 6.1, 2.1)
- :mod:`mhanw.weighting`    uniform, geometric, Fibonacci and oracle head weights, scored out of sample (Thm 7.1)
- :mod:`mhanw.scaling`      sympy MSE models and the optimal head size (Thm 6.1)
- :mod:`mhanw.derivation`   the head-size law derived step by step, checked and classified (Thm 6.1)
- :mod:`mhanw.pretrained`   offline weights and a numpy encoder of all-MiniLM-L6-v2 (beyond the paper)
- :mod:`mhanw.premises`     the premises of the paper's predictions, one predicate each, evaluated on a run's data
  law and heads
- :mod:`mhanw.incontext`    softmax attention trained from scratch on in-context regression: heads as NW estimates
  with a learned metric, their training, measurements and decision helpers
- :mod:`mhanw.constants`    the reference setting (n = 500, sigma = 0.5, h = 0.5), shared tolerances, the 3-s.e. rule

**Chapters** (:mod:`mhanw.chapters`): one module ``chNN_slug`` per chapter ``notebooks/NN_slug.md``, all
ten of them, holding that chapter's experiment and its claims; :mod:`mhanw.chapters.base` is the contract
they follow.

**Infrastructure** (:mod:`mhanw.infra`): knows nothing of attention.

- :mod:`mhanw.infra.sweep`       seeded, parallel sweeps with common random numbers (joblib or Dask)
- :mod:`mhanw.infra.estimates`   a Monte Carlo estimate with its standard error, paired differences, z-scores
- :mod:`mhanw.infra.verdicts`    verdict records: a claim's verdict as data, decided from numbers by a rule
- :mod:`mhanw.infra.rules`       the decision rules a chapter declares its records with, each with its criterion
- :mod:`mhanw.infra.results`     a chapter's results as one tree of quantities, written as JSON and LaTeX values
- :mod:`mhanw.infra.premises`    premises as data: what a prediction rests on (the predicates are theory)
- :mod:`mhanw.infra.figures`     one plotting style, deterministic saving
- :mod:`mhanw.infra.texout`      numbers and sympy expressions as LaTeX macros
- :mod:`mhanw.infra.notation`    the records' plain notation, as the paper and the chapters typeset it
- :mod:`mhanw.infra.prose`       generated text that reads as written text: counts, ranges, lists
- :mod:`mhanw.infra.tables`      tables for reading: numbers to a few digits, estimates as "mean ± s.e."
- :mod:`mhanw.infra.params`      a chapter's papermill parameters: names, values, constraints
- :mod:`mhanw.infra.expressions` safe parsing of the formulas a reader types
- :mod:`mhanw.infra.notebook`    the sizes of a fidelity level
- :mod:`mhanw.infra.validate`    input checks shared by every public function

**Pipeline** (:mod:`mhanw.pipeline`, ``python -m mhanw.pipeline``): knows nothing of the theory; runs the
chapters, traces their imports, gathers the ledger, runs scenarios and seeds, builds the paper and the book.

:mod:`mhanw.bench` times the engine (``make bench``).
"""

__version__ = "0.1.0"

#: The theory modules, ``mhanw.<name>``: the library's public API, each with its ``__all__``; the book's
#: API reference documents them in this order.
THEORY_MODULES = (
    "nw",
    "locality",
    "data",
    "heads",
    "montecarlo",
    "decomposition",
    "diversity",
    "comparisons",
    "covariance",
    "training",
    "weighting",
    "scaling",
    "derivation",
    "pretrained",
    "premises",
    "incontext",
    "constants",
)
