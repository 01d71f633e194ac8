/** memgate's TypeScript client (Node, over the `ws` package): see the README section "Gateway: auth, events, client". */
export { MemgateClient } from './memgate-client.ts';
export { MemgateError } from '../core/errors.ts';
export type { ErrorCode } from '../core/errors.ts';
export type * from './types.ts';
