/** memgate's client for browsers: the same API over the native WebSocket (the API key travels as `?token=`). */
import { browserSocket } from './browser-socket.ts';
import { setDefaultSocket } from './memgate-client.ts';

setDefaultSocket(browserSocket);

export { MemgateClient } from './memgate-client.ts';
export { MemgateError } from '../core/errors.ts';
export type { ErrorCode } from '../core/errors.ts';
export type * from './types.ts';
