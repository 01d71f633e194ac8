// ESLint flat config: the recommended rule sets, and the layering of DESIGN's architecture
// as import rules (core ← ports ← memory ← pipeline ← service ← edges; adapters on ports and core).
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import { builtinRules } from 'eslint/use-at-your-own-risk';
import tseslint from 'typescript-eslint';

const LAYERS = ['core', 'config', 'text', 'ports', 'memory', 'pipeline', 'service', 'mcp', 'gateway', 'workers', 'cli', 'integrations', 'adapters', 'client', 'app'];

/** What each folder of src/ may import from the others (its own folder is always allowed). */
const MAY_IMPORT = {
  core: [],
  config: ['core'],
  text: ['core'],
  ports: ['core'],
  memory: ['core', 'config', 'text', 'ports'],
  pipeline: ['core', 'config', 'text', 'ports', 'memory'],
  service: ['core', 'config', 'text', 'ports', 'memory', 'pipeline'],
  // The MCP tools: an edge on the service façade (the gateway mounts them at /mcp, src/app on stdio).
  mcp: ['core', 'service'],
  gateway: ['core', 'config', 'text', 'ports', 'memory', 'service', 'mcp'],
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

/** Every adapter is its own zone: read from disk so a new adapter folder is fenced off without an edit here. */
const ADAPTERS = readdirSync(new URL('./src/adapters/', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

function layerPatterns(layer, allowed) {
  return LAYERS.filter((l) => l !== layer && !allowed.includes(l)).map((l) => ({
    group: [`**/${l}/**`, `../${l}`, `../../${l}`],
    message: WHY[l] ?? `layering: src/${layer} may import only ${[layer, ...allowed].join(', ')} (see CONTRIBUTING.md)`,
  }));
}

/** One adapter may not import another: each wraps one engine, and shared code belongs in a port, core or text. */
function otherAdapterPatterns(adapter) {
  return ADAPTERS.filter((a) => a !== adapter).map((other) => ({
    group: [`../${other}`, `../${other}/**`, `**/adapters/${other}`, `**/adapters/${other}/**`],
    message: `adapters never import each other: src/adapters/${adapter} may not import src/adapters/${other} (share code through ports, core or text; src/app wires adapters together)`,
  }));
}

/**
 * ESLint's no-restricted-imports reads import and export declarations but not `import()`:
 * this rule hands each `import('literal')` to it as a side-effect import, so one set of
 * patterns fences static and dynamic imports alike.
 */
const restrictedImports = builtinRules.get('no-restricted-imports');
const layering = {
  rules: {
    'dynamic-imports': {
      meta: { ...restrictedImports.meta, docs: { description: 'no-restricted-imports, applied to import() with a literal specifier' } },
      create(context) {
        const check = restrictedImports.create(context).ImportDeclaration;
        return {
          ImportExpression(node) {
            if (node.source.type === 'Literal' && typeof node.source.value === 'string') check({ ...node, type: 'ImportDeclaration', specifiers: [], importKind: 'value' });
          },
        };
      },
    },
  },
};

function importRule(files, patterns) {
  return { files, rules: { 'no-restricted-imports': ['error', { patterns }], 'layering/dynamic-imports': ['error', { patterns }] } };
}

// ESLint keeps the last options given to a rule, so each adapter's zone repeats the adapters' layer patterns.
const layerRules = [
  ...Object.entries(MAY_IMPORT).map(([layer, allowed]) => importRule([`src/${layer}/**/*.ts`], [...layerPatterns(layer, allowed), ...optionalPeerPatterns(`src/${layer}`)])),
  ...ADAPTERS.map((adapter) =>
    importRule([`src/adapters/${adapter}/**/*.ts`], [...layerPatterns('adapters', MAY_IMPORT.adapters), ...otherAdapterPatterns(adapter), ...optionalPeerPatterns(`src/adapters/${adapter}`)]),
  ),
];

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
    plugins: { layering },
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
