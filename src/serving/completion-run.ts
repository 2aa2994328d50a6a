// One completion request decoded: each of its choices (each prompt n times) a
// job of the batcher, its tokens turned into text pieces that never split a
// character and that end at the model's stop tokens, the request's stop
// strings or its token limit; the pieces go to a sink as they come (a stream)
// or are gathered (a whole response).
import type { Tokenizer } from '../text/tokenizer';
import { type FinishReason, GeneratedText } from '../text/text-streamer';
import type { DecodeBatcher, DecodeJob } from './decode-batcher';
import type { CompletionRequest } from './openai-requests';

/** A generated token and its log-probability, as OpenAI's chat logprobs list them. */
export interface TokenLogprob {
  token: string;
  logprob: number;
  /** The token's UTF-8 bytes; null where its text alone is part of a character. */
  bytes: number[] | null;
  top_logprobs: [];
}

/**
 * Where a completion's text goes, choice by choice (index: prompt × n + copy), with the log-probabilities
 * of the tokens since the last piece when the request asks for them.
 */
export interface ChoiceSink {
  piece(index: number, text: string, logprobs: TokenLogprob[]): void;
  finish(index: number, reason: FinishReason, logprobs: TokenLogprob[]): void;
}

function tokenLogprob(tokenizer: Tokenizer, token: number, logprob: number): TokenLogprob {
  const text = tokenizer.decode([token]);
  return {
    token: text,
    logprob,
    bytes: text.includes('\uFFFD') ? null : [...Buffer.from(text, 'utf8')],
    top_logprobs: [],
  };
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
        // The log-probabilities of the tokens whose text has not gone out yet: each piece takes them.
        let pending: TokenLogprob[] = [];
        const taken = () => {
          const tokens = pending;
          pending = [];
          return tokens;
        };
        const job: DecodeJob = {
          prompt,
          options,
          onToken(token, logprob) {
            if (signal.aborted) return false;
            produced += 1;
            if (request.logprobs) pending.push(tokenLogprob(settings.tokenizer, token, logprob));
            const piece = text.push(token);
            if (piece !== '') sink.piece(index, piece, taken());
            return !text.stopped && produced < maxNewTokens;
          },
          onEnd(error) {
            signal.removeEventListener('abort', withdraw);
            completionTokens += produced;
            if (error !== undefined) return reject(error);
            const rest = text.end();
            if (rest !== '') sink.piece(index, rest, taken());
            sink.finish(index, text.finishReason, taken());
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
