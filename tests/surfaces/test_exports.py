"""The public API is what ``__all__`` says, nothing more and nothing missing (as httpx's test_exported_members)."""

from __future__ import annotations

import importlib
import inspect

import pytest

import kg

PUBLIC = {
    "kg": {"AsyncStrata", "DocumentInfo", "Settings", "Stats", "Strata", "StrataError"},
    "kg.app.client": {"LAYERS", "AsyncStrata", "DocumentInfo", "Stats", "Strata"},
    "kg.app.rest": {"ApiSettings", "KnowledgeBases", "KnowledgeService", "ServiceFactory",
               "StrataService", "UnknownKnowledgeBase", "create_app"},
    "kg.app.browser": {"DEFAULT_BROWSER_URL", "browser_link", "evidence_cypher", "grass_path"},
    "kg.app.demo": {"CORPUS", "QUESTIONS", "DemoQuestion", "DemoReport", "run_demo"},
}


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_exported_members(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert set(module.__all__) == PUBLIC[module_name]
    assert len(module.__all__) == len(set(module.__all__))
    for name in module.__all__:  # each public class and function is Strata's own and says what it is
        member = getattr(module, name)
        if inspect.isclass(member) or inspect.isfunction(member):
            assert member.__module__.split(".")[0] == "kg", (name, member.__module__)
            assert (member.__doc__ or "").strip(), f"{module_name}.{name} has no docstring"


def test_kg_lazy_exports_are_the_client_classes() -> None:
    from kg.app.client import Strata

    assert kg.Strata is Strata and kg.Strata.__module__ == "kg.app.client"
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = kg.Nope  # type: ignore[attr-defined]
    public_classes = [getattr(kg, n) for n in kg.__all__ if isinstance(getattr(kg, n), type)]
    assert all((cls.__doc__ or "").strip() for cls in public_classes)  # every public class says what it is
