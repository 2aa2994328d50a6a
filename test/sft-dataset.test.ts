// Supervised fine-tuning data as TRL's SFTTrainer prepares it (Dataset.fromSft):
// the assistant's tokens marked as transformers' apply_chat_template
// (return_assistant_tokens_mask=True) marks them (golden from
// scripts/make-pretrained-fixtures.py), from {% generation %} blocks or, without
// them, from the conversation's prefixes; completion-only loss; truncation; rows
// with nothing to learn dropped with a warning; errors that name the row.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { ChatMessage, Dataset, fromPretrained, HuggingFaceTokenizer, SftRow, Trainer } from '../src';
import { expectClose } from './support/expect-close';
import { rejectionOf } from './support/helpers';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures', 'pretrained');
const chatFolder = path.join(fixtures, 'chat-tokenizer');

interface MaskGolden {
  taggedTemplate: string;
  cases: { messages: ChatMessage[]; ids: number[]; assistantMasks: number[] }[];
}
const golden: MaskGolden = JSON.parse(fs.readFileSync(path.join(fixtures, 'chat-tokenizer-masks.golden.json'), 'utf8'));

const readJson = (file: string) => JSON.parse(fs.readFileSync(path.join(chatFolder, file), 'utf8'));
const untagged = () => HuggingFaceTokenizer.fromFile(chatFolder);
const tagged = () =>
  HuggingFaceTokenizer.fromJSON(readJson('tokenizer.json'), {
    ...readJson('tokenizer_config.json'),
    chat_template: golden.taggedTemplate,
  });

/** The dataset's ids and targets as plain arrays, by row. */
function rowsOf(data: Dataset): { ids: number[][]; targets: number[][] } {
  const fields = data.fields();
  const [rows, length] = fields.target.shape;
  const byRow = (values: ArrayLike<number | bigint>) =>
    Array.from({ length: rows }, (_, i) => Array.from(values, Number).slice(i * length, (i + 1) * length));
  return { ids: byRow(fields.input_ids.data), targets: byRow(fields.target.data) };
}

/** The FIREBRAND_SFT_DROPPED_ROWS warnings emitted while `body` runs. */
async function droppedWarnings(body: () => Promise<unknown>): Promise<string[]> {
  const warnings: Error[] = [];
  const listener = (warning: Error) => warnings.push(warning);
  process.on('warning', listener);
  try {
    await body();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listener);
  }
  return warnings
    .filter((warning) => (warning as { code?: string }).code === 'FIREBRAND_SFT_DROPPED_ROWS')
    .map((warning) => warning.message);
}

