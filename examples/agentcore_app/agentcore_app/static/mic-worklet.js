// The microphone's AudioWorklet: mono PCM16 at 16 kHz, posted to the page in 20 ms frames.
// The capture AudioContext runs at 16 kHz where the browser allows it (it then resamples the microphone
// itself); at any other rate this processor resamples linearly (speech recognition needs nothing finer).

const TARGET_RATE = 16000;
const FRAME_SAMPLES = 320; // 20 ms at 16 kHz

class MicCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / TARGET_RATE; // input samples per output sample
    this.position = 0; // where the next output sample falls, in input samples from this block's start
    this.previous = 0; // the last input sample of the previous block (position -1)
    this.frame = new Int16Array(FRAME_SAMPLES);
    this.filled = 0;
  }

  push(value) {
    const clamped = Math.max(-1, Math.min(1, value));
    this.frame[this.filled++] = clamped < 0 ? clamped * 32768 : clamped * 32767;
    if (this.filled === FRAME_SAMPLES) {
      this.port.postMessage(this.frame.buffer, [this.frame.buffer]);
      this.frame = new Int16Array(FRAME_SAMPLES);
      this.filled = 0;
    }
  }

  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (!channel) return true;
    if (this.step === 1) {
      for (let i = 0; i < channel.length; i++) this.push(channel[i]);
      return true;
    }
    while (this.position < channel.length) {
      const index = Math.floor(this.position);
      const fraction = this.position - index;
      const a = index === 0 && fraction < 0 ? this.previous : channel[Math.max(0, index)];
      const b = index + 1 < channel.length ? channel[index + 1] : channel[index];
      this.push(a + (b - a) * fraction);
      this.position += this.step;
    }
    this.position -= channel.length;
    this.previous = channel[channel.length - 1];
    return true;
  }
}

registerProcessor("mic-capture", MicCapture);
