// A spoken call: the microphone up the app's WebSocket route (`ws`, Leg 3 over WebSocket), events and
// the answers' audio back. The microphone goes through an AudioWorklet (mic-worklet.js) as PCM16 16 kHz
// frames, sent as captured (silence included: the app finds the turns). Down come JSON text frames
// (events) and binary frames (the answer's audio, raw bytes of the call's format). The page decides
// what to show and play (talk.js, answer.js): this module only carries frames and says what went wrong, in words.

const CALL_RATE = 16000;
// At most this much audio from before the call started is kept for it (10 s of PCM16 at 16 kHz).
const EARLY_AUDIO_BYTES = CALL_RATE * 2 * 10;

/** What to tell a person whose microphone could not be opened. */
export function microphoneMessage(error) {
  const name = error && error.name;
  if (name === "NotAllowedError" || name === "SecurityError") {
    return "The microphone was refused. Allow it for this page in the browser's site settings, or type instead.";
  }
  if (name === "NotFoundError" || name === "OverconstrainedError") {
    return "No microphone was found. Connect one and press Talk again, or type instead.";
  }
  if (name === "NotReadableError" || name === "AbortError") {
    return "The microphone is busy or could not start (another app may be using it). Type instead, or try again.";
  }
  return "The microphone could not be opened. Type instead, or try again.";
}

/** The call's WebSocket URL, next to the page (`ws` beside `invocations`), with the session id. */
export function callUrl(sessionId, base = window.location.href) {
  const url = new URL("ws", base);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.searchParams.set("session_id", sessionId);
  return url.toString();
}

/** Where the call goes: a fresh presigned URL from the page's server when the page names a route for one
 * (`<meta name="call-url">`: `strands-voice demo --serve --runtime-arn`, a deployed runtime), fetched right
 * before each call so it never expires unused; else `ws` next to the page. */
export async function callTarget(sessionId, doc = document) {
  const meta = doc.querySelector('meta[name="call-url"]');
  if (!meta) return callUrl(sessionId);
  const response = await fetch(`${meta.content}?session_id=${encodeURIComponent(sessionId)}`, { cache: "no-store" });
  if (!response.ok) throw new Error(`Cannot open the call: no call URL from the page's server (HTTP ${response.status}).`);
  return (await response.json()).url;
}

export class CallClient {
  /**
   * @param {object} hooks onEvent(event), onAudio(Uint8Array), onClosed(reason)
   */
  constructor(hooks) {
    this.hooks = hooks;
    this.socket = null;
    this.stream = null;
    this.context = null;
    this.node = null;
    this.listening = false;
    this.started = false;
    this.early = []; // what the microphone caught before `start` went out (the caller's first words)
    this.earlyBytes = 0;
    this.closed = false;
    this.framesSent = 0;
    this.bytesReceived = 0;
  }

  /** Opens the microphone, then the call. Throws an Error whose message is for a person. */
  async open(sessionId, start) {
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      throw new Error("This page cannot use a microphone here: it needs https (or localhost). Type instead.");
    }
    try {
      this.stream = await navigator.mediaDevices.getUserMedia({
        audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true, channelCount: 1 },
      });
    } catch (error) {
      throw new Error(microphoneMessage(error));
    }
    await this.startCapture();
    await this.connect(sessionId, start);
  }

  async startCapture() {
    try {
      this.context = new AudioContext({ sampleRate: CALL_RATE, latencyHint: "interactive" });
    } catch {
      this.context = new AudioContext({ latencyHint: "interactive" }); // the worklet resamples
    }
    await this.context.audioWorklet.addModule(new URL("./mic-worklet.js", import.meta.url));
    const source = this.context.createMediaStreamSource(this.stream);
    this.node = new AudioWorkletNode(this.context, "mic-capture", { numberOfInputs: 1, numberOfOutputs: 0 });
    this.node.port.onmessage = (message) => this.sendAudio(message.data);
    source.connect(this.node);
    await this.context.resume();
  }

  async connect(sessionId, start) {
    const url = await callTarget(sessionId);
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.binaryType = "arraybuffer";
      this.socket = socket;
      socket.onopen = () => {
        socket.send(JSON.stringify({ ...start, type: "start", sample_rate: CALL_RATE }));
        // The app takes audio right after `start` (it holds it while its listener opens): nothing the
        // caller said since the microphone opened is lost.
        this.started = true;
        for (const buffer of this.early) this.sendAudio(buffer);
        this.early = [];
        resolve();
      };
      socket.onerror = () => reject(new Error("Cannot open the call: is the app running, and does it serve ws?"));
      socket.onmessage = (message) => this.receive(message.data);
      socket.onclose = (event) => this.ended(event);
    });
  }

  receive(data) {
    if (data instanceof ArrayBuffer) {
      this.bytesReceived += data.byteLength;
      this.hooks.onAudio(new Uint8Array(data));
      return;
    }
    let event;
    try {
      event = JSON.parse(data);
    } catch {
      return;
    }
    if (event && event.type === "listening") this.listening = true;
    if (event && typeof event.type === "string") this.hooks.onEvent(event);
  }

  sendAudio(buffer) {
    if (!this.started) {
      this.early.push(buffer);
      this.earlyBytes += buffer.byteLength;
      while (this.earlyBytes > EARLY_AUDIO_BYTES) this.earlyBytes -= this.early.shift().byteLength;
      return;
    }
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) return;
    this.socket.send(buffer);
    this.framesSent += 1;
  }

  /** A text frame: `{type: "prompt", prompt}` or `{type: "interrupt"}`. */
  send(message) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  get connected() {
    return !this.closed && Boolean(this.socket) && this.socket.readyState === WebSocket.OPEN;
  }

  ended(event) {
    if (this.closed) return;
    this.release();
    this.hooks.onClosed(event && event.code);
  }

  /** Hang up: the app interrupts an answer still speaking (the heard part is remembered). */
  close() {
    if (this.closed) return;
    if (this.socket && this.socket.readyState <= WebSocket.OPEN) this.socket.close(1000, "hang up");
    this.release();
  }

  release() {
    this.closed = true;
    this.listening = false;
    this.early = [];
    if (this.node) this.node.port.onmessage = null;
    if (this.stream) for (const track of this.stream.getTracks()) track.stop();
    if (this.context) this.context.close().catch(() => {});
  }
}
