// launch's dynamic rendezvous (--rdzv-backend c10d): every node runs the same
// command, and the nodes learn their ranks by meeting at --rdzv-endpoint. The
// launcher that can listen there (the endpoint is one of its addresses) hosts
// the meeting, as torchrun's c10d handler hosts its store: nodes are ranked in
// the order they join (the host first), and once --nnodes have joined each is
// told its node rank and the master address and port its ranks are to use.
// Over plain TCP, one JSON line each way, so that launchers meet launchers.
import net from 'node:net';
import os from 'node:os';

import { UsageError } from './usage-error';

export interface RendezvousSpec {
  host: string;
  port: number;
  /** Nodes of other jobs (another id) are refused (torchrun's --rdzv-id). */
  id: string;
  /** The meeting ends when maxNodes have come, or lastCallSeconds after minNodes had. */
  minNodes: number;
  maxNodes: number;
  timeoutSeconds: number;
  lastCallSeconds: number;
}

export interface NodeAssignment {
  nodeRank: number;
  /** The nodes that met: this start's number of nodes. */
  nnodes: number;
  masterAddr: string;
  masterPort: number;
}

const isLocal = (host: string) =>
  ['localhost', os.hostname()].includes(host) ||
  Object.values(os.networkInterfaces()).some((addresses) => addresses?.some((entry) => entry.address === host));

/** A port free on every interface now, for the master (rank 0's store). */
function freePortAnywhere(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().once('error', reject);
    server.listen(0, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function timedOut(spec: RendezvousSpec, joined: string): UsageError {
  return new UsageError(
    `rendezvous '${spec.id}' at ${spec.host}:${spec.port}: ${joined} within ${spec.timeoutSeconds} s; ` +
      `start launch on ${spec.minNodes === spec.maxNodes ? 'every one of the' : 'at least'} ${spec.minNodes} nodes with the same --rdzv-endpoint and --rdzv-id`,
  );
}

/** Hosts the meeting; resolves with node rank 0 once every node has joined. */
function host(server: net.Server, spec: RendezvousSpec): Promise<NodeAssignment> {
  const members: net.Socket[] = [];
  return new Promise((resolve, reject) => {
    let lastCall: NodeJS.Timeout | undefined;
    let met = false;
    const timer = setTimeout(() => {
      server.close();
      for (const socket of members) socket.destroy();
      reject(timedOut(spec, `${members.length + 1} of ${spec.minNodes} nodes joined`));
    }, spec.timeoutSeconds * 1000);
    const close = async () => {
      met = true;
      clearTimeout(timer);
      clearTimeout(lastCall);
      server.close();
      const masterPort = await freePortAnywhere();
      const nnodes = members.length + 1;
      members.forEach((member, index) =>
        member.end(`${JSON.stringify({ nodeRank: index + 1, nnodes, masterAddr: spec.host, masterPort })}\n`),
      );
      resolve({ nodeRank: 0, nnodes, masterAddr: spec.host, masterPort });
    };
    if (spec.minNodes === 1) lastCall = setTimeout(close, spec.lastCallSeconds * 1000);
    server.on('connection', (socket) => {
      let received = '';
      socket.on('error', () => socket.destroy());
      socket.on('data', async (chunk) => {
        received += String(chunk);
        if (!received.includes('\n')) return;
        socket.removeAllListeners('data');
        let id: string;
        try {
          ({ id } = JSON.parse(received) as { id: string });
        } catch {
          socket.destroy(); // not a launcher
          return;
        }
        const refused = id !== spec.id ? `another job's rendezvous (id '${spec.id}', not '${id}')` : undefined;
        if (refused !== undefined || members.length + 1 >= spec.maxNodes) {
          socket.end(
            `${JSON.stringify({ error: refused ?? `the rendezvous '${spec.id}' is full (${spec.maxNodes} nodes)` })}\n`,
          );
          return;
        }
        members.push(socket);
        // A node that leaves before the meeting ends is not counted (it would wait for ranks that never come).
        socket.on('close', () => {
          if (met || !members.includes(socket)) return;
          members.splice(members.indexOf(socket), 1);
          if (members.length + 1 < spec.minNodes) clearTimeout(lastCall);
        });
        if (members.length + 1 === spec.maxNodes) await close();
        else if (members.length + 1 === spec.minNodes) lastCall = setTimeout(close, spec.lastCallSeconds * 1000);
      });
    });
  });
}

/** Joins the meeting another launcher hosts, trying again until it listens or the time is up. */
async function join(spec: RendezvousSpec): Promise<NodeAssignment> {
  const deadline = Date.now() + spec.timeoutSeconds * 1000;
  for (;;) {
    const reply = await new Promise<string | undefined>((resolve) => {
      const socket = net.connect(spec.port, spec.host, () => socket.write(`${JSON.stringify({ id: spec.id })}\n`));
      let text = '';
      socket.setTimeout(Math.max(deadline - Date.now(), 1));
      socket.on('data', (chunk) => (text += String(chunk)));
      socket.on('end', () => resolve(text));
      socket.on('timeout', () => socket.destroy());
      socket.on('error', () => resolve(undefined));
      socket.on('close', () => resolve(text === '' ? undefined : text));
    });
    if (reply !== undefined) {
      let answer: NodeAssignment & { error?: string };
      try {
        answer = JSON.parse(reply);
      } catch {
        throw new UsageError(`rendezvous at ${spec.host}:${spec.port}: the host answered ${JSON.stringify(reply)}`);
      }
      if (answer.error !== undefined) throw new UsageError(`rendezvous at ${spec.host}:${spec.port}: ${answer.error}`);
      return answer;
    }
    if (Date.now() >= deadline) throw timedOut(spec, 'no host of the rendezvous answered');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** This node's rank and the master to use, once --nnodes nodes have met at the endpoint. */
export async function meetNodes(spec: RendezvousSpec): Promise<NodeAssignment> {
  if (isLocal(spec.host)) {
    const server = net.createServer();
    const listening = await new Promise<boolean>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        error.code === 'EADDRINUSE' ? resolve(false) : reject(error),
      );
      server.listen(spec.port, () => resolve(true));
    });
    if (listening && spec.maxNodes > 1) return host(server, spec);
    if (listening) {
      server.close();
      return { nodeRank: 0, nnodes: 1, masterAddr: spec.host, masterPort: await freePortAnywhere() };
    }
  }
  return join(spec);
}
