// One answer (a Run): fetched from `invocations` as Server-Sent Events, or fed by a call's events and
// audio; its text shown as it streams, its turn settled with what was heard, stopped on Stop or a
// barge-in. Its audio half is in answer_audio.js.

import { AnswerAudio } from "./answer_audio.js";
import { SAMPLE_RATE } from "./decoders.js";
import { WordHighlighter } from "./highlight.js";
import {
  $, addTurn, conversation, fmtMs, page, SESSION_HEADER, setState, settleTurn, showError, stats, updateDoneTimes,
} from "./page.js";
import { safeJson, SSEParser } from "./sse.js";
import { scheduleRender } from "./timeline.js";

/** Barge in on the session's answer at the app (the Stop button): the agent stops and remembers what was heard. */
function sendInterrupt(sessionId, requestId) {
  // The request id (from agent_start), when known, keeps a late Stop off the session's NEXT answer.
  const body = requestId ? { action: "interrupt", request_id: requestId } : { action: "interrupt" };
  fetch("invocations", {
    method: "POST",
    headers: { "Content-Type": "application/json", [SESSION_HEADER]: sessionId },
    body: JSON.stringify(body),
    keepalive: true,
  }).catch(() => {}); // best effort: closing the stream below also interrupts the answer
}

// A sentence replayed from its start (`sentence_restart`: the TTS endpoint could not resume it at the
// sample where its connection dropped): the audio already given for it is void. What of it is still
// queued or playing is silenced and the replay takes its place; what already played cannot be unheard.

export function dropVoidPartial(current, event) {
  const index = Number.isInteger(event.sentence) ? event.sentence : 0;
  const unplayed = page.player ? page.player.dropSentence(index) : 0;
  stats.restarts = (stats.restarts || 0) + 1;
  stats.audioSecondsScheduled -= unplayed;
  const s = current.sentence(index);
  s.seconds = 0;
  s.playStart = null;
  s.playEnd = null;
}

export class Run extends AnswerAudio {
  /** One answer: fetched from `invocations` (start()), or fed by the call (`call`: its events and audio). */
  constructor(payload, { call = null, t0 = performance.now() } = {}) {
    super();
    this.payload = payload;
    this.call = call;
    this.sessionId = conversation.sessionId;
    this.turn = addTurn(payload.prompt);
    this.controller = new AbortController();
    this.t0 = t0;
    this.nextSentence = 0; // a call's binary audio belongs to this sentence (the one after the last complete)
    this.streamDone = false;
    this.finished = false;
    this.sawAgentEnd = false;
    this.format = payload.format;
    this.sampleRate = SAMPLE_RATE;
    this.decoder = null;
    this.audioQueue = Promise.resolve();
    this.speechFailed = false;
    this.text = "";
    this.deltas = []; // {t, start, end}: arrival time and character range in this.text
    this.sentences = new Map(); // index -> {text, textStart, textEnd, audioFirst, audioLast, playStart, playEnd, seconds}
    this.textDoneMs = null;
    this.audioDoneMs = null;
    this.searchFrom = 0;
    this.highlighter = new WordHighlighter($("answer"), () => page.audioContext.currentTime, stats);
  }

