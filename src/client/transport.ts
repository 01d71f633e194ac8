/**
 * The one thing the client needs from a WebSocket implementation. Node uses the
 * `ws` package (it can send the API key as a header); browsers use the native
 * WebSocket (the key travels as `?token=`, the only way a browser can send it).
 */
export interface SocketHandlers {
  open(): void;
  /** A frame: text as a string, binary as bytes. */
  message(data: string | Uint8Array, isBinary: boolean): void;
  /** The connection closed; `code` is the WebSocket close code (1006 when it was cut without a close frame). */
  close(code: number): void;
  /** The upgrade was answered with an HTTP status instead (401, 403, 503…), when the platform can tell. */
  refused(status: number): void;
  error(err: Error): void;
}

export interface ClientSocket {
  send(data: string | Uint8Array, binary: boolean): void;
  /** Close with a close frame; `handlers.close` fires when done. */
  close(code: number): void;
  /** Drop the connection now. */
  terminate(): void;
  readonly closed: boolean;
}

export type SocketFactory = (url: string, token: string | undefined, handlers: SocketHandlers) => ClientSocket;
