import { customAlphabet } from 'nanoid';

/**
 * A new client id, the first half of every owner and permit id: no `-` (a
 * pasted id must not read as a CLI option); 21 of 63 characters keep ~125 bits.
 */
export const newClientId: () => string = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz', 21);
