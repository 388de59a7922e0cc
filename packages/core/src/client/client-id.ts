import { customAlphabet } from 'nanoid';

/** A new client id (first half of every owner id): 21 of 63 characters, ~125 bits; no `-`, so a pasted id never reads as a CLI option. */
export const newClientId: () => string = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz', 21);
