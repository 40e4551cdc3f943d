// Highlights the word being spoken in the answer text, from Leg 3 `words` events and the audio clock.
//
// A `words` event gives, for one sentence, each word's start/end in seconds from that sentence's first
// audio. The page tells the highlighter when that first audio is due to play (an AudioContext time);
// a short timer then compares the audio clock with each word's time and marks the current word with the
// CSS Custom Highlight API (no change to the answer's DOM, so streaming text is never disturbed).

const HIGHLIGHT_NAME = "spoken-word";
const TICK_MS = 20;

/** Where `[start, end)` of `element`'s text lies, as a DOM Range over its text nodes (null if not there). */
function textRange(element, start, end) {
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  let offset = 0;
  let startSet = false;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const length = node.data.length;
    if (!startSet && start < offset + length) {
      range.setStart(node, start - offset);
      startSet = true;
    }
    if (startSet && end <= offset + length) {
      range.setEnd(node, end - offset);
      return range;
    }
    offset += length;
  }
  return null;
}

export class WordHighlighter {
  /**
   * @param {HTMLElement} element the answer, whose text the words are found in
   * @param {() => number} clock the audio clock in seconds (AudioContext.currentTime)
   * @param {{wordsReceived: number, wordsHighlighted: string[], highlightNow: string|null}} stats
   */
  constructor(element, clock, stats) {
    this.element = element;
    this.clock = clock;
    this.stats = stats;
    this.sentences = new Map(); // index -> {startAt: ctx seconds | null, words: [{word, start_s, end_s, at}]}
    this.cursor = 0; // where the next word is looked for in the answer text
    this.timer = null;
    this.current = null;
  }

  /** The words of sentence `index` (a Leg 3 `words` event). */
  addWords(index, words) {
    const sentence = this.sentence(index);
    for (const w of words || []) {
      if (typeof w.word !== "string" || typeof w.start_s !== "number") continue;
      sentence.words.push({ word: w.word, start_s: w.start_s, end_s: w.end_s ?? w.start_s, at: null, due: false });
      this.stats.wordsReceived += 1;
    }
    this.run();
  }

  /** Sentence `index`'s first sample is due to play at AudioContext time `ctxTime`. */
  sentenceStarts(index, ctxTime) {
    const sentence = this.sentence(index);
    if (sentence.startAt === null) sentence.startAt = ctxTime;
    this.run();
  }

  sentence(index) {
    let s = this.sentences.get(index);
    if (!s) {
      s = { startAt: null, words: [] };
      this.sentences.set(index, s);
    }
    return s;
  }

  run() {
    if (this.timer === null && typeof CSS !== "undefined" && CSS.highlights) {
      this.timer = setInterval(() => this.tick(), TICK_MS);
    }
  }

  /** Finds each word (in order) in the answer text; stops at the first one whose text has not arrived. */
  resolve() {
    const text = this.element.textContent || "";
    const order = [...this.sentences.keys()].sort((a, b) => a - b);
    for (const index of order) {
      for (const w of this.sentences.get(index).words) {
        if (w.at !== null) continue;
        const at = text.indexOf(w.word, this.cursor);
        if (at === -1) return;
        w.at = at;
        this.cursor = at + w.word.length;
      }
    }
  }

  tick() {
    this.resolve();
    const now = this.clock();
    let active = null;
    let pending = false;
    for (const index of [...this.sentences.keys()].sort((a, b) => a - b)) {
      const s = this.sentences.get(index);
      for (const w of s.words) {
        if (s.startAt === null || w.at === null || now < s.startAt + w.start_s) {
          pending = true;
          continue;
        }
        if (!w.due) {
          // Every word that became due is recorded in order, even if two fall within one tick.
          w.due = true;
          this.stats.wordsHighlighted.push(w.word);
        }
        if (now < s.startAt + w.end_s + 0.15) active = w;
      }
    }
    this.show(active);
    if (!pending && active === null) this.stopTimer();
  }

  show(word) {
    if (word === this.current) return;
    this.current = word;
    this.stats.highlightNow = word ? word.word : null;
    if (!word) {
      CSS.highlights.delete(HIGHLIGHT_NAME);
      return;
    }
    const range = textRange(this.element, word.at, word.at + word.word.length);
    if (range) CSS.highlights.set(HIGHLIGHT_NAME, new Highlight(range));
  }

  stopTimer() {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Stop highlighting (Stop, or a new request). */
  clear() {
    this.stopTimer();
    this.sentences.clear();
    this.current = null;
    this.stats.highlightNow = null;
    if (typeof CSS !== "undefined" && CSS.highlights) CSS.highlights.delete(HIGHLIGHT_NAME);
  }
}
