// The bodies of OpenAI's /v1/chat/completions and /v1/completions, checked and
// read into what the server decodes: prompts as token ids (a chat through the
// tokenizer's chat template), sampling settings, stops and stream flags. A
// field OpenAI defines that firebrand does not compute is refused unless it
// has its no-op value; a field OpenAI does not define is refused by name.
import type { GenerateOptions } from '../native';
import type { ChatMessage, ChatTemplateOptions, HuggingFaceTokenizer } from '../text/huggingface-tokenizer';
import { RequestError } from './request-error';

/** A completion request as the server decodes it. */
export interface CompletionRequest {
  model: string;
  /** Each prompt's ids; a request's choices are each prompt's n, in order. */
  prompts: Int32Array[];
  n: number;
  /** Tokens per choice at most; undefined: the server's default. */
  maxTokens?: number;
  /** Sampling settings over the checkpoint's defaults (temperature 0: greedy). */
  sampling: GenerateOptions;
  stop: string[];
  stream: boolean;
  /** stream_options.include_usage: a last chunk holds the usage counts. */
  includeUsage: boolean;
  /** Each chosen token's log-probability in the reply (chat's logprobs: true). */
  logprobs: boolean;
}

type Body = Record<string, unknown>;

/** Fields OpenAI defines that change nothing at these values, and what firebrand would have to compute otherwise. */
const NO_OP_VALUES: Record<string, [unknown[], string]> = {
  frequency_penalty: [[0, null], 'frequency penalties'],
  presence_penalty: [[0, null], 'presence penalties'],
  logprobs: [[false, null, 0], 'log probabilities'],
  top_logprobs: [[null, 0], "top log probabilities (the chosen tokens' are given with logprobs: true)"],
  logit_bias: [[null], 'logit biases'],
  tools: [[null], 'tool calls'],
  tool_choice: [[null, 'none'], 'tool calls'],
  parallel_tool_calls: [[null, false, true], 'tool calls'],
  functions: [[null], 'function calls'],
  function_call: [[null, 'none'], 'function calls'],
  response_format: [[null], 'structured output'],
  echo: [[false, null], 'echoing the prompt'],
  suffix: [[null, ''], 'insertion (suffix)'],
  best_of: [[null, 1], 'best_of'],
  store: [[null, false], 'stored completions'],
};

const SHARED_FIELDS = [
  'model',
  'max_tokens',
  'temperature',
  'top_p',
  'top_k',
  'min_p',
  'repetition_penalty',
  'n',
  'stream',
  'stream_options',
  'stop',
  'seed',
  'user',
  'metadata',
];

function refuseUnknown(body: Body, own: string[]): void {
  const known = new Set([...SHARED_FIELDS, ...own, ...Object.keys(NO_OP_VALUES)]);
  for (const name of Object.keys(body)) {
    if (!known.has(name)) throw new RequestError(400, `Unrecognized request argument supplied: ${name}`, name);
  }
  for (const [name, [noOps, computes]] of Object.entries(NO_OP_VALUES)) {
    if (own.includes(name)) continue;
    const value = body[name];
    const noOp =
      value === undefined ||
      noOps.includes(value) ||
      (name === 'logit_bias' && isObject(value) && Object.keys(value).length === 0) ||
      (name === 'response_format' && isObject(value) && value.type === 'text') ||
      (name === 'tools' && Array.isArray(value) && value.length === 0);
    if (!noOp) throw new RequestError(400, `${name}: firebrand's server does not do ${computes}`, name);
  }
}

const isObject = (value: unknown): value is Body =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** body[name] as a number in [min, max] (an integer if `integer`), undefined when absent or null. */
function numberField(body: Body, name: string, min: number, max: number, integer = false): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || value < min || value > max || (integer && !Number.isInteger(value))) {
    const kind = integer ? 'an integer' : 'a number';
    throw new RequestError(400, `${name}: expected ${kind} in [${min}, ${max}], got ${JSON.stringify(value)}`, name);
  }
  return value;
}

