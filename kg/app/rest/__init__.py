"""Strata's REST API and web page; the surfaces reach a knowledge base only through :mod:`kg.app.rest.ports`.

Example::

    from kg.app.rest import ApiSettings, KnowledgeBases, StrataService, create_app
    from kg.app.client import Strata

    app = create_app(KnowledgeBases(lambda name: StrataService(Strata.connect(kb=name))), ApiSettings())
"""

from kg.app.rest.app import ApiSettings, KnowledgeBases, UnknownKnowledgeBase, create_app
from kg.app.rest.ports import KnowledgeService, ServiceFactory, StrataService

__all__ = [
    "ApiSettings", "KnowledgeBases", "KnowledgeService", "ServiceFactory",
    "StrataService", "UnknownKnowledgeBase", "create_app",
]
