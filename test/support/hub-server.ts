// A loopback stand-in for the Hugging Face hub, serving folders as one commit
// each under the hub's URL layout: api/models/{id}/revision/{rev},
// api/models/{id}/tree/{rev}, api/models/{id}/paths-info/{rev} and
// {id}/resolve/{rev}/{file} (byte ranges, ETag, X-Repo-Commit). With a token,
// requests without "Authorization: Bearer <token>" get 401.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export interface HubRepo {
  id: string;
  folder: string;
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
    repos.map((repo) => [repo.id, { ...repo, commit: commitOf(repo.id), files: fs.readdirSync(repo.folder).sort() }]),
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
    const api = url.pathname.match(/^\/api\/models\/([^/]+\/[^/]+)\/(revision|tree|paths-info)\/([^/]+)$/);
    const resolve = url.pathname.match(/^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/);
    const [id, revision] = api
      ? [api[1], decodeURIComponent(api[3])]
      : resolve
        ? [resolve[1], decodeURIComponent(resolve[2])]
        : [];
    const repo = id === undefined ? undefined : byId.get(id);
    if (repo === undefined || (revision !== 'main' && revision !== repo.commit)) {
      return send(response, 404, 'not found', { 'X-Error-Code': 'RepoNotFound' });
    }
    const json = (value: unknown) => send(response, 200, JSON.stringify(value), { 'Content-Type': 'application/json' });
    if (api?.[2] === 'revision') {
      return json({
        _id: repo.commit,
        id,
        sha: repo.commit,
        private: false,
        siblings: repo.files.map((file) => ({ rfilename: file })),
      });
    }
    if (api?.[2] === 'tree') return json(repo.files.map((file) => ({ ...fileInfo(repo, file), content: undefined })));
    if (api?.[2] === 'paths-info') {
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
    const file = resolve?.[3] ?? '';
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
