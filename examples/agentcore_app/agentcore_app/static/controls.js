// What the page's controls share: the audio context (opened on a click), the form's payload, and
// silencing the answer playing and clearing its panel for the next one.

import { SAMPLE_RATE } from "./decoders.js";
import { Player } from "./player.js";
import { $, page, resetStats, stats } from "./page.js";
import { scheduleRender } from "./timeline.js";

export function getAudio() {
  if (!page.audioContext) {
    try {
      page.audioContext = new AudioContext({ sampleRate: SAMPLE_RATE, latencyHint: "interactive" });
    } catch {
      page.audioContext = new AudioContext({ latencyHint: "interactive" });
    }
    page.player = new Player(page.audioContext, stats, onPlaybackIdle);
  }
  // Called from the click handler: a user gesture, so the context may start.
  page.audioContext.resume().catch(() => {});
  return page.audioContext;
}

function onPlaybackIdle() {
  if (page.run) page.run.maybeFinish();
  scheduleRender();
}

export function readPayload() {
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

/** A new question barges in: the answer playing is silenced here (the app interrupts it itself). */
export function silenceCurrent() {
  if (page.run && !page.run.finished) page.run.stop({ interrupt: false });
  else if (page.player) page.player.stop();
  if (page.run) page.run.highlighter.clear();
}

export function clearAnswerPanel() {
  resetStats();
  $("answer").replaceChildren();
  for (const id of ["ttfa", "heard", "agent-ttfa", "done-times"]) $(id).textContent = "–";
  $("chunks").textContent = "0";
  $("audio-seconds").textContent = "0.0 s";
}
