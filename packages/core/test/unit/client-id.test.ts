import { describe, expect, it } from '@jest/globals';
import { newClientId } from '../../src/client/client-id.js';

describe('newClientId', () => {
  it('gives distinct 21-character ids that never start with "-", so a shell never reads an owner or permit id as an option', () => {
    const ids = Array.from({ length: 20_000 }, () => newClientId());
    for (const id of ids) expect(id).toMatch(/^[0-9A-Za-z_]{21}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
