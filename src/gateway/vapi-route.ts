import { createHash } from 'node:crypto';
import { z } from 'zod';
import { badRequest } from '../core/errors.ts';
import type { Role, Scope } from '../core/types.ts';
import type { MemoryApi } from '../service/api.ts';
import { checkScopeId } from './frames.ts';

/**
 * `POST /v1/integrations/vapi`: a server URL for Vapi-style hosted voice platforms
 * (https://docs.vapi.ai/server-url/events). One endpoint, three messages:
 * - `assistant-request` (call start): the context block as the prompt variable
 *   `memgateContext` (`assistantOverrides.variableValues`), plus `assistantId` when
 *   the server URL names one (`?assistantId=`);
 * - `transcript` with `transcriptType: "final"`: the utterance as a turn, idempotent
 *   on the call id, role and the message's timestamp (a retried webhook is a duplicate);
 * - `end-of-call-report`: turns the live messages missed, from `artifact.messages`,
 *   then the call's end (extraction runs).
 * Anything else is acknowledged and ignored. The agent is `?agentId=` (else the
 * assistant's id); the user is the caller's number (else the call id).
 */

const callSchema = z.looseObject({ id: z.string().min(1).max(128), assistantId: z.string().optional(), customer: z.looseObject({ number: z.string().optional() }).optional() });
const messageSchema = z.looseObject({
  type: z.string(),
  call: callSchema,
  timestamp: z.number().optional(),
  customer: z.looseObject({ number: z.string().optional() }).optional(),
  assistant: z.looseObject({ id: z.string().optional() }).optional(),
  role: z.string().optional(),
  transcriptType: z.string().optional(),
  transcript: z.string().optional(),
  artifact: z.looseObject({ messages: z.array(z.looseObject({ role: z.string(), message: z.string().optional(), time: z.number().optional() })).optional() }).optional(),
});
const bodySchema = z.looseObject({ message: messageSchema });
type VapiMessage = z.infer<typeof messageSchema>;

/** Vapi's roles as memgate's: the platform calls the assistant `assistant` live and `bot` in reports. */
function roleOf(role: string | undefined): Role | null {
  if (role === 'user') return 'user';
  if (role === 'assistant' || role === 'bot') return 'agent';
  return null;
}

function scopeOf(tenantId: string, query: Record<string, string>, m: VapiMessage): Scope {
  const agentId = query['agentId'] || m.call.assistantId || m.assistant?.id || 'vapi';
  const userId = m.customer?.number || m.call.customer?.number || m.call.id;
  return { tenantId, agentId: checkScopeId('agentId', agentId), userId: checkScopeId('userId', userId) };
}

const sessionOf = (m: VapiMessage) => `vapi-${m.call.id}`;
const short = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);

/** A call whose start message never came (assistant-request is optional): open its session. */
async function ensureSession(service: MemoryApi, scope: Scope, sessionId: string): Promise<void> {
  if (!(await service.session(scope.tenantId, sessionId))) await service.startSession(scope, sessionId);
}

export async function handleVapi(service: MemoryApi, tenantId: string, query: Record<string, string>, body: unknown): Promise<unknown> {
  const parsed = bodySchema.safeParse(body);
  if (!parsed.success) throw badRequest(`not a Vapi server message: ${parsed.error.issues[0]?.path.join('.') || 'body'}: ${parsed.error.issues[0]?.message}`);
  const m = parsed.data.message;
  const scope = scopeOf(tenantId, query, m);
  const sessionId = sessionOf(m);
  switch (m.type) {
    case 'assistant-request': {
      const ctx = await service.startSession(scope, sessionId);
      const overrides = { variableValues: { memgateContext: ctx.contextBlock } };
      return query['assistantId'] ? { assistantId: query['assistantId'], assistantOverrides: overrides } : { assistantOverrides: overrides };
    }
    case 'transcript': {
      const role = roleOf(m.role);
      if (m.transcriptType !== 'final' || !role || !m.transcript?.trim()) return { stored: false };
      await ensureSession(service, scope, sessionId);
      const ts = m.timestamp ?? Date.now();
      const turnId = `vapi:${m.call.id}:${role}:${ts}:${short(m.transcript)}`;
      const ack = await service.appendTurn(scope, sessionId, { role, text: m.transcript, turnId, ts });
      return { stored: true, ...ack };
    }
    case 'end-of-call-report': {
      await ensureSession(service, scope, sessionId);
      // What the live transcripts already stored, by role and text (a count: the same words may be said twice).
      const have = new Map<string, number>();
      for (const t of await service.bufferedTurns(scope)) {
        if (t.sessionId !== sessionId) continue;
        const k = `${t.role}\u0000${t.text.trim()}`;
        have.set(k, (have.get(k) ?? 0) + 1);
      }
      let added = 0;
      const messages = m.artifact?.messages ?? [];
      for (const [i, msg] of messages.entries()) {
        const role = roleOf(msg.role);
        const text = msg.message?.trim();
        if (!role || !text) continue;
        const k = `${role}\u0000${text}`;
        const n = have.get(k) ?? 0;
        if (n > 0) {
          have.set(k, n - 1);
          continue;
        }
        const r = await service.appendTurn(scope, sessionId, { role, text, turnId: `vapi:${m.call.id}:report:${i}`, ...(msg.time ? { ts: msg.time } : {}) });
        if (!r.duplicate) added++;
      }
      await service.endSession(scope, sessionId);
      return { ended: true, turnsAdded: added };
    }
    default:
      return { ignored: m.type };
  }
}
