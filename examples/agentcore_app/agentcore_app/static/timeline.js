// The timeline under the answer: per sentence, when its text arrived, when its audio arrived and when it
// played, as an SVG chart and a table; redrawn at most once a frame.

import { $, fmtMs, page, stats } from "./page.js";

const TIMELINE_WIDTH = 880;

// Timeline: per sentence, a bar for text arrival and one for audio arrival (plus when it plays).

let renderPending = false;
export function scheduleRender() {
  if (renderPending) return;
  renderPending = true;
  requestAnimationFrame(() => {
    renderPending = false;
    renderTimeline();
  });
}

// Keep the "now" cursor moving while something is happening.
setInterval(() => {
  if (page.run && !page.run.finished) scheduleRender();
}, 200);

const SVG_NS = "http://www.w3.org/2000/svg";
function svg(tag, attrs, text) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

function renderTimeline() {
  const root = $("timeline");
  if (!page.run) return;
  const r = page.run;
  const rows = [...r.sentences.entries()].sort((a, b) => a[0] - b[0]);
  const label = 84;
  const right = 16;
  const top = 26;
  const rowH = 30;
  const height = top + 22 + rows.length * rowH + 20;
  const nowMs = r.finished ? 0 : r.now();
  let maxMs = Math.max(1000, nowMs, r.textDoneMs || 0, r.audioDoneMs || 0);
  for (const [, s] of rows) maxMs = Math.max(maxMs, s.playEnd || 0);
  const step = niceStep(maxMs);
  maxMs = Math.ceil(maxMs / step) * step;
  const plotW = TIMELINE_WIDTH - label - right;
  const x = (ms) => label + (Math.max(0, ms) / maxMs) * plotW;

  const parts = [];
  for (let ms = 0; ms <= maxMs + 1e-6; ms += step) {
    parts.push(svg("line", { x1: x(ms), x2: x(ms), y1: top - 6, y2: height - 14, class: "grid" }));
    parts.push(svg("text", { x: x(ms), y: top - 10, class: "axis", "text-anchor": "middle" },
      step < 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`));
  }
  // Row 0: every text delta as a tick.
  parts.push(svg("text", { x: 4, y: top + 13, class: "row-label" }, "text in"));
  for (const d of r.deltas) {
    parts.push(svg("rect", { x: x(d.t), y: top + 3, width: 1.5, height: 12, class: "tick" }));
  }
  rows.forEach(([index, s], n) => {
    const y = top + 22 + n * rowH;
    const group = svg("g", { class: "sentence", "data-sentence": index });
    group.append(svg("title", {}, s.text ? `Sentence ${index + 1}: ${s.text}` : `Sentence ${index + 1}`));
    group.append(svg("text", { x: 4, y: y + 16, class: "row-label" }, `sentence ${index + 1}`));
    if (s.textStart !== null) {
      group.append(svg("rect", { x: x(s.textStart), y: y + 2, width: Math.max(3, x(s.textEnd) - x(s.textStart)),
        height: 7, rx: 2, class: "bar text" }));
    }
    if (s.audioFirst !== null) {
      group.append(svg("rect", { x: x(s.audioFirst), y: y + 11, width: Math.max(3, x(s.audioLast) - x(s.audioFirst)),
        height: 7, rx: 2, class: "bar audio" }));
    }
    if (s.playStart !== null) {
      group.append(svg("rect", { x: x(s.playStart), y: y + 20, width: Math.max(2, x(s.playEnd) - x(s.playStart)),
        height: 4, rx: 1, class: "bar play" }));
    }
    parts.push(group);
  });
  if (stats.ttfaMs !== null) {
    const tx = x(stats.ttfaMs);
    parts.push(svg("line", { x1: tx, x2: tx, y1: top - 4, y2: height - 14, class: "ttfa" }));
    parts.push(svg("text", { x: tx, y: height - 2, class: "axis ttfa-label", "text-anchor": "middle" },
      `first audio ${fmtMs(stats.ttfaMs)}`));
  }
  if (!r.finished) {
    parts.push(svg("line", { x1: x(nowMs), x2: x(nowMs), y1: top - 4, y2: height - 14, class: "now" }));
  }
  root.setAttribute("viewBox", `0 0 ${TIMELINE_WIDTH} ${height}`);
  root.replaceChildren(...parts);
  renderTable(rows);
}

function niceStep(maxMs) {
  for (const step of [250, 500, 1000, 2000, 5000, 10000, 30000]) if (maxMs / step <= 10) return step;
  return 60000;
}

function renderTable(rows) {
  const span = (a, b) => (a === null ? "–" : `${Math.round(a)}–${Math.round(b)}`);
  const trs = rows.map(([index, s]) => {
    const tr = document.createElement("tr");
    for (const cell of [String(index + 1), s.text ?? "…", span(s.textStart, s.textEnd),
      span(s.audioFirst, s.audioLast), span(s.playStart, s.playEnd), s.seconds.toFixed(2)]) {
      const td = document.createElement("td");
      td.textContent = cell;
      tr.append(td);
    }
    return tr;
  });
  $("timeline-rows").replaceChildren(...trs);
  const spoken = rows.filter(([, s]) => s.audioFirst !== null).length;
  $("timeline-summary").textContent = rows.length
    ? `${rows.length} sentences, ${spoken} with audio; first audio after ${fmtMs(stats.ttfaMs)}.`
    : "No sentences yet.";
}
