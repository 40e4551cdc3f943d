// The page: its elements, the numbers it shows (`window.voiceStats`), what is live now (the audio, the
// answer, the call), the conversation and its turns, and the status and error lines.

export const $ = (id) => document.getElementById(id);

export const stats = {
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


/** What is live now: the audio context and its player, the current answer (a Run), the call. */
export const page = { audioContext: null, player: null, run: null, call: null };

// The conversation: one AgentCore session id for the page's life (until "New conversation")

/** The header that names the conversation (the AgentCore Runtime's session id). */
export const SESSION_HEADER = "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id";

export function newSessionId() {
  // 36 characters: within AgentCore's 33-256 and the app's [A-Za-z0-9._-] rule.
  return crypto.randomUUID ? crypto.randomUUID() : `page-${Date.now()}-${Math.random().toString(36).slice(2, 14)}`;
}

export const conversation = { sessionId: newSessionId(), turns: [] };
window.voiceConversation = conversation;

export function showSession() {
  $("session-id").textContent = conversation.sessionId;
}

/** A new turn in the list: the question now, the answer as it ends. */
export function addTurn(prompt) {
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

export function settleTurn(turn, state, answer) {
  if (!turn || turn.state !== "speaking") return;
  turn.state = state;
  turn.answer = answer;
  turn.item.dataset.state = state;
  turn.item.querySelector(".agent").textContent = answer || "(nothing heard)";
}

export function resetStats() {
  Object.assign(stats, {
    events: 0, textDeltas: 0, chunksReceived: 0, chunksScheduled: 0, bytesReceived: 0,
    audioSecondsScheduled: 0, underruns: 0, maxUnderrunMs: 0, ttfaMs: null, heardMs: null, agentTtfaMs: null,
    sentences: 0, audioEndSeconds: null, format: null, firstStartAt: null, lastEndAt: null, errors: [],
    wordsReceived: 0, wordsHighlighted: [], highlightNow: null,
  });
}

export function setState(state, message) {
  stats.state = state;
  const status = $("status");
  status.dataset.state = state;
  status.textContent = message;
  const busy = ["connecting", "streaming", "playing", "paused"].includes(state);
  if (!busy && page.call && page.call.connected && state === "done") {
    status.textContent = `${message} Listening: speak any time.`;
  }
  $("stop").disabled = !busy;
  document.body.classList.toggle("busy", busy);
}

export function showError(message) {
  const box = $("error");
  const line = document.createElement("p");
  line.textContent = message; // never innerHTML: messages come from the network
  box.append(line);
  box.hidden = false;
}

export function clearError() {
  $("error").replaceChildren();
  $("error").hidden = true;
}

export function fmtMs(ms) {
  if (ms === null || ms === undefined) return "–";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

export function updateDoneTimes(r) {
  $("done-times").textContent = `${fmtMs(r.textDoneMs)} / ${fmtMs(r.audioDoneMs)}`;
}
