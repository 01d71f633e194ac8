import { toMemgateError } from '../core/errors.ts';
import { loadConfig, parseCommandLine } from '../config/load.ts';

const USAGE = `memgate — memory gateway for real-time voice agents

Usage:
  memgate [serve] [--port N] [--host H] [--profile NAME]   run the gateway (embedded default: no servers)
  memgate worker [--profile NAME]                          run an extraction worker (production profile)
  memgate replay FILE [--data PATH]                        replay a transcript and print the next call's memory
Config: config/<profile>.json (default "embedded"), MEMGATE_* environment variables, flags.`;

/** Composition root: parse the command line, load config once, dispatch. */
async function main(argv: string[]): Promise<void> {
  const cli = parseCommandLine(argv);
  if (cli.command === 'help' || cli.flags['--help']) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  switch (cli.command) {
    case 'serve': {
      const { serve } = await import('./serve.ts');
      await serve(loadConfig(argv));
      return;
    }
    case 'worker': {
      const { runWorker } = await import('./worker.ts');
      await runWorker(loadConfig(argv));
      return;
    }
    case 'replay': {
      const file = cli.args[0];
      if (!file) throw new Error('usage: memgate replay FILE');
      // A replay is a demonstration: in memory unless --data names a file.
      const config = loadConfig(cli.flags['--data'] ? argv : [...argv, '--data', ':memory:']);
      const { replay } = await import('../cli/replay.ts');
      await replay(file, config);
      return;
    }
    default:
      process.stderr.write(`unknown command "${cli.command}"\n\n${USAGE}\n`);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  const e = toMemgateError(err);
  process.stderr.write(`memgate: ${e.code}: ${e.message}\n`);
  process.exit(1);
});
