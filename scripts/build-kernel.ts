/**
 * `npm run build:kernel`: compiles src/adapters/use-lite/int8/kernel.wat and writes the
 * generated kernel-wasm.ts beside it (the wasm as base64, loaded synchronously by kernel.ts).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compileKernel, KERNEL_WASM_TS_PATH, renderKernelModule } from './kernel-compile.ts';

const bytes = await compileKernel();
writeFileSync(KERNEL_WASM_TS_PATH, renderKernelModule(bytes));
console.log(`wrote ${fileURLToPath(KERNEL_WASM_TS_PATH)} (${bytes.length} bytes of wasm)`);
