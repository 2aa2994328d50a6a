// What firebrand's tokenizers share: text to token ids and back, as the
// training data (Dataset.fromTokens) and generation take them.
export interface Tokenizer {
  /** Ids run from 0 to vocabSize - 1: an embedding's numEmbeddings. */
  readonly vocabSize: number;
  encode(text: string): Int32Array;
  decode(ids: ArrayLike<number | bigint>): string;
}
