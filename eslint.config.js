// ESLint flat config: the recommended rule sets, and the layering of DESIGN's architecture
// as import rules (core ← ports ← memory ← pipeline ← service ← edges; adapters on ports and core).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const LAYERS = ['core', 'config', 'text', 'ports', 'memory', 'pipeline', 'service', 'gateway', 'workers', 'cli', 'integrations', 'adapters', 'client', 'app'];

/** What each folder of src/ may import from the others (its own folder is always allowed). */
const MAY_IMPORT = {
  core: [],
  config: ['core'],
  text: ['core'],
  ports: ['core'],
  memory: ['core', 'config', 'text', 'ports'],
  pipeline: ['core', 'config', 'text', 'ports', 'memory'],
  service: ['core', 'config', 'text', 'ports', 'memory', 'pipeline'],
  gateway: ['core', 'config', 'text', 'ports', 'memory', 'service'],
  workers: ['core', 'config', 'text', 'ports', 'memory', 'pipeline', 'service'],
  cli: ['core', 'config', 'text', 'ports', 'memory', 'pipeline', 'service'],
  integrations: ['core', 'client'],
  adapters: ['core', 'config', 'text', 'ports'],
  client: ['core'],
  // The composition roots: the only place that wires adapters to the service and the edges.
  app: LAYERS,
};

const WHY = {
  adapters: 'only src/app (the composition roots) may import adapters; depend on a port instead',
  app: 'src/app is the composition root: nothing imports it but src/index.ts',
};

/** Optional peers: only the integration built on one may import it, so plain `memgate` loads without them. */
const OPTIONAL_PEERS = { '@livekit/*': 'src/integrations/livekit' };

const layerRules = Object.entries(MAY_IMPORT).map(([layer, allowed]) => ({
  files: [`src/${layer}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          ...LAYERS.filter((l) => l !== layer && !allowed.includes(l)).map((l) => ({
            group: [`**/${l}/**`, `../${l}`, `../../${l}`],
            message: WHY[l] ?? `layering: src/${layer} may import only ${[layer, ...allowed].join(', ')} (see CONTRIBUTING.md)`,
          })),
          ...optionalPeerPatterns(`src/${layer}`),
        ],
      },
    ],
  },
}));

function optionalPeerPatterns(folder) {
  return Object.entries(OPTIONAL_PEERS)
    .filter(([, home]) => home !== folder && !home.startsWith(folder + '/'))
    .map(([group, home]) => ({ group: [group], message: `${group} is an optional peer dependency: only ${home} may import it` }));
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tmp/**', 'bench/results/**', 'dashboard/vendor/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        performance: 'readonly',
        fetch: 'readonly',
        AbortSignal: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        queueMicrotask: 'readonly',
        structuredClone: 'readonly',
        setImmediate: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  ...layerRules,
  {
    // Tests and benches read untyped JSON bodies and build odd bytes on purpose.
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-control-regex': 'off' },
  },
);
