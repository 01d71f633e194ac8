/** memgate's TypeScript client (Node, over the `ws` package): see docs/gateway.md. */
export { MemgateClient } from './memgate-client.ts';
export { MemgateError } from '../core/errors.ts';
export type { ErrorCode } from '../core/errors.ts';
export type * from './types.ts';
