// An answer's audio: its bytes decoded in order (pcm16 in the task it arrived in, the others through a
// queue), scheduled on the player sentence by sentence, timed for the page (first audio, first heard
// sound, when each sentence plays), and what of it has been heard so far.

import { base64ToBytes, createDecoder, Pcm16Decoder } from "./decoders.js";
import { firstAudibleOffset } from "./player.js";
import { $, fmtMs, page, setState, showError, stats } from "./page.js";
import { scheduleRender } from "./timeline.js";

/** The audio half of a Run (answer.js): the Run holds the fields these methods read. */
export class AnswerAudio {
  now() {
    return performance.now() - this.t0;
  }

  /** An AudioContext time as ms since Speak (the context's clock may have started later). */
  ctxToMs(ctxTime) {
    return this.now() + (ctxTime - page.audioContext.currentTime) * 1000;
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

  /** What has been PLAYED so far: the sentences heard in full, then the heard words of the one playing
   * (when word timings came), as the app's `interrupted.heard_text` is built. */
  heardText() {
    if (!page.audioContext) return "";
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
        this.decoder = createDecoder(this.format, page.audioContext, this.sampleRate);
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
      const { startAt, endAt } = page.player.schedule(samples, rate, index);
      stats.chunksScheduled += 1;
      stats.audioSecondsScheduled += samples.length / rate;
      if (stats.firstStartAt === null) {
        stats.firstStartAt = startAt;
        // Time to first audio: from Speak to the moment the first sample is due to play.
        stats.ttfaMs = this.now() + (startAt - page.audioContext.currentTime) * 1000;
        $("ttfa").textContent = fmtMs(stats.ttfaMs);
      }
      if (stats.heardMs === null) {
        // Time to first HEARD sound: when the first 10 ms window above -40 dBFS is due to play.
        const offset = firstAudibleOffset(samples, rate);
        if (offset !== null) {
          stats.heardMs = this.now() + (startAt + offset - page.audioContext.currentTime) * 1000;
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
}
