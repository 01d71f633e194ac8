/** The part of autocannon 9's untyped API the benches use (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    setupRequest?: (req: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest;
  }

  interface AutocannonOptions {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    pipelining?: number;
    /** Requests per second across all connections (rate-limited mode). */
    overallRate?: number;
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    requests?: AutocannonRequest[];
  }

  interface AutocannonLatency {
    average: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
  }

  interface AutocannonResult {
    latency: AutocannonLatency;
    requests: { average: number; total: number; sent: number };
    errors: number;
    timeouts: number;
    non2xx: number;
    duration: number;
  }

  interface AutocannonInstance extends EventEmitter {
    stop(): void;
  }

  function autocannon(opts: AutocannonOptions, cb: (err: Error | null, result: AutocannonResult) => void): AutocannonInstance;
  export default autocannon;
}
