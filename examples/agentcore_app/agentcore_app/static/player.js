// Audio out: the player that schedules decoded pieces back to back on Web Audio (gapless), holds and
// resumes them for a caller who may be barging in, and silences them; and where a piece first sounds.

// Start the very first buffer a little ahead of "now" so its first samples are not cut off.
const START_LEAD_S = 0.03;

/** Schedules AudioBufferSourceNodes back to back at max(currentTime, nextStart): gapless playback. */
export class Player {
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

// Seconds into `samples` of the first 10 ms window whose RMS is above -40 dBFS, or null (as
// strands_voice_tools.audio_analysis.first_audible_sample does on the server side).
export function firstAudibleOffset(samples, rate) {
  const window = Math.max(1, Math.round(rate * 0.01));
  const threshold = 10 ** (-40 / 10) * window;
  for (let start = 0; start + window <= samples.length; start += window) {
    let energy = 0;
    for (let i = start; i < start + window; i += 1) energy += samples[i] * samples[i];
    if (energy > threshold) return start / rate;
  }
  return null;
}
