// Strata's web page: ask, then show the answer, its citations (span highlighted in the chunk), the trace
// and the Neo4j Browser link. No framework, no build step; text is inserted as text, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  for (const child of children) node.append(child);
  return node;
}

// The answer text with each [n] turned into a link to citation n.
function answerWithMarkers(text, markers) {
  const box = $("answer");
  box.replaceChildren();
  let last = 0;
  for (const m of text.matchAll(/\[(\d+)\]/g)) {
    box.append(text.slice(last, m.index));
    const n = Number(m[1]);
    box.append(markers.has(n) ? el("a", { href: `#citation-${n}`, class: "marker", "data-marker": n }, m[0]) : m[0]);
    last = m.index + m[0].length;
  }
  box.append(text.slice(last));
}

function citationItem(c) {
  const [start, end] = c.highlight;
  const where = `${c.title}` + (c.page ? `, page ${c.page}` : "") + ` — characters ${c.char_start}–${c.char_end}`;
  const chunk = el("p", { class: "chunk" },
    c.chunk_text.slice(0, start), el("mark", {}, c.chunk_text.slice(start, end)), c.chunk_text.slice(end));
  const item = el("li", { id: `citation-${c.marker}`, class: "citation", value: c.marker },
    el("a", { href: `#citation-${c.marker}`, class: "where" }, `[${c.marker}] ${where}`),
    el("div", { class: "source" }, c.source || c.document_id), chunk);
  item.querySelector("a").addEventListener("click", () => item.classList.toggle("active"));
  return item;
}

function traceItem(step) {
  const detail = Object.keys(step.detail || {}).length ? el("pre", {}, JSON.stringify(step.detail, null, 2)) : "";
  return el("li", { class: "step", value: step.index }, el("span", { class: "kind" }, step.kind), detail);
}

function show(data) {
  const a = data.answer;
  const meta = $("meta");
  meta.replaceChildren();
  if (a.offline) meta.append(el("span", { class: "offline" }, "offline"));
  meta.append(`knowledge base ${data.kb} · method ${a.method}` + (a.question_class ? ` · class ${a.question_class}` : "")
    + (a.stop_reason ? ` · stopped: ${a.stop_reason}` : ""));
  answerWithMarkers(a.answer, new Set(data.citations.map((c) => c.marker)));
  $("citations").replaceChildren(...data.citations.map(citationItem));
  $("trace").replaceChildren(...a.trace.map(traceItem));
  const browser = $("browser");
  browser.replaceChildren();
  if (data.browser_link) {
    browser.append(el("a", { href: data.browser_link, target: "_blank", rel: "noopener", id: "browser-link" },
      "Open the evidence subgraph in the Neo4j Browser"));
  } else if (data.evidence_cypher) {
    browser.append("Evidence Cypher (this server knows no Browser URL): ", el("code", {}, data.evidence_cypher));
  }
  $("result").hidden = false;
}

async function ask(question) {
  const status = $("status");
  status.className = "";
  status.textContent = "Asking…";
  const kb = $("kb").value.trim();
  const headers = { "Content-Type": "application/json" };
  const token = $("token").value || sessionStorage.getItem("strata-token");
  if (token) { headers.Authorization = `Bearer ${token}`; sessionStorage.setItem("strata-token", token); }
  try {
    const response = await fetch("/ask" + (kb ? `?kb=${encodeURIComponent(kb)}` : ""), {
      method: "POST", headers, body: JSON.stringify({ question, method: $("method").value.trim() || "auto" }),
    });
    const data = await response.json();
    if (!response.ok) throw new Error(typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail));
    show(data);
    status.textContent = "";
  } catch (err) {
    status.className = "error";
    status.textContent = `Error: ${err.message}`;
  }
}

$("ask-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const question = $("question").value.trim();
  const params = new URLSearchParams({ q: question });
  if ($("kb").value.trim()) params.set("kb", $("kb").value.trim());
  history.replaceState(null, "", `/?${params}`);
  ask(question);
});

// /?q=...&kb=... fills the form and asks at once, so an answer can be linked to.
const params = new URLSearchParams(location.search);
if (params.get("kb")) $("kb").value = params.get("kb");
if (params.get("q")) { $("question").value = params.get("q"); ask(params.get("q")); }
