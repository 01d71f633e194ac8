import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.ts';
import { SIGNAL_ECHO_MS, exitOnSignals } from '../../src/gateway/shutdown.ts';

describe('exitOnSignals', () => {
  it('treats a signal right behind the first as its echo (Ctrl-C reaches npm and its child, npm forwards it), a later one as insistence', async () => {
    let now = 1_000;
    const exits: number[] = [];
    let release!: () => void;
    const stopping = new Promise<void>((r) => (release = r));
    const off = exitOnSignals(
      () => stopping,
      silentLogger,
      (c) => exits.push(c),
      () => now,
    );
    try {
      process.emit('SIGINT', 'SIGINT');
      now += SIGNAL_ECHO_MS - 1;
      process.emit('SIGINT', 'SIGINT');
      expect(exits).toEqual([]);
      now += 2;
      process.emit('SIGTERM', 'SIGTERM');
      expect(exits).toEqual([1]);
      release();
      await new Promise((r) => setTimeout(r, 0));
      expect(exits).toEqual([1, 0]);
    } finally {
      off();
    }
  });
});
