/**
 * Baseline server: raw uWebSockets.js with no memgate code. `/v1/ws` echoes
 * every frame back unchanged (same opcode), and every HTTP POST reads its body
 * and answers a tiny JSON object. The load generators drive it exactly as they
 * drive memgate, so a memgate figure divided by this one is the cost of memgate.
 * Prints `uws-echo listening on http://HOST:PORT` first on stdout, like memgate.
 */
import uWS from 'uWebSockets.js';

const host = process.argv[2] ?? '127.0.0.1';
const port = Number(process.argv[3] ?? 0);
if (typeof uWS.SSLApp !== 'function') throw new Error('uWebSockets.js native addon did not load');

const replyBytes = Number(process.env['ECHO_REPLY_BYTES'] ?? 0);
const pad = (prefix: string) => prefix + '"pad":"' + 'x'.repeat(Math.max(0, replyBytes - prefix.length - 9)) + '"}';
const httpReply = replyBytes > 0 ? pad('{"op":"context",') : '{"ok":true}';
const decoder = new TextDecoder();

const app = uWS.App();
app.ws('/v1/ws', {
  compression: uWS.DISABLED,
  maxPayloadLength: 1024 * 1024,
  idleTimeout: 120,
  message: (ws, message, isBinary) => {
    if (replyBytes === 0 || isBinary) {
      ws.send(message, isBinary);
      return;
    }
    // Decode before anything else: the ArrayBuffer is only valid inside this callback.
    const id = (JSON.parse(decoder.decode(message)) as { id?: unknown }).id;
    ws.send(pad(`{"op":"context","id":${JSON.stringify(id ?? null)},`), false);
  },
});
app.get('/healthz', (res) => {
  res.writeHeader('content-type', 'application/json').end('{"status":"ok"}');
});
app.post('/*', (res) => {
  let aborted = false;
  res.onAborted(() => (aborted = true));
  // The body is consumed (as a real route must) before the reply.
  res.onData((_chunk, isLast) => {
    if (!isLast || aborted) return;
    res.cork(() => {
      res.writeHeader('content-type', 'application/json').end(httpReply);
    });
  });
});

app.listen(host, port, (ls) => {
  if (!ls) {
    process.stderr.write(`uws-echo: cannot listen on ${host}:${port}\n`);
    process.exit(1);
  }
  process.stdout.write(`uws-echo listening on http://${host}:${uWS.us_socket_local_port(ls)}\n`);
  const stop = () => {
    uWS.us_listen_socket_close(ls);
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
});
