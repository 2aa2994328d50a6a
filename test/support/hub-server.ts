// A loopback stand-in for the Hugging Face hub, serving folders (and their
// subfolders) as one commit each under the hub's URL layout:
// api/models/{id}/revision/{rev}, api/models/{id}/tree/{rev},
// api/models/{id}/paths-info/{rev} and {id}/resolve/{rev}/{file} (byte ranges,
// ETag, X-Repo-Commit); a dataset's under api/datasets/ and datasets/{id}/. With
// a token, requests without "Authorization: Bearer <token>" get 401.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export interface HubRepo {
  id: string;
  folder: string;
  /** A model's repository (the default) or a dataset's. */
  type?: 'model' | 'dataset';
}

/** The files under `folder`, as '/'-separated paths relative to it, sorted. */
function filesUnder(folder: string, prefix = ''): string[] {
  return fs
    .readdirSync(path.join(folder, prefix), { withFileTypes: true })
    .flatMap((entry) => {
      const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      return entry.isDirectory() ? filesUnder(folder, relative) : [relative];
    })
    .sort();
}

export interface Hub {
  url: string;
  /** Every request, as "METHOD path". */
  requests: string[];
  close(): Promise<void>;
}

const commitOf = (id: string) => createHash('sha1').update(`commit of ${id}`).digest('hex');

function send(
  response: http.ServerResponse,
  status: number,
  body: string | Buffer,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'Content-Length': String(Buffer.byteLength(body)), ...headers });
  response.end(body);
}

export async function startHub(repos: HubRepo[], { token }: { token?: string } = {}): Promise<Hub> {
  const requests: string[] = [];
  const byId = new Map(
    repos.map((repo) => [
      `${repo.type ?? 'model'}:${repo.id}`,
      { ...repo, commit: commitOf(repo.id), files: filesUnder(repo.folder) },
    ]),
  );
  const fileInfo = (repo: { folder: string; commit: string }, file: string) => {
    const content = fs.readFileSync(path.join(repo.folder, file));
    return {
      type: 'file',
      path: file,
      size: content.length,
      oid: createHash('sha1').update(content).digest('hex'),
      content,
    };
  };
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://hub');
    requests.push(`${request.method} ${url.pathname}`);
    if (token !== undefined && request.headers.authorization !== `Bearer ${token}`)
      return send(response, 401, 'unauthorized');
    const api = url.pathname.match(/^\/api\/(models|datasets)\/([^/]+\/[^/]+)\/(revision|tree|paths-info)\/([^/]+)$/);
    const resolve = url.pathname.match(/^\/(datasets\/)?([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/);
    const [type, id, revision] = api
      ? [api[1] === 'datasets' ? 'dataset' : 'model', api[2], decodeURIComponent(api[4])]
      : resolve
        ? [resolve[1] ? 'dataset' : 'model', resolve[2], decodeURIComponent(resolve[3])]
        : [];
    const repo = id === undefined ? undefined : byId.get(`${type}:${id}`);
    if (repo === undefined || (revision !== 'main' && revision !== repo.commit)) {
      return send(response, 404, 'not found', { 'X-Error-Code': 'RepoNotFound' });
    }
    const json = (value: unknown) => send(response, 200, JSON.stringify(value), { 'Content-Type': 'application/json' });
    if (api?.[3] === 'revision') {
      return json({
        _id: repo.commit,
        id,
        sha: repo.commit,
        private: false,
        siblings: repo.files.map((file) => ({ rfilename: file })),
      });
    }
    if (api?.[3] === 'tree') return json(repo.files.map((file) => ({ ...fileInfo(repo, file), content: undefined })));
    if (api?.[3] === 'paths-info') {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const { paths } = JSON.parse(body) as { paths: string[] };
        const lastCommit = { id: repo.commit, title: 'fixture', date: '2026-11-26T00:00:00Z' };
        json(
          paths
            .filter((file) => repo.files.includes(file))
            .map((file) => ({ ...fileInfo(repo, file), content: undefined, lastCommit })),
        );
      });
      return;
    }
    const file = decodeURIComponent(resolve?.[4] ?? '');
    if (!repo.files.includes(file)) return send(response, 404, 'no such file', { 'X-Error-Code': 'EntryNotFound' });
    const { content, oid } = fileInfo(repo, file);
    const headers = { ETag: `"${oid}"`, 'X-Repo-Commit': repo.commit, 'Accept-Ranges': 'bytes' };
    const range = request.headers.range?.match(/^bytes=(\d+)-(\d+)$/);
    if (range === undefined || range === null) return send(response, 200, content, headers);
    const [start, end] = [Number(range[1]), Math.min(Number(range[2]), content.length - 1)];
    send(response, 206, content.subarray(start, end + 1), {
      ...headers,
      'Content-Range': `bytes ${start}-${end}/${content.length}`,
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
