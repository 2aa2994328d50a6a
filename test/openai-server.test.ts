// serve(): OpenAI's /v1/chat/completions, /v1/completions and /v1/models over
// a chat checkpoint, checked with OpenAI's own npm client and with curl
// against 127.0.0.1: whole and streamed replies equal the model's own greedy
// generation, stops and limits end choices with OpenAI's finish reasons,
// concurrent requests decode together and each still gets its own tokens.
import { expect } from 'chai';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';

import {
  fromPretrained,
  HuggingFaceTokenizer,
  loadPretrainedModel,
  type Model,
  type ModelServer,
  serve,
  Trainer,
} from '../src';
import { collect, rejectionOf } from './support/helpers';

const chatModel = path.join(__dirname, '..', '..', 'examples', 'data', 'tiny-chat-llama');
const cli = path.join(__dirname, '..', 'src', 'cli', 'main.js');

describe('OpenAI-compatible server', function () {
  this.timeout(120_000);
  let model: Model;
  let tokenizer: HuggingFaceTokenizer;
  let server: ModelServer;
  let client: OpenAI;

  before(async () => {
    tokenizer = await HuggingFaceTokenizer.fromPretrained(chatModel);
    model = await loadPretrainedModel(chatModel, { attentionMask: true, numThreads: 1 });
    server = await serve(model, tokenizer, { port: 0, modelName: 'tiny-chat' });
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  after(async () => server?.close());

  /** The model's own greedy continuation of `ids`: its tokens (the stop token included) and text. */
  async function greedy(ids: Int32Array, maxNewTokens: number): Promise<{ tokens: number[]; text: string }> {
    const tokens = await collect(model.generate(ids, { maxNewTokens, greedy: true }));
    const text = await collect(model.generateText(ids, tokenizer, { maxNewTokens, greedy: true }));
    return { tokens, text: text.join('') };
  }

  const chat = (content: string): { role: 'user'; content: string }[] => [{ role: 'user', content }];
  const chatIds = (content: string) => tokenizer.applyChatTemplate(chat(content), { addGenerationPrompt: true });

  it('lists the model, and answers a chat as the model generates it, with usage counts', async () => {
    const models = await client.models.list();
    expect(models.data.map(({ id }) => id)).to.deep.equal(['tiny-chat']);
    const expected = await greedy(chatIds('Hello there'), 20);
    const reply = await client.chat.completions.create({
      model: 'tiny-chat',
      messages: chat('Hello there'),
      temperature: 0,
      max_tokens: 20,
    });
    expect(reply.object).to.equal('chat.completion');
    expect(reply.choices).to.have.length(1);
    expect(reply.choices[0].message).to.deep.include({ role: 'assistant', content: expected.text });
    const stopped = expected.tokens.includes(2);
    expect(reply.choices[0].finish_reason).to.equal(stopped ? 'stop' : 'length');
    expect(reply.usage).to.deep.equal({
      prompt_tokens: chatIds('Hello there').length,
      completion_tokens: expected.tokens.length,
      total_tokens: chatIds('Hello there').length + expected.tokens.length,
    });
  });

  it('streams a chat as server-sent chunks whose deltas make the whole reply, with a usage chunk', async () => {
    const whole = await client.chat.completions.create({
      model: 'tiny-chat',
      messages: chat('Café in 東京?'),
      temperature: 0,
      max_tokens: 24,
    });
    const stream = await client.chat.completions.create({
      model: 'tiny-chat',
      messages: chat('Café in 東京?'),
      temperature: 0,
      max_tokens: 24,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = await collect(stream);
    expect(chunks[0].choices[0].delta).to.deep.equal({ role: 'assistant', content: '' });
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).to.equal(whole.choices[0].message.content);
    for (const chunk of chunks) expect(chunk.choices[0]?.delta.content ?? '').to.not.contain('\uFFFD');
    const finishes = chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean);
    expect(finishes).to.deep.equal([whole.choices[0].finish_reason]);
    expect(chunks.at(-1)?.choices).to.deep.equal([]);
    expect(chunks.at(-1)?.usage).to.deep.equal(whole.usage);
  });

  it("continues a prefilled reply (vLLM's continue_final_message), the template's variables passed", async () => {
    const messages = [...chat('Name the fox.'), { role: 'assistant' as const, content: 'The quick' }];
    const ids = tokenizer.applyChatTemplate(messages, { continueFinalMessage: true });
    const body = {
      model: 'tiny-chat',
      messages,
      max_tokens: 8,
      temperature: 0,
      add_generation_prompt: false,
      continue_final_message: true,
      chat_template_kwargs: { enable_thinking: false },
    };
    const response = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(body) });
    const reply = (await response.json()) as OpenAI.ChatCompletion;
    expect(reply.choices[0].message.content).to.equal((await greedy(ids, 8)).text);
    expect(reply.usage?.prompt_tokens).to.equal(ids.length);
  });

  it("gives each token's log-probability with logprobs: true, as the model's generateBatchWithLogprobs", async () => {
    const ids = chatIds('Hello there');
    const expected: number[] = [];
    for await (const step of model.generateBatchWithLogprobs([ids], { maxNewTokens: 6, greedy: true })) {
      expected.push(step.logprobs?.[0] as number);
    }
    const request = {
      model: 'tiny-chat',
      messages: chat('Hello there'),
      temperature: 0,
      max_tokens: 6,
      logprobs: true,
    };
    const whole = await client.chat.completions.create(request);
    const content = whole.choices[0].logprobs?.content ?? [];
    expect(content.map(({ logprob }) => logprob)).to.deep.equal(expected);
    expect(content.map(({ top_logprobs }) => top_logprobs)).to.deep.equal(expected.map(() => []));
    const streamed = await collect(await client.chat.completions.create({ ...request, stream: true }));
    const streamedContent = streamed.flatMap((chunk) => chunk.choices[0]?.logprobs?.content ?? []);
    expect(streamedContent).to.deep.equal(content);
    const top = await rejectionOf(client.chat.completions.create({ ...request, top_logprobs: 2 }));
    expect(top.message).to.contain('top_logprobs');
  });

  it('completes several prompts with n choices each, ending at a stop string or max_tokens', async () => {
    const prompts = ['The quick brown fox', 'Once upon'];
    const expected = await Promise.all(prompts.map((prompt) => greedy(tokenizer.encode(prompt), 16)));
    const reply = await client.completions.create({
      model: 'tiny-chat',
      prompt: prompts,
      n: 2,
      max_tokens: 16,
      temperature: 0,
    });
    expect(reply.object).to.equal('text_completion');
    expect(reply.choices.map(({ index }) => index)).to.deep.equal([0, 1, 2, 3]);
    expect(reply.choices.map(({ text }) => text)).to.deep.equal(expected.flatMap(({ text }) => [text, text]));
    // A stop string from inside the first reply cuts it there, with finish_reason 'stop'.
    const first = expected[0].text;
    const stop = first.slice(3, 6);
    expect(stop.trim(), `a stop string from ${JSON.stringify(first)}`).to.not.equal('');
    const stopped = await client.completions.create({
      model: 'tiny-chat',
      prompt: prompts[0],
      max_tokens: 16,
      temperature: 0,
      stop: [stop],
    });
    expect(stopped.choices[0].text).to.equal(first.slice(0, first.indexOf(stop)));
    expect(stopped.choices[0].finish_reason).to.equal('stop');
    const short = await client.completions.create({
      model: 'tiny-chat',
      prompt: prompts[0],
      max_tokens: 2,
      temperature: 0,
    });
    expect(short.usage?.completion_tokens).to.equal(2);
    expect(short.choices[0].finish_reason).to.equal('length');
  });

  it('decodes concurrent requests together, each getting what it gets alone', async () => {
    const questions = ['Hi', 'What is a fox?', 'Tell me a long story about 東京', 'Why?', 'Count to ten', 'OK'];
    const alone = await Promise.all(questions.map(async (question) => (await greedy(chatIds(question), 12)).text));
    const before = server.stats.batches;
    const together = await Promise.all(
      questions.map(async (question) => {
        const reply = await client.chat.completions.create({
          model: 'tiny-chat',
          messages: chat(question),
          temperature: 0,
          max_tokens: 12,
        });
        return reply.choices[0].message.content;
      }),
    );
    expect(together).to.deep.equal(alone);
    expect(server.stats.batches - before, 'six requests in fewer batches').to.be.below(questions.length);
    expect(server.stats.largestBatch).to.be.above(1);
  });

  it('refuses what it cannot do with OpenAI errors naming the field, and a model it does not serve with 404', async () => {
    const wrongModel = await rejectionOf(
      client.chat.completions.create({ model: 'gpt-4o', messages: chat('Hi'), max_tokens: 2 }),
    );
    expect(wrongModel).to.be.instanceOf(OpenAI.NotFoundError);
    expect(wrongModel.message).to.contain('gpt-4o').and.contain('tiny-chat');
    const tools = await rejectionOf(
      client.chat.completions.create({
        model: 'tiny-chat',
        messages: chat('Hi'),
        tools: [{ type: 'function', function: { name: 'f', parameters: {} } }],
      }),
    );
    expect(tools).to.be.instanceOf(OpenAI.BadRequestError);
    expect(tools.message).to.contain('tools');
    const hot = await rejectionOf(
      client.chat.completions.create({ model: 'tiny-chat', messages: chat('Hi'), temperature: 3 }),
    );
    expect(hot).to.be.instanceOf(OpenAI.BadRequestError);
    expect(hot.message).to.contain('temperature').and.contain('[0, 2]');
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'tiny-chat', messages: chat('Hi'), temprature: 0.5 }),
    });
    expect(response.status).to.equal(400);
    expect(await response.json()).to.deep.equal({
      error: {
        message: 'Unrecognized request argument supplied: temprature',
        type: 'invalid_request_error',
        param: 'temprature',
        code: null,
      },
    });
  });

  it('goes on serving when a client drops its stream', async () => {
    const dropped = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'tiny-chat', messages: chat('A long story'), max_tokens: 200, stream: true, temperature: 0.8, seed: 1 },
      { signal: dropped.signal },
    );
    // The first chunk (the assistant's role) comes before any token: the client leaves there.
    for await (const chunk of stream) if (chunk.choices.length > 0) dropped.abort();
    const reply = await client.chat.completions.create({ model: 'tiny-chat', messages: chat('Hi'), max_tokens: 3 });
    expect(reply.usage?.completion_tokens).to.be.at.most(3);
    // The dropped stream's sequence ends at its next step: nothing is left running.
    for (let wait = 0; wait < 400 && server.stats.running > 0; wait++) await new Promise((r) => setTimeout(r, 25));
    expect(server.stats).to.deep.include({ running: 0, waiting: 0, droppedRequests: 1 });
  });

  /** `firebrand serve` started on `args`, and the URL it says it serves at. */
  async function startCli(args: string[]): Promise<{ child: ReturnType<typeof spawn>; url: string }> {
    const child = spawn(process.execPath, [cli, 'serve', ...args, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const url = await new Promise<string>((resolve, reject) => {
      let output = '';
      // A safety net: a server that never says where it listens is stopped, not left behind.
      const guard = setTimeout(() => child.kill('SIGKILL'), 100_000);
      child.stdout?.on('data', (data: Buffer) => {
        output += data.toString();
        const found = /at (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(output);
        if (found) {
          clearTimeout(guard);
          resolve(found[1]);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(guard);
        reject(new Error(`serve exited with ${code}: ${output}`));
      });
    });
    return { child, url };
  }

  it('serves a folder trainer.save wrote, with the tokenizer files beside it', async () => {
    const trainer = new Trainer({ model: await fromPretrained(chatModel), config: { progressBar: false } });
    await trainer.setup();
    const folder = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-serve-saved-')), 'model');
    await trainer.save(folder);
    for (const file of ['tokenizer.json', 'tokenizer_config.json', 'chat_template.jinja']) {
      fs.copyFileSync(path.join(chatModel, file), path.join(folder, file));
    }
    const { child, url } = await startCli([folder, '--served-model-name', 'saved']);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const saved = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
      const reply = await saved.chat.completions.create({
        model: 'saved',
        messages: chat('Hello there'),
        max_tokens: 6,
      });
      // The checkpoint's generation config travels in the saved folder: greedy, as the model itself decodes.
      expect(reply.choices[0].message.content).to.equal((await greedy(chatIds('Hello there'), 6)).text);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).to.equal(0);
    fs.rmSync(path.dirname(folder), { recursive: true, force: true });
  });

  it('runs as `firebrand serve MODEL_DIR`, answering curl, until SIGTERM', async () => {
    const { child, url } = await startCli([chatModel, '--num-threads', '1']);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const body = JSON.stringify({ model: chatModel, prompt: 'The quick brown fox', max_tokens: 5, temperature: 0 });
      const answer = JSON.parse(
        execFileSync('curl', ['-sS', '-H', 'content-type: application/json', '-d', body, `${url}/v1/completions`], {
          encoding: 'utf8',
        }),
      ) as OpenAI.Completion;
      expect(answer.choices[0].text).to.equal((await greedy(tokenizer.encode('The quick brown fox'), 5)).text);
    } finally {
      // Stopped whatever happened: a server left running would keep the test process from exiting.
      child.kill('SIGTERM');
    }
    expect(await exited).to.equal(0);
    const misspelt = spawnSync(process.execPath, [cli, 'serve', chatModel, '--prot', '8000'], { encoding: 'utf8' });
    expect(misspelt.status).to.equal(2);
    expect(misspelt.stderr).to.contain("serve: unknown option --prot (did you mean '--port'?)");
  });
});