describe('Dataset.fromSft: chat and instruction rows as TRL prepares them', function () {
  this.timeout(60_000);
  let folder: string;
  beforeEach(() => (folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-sft-'))));
  afterEach(() => fs.rmSync(folder, { recursive: true, force: true }));

  it("marks the assistant's tokens as transformers' return_assistant_tokens_mask, with and without {% generation %}", () => {
    for (const [i, { messages, ids, assistantMasks }] of golden.cases.entries()) {
      for (const [name, tokenizer] of [
        ['{% generation %} blocks', tagged()],
        ['prefixes of the conversation', untagged()],
      ] as const) {
        const result = tokenizer.chatTokensWithMask(messages);
        expect(Array.from(result.ids), `case ${i}, ${name}`).to.deep.equal(ids);
        expect(Array.from(result.assistantMask), `case ${i}, ${name}`).to.deep.equal(assistantMasks);
      }
    }
  });

  it('makes next-token targets of the assistant tokens alone (assistantOnlyLoss), from a JSON Lines file', async () => {
    const file = path.join(folder, 'chat.jsonl');
    fs.writeFileSync(file, golden.cases.map(({ messages }) => JSON.stringify({ messages })).join('\n\n') + '\n');
    const data = await Dataset.fromSft(file, untagged(), { assistantOnlyLoss: true });
    const { ids, targets } = rowsOf(data);
    golden.cases.forEach((expected, row) => {
      const length = expected.ids.length;
      expect(ids[row].slice(0, length)).to.deep.equal(expected.ids);
      // Position t predicts token t + 1, where the loss counts it; padding and the last position predict nothing.
      const next = expected.ids.map((_, t) =>
        t + 1 < length && expected.assistantMasks[t + 1] === 1 ? expected.ids[t + 1] : -100,
      );
      expect(targets[row].slice(0, length)).to.deep.equal(next);
      expect(targets[row].slice(length).every((target) => target === -100)).to.equal(true);
    });
    // Without assistantOnlyLoss every next token counts.
    const all = rowsOf(await Dataset.fromSft(file, untagged()));
    expect(all.targets[1].slice(0, golden.cases[1].ids.length - 1)).to.deep.equal(golden.cases[1].ids.slice(1));
  });

  it("reads the rows of a Parquet shard as a Hugging Face chat dataset's (messages: list<struct<role, content>>)", async () => {
    // Written by pyarrow in two row groups (scripts/make-parquet-fixtures.py).
    const shard = path.join(fixtures, 'chat-masks.parquet');
    const file = path.join(folder, 'chat.jsonl');
    fs.writeFileSync(file, golden.cases.map(({ messages }) => JSON.stringify({ messages })).join('\n') + '\n');
    const fromParquet = await Dataset.fromSft(shard, untagged(), { assistantOnlyLoss: true });
    expect(rowsOf(fromParquet)).to.deep.equal(
      rowsOf(await Dataset.fromSft(file, untagged(), { assistantOnlyLoss: true })),
    );
    expect(rowsOf(fromParquet).ids).to.have.length(golden.cases.length);
  });

  it('counts the completion alone in prompt/completion rows, conversations or text (eos added to text)', async () => {
    const tokenizer = untagged();
    const [user, answer] = golden.cases[1].messages;
    const rows: SftRow[] = [
      { prompt: [user], completion: [answer] },
      { prompt: 'The quick brown', completion: ' fox' },
    ];
    const { ids, targets } = rowsOf(await Dataset.fromSft(rows, tokenizer));
    const promptIds = tokenizer.applyChatTemplate([user], { addGenerationPrompt: true });
    const fullIds = tokenizer.applyChatTemplate([user, answer]);
    expect(ids[0].slice(0, fullIds.length)).to.deep.equal(Array.from(fullIds));
    const counted = targets[0].flatMap((target, t) => (target === -100 ? [] : [t + 1]));
    expect(counted).to.deep.equal(
      Array.from({ length: fullIds.length - promptIds.length }, (_, k) => promptIds.length + k),
    );
    const text = tokenizer.encode(`The quick brown fox${tokenizer.specialTokens.eos}`);
    expect(ids[1].slice(0, text.length)).to.deep.equal(Array.from(text));
    const textPrompt = tokenizer.encode('The quick brown');
    expect(targets[1].filter((target) => target !== -100)).to.deep.equal(Array.from(text.slice(textPrompt.length)));
  });

  it('truncates to maxLength from either end, and drops rows left with nothing to learn, with a warning', async () => {
    const tokenizer = untagged();
    const { messages, ids } = golden.cases[0];
    const assistantOnly = { maxLength: 12, assistantOnlyLoss: true };
    // The first 12 tokens hold no assistant token; the last 12 do.
    const none = await rejectionOf(Dataset.fromSft([{ messages }, { messages }], tokenizer, assistantOnly));
    expect(none.code).to.equal('ERR_FIREBRAND_INVALID_ARGUMENT');
    expect(none.message).to.match(/no row has a target the loss counts \(2 rows, all dropped\)/);
    let end: Dataset | undefined;
    const warnings = await droppedWarnings(async () => {
      end = await Dataset.fromSft([{ messages: messages.slice(0, 1) }, { messages }], tokenizer, {
        ...assistantOnly,
        truncation: 'keep_end',
      });
    });
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.match(
      /^Dataset\.fromSft\(rows\): 1 of 2 rows have no target the loss counts .* dropped: rows 0$/,
    );
    expect(rowsOf(end as Dataset).ids).to.deep.equal([ids.slice(ids.length - 12)]);
  });

  it('names the file line, the row and the option at fault', async () => {
    const file = path.join(folder, 'bad.jsonl');
    fs.writeFileSync(file, '{"text": "fine"}\n{"text": oops}\n');
    expect((await rejectionOf(Dataset.fromSft(file, untagged()))).message).to.match(/bad\.jsonl:2: not JSON/);
    const wrong = await rejectionOf(Dataset.fromSft([{ text: 'fine' }, { question: 'what?' }], untagged()));
    expect(wrong.message).to.match(
      /rows, row 1: expected \{ messages \}, \{ prompt, completion \} or \{ text: string \}/,
    );
    const role = await rejectionOf(Dataset.fromSft([{ messages: [{ role: 'user' }] }], untagged()));
    expect(role.message).to.match(/row 0\.messages\[0\]: expected \{ role: string, content: string \}/);
    const option = await rejectionOf(Dataset.fromSft([{ text: 'x' }], untagged(), { max_length: 8 } as object));
    expect(option.message).to.match(/unknown option 'max_length'/);
  });

  it('trains LoRA on assistant-only rows of a tied chat model end to end', async () => {
    const chat = path.join(__dirname, '..', '..', 'examples', 'data', 'tiny-chat-llama');
    const tokenizer = await HuggingFaceTokenizer.fromPretrained(chat);
    const rows = golden.cases.map(({ messages }) => ({ messages }));
    const trainer = new Trainer({
      model: await fromPretrained(chat),
      loss: 'cross_entropy',
      optimizer: { name: 'adamw', lr: 1e-2 },
      lora: { r: 4, targetModules: ['q_proj', 'v_proj'] },
      config: { progressBar: false, numThreads: 1, numEpochs: 3, batchSize: 2, seed: 0 },
    });
    const history = await trainer.fit(await Dataset.fromSft(rows, tokenizer, { assistantOnlyLoss: true }));
    const losses = history.epochs.map((epoch) => epoch.loss);
    expect(losses.every(Number.isFinite)).to.equal(true);
    expect(losses[2]).to.be.below(losses[0]);
  });

  it("packs rows several to a sequence (TRL's packing), each row's positions from 0, its targets kept", async () => {
    const chat = path.join(__dirname, '..', '..', 'examples', 'data', 'tiny-chat-llama');
    const tokenizer = await HuggingFaceTokenizer.fromPretrained(chat);
    const rows = [...golden.cases, ...golden.cases].map(({ messages }, i) => ({
      messages: messages.slice(0, 2 + (i % 3)),
    }));
    const padded = await Dataset.fromSft(rows, tokenizer, { maxLength: 256 });
    const packed = await Dataset.fromSft(rows, tokenizer, { maxLength: 256, packing: true });
    const fields = packed.fields();
    expect(Object.keys(fields).sort()).to.deep.equal(['input', 'input_ids', 'position_ids', 'target']);
    expect(fields.target.shape[0], 'fewer sequences than rows').to.be.below(rows.length);
    const counted = (data: Dataset) =>
      Array.from(data.fields().target.data, Number)
        .filter((t) => t !== -100)
        .sort();
    expect(counted(packed)).to.deep.equal(counted(padded));

    // A packed sequence gives each row the logits it gets alone, and the same mean loss over the counted
    // targets: its rows do not see each other.
    const model = async (options: { positionIds?: boolean }) => {
      const trainer = new Trainer({
        model: await fromPretrained(chat, options),
        loss: 'cross_entropy',
        config: { progressBar: false, numThreads: 1 },
      });
      await trainer.setup();
      return trainer;
    };
    const [packedModel, plainModel] = [await model({ positionIds: true }), await model({})];
    const [, length] = fields.input_ids.shape;
    const first = {
      input_ids: { data: fields.input_ids.data.slice(0, length), shape: [1, length] },
      position_ids: { data: fields.position_ids.data.slice(0, length), shape: [1, length] },
    };
    const logits = await packedModel.predict(first);
    const vocabulary = logits.shape[1];
    const positions = Array.from(first.position_ids.data, Number);
    const starts = positions.flatMap((position, t) => (position === 0 ? [t] : []));
    expect(starts.length, 'the first sequence holds several rows').to.be.above(1);
    for (const [k, start] of starts.entries()) {
      const end = starts[k + 1] ?? length;
      const ids = first.input_ids.data.slice(start, end);
      const alone = await plainModel.predict(ids, [1, end - start]);
      const part = Float32Array.from({ length: vocabulary * (end - start) }, (_, j) => {
        const [v, t] = [Math.floor(j / (end - start)), j % (end - start)];
        return logits.data[v * length + start + t] as number;
      });
      expectClose(part, alone.data as Float32Array, `row ${k} of the first packed sequence`);
    }
    const everything = { batchSize: 64 };
    const packedLoss = (await packedModel.evaluate(packed, everything)).loss;
    const paddedLoss = (await plainModel.evaluate(padded, everything)).loss;
    expect(packedLoss).to.be.closeTo(paddedLoss, 1e-5);
  });
});
