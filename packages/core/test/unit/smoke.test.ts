import { nanoid } from 'nanoid';
import { placeholder } from '@org/rlock-core';
describe('smoke', () => { it('loads ESM deps', () => { expect(nanoid()).toHaveLength(21); expect(placeholder).toBe('core'); }); });
