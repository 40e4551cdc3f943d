// strands-voice browser page: POSTs a prompt to `invocations`, reads the Leg 3 Server-Sent Events from the
// fetch stream, shows the text as it streams and plays each audio_chunk as soon as it arrives (Web Audio).
// Talk opens a spoken call on `ws` (call.js): the microphone goes up, the caller's recognized words and
// the answers come back, their audio as binary frames played by the same player; speaking over an answer
// barges in. A stopped turn shows what was HEARD (played), not all the text that arrived.
// Plain ES module, no build step. State for tests and curious people: `window.voiceStats`.
// With "Highlight words" on, the payload asks for `words` events and the word being spoken is marked.

import { WordHighlighter } from "./highlight.js";
import { CallClient } from "./call.js";

const SAMPLE_RATE = 24000;
// Start the very first buffer a little ahead of "now" so its first samples are not cut off.
const START_LEAD_S = 0.03;
// Compressed formats are re-decoded as they grow; the last few ms of a partial decode can still change
// (resampler and codec look-ahead), so they are held back until more audio or the end arrives.
const DECODE_GUARD_S = 0.02;
const TIMELINE_WIDTH = 880;

// ---------------------------------------------------------------------------------------------------
// SSE: buffer bytes and split on the blank line. Transport chunks are not events.

/** Incremental Server-Sent Events parser over raw bytes (UTF-8 characters may straddle chunks). */
export class SSEParser {
  constructor() {
    this.decoder = new TextDecoder("utf-8");
    this.buffer = "";
    this.pendingCR = false;
  }

  /** Feed one transport chunk (Uint8Array); returns the events it completed. */
  feed(bytes) {
    return this.push(this.decoder.decode(bytes, { stream: true }));
  }

  /** The stream ended: returns a last event not followed by a blank line, if any. */
  flush() {
    const events = this.push(this.decoder.decode());
    if (this.pendingCR) {
      this.pendingCR = false;
      this.buffer += "\n";
    }
    const rest = this.buffer;
    this.buffer = "";
    const event = rest.trim() ? parseBlock(rest) : null;
    return event ? [...events, event] : events;
  }

  push(text) {
    if (this.pendingCR) text = "\r" + text;
    // A chunk may end between "\r" and "\n": keep a trailing CR until the next chunk says which it was.
    this.pendingCR = text.endsWith("\r");
    if (this.pendingCR) text = text.slice(0, -1);
    this.buffer += text.replace(/\r\n?/g, "\n");
    const events = [];
    let end;
    while ((end = this.buffer.indexOf("\n\n")) !== -1) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event = parseBlock(block);
      if (event) events.push(event);
    }
    return events;
  }
}

function parseBlock(block) {
  const data = [];
  let event = "message";
  let id = null;
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue; // comment / keep-alive
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
    else if (field === "id") id = value;
  }
  return data.length ? { event, id, data: data.join("\n") } : null;
}

// ---------------------------------------------------------------------------------------------------
// Audio: decoders turn audio_chunk bytes into Float32 samples; the player schedules them back to back.

