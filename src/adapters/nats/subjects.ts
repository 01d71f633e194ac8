import { MemgateError } from '../../core/errors.ts';
import type { Scope } from '../../core/types.ts';

const SAFE_TOKEN = /^[A-Za-z0-9_-]+$/;

/**
 * One subject token for an id. Ids made of `[A-Za-z0-9_-]` stay readable;
 * anything else (dots, spaces, `*`, `>`, unicode) becomes `~` + base64url, which
 * a readable token can never start with, so two ids never share a subject.
 */
export function subjectToken(id: string): string {
  return SAFE_TOKEN.test(id) ? id : `~${Buffer.from(id, 'utf8').toString('base64url')}`;
}

/** `<tenant>.<agent>.<user>` as three subject tokens. */
export function scopeTokens(scope: Scope): string {
  return `${subjectToken(scope.tenantId)}.${subjectToken(scope.agentId)}.${subjectToken(scope.userId)}`;
}

/** Throws unless `prefix` is a valid literal subject prefix (dot-separated tokens, no wildcards). */
export function assertSubjectPrefix(prefix: string): void {
  if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(prefix)) {
    throw new MemgateError('internal', `invalid NATS subject prefix "${prefix}"`, { retryable: false });
  }
}

/** Throws unless `name` is a valid JetStream stream, consumer or bucket name. */
export function assertJetStreamName(name: string): void {
  if (!/^[A-Za-z0-9_-]+$/.test(name)) {
    throw new MemgateError('internal', `invalid JetStream name "${name}" (letters, digits, _ and - only)`, { retryable: false });
  }
}
