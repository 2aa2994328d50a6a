// One completion request decoded: each of its choices (each prompt n times) a
// job of the batcher, its tokens turned into text pieces that never split a
// character and that end at the model's stop tokens, the request's stop
// strings or its token limit; the pieces go to a sink as they come (a stream)
// or are gathered (a whole response).
import type { Tokenizer } from '../text/tokenizer';
import { type FinishReason, GeneratedText } from '../text/text-streamer';
import type { DecodeBatcher, DecodeJob } from './decode-batcher';
import type { CompletionRequest } from './openai-requests';

/** Where a completion's text goes, choice by choice (index: prompt × n + copy). */
export interface ChoiceSink {
  piece(index: number, text: string): void;
  finish(index: number, reason: FinishReason): void;
}

/** What the server decodes every request with. */
export interface DecodeSettings {
  tokenizer: Tokenizer;
  /** The model's end-of-sequence tokens: a choice ends at one, without its text. */
  stopTokens: number[];
  /** Tokens per choice when a request gives no max_tokens. */
  defaultMaxTokens: number;
}

export interface CompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** Decodes every choice of `request` into `sink`; a client gone (`signal`) ends its choices at the next token. */
export async function runCompletion(
  batcher: DecodeBatcher,
  request: CompletionRequest,
  settings: DecodeSettings,
  sink: ChoiceSink,
  signal: AbortSignal,
): Promise<CompletionUsage> {
  const maxNewTokens = request.maxTokens ?? settings.defaultMaxTokens;
  const options = { ...request.sampling, stopTokens: settings.stopTokens, maxNewTokens };
  const prompts = request.prompts.flatMap((prompt) => Array<Int32Array>(request.n).fill(prompt));
  let completionTokens = 0;
  const choices = prompts.map(
    (prompt, index) =>
      new Promise<void>((resolve, reject) => {
        const text = new GeneratedText(settings.tokenizer, settings.stopTokens, request.stop);
        let produced = 0;
        const job: DecodeJob = {
          prompt,
          options,
          onToken(token) {
            if (signal.aborted) return false;
            produced += 1;
            const piece = text.push(token);
            if (piece !== '') sink.piece(index, piece);
            return !text.stopped && produced < maxNewTokens;
          },
          onEnd(error) {
            signal.removeEventListener('abort', withdraw);
            completionTokens += produced;
            if (error !== undefined) return reject(error);
            const rest = text.end();
            if (rest !== '') sink.piece(index, rest);
            sink.finish(index, text.finishReason);
            resolve();
          },
        };
        const withdraw = () => {
          if (batcher.withdraw(job)) resolve();
        };
        signal.addEventListener('abort', withdraw);
        batcher.submit(job);
      }),
  );
  await Promise.all(choices);
  const promptTokens = request.prompts.reduce((sum, prompt) => sum + prompt.length, 0);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}
