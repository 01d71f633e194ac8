/** memgate as a library: the embeddable engine and its types. The WebSocket client is `memgate/client`. */
export { createMemgate, type Memgate, type MemgateOptions } from './app/library.ts';
export { MemgateError, type ErrorCode } from './core/errors.ts';
export type { Config } from './config/config-schema.ts';
export type { MemoryApi, AckReply, ContextReply, SearchReply, ExtractionReport } from './service/api.ts';
export type { Scope, TurnInput, SearchResult, TemporalEntity } from './core/types.ts';