function booleanField(body: Body, name: string): boolean {
  const value = body[name] ?? false;
  if (typeof value !== 'boolean') {
    throw new RequestError(400, `${name}: expected true or false, got ${JSON.stringify(value)}`, name);
  }
  return value;
}

function stopStrings(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const stops = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(stops) || stops.length > 4 || stops.some((stop) => typeof stop !== 'string' || stop === '')) {
    throw new RequestError(
      400,
      `stop: expected a non-empty string or up to 4 of them, got ${JSON.stringify(value)}`,
      'stop',
    );
  }
  return stops as string[];
}

function samplingOf(body: Body): GenerateOptions {
  const temperature = numberField(body, 'temperature', 0, 2);
  const topP = numberField(body, 'top_p', Number.MIN_VALUE, 1);
  const topK = numberField(body, 'top_k', -1, Number.MAX_SAFE_INTEGER, true);
  if (topK === 0) throw new RequestError(400, 'top_k: expected an integer >= 1, or -1 for all tokens', 'top_k');
  const minP = numberField(body, 'min_p', 0, 1);
  const repetitionPenalty = numberField(body, 'repetition_penalty', Number.MIN_VALUE, Number.MAX_VALUE);
  const seed = numberField(body, 'seed', 0, 2 ** 53 - 1, true);
  const sampling: GenerateOptions = {};
  if (temperature === 0) sampling.greedy = true;
  else if (temperature !== undefined) sampling.temperature = temperature;
  if (topP !== undefined) sampling.topP = topP;
  if (topK !== undefined) sampling.topK = topK === -1 ? Number.MAX_SAFE_INTEGER : topK;
  if (minP !== undefined) sampling.minP = minP;
  if (repetitionPenalty !== undefined) sampling.repetitionPenalty = repetitionPenalty;
  if (seed !== undefined) sampling.seed = seed;
  return sampling;
}

/** What both endpoints share: the model, n, limits, sampling, stops and stream flags. */
function sharedOf(body: Body, maxTokensField: string): Omit<CompletionRequest, 'prompts'> {
  if (typeof body.model !== 'string') {
    throw new RequestError(400, `model: expected the served model's name, got ${JSON.stringify(body.model)}`, 'model');
  }
  const streamOptions = body.stream_options ?? {};
  if (!isObject(streamOptions) || Object.keys(streamOptions).some((key) => key !== 'include_usage')) {
    throw new RequestError(400, 'stream_options: expected { include_usage: boolean }', 'stream_options');
  }
  return {
    model: body.model,
    n: numberField(body, 'n', 1, 128, true) ?? 1,
    maxTokens: numberField(body, maxTokensField, 1, Number.MAX_SAFE_INTEGER, true),
    sampling: samplingOf(body),
    stop: stopStrings(body.stop),
    stream: booleanField(body, 'stream'),
    includeUsage: booleanField(streamOptions, 'include_usage'),
    logprobs: false,
  };
}

/** vLLM's fields for the chat template: add_generation_prompt (default true), continue_final_message, its variables. */
const CHAT_TEMPLATE_FIELDS = ['add_generation_prompt', 'continue_final_message', 'chat_template_kwargs', 'documents'];

function chatTemplateOptions(body: Body): ChatTemplateOptions {
  const kwargs = body.chat_template_kwargs ?? {};
  if (!isObject(kwargs)) {
    throw new RequestError(
      400,
      'chat_template_kwargs: expected an object of template variables',
      'chat_template_kwargs',
    );
  }
  const documents = body.documents ?? undefined;
  if (documents !== undefined && (!Array.isArray(documents) || !documents.every(isObject))) {
    throw new RequestError(400, 'documents: expected an array of objects ({ title, text })', 'documents');
  }
  const continueFinalMessage = booleanField(body, 'continue_final_message');
  return {
    addGenerationPrompt:
      body.add_generation_prompt === undefined ? !continueFinalMessage : booleanField(body, 'add_generation_prompt'),
    continueFinalMessage,
    chatTemplateKwargs: kwargs,
    documents: documents as Record<string, unknown>[] | undefined,
  };
}

