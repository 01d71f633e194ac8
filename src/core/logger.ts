import { traceFields } from './tracing.ts';

/** Log levels in increasing severity; `silent` drops everything. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

/**
 * One JSON line per event on stderr (stdout is reserved for the start-up line and CLI output).
 * User content goes only under `pii` fields, never into `msg`, so it can be redacted in one place.
 */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger whose lines all carry `fields` (per component: `{component: 'gateway'}`). */
  child(fields: Record<string, unknown>): Logger;
}

/** Create a JSON-lines logger writing to `sink` (stderr by default). */
export function createLogger(level: LogLevel = 'info', base: Record<string, unknown> = {}, sink: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const min = RANK[level];
  const write = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < min) return;
    // Inside a recording span (a host registered an OpenTelemetry SDK) the line carries its trace and span ids.
    const rec: Record<string, unknown> = { t: new Date().toISOString(), level: lvl, msg, ...base, ...traceFields(), ...fields };
    const err = rec['err'];
    if (err instanceof Error) rec['err'] = { name: err.name, message: err.message, code: (err as { code?: unknown }).code };
    sink(JSON.stringify(rec) + '\n');
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }, sink),
  };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = createLogger('silent');
