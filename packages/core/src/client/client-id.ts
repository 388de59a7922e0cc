import { customAlphabet } from 'nanoid';

/**
 * A new client id: the first half of every owner and permit id. Those ids are
 * pasted into shells (`rlock release gpu <id>`), so the alphabet leaves out
 * nanoid's `-`: an id starting with it would read as an option. 21 characters
 * of 63 keep nanoid's ~125 bits, so an id stays unguessable.
 */
export const newClientId: () => string = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz', 21);
