import type { ClientSocket, SocketFactory } from './transport.ts';

/**
 * Browsers (and any runtime with a standard global WebSocket): the API key goes
 * as `?token=` because a browser cannot set headers on an upgrade. A refused
 * upgrade is indistinguishable from a network failure here: both close before open.
 */
export const browserSocket: SocketFactory = (url, token, h): ClientSocket => {
  const u = new URL(url);
  if (token) u.searchParams.set('token', token);
  const ws = new globalThis.WebSocket(u.toString());
  ws.binaryType = 'arraybuffer';
  ws.onopen = () => h.open();
  ws.onmessage = (e: MessageEvent) => (typeof e.data === 'string' ? h.message(e.data, false) : h.message(new Uint8Array(e.data as ArrayBuffer), true));
  ws.onerror = () => h.error(new Error(`WebSocket error on ${u.origin}`));
  ws.onclose = (e: { code: number }) => h.close(e.code);
  return {
    send: (data) => ws.send(data),
    close: (code) => ws.close(code),
    terminate: () => ws.close(),
    get closed() {
      return ws.readyState === 3; // CLOSED
    },
  };
};
