import { WsRpc } from './ws-rpc.ts';

/** What the extraction lane reported through live events. */
export interface ExtractionTotals {
  extractions: number;
  failures: number;
  acusIndexed: number;
  acusSuppressed: number;
  factsExtracted: number;
  turnsArchived: number;
}

/**
 * A dashboard connection subscribed to an agent's live events, summing what every
 * `extraction.finished` reported. Extractions run by a worker after `end` and by an
 * explicit flush both count, which the flush reply alone would miss.
 */
export class EventTally {
  readonly totals: ExtractionTotals = { extractions: 0, failures: 0, acusIndexed: 0, acusSuppressed: 0, factsExtracted: 0, turnsArchived: 0 };

  private constructor(private readonly rpc: WsRpc) {}

  /** Connect and subscribe to `agent/<agentId>`. */
  static async open(wsUrl: string, agentId: string): Promise<EventTally> {
    const rpc = await WsRpc.connect(wsUrl);
    const tally = new EventTally(rpc);
    rpc.onEvent((frame) => {
      const event = frame['event'] as { type?: string; data?: Record<string, unknown> } | undefined;
      const num = (k: string) => (typeof event?.data?.[k] === 'number' ? (event.data[k] as number) : 0);
      if (event?.type === 'extraction.finished') {
        const t = tally.totals;
        t.extractions += 1;
        t.acusIndexed += num('acusIndexed');
        t.acusSuppressed += num('acusSuppressed');
        t.factsExtracted += num('factsExtracted');
        t.turnsArchived += num('turnsArchived');
      } else if (event?.type === 'extraction.failed') tally.totals.failures += 1;
    });
    await rpc.request({ op: 'subscribe', topics: [`agent/${agentId}`] });
    return tally;
  }

  /** Snapshot after letting in-flight events arrive (they are fire and forget). */
  async settle(ms = 300): Promise<ExtractionTotals> {
    await new Promise((r) => setTimeout(r, ms));
    return { ...this.totals };
  }

  close(): Promise<void> {
    return this.rpc.close();
  }
}
