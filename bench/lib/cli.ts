/** Parsed `npm run bench -- ...` flags. */
export interface BenchFlags {
  full: boolean;
  /** Only these suites (by name); empty = the profile's default set. */
  only: string[];
  skip: string[];
  /** Run the mem0 peer comparison (installs bench/peers/mem0 on demand). */
  peers: boolean;
  /** Run the production-stack rows (spawns its own redis-server and nats-server). */
  production: boolean;
  /** LoCoMo conversations to stream (default: 1 quick, all in --full). */
  locomoConversations: number | null;
  /** Scale every measured window by this factor (e.g. 0.5 for a smoke run). */
  timeScale: number;
  /** Do not write bench/results/. */
  noWrite: boolean;
  help: boolean;
}

/** Usage text printed by --help. */
export const USAGE = `npm run bench [-- flags]

  (no flags)           quick profile: a few minutes on 2 cores
  --full               long windows, 5,000 calls, production stack, mem0 peer
  --only a,b           run only these suites: append, append-tracing, append-extraction, start, search, extraction, scenarios, integrations, dashboard, locomo, dropped-call, production, peer, vectors, cluster
  --skip a,b           leave these suites out
  --peers              add the mem0 peer comparison (npm-installs bench/peers/mem0 on first use)
  --production         add the production-stack rows (needs redis-server and nats-server on PATH)
  --locomo-convs N     stream only the first N LoCoMo conversations (default: all 4 of the dev split)
  --time-scale X       multiply every measured window by X (e.g. 0.3 for a smoke run)
  --no-write           do not write bench/results/
Env: MEMGATE_BENCH_LLM_BASE_URL / _API_KEY / _MODEL enable LoCoMo answer F1 with a real chat endpoint;
     MEMGATE_BENCH_LOCOMO_EXTRACTOR=openai also extracts with it (default: offline extractor);
     MEMGATE_BENCH_LOCOMO_EMBEDDER=openai with MEMGATE_BENCH_EMBEDDINGS_BASE_URL / _API_KEY / _MODEL embeds with it;
     MEMGATE_BENCH_FAKE_LLM_DELAY_MS sets the fake LLM's delay (default 300);
     MEMGATE_LOCOMO_PATH overrides ../shared/data/locomo/locomo-dev.json.`;

/** Parse argv (after `--`); unknown flags are an error so a typo never silently changes a run. */
export function parseFlags(argv: readonly string[]): BenchFlags {
  const flags: BenchFlags = { full: false, only: [], skip: [], peers: false, production: false, locomoConversations: null, timeScale: 1, noWrite: false, help: false };
  const list = (v: string | undefined) =>
    (v ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  for (let i = 0; i < argv.length; i++) {
    const [name, inline] = argv[i]!.split('=', 2) as [string, string | undefined];
    const value = () => inline ?? argv[++i];
    switch (name) {
      case '--full':
        flags.full = true;
        break;
      case '--only':
        flags.only = list(value());
        break;
      case '--skip':
        flags.skip = list(value());
        break;
      case '--peers':
        flags.peers = true;
        break;
      case '--production':
        flags.production = true;
        break;
      case '--locomo-convs':
        flags.locomoConversations = positive(name, value());
        break;
      case '--time-scale':
        flags.timeScale = positive(name, value());
        break;
      case '--no-write':
        flags.noWrite = true;
        break;
      case '--help':
      case '-h':
        flags.help = true;
        break;
      default:
        throw new Error(`unknown flag ${name}\n\n${USAGE}`);
    }
  }
  return flags;
}

function positive(name: string, raw: string | undefined): number {
  const n = Number(raw);
  if (!(n > 0)) throw new Error(`${name} needs a positive number, got ${raw}`);
  return n;
}
