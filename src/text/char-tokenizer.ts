// Characters (Unicode code points) of a training text as ids, in code-point
// order: nanoGPT's character-level vocabulary. Saved as JSON with the model.
import { firebrandError } from '../errors';
import type { Tokenizer } from './tokenizer';

const describe = (char: string): string =>
  `'${char}' (U+${(char.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')})`;

export class CharTokenizer implements Tokenizer {
  private readonly ids: Map<string, number>;

  private constructor(readonly chars: readonly string[]) {
    this.ids = new Map(chars.map((char, id) => [char, id]));
  }

  /** The characters of `text`, sorted by code point. */
  static fromText(text: string): CharTokenizer {
    const chars = [...new Set(Array.from(text))].sort(
      (a, b) => (a.codePointAt(0) as number) - (b.codePointAt(0) as number),
    );
    if (chars.length === 0)
      throw firebrandError('ERR_FIREBRAND_INVALID_ARGUMENT', 'CharTokenizer.fromText: the text is empty');
    return new CharTokenizer(chars);
  }

  /** What toJSON() wrote. */
  static fromJSON(json: { chars: string[] }): CharTokenizer {
    if (
      !Array.isArray(json?.chars) ||
      json.chars.some((char) => typeof char !== 'string' || Array.from(char).length !== 1)
    ) {
      throw firebrandError(
        'ERR_FIREBRAND_INVALID_ARGUMENT',
        'CharTokenizer.fromJSON: expected { chars: [...] } of single characters',
      );
    }
    return new CharTokenizer(json.chars);
  }

  get vocabSize(): number {
    return this.chars.length;
  }

  encode(text: string): Int32Array {
    const chars = Array.from(text);
    return Int32Array.from(chars, (char, position) => {
      const id = this.ids.get(char);
      if (id === undefined) {
        throw firebrandError(
          'ERR_FIREBRAND_INVALID_ARGUMENT',
          `CharTokenizer.encode: ${describe(char)} at character ${position} is not among the ${this.chars.length} characters it was made from`,
        );
      }
      return id;
    });
  }

  decode(ids: ArrayLike<number | bigint>): string {
    return Array.from(ids, (id, i) => {
      const char = this.chars[Number(id)];
      if (char === undefined) {
        throw firebrandError(
          'ERR_FIREBRAND_INVALID_ARGUMENT',
          `CharTokenizer.decode: ids[${i}] is ${String(id)}, expected an id in [0, ${this.chars.length - 1}]`,
        );
      }
      return char;
    }).join('');
  }

  toJSON(): { chars: string[] } {
    return { chars: [...this.chars] };
  }
}
