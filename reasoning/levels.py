"""PIKE-RAG's L3 and L4 answers, and the quantitative route of L2.

* Predictive (L3, section 5.4): retrieved facts are structured into a yearly series (numbers with years,
  found by regex in the evidence sentences; without numbers, the count of dated mentions per year), a
  least-squares linear trend forecasts the asked year with its numbers shown, and the LLM explains it
  (task ``forecast_explanation``; offline, a template explanation named as such).
* Creative (L4, section 5.5): perspective agents answer in parallel (task ``perspective``), then a
  synthesis cites them (task ``synthesis``). Offline there is no creative answer, only the evidence.
* Quantitative (L2): a Cypher aggregation over a table's Row nodes, when the graph holds the records.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from kg.llm import ForecastExplanation, Perspective, Synthesis
from kg.retrieval.base import Hit
from loaders import split_sentences
from reasoning.core import Run
from reasoning.evidence import check_citations, render_evidence
from reasoning.types import Answer, Forecast, PerspectiveView

__all__ = [
    "OPS",
    "creative",
    "fit_trend",
    "predictive",
    "quantitative",
    "question_op",
    "yearly_series",
]

_YEAR = re.compile(r"\b(19\d{2}|20\d{2})\b")
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?!\w)")
OPS: dict[str, tuple[str, ...]] = {
    "avg": ("average", "mean"),
    "sum": ("total", "sum", "altogether", "combined"),
    "max": ("maximum", "highest", "largest", "most"),
    "min": ("minimum", "lowest", "smallest", "least"),
    "count": ("how many", "number of", "count"),
}
_WORD = re.compile(r"\w+")


def yearly_series(evidence: Sequence[Hit]) -> tuple[list[tuple[int, float]], str, list[int]]:
    """Structure evidence into ``[(year, value)]``: sentences with one year and one other number give
    values (repeated years are averaged); with none, dated sentences are counted per year.

    Returns (series sorted by year, "values" or "counts", 1-based indices of the evidence used).
    """
    values: dict[int, list[float]] = {}
    counts: dict[int, int] = {}
    used_values: set[int] = set()
    used_counts: set[int] = set()
    for n, hit in enumerate(evidence, 1):
        for a, b in split_sentences(hit.text):
            sentence = hit.text[a:b]
            years = {int(y) for y in _YEAR.findall(sentence)}
            if len(years) != 1:
                continue
            year = years.pop()
            numbers = [float(x.replace(",", "")) for x in _NUMBER.findall(sentence) if x != str(year)]
            counts[year] = counts.get(year, 0) + 1
            used_counts.add(n)
            if len(numbers) == 1:
                values.setdefault(year, []).append(numbers[0])
                used_values.add(n)
    if len(values) >= 2:
        return sorted((y, float(np.mean(v))) for y, v in values.items()), "values", sorted(used_values)
    return sorted((y, float(c)) for y, c in counts.items()), "counts", sorted(used_counts)


def fit_trend(series: Sequence[tuple[int, float]]) -> tuple[float, float]:
    """Least-squares line ``value = slope * year + intercept`` (needs two distinct years)."""
    years = np.array([y for y, _ in series], dtype=float)
    vals = np.array([v for _, v in series], dtype=float)
    slope, intercept = np.polyfit(years, vals, 1)
    return float(slope), float(intercept)


def _target_year(question: str, series: Sequence[tuple[int, float]]) -> int:
    last = max(y for y, _ in series)
    asked = [int(y) for y in _YEAR.findall(question) if int(y) > last]
    return min(asked) if asked else last + 1


def predictive(run: Run) -> Answer:
    """L3: knowledge structuring, a transparent linear forecast, and its explanation."""
    evidence = run.ports.hybrid.retrieve(run.question, k=run.settings.flat_k)
    series, kind, used = yearly_series(evidence)
    run.note("structure", kind=kind, series=series, evidence_used=used)
    if len({y for y, _ in series}) < 2:
        text = "Not enough yearly data in the evidence to forecast (need values for two or more years)."
        answer = run.cited("predictive", evidence) if not run.offline else run.extractive("predictive", evidence)
        answer.answer = f"{text} {answer.answer}".strip()
        return answer
    slope, intercept = fit_trend(series)
    year = _target_year(run.question, series)
    predicted = slope * year + intercept
    table = "\n".join(f"{y}: {v:g}" for y, v in series)
    numbers = (f"least-squares trend over {len(series)} years ({series[0][0]}-{series[-1][0]}): "
               f"{kind} = {slope:.4f} x year {intercept:+.4f}; forecast for {year}: {predicted:.2f}")
    markers = "".join(f"[{n}]" for n in used)
    if run.offline:
        explanation = (f"offline template explanation: the {kind} per year extracted from the evidence "
                       f"{markers} change by {slope:+.3f} per year on average; continuing that line gives "
                       f"{predicted:.2f} for {year}. This assumes the past trend continues.")
        source = "offline template"
    else:
        out = run.task("forecast_explanation", ForecastExplanation, question=run.question,
                       context=f"{render_evidence(evidence)}\n\nYearly table:\n{table}\n\nTrend: {numbers}")
        explanation = f"{out.forecast} " + " ".join(out.drivers)
        source = "llm"
    text, citations, dropped = check_citations(f"Forecast for {year}: {predicted:.2f} ({numbers}) {markers}. "
                                               f"{explanation}", evidence)
    forecast = Forecast(series=series, slope=slope, intercept=intercept, target_year=year, predicted=predicted,
                        explanation=explanation, explanation_source=source)
    return Answer(question=run.question, answer=text, method="predictive", offline=run.offline,
                  citations=citations, evidence=evidence, dropped_markers=dropped, forecast=forecast)


def creative(run: Run) -> Answer:
    """L4: perspective agents in parallel, then a synthesis citing the shared evidence."""
    evidence = run.ports.hybrid.retrieve(run.question, k=run.settings.hybrid_k)
    if run.offline:
        answer = run.extractive("creative", evidence)
        answer.answer = ("offline: creative answers need an LLM (set STRATA_LLM_BASE_URL); the evidence "
                         "found is listed below.")
        answer.citations = []
        return answer
    context = render_evidence(evidence)

    def agent(viewpoint: str) -> Perspective:
        return run.task("perspective", Perspective, question=run.question, viewpoint=viewpoint, context=context)

    with ThreadPoolExecutor(max_workers=len(run.settings.perspectives)) as pool:
        outs = list(pool.map(agent, run.settings.perspectives))
    views = []
    for viewpoint, out in zip(run.settings.perspectives, outs, strict=True):
        argument, cites, _ = check_citations(out.argument, evidence, out.citations)
        views.append(PerspectiveView(viewpoint=out.viewpoint or viewpoint, argument=argument,
                                     citations=[c.marker for c in cites]))
    rendered = "\n\n".join(f"Perspective {i} ({v.viewpoint}): {v.argument}" for i, v in enumerate(views, 1))
    synthesis = run.task("synthesis", Synthesis, question=run.question, perspectives=rendered)
    run.note("perspectives", viewpoints=[v.viewpoint for v in views])
    answer = run.checked("creative", synthesis.answer, evidence, synthesis.citations)
    answer.perspectives = views
    return answer


def question_op(question: str) -> str | None:
    """The aggregation a quantitative question asks for (``count``, ``sum``, ``avg``, ``max``, ``min``)."""
    lowered = question.lower()
    for op, cues in OPS.items():
        if any(re.search(rf"\b{re.escape(cue)}\b", lowered) for cue in cues):
            return op
    return None


def quantitative(run: Run) -> Answer | None:
    """A Cypher aggregation answering the question from a table's rows, or None when no table fits."""
    op = question_op(run.question)
    if op is None:
        return None
    words = {w.lower() for w in _WORD.findall(run.question)}
    best: tuple[int, str, str, Hit | None] | None = None
    for table in run.ports.tables.tables():
        for column in table.header:
            overlap = len(words & {w.lower() for w in _WORD.findall(column)})
            if overlap and (best is None or overlap > best[0]):
                best = (overlap, table.table_id, column, table.chunk)
    if best is None:
        return None
    _, table_id, column, chunk = best
    agg = run.ports.tables.aggregate(table_id, column, op)
    run.note("aggregate", table_id=table_id, column=column, op=op, value=agg.value, rows=agg.rows)
    evidence = [chunk] if chunk is not None else []
    marker = " [1]" if evidence else ""
    value = "no numeric values" if agg.value is None else f"{agg.value:g}"
    text = f"{op} of {column} over {agg.rows} rows: {value}{marker}"
    _, citations, _ = check_citations(text, evidence)
    return Answer(question=run.question, answer=text, method="quantitative", offline=run.offline,
                  citations=citations, evidence=evidence, aggregation=agg)
