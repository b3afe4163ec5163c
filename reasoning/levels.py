"""PIKE-RAG's L3 and L4 answers, and the quantitative route of L2.

* Predictive (L3, section 5.4): knowledge is structured into a yearly series (a table's Row nodes with a
  year column and the value column the question names; else numbers with years found by regex in the
  evidence sentences; without numbers, the count of dated sentences per year, and the answer then says it
  forecasts that count, not the quantity asked), a least-squares linear trend forecasts the asked year
  with its numbers shown, and the LLM explains it (task ``forecast_explanation``; offline, a template
  explanation named as such).
* Creative (L4, section 5.5): perspective agents answer in parallel (task ``perspective``), then a
  synthesis (task ``synthesis``) given the perspectives and the evidence they cite, which it alone may
  cite. Offline there is no creative answer, only the evidence.
* Quantitative (L2): Cypher aggregations over a table's Row nodes, when the graph holds the records: the
  table is chosen by the question's words in its header, caption, section and chunk text; the answer names
  the winning row for "which ... the most", the total for "how many ... across all", and the number of
  rows when the counted noun names them ("how many sites ..."); a year or row label the question names
  filters the rows.
* Bridging around a superlative (L2): the ranking of the relative clause first, then the bridge.

Citations: an answer computed here from a table's rows (a ranking, a total, a forecast line) cites the table
it was computed from, and its computed numbers are no claim a chunk could state; what a model writes (an L3
explanation's drivers, the answers of :meth:`reasoning.core.Run.cited` and of the answerer's bridge) is held
to its sources (:mod:`reasoning.citations`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kg.retrieval.base import Hit
from kg.shared.tabular import parse_number
from loaders import split_sentences
from reasoning.answerer import Trend
from reasoning.citations import hold_markers
from reasoning.core import Run
from reasoning.evidence import check_citations
from reasoning.ports import TableInfo
from reasoning.questions import NESTED, OPS, question_op
from reasoning.types import (
    AggregateStep,
    Aggregation,
    Answer,
    BridgeStep,
    Forecast,
    RankStep,
    StructureStep,
    TableChoiceStep,
)

__all__ = [
    "NESTED",
    "OPS",
    "bridge",
    "creative",
    "fit_trend",
    "predictive",
    "quantitative",
    "question_op",
    "table_series",
    "yearly_series",
]

_YEAR = re.compile(r"\b(19\d{2}|20\d{2})\b")
# Not after a hyphen: the 14 of "turbine T-14" is a name, not a value (a real model's L3 evidence mixed them).
_NUMBER = re.compile(r"(?<![\w.-])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?!\w)")
_WORD = re.compile(r"\w+")
_MENTIONS = "number of evidence sentences dated each year"
_HOW_MANY = re.compile(r"\bhow many\s+(?P<noun>[\w-]+)", re.I)


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


def table_series(run: Run) -> tuple[list[tuple[int, float]], str, Hit | None] | None:
    """The yearly series of the table that fits the question best (a year column and the value column
    sharing most words with the question), read from its Row nodes; None when no table has one."""
    plan = _best_plan(run, run.question, None, yearly=True)
    if plan is None:
        return None
    series: dict[int, float] = {}
    for row in plan.table.rows:
        cells = dict(row)
        year, value = parse_number(cells.get(plan.year_column or "", "")), parse_number(cells.get(plan.column, ""))
        if year is not None and value is not None and not any(
                c in plan.where and plan.where[c] != v for c, v in cells.items()):
            series[int(year)] = value
    if len(series) < 2:
        return None
    return sorted(series.items()), plan.column, plan.table.chunk


def predictive(run: Run) -> Answer:
    """L3: knowledge structuring (a table's yearly Rows, else numbers with years in the evidence), a
    transparent linear forecast, and its explanation."""
    evidence = run.ports.hybrid.retrieve(run.question, k=run.settings.flat_k)
    from_table = table_series(run)
    if from_table is not None:
        series, column, chunk = from_table
        evidence = [chunk, *(h for h in evidence if h.chunk_id != chunk.chunk_id)] if chunk else evidence
        kind, used = f"{column} (table rows)", [1] if chunk else []
    else:
        series, found, used = yearly_series(evidence)
        kind = "values" if found == "values" else _MENTIONS
    run.note(StructureStep(detail={"kind": kind, "series": series, "evidence_used": used}))
    if len({y for y, _ in series}) < 2:
        text = "Not enough yearly data in the evidence to forecast (need values for two or more years)."
        answer = run.cited("predictive", evidence)
        answer.answer = f"{text} {answer.answer}".strip()
        return answer
    slope, intercept = fit_trend(series)
    year = _target_year(run.question, series)
    predicted = slope * year + intercept
    table = "\n".join(f"{y}: {v:g}" for y, v in series)
    shown = ", ".join(f"{y}: {v:g}" for y, v in series)
    numbers = (f"least-squares trend over {len(series)} years ({series[0][0]}-{series[-1][0]}): "
               f"{kind} = {slope:.4f} x year {intercept:+.4f}; forecast for {year}: {predicted:.2f}")
    markers = "".join(f"[{n}]" for n in used)
    # Counting dated sentences is a proxy: the forecast says it is one, never passing for the quantity asked.
    what = (f"Forecast of the {_MENTIONS}, not of the quantity asked (the evidence gives no yearly values of it)"
            if kind == _MENTIONS else "Forecast")
    explanation, source = run.answerer.explain_forecast(run, Trend(
        evidence=evidence, table=table, numbers=numbers, per_year=kind if kind == _MENTIONS else f"{kind} per year",
        markers=markers, slope=slope, predicted=predicted, year=year))
    explanation, _, dropped = check_citations(explanation, evidence)
    unsupported = 0
    if source == "llm":  # the model's drivers must be stated by what they cite; the computed line is the code's
        held = hold_markers(explanation, run.question, evidence, run.verifier)
        explanation, unsupported = held.text, held.unsupported
    text, citations, _ = check_citations(f"{what} for {year}: {predicted:.2f} ({numbers}) {markers}. "
                                         f"Series: {shown}. {explanation}", evidence)
    forecast = Forecast(series=series, measure=kind, slope=slope, intercept=intercept, target_year=year,
                        predicted=predicted, explanation=explanation, explanation_source=source)
    return Answer(question=run.question, answer=text, method="predictive", offline=not run.answerer.uses_llm,
                  citations=citations, evidence=evidence, dropped_markers=dropped, forecast=forecast,
                  unsupported_citations=unsupported)


def creative(run: Run) -> Answer:
    """L4: perspective agents in parallel, each citing the shared evidence; then a synthesis given the
    perspectives and the evidence they cite, which may cite only that evidence (see
    :meth:`reasoning.llm_answerer.LLMAnswerer.creative`)."""
    evidence = run.ports.hybrid.retrieve(run.question, k=run.settings.hybrid_k)
    return run.answerer.creative(run, evidence)


_SUPERLATIVE = {"most": True, "highest": True, "largest": True, "greatest": True, "maximum": True,
                "least": False, "lowest": False, "smallest": False, "fewest": False, "minimum": False}
_TOTAL = re.compile(r"\b(?:how many|how much|total|sum|altogether|combined|in all|across all)\b", re.I)
_AVERAGE = re.compile(r"\b(?:average|mean)\b", re.I)
_LABEL = re.compile(r"\b(?:which|what)\s+(?P<noun>[\w-]+)", re.I)
_YEAR_COLUMN = re.compile(r"^(?:year|yr|date|season|fiscal year|fy)$", re.I)


def _words(text: str) -> set[str]:
    return {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
            for w in (t.lower() for t in _WORD.findall(text.replace("-", " ")))}


@dataclass(frozen=True)
class _Plan:
    """How one table answers a quantitative question: its value column, the label (row name) column, the
    filters the question names, and the score the table was chosen by."""

    table: TableInfo
    column: str
    label: str | None
    where: dict[str, str | float]
    scope: str
    score: float
    year_column: str | None = None
    uncovered_years: tuple[str, ...] = ()
    """Years the question names that neither the table's rows nor its caption or text cover."""


def _numeric(table: TableInfo, column: str) -> bool:
    values = [v for row in table.rows for c, v in row if c == column]
    return bool(values) and sum(parse_number(v) is not None for v in values) >= max(1, len(values) // 2 + 1)


def _plan(table: TableInfo, question: str, label_noun: str | None) -> _Plan | None:
    """Score ``table`` for ``question``: overlap of the question's words with the header (twice), the
    caption/section/document titles and the table's chunk text; the value column is the numeric column
    sharing most words with the question; year and row-label filters come from the question's words."""
    asked = _words(question)
    years = [y for y in _YEAR.findall(question)]
    numeric = [c for c in table.header if _numeric(table, c)]
    year_col = next((c for c in numeric if _YEAR_COLUMN.match(c.strip())), None)
    labels = [c for c in table.header if c not in numeric]
    label = next((c for c in labels if label_noun and _words(c) & _words(label_noun)), labels[0] if labels else None)
    values = [c for c in numeric if c != year_col]
    if not values:
        return None
    column = max(values, key=lambda c: (len(_words(c) & asked), -table.header.index(c)))
    column_overlap = len(_words(column) & asked)
    if not column_overlap:
        return None
    where: dict[str, str | float] = {}
    scope = ""
    uncovered: list[str] = []
    surrounding = f"{table.context} {table.chunk.text if table.chunk else ''}"
    score = 2.0 * len(_words(" ".join(table.header)) & asked) + 2.0 * column_overlap
    score += len(_words(table.context) & asked) + 0.5 * len(_words(surrounding) & asked)
    for year in years:
        if year_col and any(c == year_col and parse_number(v) == float(year) for row in table.rows for c, v in row):
            where[year_col] = float(year)
        elif re.search(rf"\b{year}\b", surrounding):
            scope = f"{year}, as the table's {'caption' if year in table.context else 'text'} says"
        else:
            score -= 2.0  # the question names a year this table does not cover
            uncovered.append(year)
    for row in table.rows:  # a row label the question names ("at Kestrel Ridge") filters the rows
        for c, v in row:
            if c in labels and len(v) > 2 and re.search(rf"\b{re.escape(v)}\b", question, re.I):
                where[c] = v
    if label_noun and label and _words(label) & _words(label_noun):
        score += 3.0
    return _Plan(table, column, label, where, scope, score, year_col, tuple(uncovered))


def _best_plan(run: Run, question: str, label_noun: str | None, *, yearly: bool = False,
               labelled: bool = False, covering: bool = False) -> _Plan | None:
    """The best-scoring table plan (only tables with a year column when ``yearly``, only tables with a
    column named like ``label_noun`` when ``labelled``, only tables covering every year the question names
    when ``covering``)."""
    plans = [p for t in run.ports.tables.tables() if (p := _plan(t, question, label_noun)) is not None
             and (p.year_column or not yearly)
             and (not labelled or bool(p.label and _words(p.label) & _words(label_noun or "")))
             and not (covering and p.uncovered_years)]
    best = max(plans, key=lambda p: p.score, default=None)
    run.note(TableChoiceStep(detail={"candidates": [(p.table.table_id, p.column, round(p.score, 2)) for p in plans],
                                     "chosen": best.table.table_id if best else None}))
    return best


def _plural(noun: str) -> str:
    return noun if noun.endswith("s") else f"{noun}s"


def _cell(cells: list[tuple[str, str]], column: str | None) -> str:
    return next((v for c, v in cells if c == column), "") if column else ""


def _ranked(run: Run, plan: _Plan, descending: bool) -> tuple[str, float] | None:
    top = run.ports.tables.rank(plan.table.table_id, plan.column, descending=descending, where=plan.where, k=2)
    if not top:
        return None
    run.note(RankStep(detail={"table_id": plan.table.table_id, "column": plan.column, "descending": descending,
                              "top": [(_cell(r.cells, plan.label), r.value) for r in top]}))
    return _cell(top[0].cells, plan.label) or "the first row", top[0].value


def quantitative(run: Run) -> Answer | None:
    """Cypher aggregations answering the question from a table's rows, in words (the row label with its
    value for "which ... the most", the sum for "how many ... across all"), or None when no table fits."""
    question = run.question
    lowered = question.lower()
    superlative = next((_SUPERLATIVE[w] for w in re.findall(r"\b\w+\b", lowered) if w in _SUPERLATIVE), None)
    label_match = _LABEL.search(question)
    label_noun = label_match.group("noun") if label_match else None
    # A total over the years a table has is no answer for a year it lacks: that question goes to retrieval.
    plan = _best_plan(run, question, label_noun, covering=True)
    if plan is None:
        return None
    parts: list[str] = []
    aggregation: Aggregation | None = None
    scope = "".join(f" in {v:g}" if isinstance(v, float) else f" at {v}" for v in plan.where.values())
    scope += f" ({plan.scope})" if plan.scope else ""
    wants_total = bool(_TOTAL.search(question)) or question_op(question) in ("sum", "count")
    counted = _HOW_MANY.search(question)
    noun = _words(counted.group("noun")) if counted else set()
    counts_rows = bool(plan.label and noun & _words(plan.label) and not noun & _words(plan.column))
    if _AVERAGE.search(question):
        aggregation = run.ports.tables.aggregate(plan.table.table_id, plan.column, "avg", plan.where)
        if aggregation.value is not None:
            parts.append(f"{plan.column}: {aggregation.value:.2f} on average over {aggregation.rows} "
                         f"{_plural(plan.label or 'row')}{scope}")
    elif counts_rows and plan.label:  # "how many sites ...": the counted noun names the rows
        aggregation = run.ports.tables.aggregate(plan.table.table_id, plan.label, "count", plan.where)
        if aggregation.value is not None:
            parts.append(f"{aggregation.value:g} {_plural(plan.label)}{scope}")
    elif wants_total:
        aggregation = run.ports.tables.aggregate(plan.table.table_id, plan.column, "sum", plan.where)
        if aggregation.value is not None and aggregation.rows == 1:
            parts.append(f"{aggregation.value:g} {plan.column}{scope}")
        elif aggregation.value is not None:
            parts.append(f"{aggregation.value:g} {plan.column} in total across all {aggregation.rows} "
                         f"{_plural(plan.label or 'row')}{scope}")
    if superlative is not None:
        ranked = _ranked(run, plan, superlative)
        if ranked is not None:
            name, value = ranked
            most = "the most" if superlative else "the fewest"
            parts.append(f"{name} had {most} {plan.column}: {value:g}")
            if aggregation is None:
                aggregation = Aggregation(table_id=plan.table.table_id, column=plan.column,
                                          op="argmax" if superlative else "argmin", value=value,
                                          rows=len(plan.table.rows), label=name, label_column=plan.label)
            else:
                aggregation = aggregation.model_copy(update={"label": name, "label_column": plan.label})
    if not parts:
        return None
    run.note(AggregateStep(detail={"table_id": plan.table.table_id, "column": plan.column, "where": plan.where,
                                   "aggregation": aggregation.model_dump() if aggregation else None}))
    evidence = [plan.table.chunk] if plan.table.chunk is not None else []
    marker = " [1]" if evidence else ""
    text = "; ".join(parts) + marker + "."
    _, citations, _ = check_citations(text, evidence)
    return Answer(question=question, answer=text, method="quantitative", offline=not run.answerer.uses_llm,
                  citations=citations, evidence=evidence, aggregation=aggregation)


def bridge(run: Run) -> Answer | None:
    """A bridging question around a superlative, by decomposition: first the ranking of the relative
    clause ("the site that recorded the most gearbox failures in 2024" -> Kestrel Ridge), then the bridge
    from that row's label to what another table records about it ("model" -> Aurora A3.6); without such a
    table the rewritten question ("Which turbine model runs at Kestrel Ridge?") is answered from retrieval.
    None when no table ranks the clause."""
    nested = NESTED.search(run.question)
    if nested is None:
        return None
    noun, inner = nested.group("noun"), nested.group("inner")
    descending = next((_SUPERLATIVE[w] for w in re.findall(r"\b\w+\b", inner.lower()) if w in _SUPERLATIVE), True)
    plan = _best_plan(run, f"Which {noun} {inner}", noun, labelled=True, covering=True)
    if plan is None or plan.label is None:
        return None
    ranked = _ranked(run, plan, descending)
    if ranked is None:
        return None
    name, value = ranked
    outer = run.question[: nested.start()].strip()
    rewritten = f"{outer} {name}?"
    run.note(BridgeStep(detail={"inner": f"Which {noun} {inner}", "winner": name, "value": value,
                                "rewritten": rewritten}))
    first = f"the {noun} that {inner} is {name} ({plan.column}: {value:g})"
    inner_evidence = [plan.table.chunk] if plan.table.chunk is not None else []
    asked = _words(outer) - _words(noun)
    wants_name = not re.match(r"\s*how (?:many|much)\b", outer, re.I)
    best: tuple[float, str, str, str] | None = None  # (overlap, table id, column, value)
    for table_id, cells in run.ports.tables.rows_with(plan.label, name):
        if table_id == plan.table.table_id:
            continue
        for column, cell in cells:
            shared = len(_words(column) & asked)
            overlap = shared + 0.5 * ((parse_number(cell) is None) == wants_name) if shared else 0.0
            if overlap and column != plan.label and (best is None or overlap > best[0]):
                best = (overlap, table_id, column, cell)
    aggregation = Aggregation(table_id=plan.table.table_id, column=plan.column,
                              op="argmax" if descending else "argmin", value=value, rows=len(plan.table.rows),
                              label=name, label_column=plan.label)
    if best is not None:
        _, table_id, column, found = best
        outer_chunk = next((t.chunk for t in run.ports.tables.tables() if t.table_id == table_id and t.chunk), None)
        evidence = [h for h in (outer_chunk, *inner_evidence) if h is not None]
        marks = {h.chunk_id: f" [{i}]" for i, h in enumerate(evidence, 1)}
        inner_mark = marks.get(inner_evidence[0].chunk_id, "") if inner_evidence else ""
        outer_mark = marks.get(outer_chunk.chunk_id, "") if outer_chunk else ""
        text = f"{found}{outer_mark}: {first}{inner_mark}, and its {column} is {found}{outer_mark}."
        _, citations, _ = check_citations(text, evidence)
        return Answer(question=run.question, answer=text, method="bridge", offline=not run.answerer.uses_llm,
                      citations=citations, evidence=evidence, aggregation=aggregation)
    hits = run.ports.hybrid.retrieve(rewritten, k=run.settings.hybrid_k)
    evidence = [*inner_evidence, *(h for h in hits if not inner_evidence or h.chunk_id != inner_evidence[0].chunk_id)]
    return run.answerer.bridge(run, rewritten, evidence, first, bool(inner_evidence), aggregation)
