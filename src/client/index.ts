/** memgate's TypeScript client for Node (over the `ws` package): see the README section "Client". Browsers get `./browser.ts`. */
import { setDefaultSocket } from './memgate-client.ts';
import { nodeSocket } from './node-socket.ts';

setDefaultSocket(nodeSocket);

export { MemgateClient } from './memgate-client.ts';
export { MemgateError } from '../core/errors.ts';
export type { ErrorCode } from '../core/errors.ts';
export type * from './types.ts';
export type { SocketFactory, ClientSocket, SocketHandlers } from './transport.ts';
