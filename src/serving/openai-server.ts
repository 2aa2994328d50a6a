// An OpenAI-compatible HTTP server over a language model and its tokenizer:
// /v1/chat/completions and /v1/completions (whole responses, or server-sent
// events as OpenAI streams them), /v1/models and /health, on node:http alone.
// Concurrent requests are decoded together in batches (decode-batcher.ts).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import type { FirebrandError } from '../errors';
import type { Model } from '../inference/model';
import type { HuggingFaceTokenizer } from '../text/huggingface-tokenizer';
import type { FinishReason } from '../text/text-streamer';
import { type CompletionUsage, type DecodeSettings, runCompletion, type TokenLogprob } from './completion-run';
import { DecodeBatcher, type DecodeStats } from './decode-batcher';
import { chatCompletionRequest, type CompletionRequest, textCompletionRequest } from './openai-requests';
import { RequestError } from './request-error';
import { resolveServeOptions, type ServeOptions } from './serve-options';

/** A running server: where it listens, and how to stop it. */
export interface ModelServer {
  readonly url: string;
  readonly port: number;
  /**
   * Batches decoding now, sequences waiting for one, batches started so far, the most sequences one held,
   * and requests whose client left before their reply ended (their sequences stopped at the next step).
   */
  readonly stats: DecodeStats & { droppedRequests: number };
  /** Stops listening, ends open streams and connections. */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;

interface Served {
  name: string;
  created: number;
  tokenizer: HuggingFaceTokenizer;
  batcher: DecodeBatcher;
  settings: DecodeSettings;
  droppedRequests: number;
}

/**
 * Serves `model` (a causal language model) and `tokenizer` as OpenAI's API does, for OpenAI's clients:
 * `new OpenAI({ baseURL: server.url + '/v1', apiKey: 'unused' })`. Sampling defaults are the checkpoint's
 * generation config; a request's temperature, top_p, top_k, repetition_penalty and seed override them
 * (temperature 0: greedy).
 */
export async function serve(
  model: Model,
  tokenizer: HuggingFaceTokenizer,
  options: ServeOptions = {},
): Promise<ModelServer> {
  const resolved = resolveServeOptions(options, model.generationDefaults?.options.maxNewTokens);
  const eos = tokenizer.specialTokenId('eos');
  const served: Served = {
    name: resolved.modelName,
    created: Math.floor(Date.now() / 1000),
    tokenizer,
    batcher: new DecodeBatcher(model, {
      maxBatchSize: resolved.maxBatchSize,
      maxConcurrentBatches: resolved.maxConcurrentBatches,
      paddedBatches: model.inputFields.includes('attention_mask'),
    }),
    settings: {
      tokenizer,
      stopTokens: model.generationDefaults?.options.stopTokens ?? (eos === undefined ? [] : [eos]),
      defaultMaxTokens: resolved.defaultMaxTokens,
    },
    droppedRequests: 0,
  };
  const closing = new AbortController();
  const server = http.createServer((request, response) => {
    void handle(served, request, response, closing.signal);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(resolved.port, resolved.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host;
  return {
    url: `http://${host}:${port}`,
    port,
    get stats() {
      return { ...served.batcher.stats, droppedRequests: served.droppedRequests };
    },
    close: () =>
      new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(
  served: Served,
  request: http.IncomingMessage,
  response: http.ServerResponse,
  closing: AbortSignal,
): Promise<void> {
  try {
    const route = new URL(request.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '');
    if (route === '/health') return sendJson(response, 200, {});
    if (route === '/v1/models') return sendJson(response, 200, { object: 'list', data: [modelCard(served)] });
    if (route === `/v1/models/${served.name}`) return sendJson(response, 200, modelCard(served));
    const endpoint = route === '/v1/chat/completions' ? 'chat' : route === '/v1/completions' ? 'text' : undefined;
    if (endpoint === undefined) throw new RequestError(404, `no route ${request.method} ${route}`);
    if (request.method !== 'POST') throw new RequestError(405, `${route} takes POST, got ${request.method}`);
    const body = await readJsonBody(request);
    const read =
      endpoint === 'chat'
        ? chatCompletionRequest(body, served.tokenizer)
        : textCompletionRequest(body, served.tokenizer);
    if (read.model !== served.name) {
      throw new RequestError(
        404,
        `The model \`${read.model}\` does not exist; this server serves '${served.name}'`,
        'model',
        'model_not_found',
      );
    }
    // The client gone, or the server closing: the request's sequences end at their next step.
    const gone = new AbortController();
    const abort = () => gone.abort();
    response.on('close', abort);
    closing.addEventListener('abort', abort, { once: true });
    try {
      const reply = { served, endpoint, read, response, gone: gone.signal } as const;
      await (read.stream ? streamCompletion(reply) : sendCompletion(reply));
    } finally {
      closing.removeEventListener('abort', abort);
      if (gone.signal.aborted && !closing.aborted) served.droppedRequests += 1;
    }
  } catch (error) {
    sendError(response, error);
  }
}

function modelCard(served: Served) {
  return { id: served.name, object: 'model', created: served.created, owned_by: 'firebrand' };
}

async function readJsonBody(request: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new RequestError(413, `request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    throw new RequestError(400, `the body is not JSON: ${(error as Error).message}`);
  }
}

function sendJson(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/** A refused request's status and OpenAI's error body; a failure of the model: 400 for bad input, else 500. */
function asRequestError(error: unknown): RequestError {
  if (error instanceof RequestError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as Partial<FirebrandError> | undefined)?.code;
  const status = code === 'ERR_FIREBRAND_INVALID_ARGUMENT' ? 400 : 500;
  return new RequestError(status, message, null, typeof code === 'string' ? code : null);
}

function sendError(response: http.ServerResponse, error: unknown): void {
  const refused = asRequestError(error);
  if (response.headersSent) {
    // A stream already under way: the error goes as its last event, as OpenAI's streams carry them.
    if (!response.writableEnded) response.end(`data: ${JSON.stringify(refused)}\n\n`);
    return;
  }
  sendJson(response, refused.status, refused);
}

/** A choice's (or a chunk's) logprobs field: OpenAI's chat form when the request asks for them, else null. */
function logprobsField(read: CompletionRequest, logprobs: TokenLogprob[]) {
  return read.logprobs ? { content: logprobs, refusal: null } : null;
}

/** A request being answered: what was asked, where the answer goes, and whether its client is gone. */
interface Reply {
  served: Served;
  endpoint: 'chat' | 'text';
  read: CompletionRequest;
  response: http.ServerResponse;
  gone: AbortSignal;
}

/** The fields every response and chunk of a completion carries. */
function header(served: Served, endpoint: 'chat' | 'text') {
  return {
    id: `${endpoint === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomUUID()}`,
    object: endpoint === 'chat' ? 'chat.completion' : 'text_completion',
    created: Math.floor(Date.now() / 1000),
    model: served.name,
  };
}

async function sendCompletion({ served, endpoint, read, response, gone }: Reply): Promise<void> {
  const texts: string[] = [];
  const reasons: FinishReason[] = [];
  const scored: TokenLogprob[][] = [];
  const keep = (index: number, logprobs: TokenLogprob[]) => (scored[index] = [...(scored[index] ?? []), ...logprobs]);
  const usage = await runCompletion(
    served.batcher,
    read,
    served.settings,
    {
      piece: (index, text, logprobs) => {
        texts[index] = (texts[index] ?? '') + text;
        keep(index, logprobs);
      },
      finish: (index, reason, logprobs) => {
        reasons[index] = reason;
        keep(index, logprobs);
      },
    },
    gone,
  );
  const choices = reasons.map((reason, index) => {
    const text = texts[index] ?? '';
    const content = endpoint === 'chat' ? { message: { role: 'assistant', content: text } } : { text };
    return { index, ...content, logprobs: logprobsField(read, scored[index] ?? []), finish_reason: reason };
  });
  sendJson(response, 200, { ...header(served, endpoint), choices, usage });
}

async function streamCompletion({ served, endpoint, read, response, gone }: Reply): Promise<void> {
  const { object, ...fields } = header(served, endpoint);
  const chunkObject = endpoint === 'chat' ? 'chat.completion.chunk' : object;
  const usageField = read.includeUsage ? { usage: null } : {};
  const send = (choice: Record<string, unknown>) => {
    if (response.destroyed) return;
    const chunk = {
      ...fields,
      object: chunkObject,
      choices: [{ logprobs: null, finish_reason: null, ...choice }],
      ...usageField,
    };
    response.write(`data: ${JSON.stringify(chunk)}\n\n`);
  };
  const content = (text: string) => (endpoint === 'chat' ? { delta: { content: text } } : { text });
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const choices = read.prompts.length * read.n;
  if (endpoint === 'chat') {
    for (let index = 0; index < choices; ++index) send({ index, delta: { role: 'assistant', content: '' } });
  }
  const usage: CompletionUsage = await runCompletion(
    served.batcher,
    read,
    served.settings,
    {
      piece: (index, text, logprobs) => send({ index, ...content(text), logprobs: logprobsField(read, logprobs) }),
      finish: (index, reason, logprobs) =>
        send({
          index,
          ...(endpoint === 'chat' ? { delta: {} } : { text: '' }),
          logprobs: logprobsField(read, logprobs),
          finish_reason: reason,
        }),
    },
    gone,
  );
  if (read.includeUsage) {
    response.write(`data: ${JSON.stringify({ ...fields, object: chunkObject, choices: [], usage })}\n\n`);
  }
  response.end('data: [DONE]\n\n');
}
