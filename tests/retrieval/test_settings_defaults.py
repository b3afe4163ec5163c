"""A method's settings model and its retriever's constructor state the same defaults: ``make_retriever``
passes the model's, a direct construction gets the constructor's, and the two must not drift apart (strata's
``candidates`` is set in both places)."""

from __future__ import annotations

import inspect

import kg.retrieval  # noqa: F401 - imports every method's retriever
from kg.retrieval.base import Retriever
from kg.retrieval.settings import SETTINGS


def _retrievers() -> dict[str, type[Retriever]]:
    found: dict[str, type[Retriever]] = {}
    todo = [Retriever]
    while todo:
        for sub in todo.pop().__subclasses__():
            if isinstance(getattr(sub, "name", None), str):
                found.setdefault(sub.name, sub)
            todo.append(sub)
    return found


def test_settings_defaults_match_the_retrievers_constructors() -> None:
    retrievers = _retrievers()
    assert "strata" in retrievers
    compared, differing = 0, []
    for method, model in SETTINGS.items():
        retriever = retrievers.get(method)
        if retriever is None:
            continue
        parameters = inspect.signature(retriever.__init__).parameters
        for field, info in model.model_fields.items():
            parameter = parameters.get(field)
            if parameter is None or parameter.default is inspect.Parameter.empty:
                continue
            compared += 1
            default = info.get_default(call_default_factory=True)
            if parameter.default != default:
                differing.append(f"{method}.{field}: {parameter.default!r} != {default!r}")
    assert compared > 10
    assert not differing, differing
