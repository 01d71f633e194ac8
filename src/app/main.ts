import { memgateVersion } from '../core/version.ts';
import { MemgateError, toMemgateError } from '../core/errors.ts';
import { UsageError, assertServeSafe, configNotices, loadConfig, parseCommandLine } from '../config/load.ts';

const USAGE = `memgate — memory gateway for real-time voice agents

Usage:
  memgate [serve] [options]          run the gateway (embedded default: SQLite, no servers)
  memgate worker [options]           run an extraction worker (a profile whose job bus is NATS)
  memgate replay FILE [--data PATH]  replay a transcript and print the next call's memory
  memgate mcp [options]              an MCP server on stdio: the gateway at MEMGATE_URL (with
                                     MEMGATE_API_KEY), else the embedded store (--data)
  memgate --help | --version

Options:
  --port N            listen port (default 7700; 0 picks a free one)         MEMGATE_PORT
  --host H            listen address (default 127.0.0.1)                     MEMGATE_HOST
  --data PATH         SQLite file of the embedded store (default ./data/memgate.db)  MEMGATE_SQLITE_PATH
  --config FILE       a profile file (JSON) instead of config/<profile>.json
  --profile NAME      embedded (default), production, or any config/NAME.json   MEMGATE_PROFILE
  --log-level LEVEL   debug, info, warn, error or silent (default info)      MEMGATE_LOG_LEVEL
  --allow-open        serve without API keys on production or a public host  MEMGATE_ALLOW_OPEN=true
  -h, --help          this text
  -v, --version       the version

Keys: MEMGATE_API_KEYS=KEY:TENANT[,KEY:TENANT]. LLM: MEMGATE_EXTRACTOR=openai with
MEMGATE_LLM_BASE_URL / MEMGATE_LLM_API_KEY / MEMGATE_LLM_MODEL (any OpenAI-compatible endpoint).`;

function warnNotices(config: Parameters<typeof configNotices>[0]): void {
  for (const line of configNotices(config)) process.stderr.write(`memgate: warning: ${line}\n`);
}

/** Composition root: parse the command line, load config once, dispatch. */
async function main(argv: string[]): Promise<void> {
  const cli = parseCommandLine(argv);
  if (cli.command === 'help' || cli.flags['--help']) return void process.stdout.write(USAGE + '\n');
  if (cli.command === 'version' || cli.flags['--version']) return void process.stdout.write(memgateVersion() + '\n');
  switch (cli.command) {
    case 'serve': {
      if (cli.args.length > 0) throw new UsageError(`serve takes no arguments (got "${cli.args[0]}")`);
      const config = loadConfig(argv);
      assertServeSafe(config);
      warnNotices(config);
      const { serve } = await import('./serve.ts');
      await serve(config);
      return;
    }
    case 'worker': {
      if (cli.args.length > 0) throw new UsageError(`worker takes no arguments (got "${cli.args[0]}")`);
      const config = loadConfig(argv);
      if (config.adapters.bus === 'memory') {
        throw new MemgateError(
          'bad_request',
          `profile "${config.profile}" has no shared job bus: its gateway runs extraction itself. Run workers with a profile whose adapters.bus is "nats" (e.g. --profile production)`,
        );
      }
      warnNotices(config);
      const { runWorker } = await import('./worker.ts');
      await runWorker(config);
      return;
    }
    case 'replay': {
      const file = cli.args[0];
      if (!file) throw new UsageError('replay needs a transcript FILE');
      // A replay is a demonstration: in memory unless --data names a file.
      const config = loadConfig(cli.flags['--data'] ? argv : [...argv, '--data', ':memory:']);
      const { replay } = await import('./replay.ts');
      await replay(file, config);
      return;
    }
    case 'mcp': {
      if (cli.args.length > 0) throw new UsageError(`mcp takes no arguments (got "${cli.args[0]}")`);
      const config = loadConfig(argv);
      const env = process.env;
      const { runMcp } = await import('./mcp.ts');
      await runMcp(config, { url: env['MEMGATE_URL'] || undefined, apiKey: env['MEMGATE_API_KEY'] || undefined, tenantId: env['MEMGATE_TENANT'] || undefined });
      return;
    }
    default:
      throw new UsageError(`unknown command "${cli.command}"`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`memgate: ${err.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  const e = toMemgateError(err);
  process.stderr.write(`memgate: ${e.code}: ${e.message}\n`);
  process.exit(1);
});
