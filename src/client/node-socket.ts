import WebSocket from 'ws';
import type { ClientSocket, SocketFactory } from './transport.ts';

/** Node: the `ws` package, the API key as an `Authorization: Bearer` header. */
export const nodeSocket: SocketFactory = (url, token, h): ClientSocket => {
  const ws = new WebSocket(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, perMessageDeflate: false });
  ws.on('unexpected-response', (_req, res) => {
    h.refused(res.statusCode ?? 0);
    ws.terminate();
  });
  ws.on('error', (err) => h.error(err));
  ws.on('open', () => h.open());
  ws.on('message', (data, isBinary) => {
    const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    h.message(isBinary ? buf : buf.toString('utf8'), isBinary);
  });
  ws.on('close', (code) => h.close(code));
  return {
    send: (data, binary) => ws.send(data, { binary }),
    close: (code) => ws.close(code),
    terminate: () => ws.terminate(),
    get closed() {
      return ws.readyState === WebSocket.CLOSED;
    },
  };
};