/** A message's text: a string, or content parts of type text joined by newlines (vLLM's string content format). */
function messageText(message: Body, at: string): string {
  const { content } = message;
  if (typeof content === 'string') return content;
  if (Array.isArray(content) && content.every((part) => isObject(part) && part.type === 'text')) {
    return content.map((part) => String((part as Body).text ?? '')).join('\n');
  }
  throw new RequestError(
    400,
    `${at}.content: expected a string or text parts ([{ type: 'text', text }]), got ${JSON.stringify(content)}`,
    at,
  );
}

/** A /v1/chat/completions body: the conversation through the chat template, ending with the assistant's turn opened. */
export function chatCompletionRequest(body: unknown, tokenizer: HuggingFaceTokenizer): CompletionRequest {
  if (!isObject(body)) throw new RequestError(400, 'expected a JSON object');
  refuseUnknown(body, ['messages', 'max_completion_tokens', 'logprobs', ...CHAT_TEMPLATE_FIELDS]);
  if (body.max_tokens !== undefined && body.max_completion_tokens !== undefined) {
    throw new RequestError(400, 'give max_tokens or max_completion_tokens, not both', 'max_completion_tokens');
  }
  const shared = sharedOf(body, body.max_completion_tokens === undefined ? 'max_tokens' : 'max_completion_tokens');
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw new RequestError(400, 'messages: expected a non-empty array of { role, content }', 'messages');
  }
  const messages: ChatMessage[] = body.messages.map((message: unknown, index) => {
    const at = `messages[${index}]`;
    if (!isObject(message) || typeof message.role !== 'string') {
      throw new RequestError(400, `${at}: expected { role: string, content }`, at);
    }
    return { role: message.role, content: messageText(message, at) };
  });
  if (tokenizer.chatTemplate === undefined) {
    throw new RequestError(400, "the model's tokenizer has no chat template: use /v1/completions", 'messages');
  }
  return {
    ...shared,
    logprobs: body.logprobs === null ? false : booleanField(body, 'logprobs'),
    prompts: [tokenizer.applyChatTemplate(messages, chatTemplateOptions(body))],
  };
}

/** A prompt of /v1/completions: text, or token ids. */
function promptIds(prompt: unknown, tokenizer: HuggingFaceTokenizer, at: string): Int32Array {
  if (typeof prompt === 'string') return tokenizer.encode(prompt);
  if (Array.isArray(prompt) && prompt.length > 0 && prompt.every((id) => Number.isInteger(id) && id >= 0)) {
    return Int32Array.from(prompt as number[]);
  }
  throw new RequestError(400, `${at}: expected text or a non-empty array of token ids, got ${JSON.stringify(prompt)}`);
}

/** A /v1/completions body: one prompt or several (text or token ids), each with n choices. */
export function textCompletionRequest(body: unknown, tokenizer: HuggingFaceTokenizer): CompletionRequest {
  if (!isObject(body)) throw new RequestError(400, 'expected a JSON object');
  refuseUnknown(body, ['prompt']);
  const shared = sharedOf(body, 'max_tokens');
  const { prompt } = body;
  const several =
    Array.isArray(prompt) &&
    prompt.length > 0 &&
    prompt.every((item) => typeof item === 'string' || Array.isArray(item));
  const prompts = several ? (prompt as unknown[]) : [prompt];
  return {
    ...shared,
    // OpenAI's default for completions is 16 tokens.
    maxTokens: shared.maxTokens ?? 16,
    prompts: prompts.map((item, index) => promptIds(item, tokenizer, several ? `prompt[${index}]` : 'prompt')),
  };
}
