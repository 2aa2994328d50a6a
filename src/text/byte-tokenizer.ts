// Text as its UTF-8 bytes: 256 ids, any text encodes, nothing to fit or save.
import { firebrandError } from '../errors';
import type { Tokenizer } from './tokenizer';

export class ByteTokenizer implements Tokenizer {
  readonly vocabSize = 256;

  encode(text: string): Int32Array {
    return Int32Array.from(new TextEncoder().encode(text));
  }

  /** Bytes that are no complete UTF-8 sequence (a sampled model may emit them) decode to U+FFFD. */
  decode(ids: ArrayLike<number | bigint>): string {
    const bytes = Uint8Array.from(
      Array.from(ids, (id, i) => {
        const value = Number(id);
        if (!Number.isInteger(value) || value < 0 || value > 255) {
          throw firebrandError(
            'ERR_FIREBRAND_INVALID_ARGUMENT',
            `ByteTokenizer.decode: ids[${i}] is ${String(id)}, expected a byte in [0, 255]`,
          );
        }
        return value;
      }),
    );
    return new TextDecoder().decode(bytes);
  }
}
