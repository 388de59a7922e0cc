import { readFileSync } from 'node:fs';
import { INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION } from '../../src/observability/telemetry.js';

describe('observability', () => {
  describe('instrumentation scope', () => {
    it('is named @org/rlock with the version of @org/rlock', () => {
      const pkg = JSON.parse(readFileSync(new URL('../../../rlock/package.json', import.meta.url), 'utf8')) as { name: string; version: string };
      expect([INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION]).toEqual([pkg.name, pkg.version]);
    });
  });
});
