/**
 * Preloaded into a gwapi process (`NODE_OPTIONS=--import=…`) by test/deploy/productionImports.test.ts.
 * Plain JavaScript because it loads before tsx. The rules themselves are in productionImportsHooks.mjs.
 */
import { register } from 'node:module';

register('./productionImportsHooks.mjs', import.meta.url);
