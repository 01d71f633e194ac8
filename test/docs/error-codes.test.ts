import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/errors.ts';
import { REPO_ROOT } from '../support/processes.ts';

/**
 * The one catalog of error codes (src/core/errors.ts) and every list a client reads
 * it from: docs/protocol.md, the README and the Python client. A code added to the
 * catalog and not to a list (or the reverse) fails here.
 */
const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8');

/** The backticked words of the text from `marker` to the end of its sentence (a `;` or a `.` that ends it). */
function listAfter(text: string, marker: RegExp): string[] {
  const at = text.search(marker);
  expect(at, `no ${marker} in the text`).toBeGreaterThanOrEqual(0);
  const rest = text.slice(at).replace(/\s+/g, ' ');
  const end = rest.search(/[;.](?:\s|$)|\(/);
  return [...rest.slice(0, end).matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
}

const catalog = Object.keys(ERROR_CODES).sort();

describe('error codes', () => {
  it('docs/protocol.md lists every code of the catalog, and only those', () => {
    expect(listAfter(read('docs/protocol.md'), /Error\s+codes are/).sort()).toEqual(catalog);
  });

  it('docs/protocol.md gives each code its HTTP status', () => {
    const statuses = read('docs/protocol.md').replace(/\s+/g, ' ');
    for (const [code, { http }] of Object.entries(ERROR_CODES)) {
      // not_started shares 400 with bad_request: "400 (`bad_request`, `not_started`)".
      expect(statuses, code).toMatch(new RegExp(`${http} \\([^)]*\`${code}\`[^)]*\\)`));
    }
  });

  it('the README lists every code of the catalog, and only those', () => {
    expect(listAfter(read('README.md'), /- Error codes:/).sort()).toEqual(catalog);
  });

  it('the Python client knows every code of the catalog, and only those', () => {
    const py = read('clients/python/memgate/errors.py');
    const block = py.slice(py.indexOf('ERROR_CODES'), py.indexOf('}', py.indexOf('ERROR_CODES')));
    expect([...block.matchAll(/"([a-z_]+)":/g)].map((m) => m[1]!).sort()).toEqual(catalog);
  });
});
