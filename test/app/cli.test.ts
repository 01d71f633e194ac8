import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/processes.ts';

/** The CLI as a user runs it: exit codes and what it prints, from a real process. */
function run(args: string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/app/main.ts', ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('memgate CLI', () => {
  it('--help / -h print the usage with the serve options; --version / -v the version', () => {
    for (const flag of ['--help', '-h']) {
      const r = run([flag]);
      expect(r.status).toBe(0);
      for (const opt of ['--data', '--config', '--log-level', '--port']) expect(r.stdout).toContain(opt);
    }
    for (const flag of ['--version', '-v']) expect(run([flag])).toMatchObject({ status: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n$/) });
  });

  it('unknown flags and commands, and replay without a file, exit 2 with the usage (not internal)', () => {
    for (const args of [['--prot', '7701'], ['dance'], ['replay']]) {
      const r = run(args);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('Usage:');
      expect(r.stderr).not.toContain('internal');
    }
  });

  it('a bad environment value names the variable; worker on the embedded profile says why it cannot run', () => {
    expect(run([], { MEMGATE_PORT: 'abc' })).toMatchObject({ status: 1, stderr: expect.stringContaining('MEMGATE_PORT') });
    expect(run(['worker'])).toMatchObject({ status: 1, stderr: expect.stringMatching(/no shared job bus/) });
  });

  it('a production profile with unreachable servers prints one line per server and no stack trace', () => {
    const r = run([], {
      MEMGATE_PROFILE: 'production',
      MEMGATE_API_KEYS: 'k:t',
      MEMGATE_REDIS_URL: 'redis://127.0.0.1:9',
      MEMGATE_NATS_URL: 'nats://127.0.0.1:9',
      MEMGATE_MONGO_URL: 'mongodb://127.0.0.1:9',
      MEMGATE_QDRANT_URL: 'http://127.0.0.1:9',
    });
    expect(r.status).toBe(1);
    for (const name of ['Redis', 'NATS', 'MongoDB', 'Qdrant']) expect(r.stderr).toMatch(new RegExp(`^  ${name} at .*:9: `, 'm'));
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
