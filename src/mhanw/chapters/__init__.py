"""Per-chapter experiment code: ``chNN_slug`` serves ``notebooks/NN_slug.md``.

A chapter module holds the drivers and fixtures of one claim's checks; general
theory lives in the top-level modules of :mod:`mhanw`.
"""
