// Each package's dist/cjs holds CommonJS output under a "type": "module"
// package; this marker makes Node load those files as CommonJS.
import { readdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../packages/', import.meta.url).pathname;
for (const name of readdirSync(root)) {
  const cjs = join(root, name, 'dist', 'cjs');
  if (existsSync(cjs)) writeFileSync(join(cjs, 'package.json'), '{"type":"commonjs"}\n');
}
