"""Infrastructure of the companion: sweeps, figures, LaTeX macros, results, input checks.

Nothing here knows about attention; the theory (:mod:`mhanw`) and the chapters
(:mod:`mhanw.chapters`) build on it.
"""
