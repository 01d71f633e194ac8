/**
 * Scripted answers of the fake OpenAI-compatible server for memgate's two
 * structured-output requests, so the extraction lane does its full work
 * (facts to merge, ACUs to embed, deduplicate and index) and not just parse
 * empty lists. The turns are read back from the prompt's JSON lines.
 */
import type { FakeChatBody, FakeChatReply } from '../../test/support/fake-openai.ts';

interface PromptTurn {
  turnId: string;
  role: string;
  speaker?: string;
  text: string;
}

function promptTurns(body: FakeChatBody): PromptTurn[] {
  const user = body.messages
    .filter((m) => m.role === 'user')
    .map((m) => m.content)
    .join('\n');
  const turns: PromptTurn[] = [];
  for (const line of user.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const t = JSON.parse(line) as Partial<PromptTurn>;
      if (typeof t.turnId === 'string' && typeof t.text === 'string') turns.push({ turnId: t.turnId, role: t.role ?? 'user', text: t.text, ...(t.speaker ? { speaker: t.speaker } : {}) });
    } catch {
      // Not a turn line.
    }
  }
  return turns;
}

/** Chat handler for memgate's `extracted_facts` and `atomic_context_units` requests. */
export function memgateFakeReplies(body: FakeChatBody): FakeChatReply {
  const name = body.response_format?.json_schema?.name;
  const turns = promptTurns(body);
  if (name === 'atomic_context_units') {
    return {
      acus: turns.filter((t) => t.text.split(' ').length > 5).map((t) => ({ text: `${t.speaker ?? 'The user'} (${t.role}) said: ${t.text}`, turnRefs: [t.turnId], validAt: null })),
    };
  }
  if (name === 'extracted_facts') {
    const fields = new Set(
      (body.response_format?.json_schema?.schema as { properties?: { facts?: { items?: { properties?: { field?: { enum?: string[] } } } } } })?.properties?.facts?.items?.properties?.field?.enum ?? [],
    );
    const firstUser = turns.find((t) => t.role === 'user');
    const facts: unknown[] = [];
    if (firstUser && fields.has('location')) facts.push({ field: 'location', qualifier: null, value: 'Whitefield, Bangalore', source: 'explicit', validFrom: null, evidence: [firstUser.turnId] });
    if (firstUser && fields.has('occupation')) facts.push({ field: 'occupation', qualifier: null, value: 'software engineer', source: 'explicit', validFrom: null, evidence: [firstUser.turnId] });
    return { facts };
  }
  return 'ok';
}
