/**
 * Build (or find) the static embedder's table in its cache dir before the first start:
 * `npm run build:static-table` (MEMGATE_EMBEDDINGS_STATIC_CACHE_DIR picks another dir).
 * Without it, the first start with MEMGATE_EMBEDDER=static builds it in the background.
 */
import { StaticUseEmbedder } from '../src/adapters/static-use/index.ts';
import { UseLiteEmbedder } from '../src/adapters/use-lite/index.ts';

const cacheDir = process.env['MEMGATE_EMBEDDINGS_STATIC_CACHE_DIR'];
const embedder = new StaticUseEmbedder({
  ...(cacheDir ? { cacheDir } : {}),
  teacher: () => {
    const teacher = new UseLiteEmbedder({ runIn: 'thread' });
    return { embed: (texts) => teacher.embed(texts), close: () => teacher.close() };
  },
  onReady: (info) => console.log(`${info.built ? 'built' : 'found'} ${info.path} (${info.dimensions}-d) in ${(info.ms / 1000).toFixed(1)} s`),
});
await embedder.warm();
