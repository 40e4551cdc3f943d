// Talk: the page's side of a spoken call on `ws` (call.js carries its frames). The caller's words show as
// they are recognized; each answer is a Run fed by the call's events and binary audio; the answer is held
// while the caller may be barging in, and speaking over it silences it here at once (the app interrupts it
// and says what was heard). And the Talk / Hang up button.

import { Run } from "./answer.js";
import { CallClient } from "./call.js";
import { clearAnswerPanel, getAudio, readPayload, silenceCurrent } from "./controls.js";
import { $, clearError, conversation, page, setState, showError, stats } from "./page.js";
import { scheduleRender } from "./timeline.js";

export const hearing = { pendingPrompt: null, finalAt: null };

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
  page.run = new Run({ ...readPayload(), prompt }, { call: page.call, t0: hearing.finalAt || performance.now() });
  hearing.pendingPrompt = null;
  hearing.finalAt = null;
  showHearing("", false);
  setState("streaming", "Answering…");
}

function onCallEvent(event) {
  const live = page.run && !page.run.controller.signal.aborted;
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
      if (live && page.player) {
        page.player.pause();
        stats.pauses += 1;
        setState("paused", "Paused: listening to you…");
      }
      break;
    case "speech_resumed":
      if (page.player) page.player.resume();
      if (live) setState(page.run.streamDone ? "playing" : "streaming", "Going on…");
      break;
    case "transcript":
      showHearing(event.text || "", Boolean(event.final));
      // A backchannel or a noise over the answer ("counts": false) is no question: the answer goes on.
      if (event.final && event.counts === false) showHearing("", false);
      else if (event.final) {
        stats.transcripts.push(event.text || "");
        hearing.pendingPrompt = (event.text || "").trim() || null;
        hearing.finalAt = performance.now();
        if (!hearing.pendingPrompt) showHearing("", false);
      }
      break;
    case "agent_start":
      beginCallAnswer();
      page.run.handle(event);
      break;
    case "interrupted":
      if (page.run && !live) page.run.heardFromApp(event);
      else if (page.run) {
        // The app decided: a barge-in. Drop what is queued, then keep the app's account of what was heard.
        page.run.stop({ interrupt: false, bargeIn: true });
        page.run.heardFromApp(event);
      }
      break;
    case "agent_end":
      if (live) {
        page.run.handle(event);
        page.run.endOfStream();
      }
      break;
    default:
      if (live) page.run.handle(event);
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

export async function talk() {
  if (page.call) {
    page.call.close();
    page.call = null;
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
    onAudio: (bytes) => page.run && page.run.onBinary(bytes),
    onClosed: (code) => {
      if (page.call !== client) return;
      page.call = null;
      setTalking(false);
      showHearing("", false);
      if (code !== 1000) showError(`The call ended unexpectedly (WebSocket close ${code}).`);
      setState("idle", "Call ended.");
    },
  });
  page.call = client;
  window.voiceCall = client;
  setTalking(true);
  setState("connecting", "Opening the microphone…");
  try {
    await client.open(conversation.sessionId, start);
  } catch (error) {
    client.close();
    if (page.call === client) page.call = null;
    setTalking(false);
    stats.errors.push({ code: "microphone", message: error.message });
    showError(error.message);
    setState("error", "No call: type instead.");
  }
}
