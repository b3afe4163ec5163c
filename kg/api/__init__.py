"""Strata's REST API and web page; the surfaces reach a knowledge base only through :mod:`kg.api.ports`.

Example::

    from kg.api import ApiSettings, KnowledgeBases, StrataService, create_app
    from kg.client import Strata

    app = create_app(KnowledgeBases(lambda name: StrataService(Strata.connect(kb=name))), ApiSettings())
"""

from kg.api.app import ApiSettings, KnowledgeBases, UnknownKnowledgeBase, create_app
from kg.api.ports import KnowledgeService, ServiceFactory, StrataService

__all__ = [
    "ApiSettings", "KnowledgeBases", "KnowledgeService", "ServiceFactory",
    "StrataService", "UnknownKnowledgeBase", "create_app",
]