function base64ToBytes(text) {
  if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function concatBytes(a, b) {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** pcm16 (signed 16-bit little-endian mono): synchronous; an odd trailing byte waits for the next chunk. */
class Pcm16Decoder {
  constructor(sampleRate) {
    this.sampleRate = sampleRate;
    this.carry = new Uint8Array(0);
  }

  async push(bytes) {
    return this.pushSync(bytes);
  }

  pushSync(bytes) {
    if (this.carry.length) bytes = concatBytes(this.carry, bytes);
    const usable = bytes.length - (bytes.length % 2);
    this.carry = bytes.slice(usable);
    if (!usable) return [];
    const view = new DataView(bytes.buffer, bytes.byteOffset, usable);
    const samples = new Float32Array(usable / 2);
    for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(i * 2, true) / 32768;
    return [samples];
  }

  async finish() {
    return [];
  }
}

/** wav: one RIFF header in the first chunk(s), then plain pcm16. */
class WavDecoder {
  constructor() {
    this.header = new Uint8Array(0);
    this.pcm = null;
    this.sampleRate = SAMPLE_RATE;
  }

  async push(bytes) {
    if (this.pcm) return this.pcm.pushSync(bytes);
    this.header = concatBytes(this.header, bytes);
    const found = findWavData(this.header);
    if (!found) return [];
    this.sampleRate = found.sampleRate;
    this.pcm = new Pcm16Decoder(found.sampleRate);
    return this.pcm.pushSync(this.header.slice(found.dataOffset));
  }

  async finish() {
    if (!this.pcm && this.header.length) throw new Error("incomplete WAV header");
    return [];
  }
}

function findWavData(bytes) {
  const tag = (offset) => String.fromCharCode(...bytes.subarray(offset, offset + 4));
  if (bytes.length < 12) return null;
  if (tag(0) !== "RIFF" || tag(8) !== "WAVE") throw new Error("not a WAV stream");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let sampleRate = SAMPLE_RATE;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const id = tag(offset);
    const size = view.getUint32(offset + 4, true);
    if (id === "data") return { dataOffset: offset + 8, sampleRate };
    if (id === "fmt " && offset + 16 <= bytes.length) sampleRate = view.getUint32(offset + 12, true);
    offset += 8 + size + (size % 2);
  }
  return null;
}

function startsOggStream(bytes) {
  // An Ogg page ("OggS") whose header-type has the beginning-of-stream bit set.
  return bytes.length > 5 && bytes[0] === 0x4f && bytes[1] === 0x67 && bytes[2] === 0x67 && bytes[3] === 0x53
    && (bytes[5] & 0x02) !== 0;
}

/**
 * opus (Ogg), mp3 and aac (ADTS): decodeAudioData needs a decodable file, so the stream received so far
 * is decoded again on each chunk and only the samples not yet played are handed on. Every chunk is whole
 * Ogg pages or MP3/ADTS frames (PROTOCOL.md), and these codecs decode causally, so earlier samples do not
 * change.
 */
class CompressedDecoder {
  constructor(ctx, format) {
    this.ctx = ctx;
    this.format = format;
    this.sampleRate = ctx.sampleRate;
    this.reset();
  }

  reset() {
    this.bytes = new Uint8Array(0);
    this.emitted = 0;
  }

  async push(bytes) {
    const out = [];
    // A new Ogg stream (fresh headers) after audio: finish the old one; chained Ogg does not decode whole.
    if (this.format === "opus" && this.bytes.length && startsOggStream(bytes)) {
      out.push(...(await this.drain(true)));
      this.reset();
    }
    this.bytes = concatBytes(this.bytes, bytes);
    out.push(...(await this.drain(false)));
    return out;
  }

  async finish() {
    return this.drain(true);
  }

  async drain(final) {
    if (!this.bytes.length) return [];
    let decoded;
    try {
      // decodeAudioData detaches the buffer it is given: hand it a copy.
      decoded = await this.ctx.decodeAudioData(this.bytes.slice().buffer);
    } catch (error) {
      if (final) throw error;
      return []; // e.g. headers only so far: wait for more
    }
    const samples = decoded.getChannelData(0);
    const guard = final ? 0 : Math.round(DECODE_GUARD_S * decoded.sampleRate);
    const end = Math.max(this.emitted, samples.length - guard);
    if (end <= this.emitted) return [];
    const piece = samples.slice(this.emitted, end);
    this.emitted = end;
    return [piece];
  }
}

function createDecoder(format, ctx, sampleRate) {
  if (format === "pcm16") return new Pcm16Decoder(sampleRate);
  if (format === "wav") return new WavDecoder();
  if (format === "opus" || format === "mp3" || format === "aac") return new CompressedDecoder(ctx, format);
  throw new Error(`unsupported audio format ${format}`);
}

/** Schedules AudioBufferSourceNodes back to back at max(currentTime, nextStart): gapless playback. */
class Player {
  constructor(ctx, stats, onIdle) {
    this.ctx = ctx;
    this.stats = stats;
    this.onIdle = onIdle;
    this.sources = new Set();
    this.nextStart = 0;
    this.output = ctx.createGain();
    this.output.connect(ctx.destination);
  }

  /** Schedules one piece (of sentence `sentence`); returns its start and end in AudioContext seconds. */
  schedule(samples, sampleRate, sentence = null) {
    const ctx = this.ctx;
    const buffer = ctx.createBuffer(1, samples.length, sampleRate);
    buffer.copyToChannel(samples, 0);
    const source = ctx.createBufferSource();
    source.buffer = buffer;
    source.connect(this.output);
    const now = ctx.currentTime;
    let startAt = this.nextStart;
    if (this.sources.size === 0 || startAt < now) {
      // Nothing queued: start fresh. With audio already played this is an underrun (the stream ran dry).
      if (this.stats.chunksScheduled > 0 && startAt > 0) {
        this.stats.underruns += 1;
        this.stats.maxUnderrunMs = Math.max(this.stats.maxUnderrunMs, Math.round((now - startAt) * 1000));
      }
      startAt = Math.max(now + START_LEAD_S, startAt);
    }
    source.start(startAt);
    source.sentence = sentence;
    source.endAt = startAt + buffer.duration;
    this.nextStart = startAt + buffer.duration;
    this.sources.add(source);
    this.stats.activeSources = this.sources.size;
    source.onended = () => {
      this.sources.delete(source);
      source.disconnect();
      this.stats.activeSources = this.sources.size;
      if (!this.sources.size) this.onIdle();
    };
    return { startAt, endAt: this.nextStart };
  }

  /** Silences what is queued or playing of one sentence; the next piece takes its place. Returns the
   * seconds dropped that had not played yet. */
  dropSentence(sentence) {
    const now = this.ctx.currentTime;
    let unplayed = 0;
    for (const source of [...this.sources]) {
      if (source.sentence !== sentence) continue;
      unplayed += Math.min(source.buffer.duration, Math.max(0, source.endAt - now));
      source.onended = null;
      try {
        source.stop();
      } catch {
        // never started: nothing to stop
      }
      source.disconnect();
      this.sources.delete(source);
    }
    // Pieces are scheduled in order, so what remains ends before the dropped ones began.
    this.nextStart = Math.max(0, ...[...this.sources].map((source) => source.endAt));
    this.stats.activeSources = this.sources.size;
    return unplayed;
  }

  /** The caller may be barging in (`speech_paused`): hold playback at once, keeping what is queued. */
  pause() {
    if (this.ctx.state === "running") this.ctx.suspend().catch(() => {});
  }

  /** It was a backchannel or a noise (`speech_resumed`): play on from where playback stopped. */
  resume() {
    if (this.ctx.state === "suspended") this.ctx.resume().catch(() => {});
  }

  /** Barge-in: silence everything queued or playing, at once. */
  stop() {
    this.resume(); // a held answer that is dropped: the next one must be heard
    for (const source of this.sources) {
      source.onended = null;
      try {
        source.stop();
      } catch {
        // never started: nothing to stop
      }
      source.disconnect();
    }
    this.sources.clear();
    this.stats.activeSources = 0;
    this.nextStart = 0;
  }

  get playing() {
    return this.sources.size > 0;
  }
}

// ---------------------------------------------------------------------------------------------------
// Page state

const $ = (id) => document.getElementById(id);

const stats = {
  state: "idle", // idle | connecting | streaming | playing | paused | done | stopped | error
  requests: 0,
  events: 0,
  textDeltas: 0,
  chunksReceived: 0,
  chunksScheduled: 0,
  bytesReceived: 0,
  audioSecondsScheduled: 0,
  underruns: 0,
  maxUnderrunMs: 0,
  activeSources: 0,
  ttfaMs: null,
  heardMs: null,
  agentTtfaMs: null,
  sentences: 0,
  audioEndSeconds: null,
  format: null,
  firstStartAt: null,
  lastEndAt: null,
  errors: [],
  completed: 0,
  stopped: 0,
  wordsReceived: 0,
  wordsHighlighted: [],
  highlightNow: null,
  speechStarts: 0, // a call's speech_start events
  pauses: 0, // a call's speech_paused events (the caller's sound over an answer)
  transcripts: [], // a call's final transcripts
  callSessionId: null,
};
window.voiceStats = stats;

let audioContext = null;
let player = null;
let run = null; // the current request

// ---------------------------------------------------------------------------------------------------
// The conversation: one AgentCore session id for the page's life (until "New conversation")

/** The header that names the conversation (the AgentCore Runtime's session id). */
const SESSION_HEADER = "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id";

function newSessionId() {
  // 36 characters: within AgentCore's 33-256 and the app's [A-Za-z0-9._-] rule.
  return crypto.randomUUID ? crypto.randomUUID() : `page-${Date.now()}-${Math.random().toString(36).slice(2, 14)}`;
}

const conversation = { sessionId: newSessionId(), turns: [] };
window.voiceConversation = conversation;

function showSession() {
  $("session-id").textContent = conversation.sessionId;
}

/** A new turn in the list: the question now, the answer as it ends. */
function addTurn(prompt) {
  const item = document.createElement("li");
  item.dataset.state = "speaking";
  const you = document.createElement("p");
  you.className = "you";
  you.textContent = prompt;
  const agent = document.createElement("p");
  agent.className = "agent";
  agent.textContent = "…";
  item.append(you, agent);
  $("turns").append(item);
  const turn = { prompt, answer: "", state: "speaking", item };
  conversation.turns.push(turn);
  return turn;
}

function settleTurn(turn, state, answer) {
  if (!turn || turn.state !== "speaking") return;
  turn.state = state;
  turn.answer = answer;
  turn.item.dataset.state = state;
  turn.item.querySelector(".agent").textContent = answer || "(nothing heard)";
}

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

function newConversation() {
  if (call) talk(); // hang up: a call speaks in one conversation
  if (run && !run.finished) run.stop();
  conversation.sessionId = newSessionId();
  conversation.turns = [];
  $("turns").replaceChildren();
  showSession();
}

function getAudio() {
  if (!audioContext) {
    try {
      audioContext = new AudioContext({ sampleRate: SAMPLE_RATE, latencyHint: "interactive" });
    } catch {
      audioContext = new AudioContext({ latencyHint: "interactive" });
    }
    player = new Player(audioContext, stats, onPlaybackIdle);
  }
  // Called from the click handler: a user gesture, so the context may start.
  audioContext.resume().catch(() => {});
  return audioContext;
}

// Seconds into `samples` of the first 10 ms window whose RMS is above -40 dBFS, or null (as
// strands_voice_tools.audio_analysis.first_audible_sample does on the server side).
function firstAudibleOffset(samples, rate) {
  const window = Math.max(1, Math.round(rate * 0.01));
  const threshold = 10 ** (-40 / 10) * window;
  for (let start = 0; start + window <= samples.length; start += window) {
    let energy = 0;
    for (let i = start; i < start + window; i += 1) energy += samples[i] * samples[i];
    if (energy > threshold) return start / rate;
  }
  return null;
}

function resetStats() {
  Object.assign(stats, {
    events: 0, textDeltas: 0, chunksReceived: 0, chunksScheduled: 0, bytesReceived: 0,
    audioSecondsScheduled: 0, underruns: 0, maxUnderrunMs: 0, ttfaMs: null, heardMs: null, agentTtfaMs: null,
    sentences: 0, audioEndSeconds: null, format: null, firstStartAt: null, lastEndAt: null, errors: [],
    wordsReceived: 0, wordsHighlighted: [], highlightNow: null,
  });
}

function setState(state, message) {
  stats.state = state;
  const status = $("status");
  status.dataset.state = state;
  status.textContent = message;
  const busy = ["connecting", "streaming", "playing", "paused"].includes(state);
  if (!busy && call && call.connected && state === "done") {
    status.textContent = `${message} Listening: speak any time.`;
  }
  $("stop").disabled = !busy;
  document.body.classList.toggle("busy", busy);
}

function showError(message) {
  const box = $("error");
  const line = document.createElement("p");
  line.textContent = message; // never innerHTML: messages come from the network
  box.append(line);
  box.hidden = false;
}

function clearError() {
  $("error").replaceChildren();
  $("error").hidden = true;
}

function fmtMs(ms) {
  if (ms === null || ms === undefined) return "–";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

// ---------------------------------------------------------------------------------------------------
// A sentence replayed from its start (`sentence_restart`: the TTS endpoint could not resume it at the
// sample where its connection dropped): the audio already given for it is void. What of it is still
// queued or playing is silenced and the replay takes its place; what already played cannot be unheard.

function dropVoidPartial(current, event) {
  const index = Number.isInteger(event.sentence) ? event.sentence : 0;
  const unplayed = player ? player.dropSentence(index) : 0;
  stats.restarts = (stats.restarts || 0) + 1;
  stats.audioSecondsScheduled -= unplayed;
  const s = current.sentence(index);
  s.seconds = 0;
  s.playStart = null;
  s.playEnd = null;
}

// ---------------------------------------------------------------------------------------------------
// One request

class Run {
  /** One answer: fetched from `invocations` (start()), or fed by the call (`call`: its events and audio). */
  constructor(payload, { call = null, t0 = performance.now() } = {}) {
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
    this.highlighter = new WordHighlighter($("answer"), () => audioContext.currentTime, stats);
  }

  now() {
    return performance.now() - this.t0;
  }

  /** An AudioContext time as ms since Speak (the context's clock may have started later). */
  ctxToMs(ctxTime) {
    return this.now() + (ctxTime - audioContext.currentTime) * 1000;
  }

  sentence(index) {
    let s = this.sentences.get(index);
    if (!s) {
      s = { text: null, textStart: null, textEnd: null, audioFirst: null, audioLast: null,
            playStart: null, playEnd: null, seconds: 0 };
      this.sentences.set(index, s);
    }
    return s;
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

  /** What has been PLAYED so far: the sentences heard in full, then the heard words of the one playing
   * (when word timings came), as the app's `interrupted.heard_text` is built. */
  heardText() {
    if (!audioContext) return "";
    const now = this.now();
    const pieces = [];
    for (const [index, s] of [...this.sentences.entries()].sort((a, b) => a[0] - b[0])) {
      if (s.playStart === null || s.playStart > now) break;
      if (s.text !== null && s.playEnd !== null && s.playEnd <= now) {
        pieces.push(s.text);
        continue;
      }
      const words = (this.highlighter.sentences.get(index) || { words: [] }).words;
      const heardS = (now - s.playStart) / 1000;
      for (const w of words) if (w.end_s <= heardS) pieces.push(w.word);
      break;
    }
    return pieces.map((piece) => piece.trim()).filter(Boolean).join(" ");
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

  onAudio(event, t) {
    const index = Number.isInteger(event.sentence) ? event.sentence : 0;
    this.onAudioBytes(base64ToBytes(event.data || ""), index, t);
  }

  /** A call's binary frame: the audio of the sentence after the last `sentence_complete`. */
  onBinary(bytes) {
    if (this.controller.signal.aborted) return;
    this.onAudioBytes(bytes, this.nextSentence, this.now());
    scheduleRender();
  }

  onAudioBytes(bytes, index, t) {
    stats.chunksReceived += 1;
    stats.bytesReceived += bytes.length;
    const s = this.sentence(index);
    if (s.audioFirst === null) s.audioFirst = t;
    s.audioLast = t;
    this.audioDoneMs = t;
    if (this.speechFailed) return;
    if (!this.decoder) {
      try {
        this.decoder = createDecoder(this.format, audioContext, this.sampleRate);
      } catch (error) {
        this.speechFail(`This page cannot play ${this.format} audio; the text is kept.`);
        return;
      }
    }
    if (this.decoder instanceof Pcm16Decoder && !this.pendingDecode) {
      // Fast path: pcm16 is scheduled in the same task it arrived in.
      this.play(this.decoder.pushSync(bytes), index);
      return;
    }
    this.enqueueDecode(() => this.decoder.push(bytes), index);
  }

  enqueueDecode(step, index) {
    this.pendingDecode = true;
    const job = this.audioQueue.then(async () => {
      if (this.controller.signal.aborted || this.speechFailed) return;
      let pieces;
      try {
        pieces = await step();
      } catch (error) {
        this.speechFail(`The browser could not decode the ${this.format} audio; the text is kept.`);
        return;
      }
      if (!this.controller.signal.aborted) this.play(pieces, index);
    });
    this.audioQueue = job;
    job.then(() => {
      if (this.audioQueue === job) {
        this.pendingDecode = false;
        this.maybeFinish();
      }
    });
  }

  finishAudio() {
    if (!this.decoder || this.speechFailed || this.finishedAudio) return;
    this.finishedAudio = true;
    const last = this.lastSentence ?? 0;
    this.enqueueDecode(() => this.decoder.finish(), last);
  }

  play(pieces, index) {
    if (this.controller.signal.aborted) return;
    this.lastSentence = index;
    const s = this.sentence(index);
    const rate = this.decoder.sampleRate || this.sampleRate;
    for (const samples of pieces) {
      if (!samples.length) continue;
      const { startAt, endAt } = player.schedule(samples, rate, index);
      stats.chunksScheduled += 1;
      stats.audioSecondsScheduled += samples.length / rate;
      if (stats.firstStartAt === null) {
        stats.firstStartAt = startAt;
        // Time to first audio: from Speak to the moment the first sample is due to play.
        stats.ttfaMs = this.now() + (startAt - audioContext.currentTime) * 1000;
        $("ttfa").textContent = fmtMs(stats.ttfaMs);
      }
      if (stats.heardMs === null) {
        // Time to first HEARD sound: when the first 10 ms window above -40 dBFS is due to play.
        const offset = firstAudibleOffset(samples, rate);
        if (offset !== null) {
          stats.heardMs = this.now() + (startAt + offset - audioContext.currentTime) * 1000;
          $("heard").textContent = fmtMs(stats.heardMs);
        }
      }
      stats.lastEndAt = endAt;
      if (s.playStart === null) {
        s.playStart = this.ctxToMs(startAt);
        this.highlighter.sentenceStarts(index, startAt);
      }
      s.playEnd = this.ctxToMs(endAt);
      s.seconds += samples.length / rate;
      if (this.streamDone) continue;
      setState("streaming", "Speaking while the answer streams…");
    }
    $("chunks").textContent = String(stats.chunksScheduled);
    $("audio-seconds").textContent = `${stats.audioSecondsScheduled.toFixed(1)} s`;
  }

  speechFail(message) {
    if (this.speechFailed) return;
    this.speechFailed = true;
    stats.errors.push({ code: "playback", message });
    showError(message);
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
    if (this.pendingDecode || player.playing) {
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
    player.stop();
    this.highlighter.clear();
    this.finished = true;
    stats.stopped += 1;
    setState("stopped", "Stopped.");
    updateDoneTimes(this);
    scheduleRender();
  }
}

function onPlaybackIdle() {
  if (run) run.maybeFinish();
  scheduleRender();
}

function updateDoneTimes(r) {
  $("done-times").textContent = `${fmtMs(r.textDoneMs)} / ${fmtMs(r.audioDoneMs)}`;
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

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
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

// ---------------------------------------------------------------------------------------------------
// Timeline: per sentence, a bar for text arrival and one for audio arrival (plus when it plays).

let renderPending = false;
function scheduleRender() {
  if (renderPending) return;
  renderPending = true;
  requestAnimationFrame(() => {
    renderPending = false;
    renderTimeline();
  });
}

// Keep the "now" cursor moving while something is happening.
setInterval(() => {
  if (run && !run.finished) scheduleRender();
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
  if (!run) return;
  const r = run;
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

// ---------------------------------------------------------------------------------------------------
// Wiring

function readPayload() {
  const prompt = $("prompt").value.trim();
  const payload = { prompt, mode: $("mode").value, format: $("format").value };
  const voice = $("voice").value.trim();
  if (voice) payload.voice = voice;
  const lang = $("lang").value; // the voice's language and the call's ears
  if (lang) payload.lang = lang;
  const speed = Number($("speed").value);
  if ($("speed").value !== "" && speed !== 1) payload.speed = speed;
  if ($("timestamps").checked) payload.timestamps = true;
  return payload;
}

function speak(event) {
  event?.preventDefault();
  const payload = readPayload();
  if (!payload.prompt) {
    clearError();
    showError("Type a prompt first.");
    setState("error", "Nothing to say.");
    $("prompt").focus();
    return;
  }
  if (call && call.connected) {
    // In a call, a typed turn goes up the call (the same conversation); the app barges in by itself.
    clearError();
    silenceCurrent();
    hearing.pendingPrompt = payload.prompt;
    hearing.finalAt = performance.now();
    call.send({ type: "prompt", prompt: payload.prompt });
    return;
  }
  silenceCurrent();
  getAudio();
  clearError();
  clearAnswerPanel();
  run = new Run(payload);
  const current = run;
  current.start().catch((error) => {
    // A bug in this page, not the network: say so instead of failing silently.
    if (!current.controller.signal.aborted) current.fail("The page hit an unexpected problem; see the console.");
    console.warn(error);
  });
}

/** A new question barges in: the answer playing is silenced here (the app interrupts it itself). */
function silenceCurrent() {
  if (run && !run.finished) run.stop({ interrupt: false });
  else if (player) player.stop();
  if (run) run.highlighter.clear();
}

function clearAnswerPanel() {
  resetStats();
  $("answer").replaceChildren();
  for (const id of ["ttfa", "heard", "agent-ttfa", "done-times"]) $(id).textContent = "–";
  $("chunks").textContent = "0";
  $("audio-seconds").textContent = "0.0 s";
}

// ---------------------------------------------------------------------------------------------------
// Talk: a spoken call on `ws` (call.js). The caller's words show as they are recognized; each answer is
// a Run fed by the call's events and binary audio; speaking over an answer silences it here at once
// (the app interrupts it and says what was heard).

let call = null;
const hearing = { pendingPrompt: null, finalAt: null };

function showHearing(text, final) {
  const box = $("hearing");
  box.textContent = text;
  box.dataset.final = final ? "true" : "false";
  box.hidden = !text;
}

function beginCallAnswer() {
  silenceCurrent();
  clearAnswerPanel();
  const prompt = hearing.pendingPrompt || "…";
  run = new Run({ ...readPayload(), prompt }, { call, t0: hearing.finalAt || performance.now() });
  hearing.pendingPrompt = null;
  hearing.finalAt = null;
  showHearing("", false);
  setState("streaming", "Answering…");
}

function onCallEvent(event) {
  const live = run && !run.controller.signal.aborted;
  switch (event.type) {
    case "listening":
      stats.callSessionId = event.session_id || null;
      setState("listening", "Listening: speak any time.");
      break;
    case "speech_start":
      // Not yet a barge-in (v1.3): the app holds the answer first (speech_paused), then decides.
      stats.speechStarts += 1;
      showHearing("…", false);
      break;
    case "speech_paused":
      if (live && player) {
        player.pause();
        stats.pauses += 1;
        setState("paused", "Paused: listening to you…");
      }
      break;
    case "speech_resumed":
      if (player) player.resume();
      if (live) setState(run.streamDone ? "playing" : "streaming", "Going on…");
      break;
    case "transcript":
      showHearing(event.text || "", Boolean(event.final));
      if (event.final) {
        stats.transcripts.push(event.text || "");
        hearing.pendingPrompt = (event.text || "").trim() || null;
        hearing.finalAt = performance.now();
        if (!hearing.pendingPrompt) showHearing("", false);
      }
      break;
    case "agent_start":
      beginCallAnswer();
      run.handle(event);
      break;
    case "interrupted":
      if (run && !live) run.heardFromApp(event);
      else if (run) {
        // The app decided: a barge-in. Drop what is queued, then keep the app's account of what was heard.
        run.stop({ interrupt: false, bargeIn: true });
        run.heardFromApp(event);
      }
      break;
    case "agent_end":
      if (live) {
        run.handle(event);
        run.endOfStream();
      }
      break;
    default:
      if (live) run.handle(event);
      else if (event.type === "error") {
        stats.errors.push({ code: event.code, message: event.message });
        showError(`${event.message || "Something went wrong."}${event.code ? ` (${event.code})` : ""}`);
      }
  }
  scheduleRender();
}

function setTalking(on) {
  const button = $("talk");
  button.textContent = on ? "Hang up" : "Talk";
  button.setAttribute("aria-pressed", on ? "true" : "false");
  document.body.classList.toggle("in-call", on);
}

async function talk() {
  if (call) {
    call.close();
    call = null;
    setTalking(false);
    showHearing("", false);
    setState("idle", "Call ended.");
    return;
  }
  getAudio(); // the click is the gesture that lets playback start
  clearError();
  const { prompt: _unused, ...start } = readPayload();
  const client = new CallClient({
    onEvent: onCallEvent,
    onAudio: (bytes) => run && run.onBinary(bytes),
    onClosed: (code) => {
      if (call !== client) return;
      call = null;
      setTalking(false);
      showHearing("", false);
      if (code !== 1000) showError(`The call ended unexpectedly (WebSocket close ${code}).`);
      setState("idle", "Call ended.");
    },
  });
  call = client;
  window.voiceCall = client;
  setTalking(true);
  setState("connecting", "Opening the microphone…");
  try {
    await client.open(conversation.sessionId, start);
  } catch (error) {
    client.close();
    if (call === client) call = null;
    setTalking(false);
    stats.errors.push({ code: "microphone", message: error.message });
    showError(error.message);
    setState("error", "No call: type instead.");
  }
}

function stop() {
  if (run && !run.finished) run.stop();
  else if (player && player.playing) {
    player.stop();
    stats.stopped += 1;
    setState("stopped", "Stopped.");
  }
}

$("ask-form").addEventListener("submit", speak);
$("stop").addEventListener("click", stop);
$("talk").addEventListener("click", () => {
  talk().catch((error) => console.warn(error));
});
$("new-conversation").addEventListener("click", newConversation);
showSession();
$("prompt").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) speak(event);
});
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") stop();
});

window.voicePage = { SSEParser, locateSentence, stop, newConversation, dropVoidPartial, get run() { return run; }, get player() { return player; } };
document.documentElement.dataset.ready = "true";
