"""Evaluation against benchmark data, always in an isolated knowledge base (never the user's).

:mod:`kg.app.evaluation.runner` holds what every evaluation shares (the throwaway or named evaluation server,
loading a QA corpus, offline distillation when available); :mod:`kg.app.evaluation.retrieval` scores retrieval.
"""

__all__: list[str] = []
