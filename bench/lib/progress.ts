/** Where progress lines go: stderr, so `npm run bench > out.txt` keeps only the summary. */
const out = process.stderr;

/** A running progress display; `stop` prints one final line. */
export interface Progress {
  stop(finalLine?: string): void;
}

/**
 * Print `[label] <elapsed> <render()>` every `intervalMs`: on a TTY it rewrites one
 * line in place (\r), elsewhere (CI logs, pipes) it prints a line each time.
 */
export function startProgress(label: string, render: () => string, intervalMs = 2000): Progress {
  const t0 = performance.now();
  const tty = out.isTTY === true;
  const line = () => `  [${label}] ${((performance.now() - t0) / 1000).toFixed(1)}s ${render()}`;
  const timer = setInterval(() => {
    if (tty) out.write(`\r\x1b[2K${line()}`);
    else out.write(line() + '\n');
  }, intervalMs);
  timer.unref();
  return {
    stop(finalLine?: string) {
      clearInterval(timer);
      const text = finalLine === undefined ? line() : `  [${label}] ${finalLine}`;
      out.write(tty ? `\r\x1b[2K${text}\n` : text + '\n');
    },
  };
}

/** One log line of the bench (suite starts, phases). */
export function say(line: string): void {
  out.write(line + '\n');
}
