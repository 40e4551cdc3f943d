// strands-voice browser page: POSTs a prompt to `invocations`, reads the Leg 3 Server-Sent Events from the
// fetch stream, shows the text as it streams and plays each audio_chunk as soon as it arrives (Web Audio).
// Talk opens a spoken call on `ws` (call.js): the microphone goes up, the caller's recognized words and
// the answers come back, their audio as binary frames played by the same player; speaking over an answer
// barges in. A stopped turn shows what was HEARD (played), not all the text that arrived.
// Plain ES modules, no build step (docs/browser.md lists them); this one wires the page's controls.
// State for tests and curious people: `window.voiceStats`.
// With "Highlight words" on, the payload asks for `words` events and the word being spoken is marked.

import { dropVoidPartial, locateSentence, Run } from "./answer.js";
import { clearAnswerPanel, getAudio, readPayload, silenceCurrent } from "./controls.js";
import { $, clearError, conversation, newSessionId, page, setState, showError, showSession, stats } from "./page.js";
import { SSEParser } from "./sse.js";
import { hearing, talk } from "./talk.js";

function newConversation() {
  if (page.call) talk(); // hang up: a call speaks in one conversation
  if (page.run && !page.run.finished) page.run.stop();
  conversation.sessionId = newSessionId();
  conversation.turns = [];
  $("turns").replaceChildren();
  showSession();
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
  if (page.call && page.call.connected) {
    // In a call, a typed turn goes up the call (the same conversation); the app barges in by itself.
    clearError();
    silenceCurrent();
    hearing.pendingPrompt = payload.prompt;
    hearing.finalAt = performance.now();
    page.call.send({ type: "prompt", prompt: payload.prompt });
    return;
  }
  silenceCurrent();
  getAudio();
  clearError();
  clearAnswerPanel();
  page.run = new Run(payload);
  const current = page.run;
  current.start().catch((error) => {
    // A bug in this page, not the network: say so instead of failing silently.
    if (!current.controller.signal.aborted) current.fail("The page hit an unexpected problem; see the console.");
    console.warn(error);
  });
}

function stop() {
  if (page.run && !page.run.finished) page.run.stop();
  else if (page.player && page.player.playing) {
    page.player.stop();
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

window.voicePage = {
  SSEParser, locateSentence, stop, newConversation, dropVoidPartial,
  get run() { return page.run; },
  get player() { return page.player; },
};
document.documentElement.dataset.ready = "true";
