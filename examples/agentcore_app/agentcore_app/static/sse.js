// Leg 3 over Server-Sent Events: an incremental parser over the fetch stream's bytes, and the JSON of an
// event's data read without throwing.

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

export function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
