// Datasets in the Hugging Face layout (datasetSplits): splits found by the
// datasets library's default patterns (data/{split}-NNNNN-of-NNNNN shards,
// split folders, split keywords in file names, else all 'train'), a hub id
// downloaded into Hugging Face's cache from a loopback hub and read from the
// cache with the hub gone, and a split's shards read as one table or SFT set.
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { datasetSplits, Dataset, HuggingFaceTokenizer, Table } from '../src';
import { parquetWriteBuffer } from 'hyparquet-writer';

import { startHub, type Hub } from './support/hub-server';
import { rejectionOf } from './support/helpers';

const fixtures = path.join(__dirname, '..', '..', 'test', 'fixtures');
const passengers = path.join(fixtures, 'tables', 'passengers.parquet');

/** A folder holding each of `files` (relative paths), each a copy of `content` (a file) or empty. */
function folderOf(files: string[], content?: string): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-dataset-'));
  for (const file of files) {
    fs.mkdirSync(path.dirname(path.join(folder, file)), { recursive: true });
    if (content === undefined) fs.writeFileSync(path.join(folder, file), '');
    else fs.copyFileSync(content, path.join(folder, file));
  }
  return folder;
}

/** datasetSplits of a folder of `files`, as paths relative to it. */
async function splitsOf(files: string[]): Promise<Record<string, string[]>> {
  const folder = folderOf(files);
  try {
    const splits = await datasetSplits(folder);
    return Object.fromEntries(
      Object.entries(splits).map(([split, paths]) => [split, paths.map((file) => path.relative(folder, file))]),
    );
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

describe("datasetSplits: datasets in the Hugging Face layout, split as datasets' default patterns split them", () => {
  it('takes sharded data/{split}-NNNNN-of-NNNNN files first, default splits first and others sorted', async () => {
    expect(
      await splitsOf([
        'README.md',
        'data/test-00000-of-00001.parquet',
        'data/train-00001-of-00002.parquet',
        'data/train-00000-of-00002.parquet',
        'data/extra-00000-of-00001.parquet',
        'train.jsonl',
      ]),
    ).to.deep.equal({
      train: ['data/train-00000-of-00002.parquet', 'data/train-00001-of-00002.parquet'],
      test: ['data/test-00000-of-00001.parquet'],
      extra: ['data/extra-00000-of-00001.parquet'],
    });
  });

  it('then split folders, then split keywords in file names, then everything as train; hidden files never', async () => {
    expect(
      await splitsOf(['train/a.jsonl', 'dev/b.jsonl', 'my_valid/c.jsonl', '.cache/d.jsonl', 'other.jsonl']),
    ).to.deep.equal({
      train: ['train/a.jsonl'],
      validation: ['dev/b.jsonl', 'my_valid/c.jsonl'],
    });
    expect(await splitsOf(['my_train.csv', 'eval-1.parquet', 'test.jsonl', 'retrain.csv', 'notes.txt'])).to.deep.equal({
      train: ['my_train.csv'],
      test: ['eval-1.parquet', 'test.jsonl'],
    });
    expect(await splitsOf(['penguins.csv', 'more/penguins.jsonl', '__pycache__/x.json'])).to.deep.equal({
      train: ['more/penguins.jsonl', 'penguins.csv'],
    });
    const empty = folderOf(['README.md']);
    try {
      expect((await rejectionOf(datasetSplits(empty))).message).to.contain('holds no data file');
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });

  it("reads a split's shards as one table, each row naming its file, and refuses shards whose columns differ", async () => {
    const folder = folderOf(['data/train-00000-of-00002.parquet', 'data/train-00001-of-00002.parquet'], passengers);
    try {
      const { train } = await datasetSplits(folder);
      const table = await Table.fromParquet(train);
      expect(table.numRows).to.equal(80);
      expect(Array.from(table.column('fare') as Float64Array).slice(40)).to.deep.equal(
        Array.from((await Table.fromParquet(passengers)).column('fare') as Float64Array),
      );
      expect(table.where(41)).to.equal(`${train[1]}, row 1`);
      // A shard of other columns: the columns both hold are read; the others are refused, naming both files.
      const other = parquetWriteBuffer({
        columnData: [
          { name: 'fare', data: [1.5, 2.5], type: 'DOUBLE' },
          { name: 'id', data: ['a', 'b'], type: 'STRING' },
        ],
      });
      fs.writeFileSync(train[1], new Uint8Array(other));
      expect((await Table.fromParquet(train, { columns: ['fare'] })).numRows).to.equal(42);
      const columns = await rejectionOf(Table.fromParquet(train));
      expect(columns.message).to.contain(`${train[1]}, row 0: columns fare, id, where ${train[0]}, row 0 has id, name`);
      const named = await rejectionOf(Table.fromParquet(train, { columns: 'fare' as never }));
      expect(named.message).to.contain('options.columns must be a list of column names, got "fare"');
      expect((await rejectionOf(datasetSplits(folder, { revison: 'main' } as never))).message).to.contain("'revison'");
      const kinds = await rejectionOf(Table.fromParquet(train, { columns: ['id'] }));
      expect(kinds.message).to.contain(
        `${train[1]}, row 0: column 'id' holds texts, where ${train[0]}, row 0 has numbers`,
      );
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('datasetSplits with hub ids, against a loopback hub', function () {
  this.timeout(60_000);
  const variables = ['HF_HOME', 'HF_HUB_CACHE', 'HF_ENDPOINT', 'HF_TOKEN', 'HF_HUB_OFFLINE'] as const;
  const saved = Object.fromEntries(variables.map((name) => [name, process.env[name]]));
  let home: string;
  let hub: Hub | undefined;
  let repo: string;
  beforeEach(() => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'firebrand-hf-home-'));
    for (const name of variables) delete process.env[name];
    process.env.HF_HOME = home;
    repo = folderOf(['data/train-00000-of-00001.parquet'], passengers);
    fs.copyFileSync(
      path.join(fixtures, 'pretrained', 'chat-masks.parquet'),
      path.join(repo, 'data', 'validation-00000-of-00001.parquet'),
    );
    fs.writeFileSync(path.join(repo, 'README.md'), '---\nlicense: mit\n---\n');
  });
  afterEach(async () => {
    await hub?.close();
    hub = undefined;
    for (const name of variables) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(repo, { recursive: true, force: true });
  });

  it("downloads a dataset's data files into the cache (datasets--org--name) with HF_TOKEN, then answers from the cache", async () => {
    hub = await startHub([{ id: 'firebrand/passengers', folder: repo, type: 'dataset' }], { token: 'hf_firebrand' });
    process.env.HF_ENDPOINT = hub.url;
    process.env.HF_TOKEN = 'hf_firebrand';
    const splits = await datasetSplits('firebrand/passengers');
    expect(Object.keys(splits)).to.deep.equal(['train', 'validation']);
    const storage = path.join(home, 'hub', 'datasets--firebrand--passengers');
    const commit = fs.readFileSync(path.join(storage, 'refs', 'main'), 'utf8');
    expect(splits.train).to.deep.equal([
      path.join(storage, 'snapshots', commit, 'data', 'train-00000-of-00001.parquet'),
    ]);
    expect((await Table.fromParquet(splits.train)).numRows).to.equal(40);
    // The README is no data file: it is not downloaded.
    const downloads = hub.requests.filter((request) => request.includes('/resolve/'));
    expect(downloads.some((request) => request.includes('datasets/firebrand/passengers'))).to.equal(true);
    expect(downloads.filter((request) => request.includes('README'))).to.deep.equal([]);
    expect(fs.existsSync(path.join(storage, 'snapshots', commit, 'README.md'))).to.equal(false);

    await hub.close();
    hub = undefined;
    expect(await datasetSplits('firebrand/passengers')).to.deep.equal(splits);
    process.env.HF_HUB_OFFLINE = '1';
    expect(await datasetSplits('firebrand/passengers')).to.deep.equal(splits);
    const tokenizer = await HuggingFaceTokenizer.fromPretrained(path.join(fixtures, 'pretrained', 'chat-tokenizer'));
    const chats = await Dataset.fromSft(splits.validation, tokenizer, { assistantOnlyLoss: true });
    expect(chats.fields().input_ids.shape[0]).to.equal(2);
    const unknown = await rejectionOf(datasetSplits('firebrand/unknown'));
    expect(unknown.message).to.contain("datasetSplits('firebrand/unknown'): HF_HUB_OFFLINE is set");
  });
});
