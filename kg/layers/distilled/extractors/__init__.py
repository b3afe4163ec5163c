"""Extractor strategies of the distillation layers: one small protocol per layer (:mod:`.protocols`) and one
module per mode, :mod:`.llm` (LLM tasks) and :mod:`.offline` (the text alone).

The job picks a mode's factory once (:class:`LLMExtractors` or :class:`OfflineExtractors`) and gives each
layer its extractor when it constructs it::

    extractors = OfflineExtractors() if no_llm else LLMExtractors()
    layer = AtomsLayer(ctx, extractors.atoms(ctx))
"""

from kg.layers.distilled.extractors.llm import (
    GivenAtoms,
    GivenTags,
    GivenTriples,
    LLMAtomExtractor,
    LLMExtractors,
    LLMFactItemExtractor,
    LLMKnowledgeExtractor,
    LLMTagExtractor,
    LLMTripleExtractor,
)
from kg.layers.distilled.extractors.offline import (
    OfflineAtomExtractor,
    OfflineExtractors,
    OfflineFactItemExtractor,
    OfflineTagExtractor,
    OfflineTripleExtractor,
)
from kg.layers.distilled.extractors.protocols import (
    ROUTE_SEP,
    AtomExtractor,
    Extractors,
    FactItemExtractor,
    KnowledgeExtractor,
    MindMapOutline,
    SharedExtraction,
    TagExtractor,
    TripleExtractor,
    VerifiedItem,
)

__all__ = [
    "ROUTE_SEP",
    "AtomExtractor",
    "Extractors",
    "FactItemExtractor",
    "GivenAtoms",
    "GivenTags",
    "GivenTriples",
    "KnowledgeExtractor",
    "LLMAtomExtractor",
    "LLMExtractors",
    "LLMFactItemExtractor",
    "LLMKnowledgeExtractor",
    "LLMTagExtractor",
    "LLMTripleExtractor",
    "MindMapOutline",
    "OfflineAtomExtractor",
    "OfflineExtractors",
    "OfflineFactItemExtractor",
    "OfflineTagExtractor",
    "OfflineTripleExtractor",
    "SharedExtraction",
    "TagExtractor",
    "TripleExtractor",
    "VerifiedItem",
]