  async start() {
    stats.requests += 1;
    setState("connecting", "Connecting to the agent…");
    let response;
    try {
      response = await fetch("invocations", {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          Accept: "text/event-stream",
          [SESSION_HEADER]: this.sessionId,
        },
        body: JSON.stringify(this.payload),
        signal: this.controller.signal,
      });
    } catch (error) {
      if (this.controller.signal.aborted) return;
      this.fail("Cannot reach the agent: is the app running? (the request to invocations failed)");
      return;
    }
    if (!response.ok) {
      this.fail(await describeHttpError(response));
      return;
    }
    const type = response.headers.get("Content-Type") || "";
    if (!type.includes("text/event-stream")) {
      // The runtime answers a non-streaming result as one JSON object.
      const body = await response.text().catch(() => "");
      const parsed = safeJson(body);
      if (parsed && parsed.type) this.handle(parsed);
      else this.fail("The agent did not stream an answer.");
      this.endOfStream();
      return;
    }
    setState("streaming", "Streaming the answer…");
    const reader = response.body.getReader();
    const parser = new SSEParser();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const event of parser.feed(value)) this.dispatch(event);
      }
      for (const event of parser.flush()) this.dispatch(event);
    } catch (error) {
      if (this.controller.signal.aborted) return;
      showError("The connection to the agent dropped before the answer finished.");
      stats.errors.push({ code: "stream_dropped" });
    }
    this.endOfStream();
  }

  /** The app's own account of what was heard (a call's `interrupted` after a local stop): it is what
   * the agent remembers, so the turn shows it. */
  heardFromApp(event) {
    if (["stopped", "interrupted", "speaking"].includes(this.turn.state)) {
      this.turn.state = "speaking";
      settleTurn(this.turn, this.turn.stoppedHere ? "stopped" : "interrupted", event.heard_text || "");
    }
  }

  dispatch(sse) {
    if (this.controller.signal.aborted) return;
    const event = safeJson(sse.data);
    if (!event || typeof event.type !== "string") {
      stats.errors.push({ code: "bad_event" });
      return;
    }
    this.handle(event);
  }

  handle(event) {
    stats.events += 1;
    const t = this.now();
    switch (event.type) {
      case "agent_start":
        this.requestId = event.request_id || null;
        break;
      case "interrupted":
        settleTurn(this.turn, "interrupted", event.heard_text || "");
        break;
      case "text_delta":
        this.onText(event.text || "", t);
        break;
      case "audio_start":
        this.format = event.format || this.format;
        this.sampleRate = event.sample_rate || SAMPLE_RATE;
        stats.format = this.format;
        break;
      case "audio_chunk":
        this.onAudio(event, t);
        break;
      case "sentence_complete":
        this.onSentence(event);
        break;
      case "sentence_restart":
        dropVoidPartial(this, event);
        break;
      case "words":
        this.highlighter.addWords(Number.isInteger(event.sentence) ? event.sentence : 0, event.words);
        break;
      case "audio_end":
        stats.audioEndSeconds = event.duration_s ?? null;
        this.finishAudio();
        break;
      case "agent_end":
        this.sawAgentEnd = true;
        stats.agentTtfaMs = event.ttfa_ms ?? null;
        $("agent-ttfa").textContent = fmtMs(stats.agentTtfaMs);
        break;
      case "error":
        stats.errors.push({ code: event.code, message: event.message });
        showError(`${event.message || "Something went wrong."}${event.code ? ` (${event.code})` : ""}`);
        if (this.text && !this.keptNoteShown) {
          this.keptNoteShown = true;
          showError("The text is kept below.");
        }
        break;
      default:
        break; // unknown events are ignored (forward compatible)
    }
    scheduleRender();
  }

  onText(text, t) {
    if (!text) return;
    stats.textDeltas += 1;
    const start = this.text.length;
    this.text += text;
    this.deltas.push({ t, start, end: this.text.length });
    this.textDoneMs = t;
    $("answer").append(document.createTextNode(text));
  }

  onSentence(event) {
    const index = Number.isInteger(event.sentence) ? event.sentence : this.sentences.size;
    this.nextSentence = index + 1;
    const s = this.sentence(index);
    s.text = event.text || "";
    stats.sentences = Math.max(stats.sentences, index + 1);
    const span = locateSentence(this.text, s.text, this.searchFrom);
    if (span) {
      this.searchFrom = span.end;
      s.textStart = this.deltaTimeAt(span.start);
      s.textEnd = this.deltaTimeAt(Math.max(span.start, span.end - 1));
    }
  }

  deltaTimeAt(offset) {
    for (const d of this.deltas) if (offset < d.end) return d.t;
    return this.deltas.length ? this.deltas[this.deltas.length - 1].t : null;
  }

  endOfStream() {
    if (this.controller.signal.aborted) return;
    this.streamDone = true;
    this.finishAudio();
    if (!this.sawAgentEnd && !stats.errors.length) {
      showError("The answer ended early: the agent closed the stream without finishing.");
      stats.errors.push({ code: "incomplete" });
    }
    this.maybeFinish();
  }

  maybeFinish() {
    if (this.finished || !this.streamDone || this.controller.signal.aborted) return;
    if (this.pendingDecode || page.player.playing) {
      setState("playing", "Playing the rest of the answer…");
      return;
    }
    this.finished = true;
    settleTurn(this.turn, "done", this.text.trim());
    stats.completed += 1;
    const failed = stats.errors.length > 0;
    if (failed && !this.text) setState("error", "The request failed.");
    else setState("done", failed ? "Done, with problems (see above)." : "Done.");
    updateDoneTimes(this);
    scheduleRender();
  }

  fail(message) {
    settleTurn(this.turn, "failed", this.text);
    stats.errors.push({ code: "request_failed", message });
    showError(message);
    this.streamDone = true;
    this.finished = true;
    setState("error", "The request failed.");
  }

  /**
   * Stop button / barge-in: tell the app to interrupt the answer (``interrupt``: false when a new
   * question follows, which barges in by itself), abort the request and silence playback.
   */
  stop({ interrupt = true, bargeIn = false } = {}) {
    if (this.controller.signal.aborted) return;
    if (interrupt && this.call) this.call.send({ type: "interrupt" });
    else if (interrupt) sendInterrupt(this.sessionId, this.requestId);
    this.turn.stoppedHere = !bargeIn;
    // The heard part, measured here before playback stops (the text that arrived ran ahead of it).
    settleTurn(this.turn, bargeIn ? "interrupted" : "stopped", this.heardText());
    this.controller.abort();
    page.player.stop();
    this.highlighter.clear();
    this.finished = true;
    stats.stopped += 1;
    setState("stopped", "Stopped.");
    updateDoneTimes(this);
    scheduleRender();
  }
}

async function describeHttpError(response) {
  const body = await response.text().catch(() => "");
  const parsed = safeJson(body);
  const message = parsed && typeof parsed === "object" && (parsed.message || parsed.error);
  if (response.status === 400 || response.status === 422) {
    return `The agent refused the request: ${typeof message === "string" ? message : "bad input"}.`;
  }
  const detail = typeof message === "string" ? `: ${message}` : "";
  return `The agent answered HTTP ${response.status}${detail}.`;
}

/** Finds `sentence` (cleaned for speech, so Markdown and emoji may be gone) in the raw text. */
export function locateSentence(raw, sentence, from = 0) {
  const norm = [];
  const where = [];
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i].toLowerCase();
    if (/[\p{L}\p{N}]/u.test(c)) {
      norm.push(c);
      where.push(i);
    }
  }
  const target = sentence.toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");
  if (!target) return null;
  const haystack = norm.join("");
  let startN = where.findIndex((i) => i >= from);
  if (startN === -1) startN = haystack.length;
  let at = haystack.indexOf(target, startN);
  let endN = at === -1 ? -1 : at + target.length;
  if (at === -1) {
    // Cleaning may have changed the middle: anchor on the first and last few characters.
    const head = target.slice(0, 12);
    const tail = target.slice(-12);
    at = haystack.indexOf(head, startN);
    const tailAt = at === -1 ? -1 : haystack.indexOf(tail, at);
    if (at === -1 || tailAt === -1) return null;
    endN = tailAt + tail.length;
  }
  return { start: where[at], end: where[endN - 1] + 1 };
}
