import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { BSON } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeServers } from '../../src/app/probe-servers.ts';
import { configSchema, type Config } from '../../src/config/config-schema.ts';
import { closedPort } from '../support/net.ts';
import { describeWithServer } from '../support/servers.ts';

/**
 * The start-up probe: one line per server that does not answer in its own
 * protocol. A port that accepts TCP but is another service (or a transparent
 * proxy) used to pass, and the client library then retried for many seconds.
 */
function production(urls: { redis?: string; nats?: string; mongo?: string; qdrant?: string; qdrantApiKey?: string }): Config {
  return configSchema.parse({
    profile: 'production',
    adapters: { buffer: 'redis', cache: 'redis', lock: 'redis', bus: 'nats', events: 'nats', documents: 'mongo', cold: 'mongo', acus: 'qdrant' },
    redis: { url: urls.redis ?? 'redis://127.0.0.1:1' },
    nats: { servers: urls.nats ?? 'nats://127.0.0.1:1' },
    mongo: { url: urls.mongo ?? 'mongodb://127.0.0.1:1' },
    qdrant: { url: urls.qdrant ?? 'http://127.0.0.1:1', ...(urls.qdrantApiKey ? { apiKey: urls.qdrantApiKey } : {}) },
  });
}

async function problems(config: Config): Promise<string[]> {
  try {
    await probeServers(config, 2_000);
    return [];
  } catch (err) {
    return (err as Error).message.split('\n').slice(1);
  }
}

const listening = <S extends Server | HttpServer>(server: S): Promise<number> => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

let http: HttpServer;
let httpPort: number;
let qdrant: HttpServer;
let qdrantPort: number;
let mongo: Server;
let mongoPort: number;
const mongoRequests: Buffer[] = [];

beforeAll(async () => {
  http = createHttpServer((_req, res) => res.writeHead(400).end('bad request'));
  httpPort = await listening(http);
  // What Qdrant's root answers: its title without a key, 401 with a wrong one.
  qdrant = createHttpServer((req, res) => {
    if (req.headers['api-key'] === 'wrong') return void res.writeHead(401).end('Invalid api-key');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ title: 'qdrant - vector search engine', version: '1.15.2' }));
  });
  qdrantPort = await listening(qdrant);
  // Answers an OP_MSG with an OP_MSG header, as mongod does; keeps what it received.
  mongo = createServer((sock) =>
    sock.once('data', (b: Buffer) => {
      mongoRequests.push(b);
      const reply = Buffer.alloc(16);
      reply.writeInt32LE(16, 0);
      reply.writeInt32LE(2013, 12);
      sock.end(reply);
    }),
  );
  mongoPort = await listening(mongo);
});
afterAll(() => {
  http?.close();
  qdrant?.close();
  mongo?.close();
});

describe('probeServers', () => {
  it('names each server that is closed, or answers as something else, one line each', async () => {
    const closed = await closedPort();
    const lines = await problems(
      production({ redis: `redis://127.0.0.1:${httpPort}`, mongo: `mongodb://127.0.0.1:${httpPort}`, qdrant: `http://127.0.0.1:${closed}`, nats: `nats://127.0.0.1:${httpPort}` }),
    );
    expect(lines).toEqual([
      `  Redis at redis://127.0.0.1:${httpPort}: answers, but not as Redis ("HTTP/1.1 400 Bad Request"): is this the right port?`,
      `  NATS at nats://127.0.0.1:${httpPort}: accepts connections but does not answer as NATS within 2000 ms`,
      `  MongoDB at mongodb://127.0.0.1:${httpPort}: answers, but not as MongoDB ("HTTP/1.1 400 Bad Request"): is this the right port?`,
      `  Qdrant at http://127.0.0.1:${closed}: ECONNREFUSED`,
    ]);
  });

  it("sends MongoDB a well-formed hello and accepts Qdrant's root with or without a key", async () => {
    const lines = await problems(production({ mongo: `mongodb://127.0.0.1:${mongoPort}`, qdrant: `http://127.0.0.1:${qdrantPort}` }));
    expect(lines.filter((l) => /MongoDB|Qdrant/.test(l))).toEqual([]);
    const request = mongoRequests[0]!;
    expect(request.readInt32LE(0)).toBe(request.length);
    expect(request.readInt32LE(12)).toBe(2013);
    expect(request.subarray(21)).toEqual(Buffer.from(BSON.serialize({ hello: 1, $db: 'admin' })));
    const withKey = await problems(production({ qdrant: `http://127.0.0.1:${qdrantPort}`, qdrantApiKey: 'wrong' }));
    expect(withKey.filter((l) => l.includes('Qdrant'))).toEqual([]);
  });

  it('TLS URLs are checked for a TCP connect only (their first bytes are a handshake)', async () => {
    const lines = await problems(production({ redis: `rediss://127.0.0.1:${httpPort}`, qdrant: `https://127.0.0.1:${httpPort}`, mongo: `mongodb://127.0.0.1:${httpPort}/?tls=true` }));
    expect(lines.filter((l) => /Redis|Qdrant|MongoDB/.test(l))).toEqual([]);
  });
});

describeWithServer('redis', 'probeServers against a real Redis', (redis) => {
  describeWithServer('nats', 'and a real NATS', (nats) => {
    it('both pass', async () => {
      const lines = await problems(production({ redis, nats }));
      expect(lines.filter((l) => /Redis|NATS/.test(l))).toEqual([]);
      expect(lines).toHaveLength(2); // MongoDB and Qdrant, which are not running
    });
  });
});
