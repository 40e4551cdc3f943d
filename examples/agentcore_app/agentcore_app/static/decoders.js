// Audio in: the decoders that turn a Leg 3 answer's audio bytes (pcm16, wav, opus, mp3, aac) into Float32
// samples for the player.

export const SAMPLE_RATE = 24000;
// Compressed formats are re-decoded as they grow; the last few ms of a partial decode can still change
// (resampler and codec look-ahead), so they are held back until more audio or the end arrives.
const DECODE_GUARD_S = 0.02;

// ---------------------------------------------------------------------------------------------------
// Audio: decoders turn audio_chunk bytes into Float32 samples; the player schedules them back to back.

export function base64ToBytes(text) {
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
export class Pcm16Decoder {
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

export function createDecoder(format, ctx, sampleRate) {
  if (format === "pcm16") return new Pcm16Decoder(sampleRate);
  if (format === "wav") return new WavDecoder();
  if (format === "opus" || format === "mp3" || format === "aac") return new CompressedDecoder(ctx, format);
  throw new Error(`unsupported audio format ${format}`);
}
