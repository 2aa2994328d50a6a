// Text from tokens as they are generated, as transformers' TextIteratorStreamer
// and text-generation-inference give it: each new token's text is what the
// tokens so far decode to beyond what the earlier ones did, so a character
// whose bytes span several tokens (an accent, a CJK character, an emoji from
// byte-level BPE) comes out whole once its last byte arrives, and tokenizers
// that drop a word's leading space at the start of a text keep it inside one.
// Stop strings end the text before them, as OpenAI's `stop` does.
import type { Tokenizer } from './tokenizer';

/** Decodes ids as they come into text pieces that never split a character. */
export class TextStreamer {
  private readonly ids: number[] = [];
  /** Tokens before readOffset have given their text; decoding starts at prefixOffset for context. */
  private prefixOffset = 0;
  private readOffset = 0;

  constructor(private readonly tokenizer: Tokenizer) {}

  /** The text that `id` completes: '' while it ends inside a character (U+FFFD at the end). */
  push(id: number): string {
    this.ids.push(id);
    return this.take(false);
  }

  /** What is left: the text of the last tokens, even where it ends inside a character. */
  end(): string {
    return this.take(true);
  }

  private take(final: boolean): string {
    const known = this.tokenizer.decode(this.ids.slice(this.prefixOffset, this.readOffset));
    const text = this.tokenizer.decode(this.ids.slice(this.prefixOffset));
    if (text.length <= known.length || (!final && text.endsWith('\uFFFD'))) return '';
    this.prefixOffset = this.readOffset;
    this.readOffset = this.ids.length;
    return text.slice(known.length);
  }
}

/**
 * Pieces of text cut before the first of `stops`: `push` gives what is certainly before any stop (text
 * that could begin one is held back until it cannot), and says when one was found.
 */
export class StopStrings {
  private held = '';
  private stopped = false;

  constructor(private readonly stops: string[]) {}

  get found(): boolean {
    return this.stopped;
  }

  /** The text of `piece` (with what was held) that can be given now. */
  push(piece: string): string {
    if (this.stopped) return '';
    const text = this.held + piece;
    let cut = -1;
    for (const stop of this.stops) {
      const at = text.indexOf(stop);
      if (at >= 0 && (cut < 0 || at < cut)) cut = at;
    }
    if (cut >= 0) {
      this.stopped = true;
      this.held = '';
      return text.slice(0, cut);
    }
    // Hold back the longest end of the text that begins some stop string.
    let keep = 0;
    for (const stop of this.stops) {
      for (let length = Math.min(stop.length - 1, text.length); length > keep; --length) {
        if (text.endsWith(stop.slice(0, length))) keep = length;
      }
    }
    this.held = text.slice(text.length - keep);
    return text.slice(0, text.length - keep);
  }

  /** What was held back, once the text has ended without a stop. */
  end(): string {
    const rest = this.stopped ? '' : this.held;
    this.held = '';
    return rest;
  }
}

/** Why generated text ended: a stop token or stop string ('stop'), or the token limit ('length'). */
export type FinishReason = 'stop' | 'length';

/**
 * A generation's text as its tokens come, as OpenAI's completions give it: pieces that never split a
 * character, without the text of a stop token, ending before the first stop string.
 */
export class GeneratedText {
  private readonly streamer: TextStreamer;
  private readonly stops: StopStrings;
  private stoppedBy: 'token' | 'string' | undefined;

  constructor(
    tokenizer: Tokenizer,
    private readonly stopTokens: readonly number[],
    stopStrings: string[],
  ) {
    this.streamer = new TextStreamer(tokenizer);
    this.stops = new StopStrings(stopStrings);
  }

  /** A stop token or stop string has ended the text: later tokens give none. */
  get stopped(): boolean {
    return this.stoppedBy !== undefined;
  }

  /** The text `token` adds ('' while it ends inside a character or could begin a stop string). */
  push(token: number): string {
    if (this.stopped) return '';
    if (this.stopTokens.includes(token)) {
      this.stoppedBy = 'token';
      return this.rest();
    }
    const piece = this.stops.push(this.streamer.push(token));
    if (this.stops.found) this.stoppedBy = 'string';
    return piece;
  }

  /** What is left once the tokens end. */
  end(): string {
    return this.stopped ? '' : this.rest();
  }

  /** Why the text ended: by a stop, else by running out of tokens. */
  get finishReason(): FinishReason {
    return this.stopped ? 'stop' : 'length';
  }

  private rest(): string {
    const piece = this.stops.push(this.streamer.end());
    if (this.stops.found) {
      this.stoppedBy = 'string';
      return piece;
    }
    return piece + this.stops.end();
  }
}
