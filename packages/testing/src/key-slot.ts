/** Number of hash slots of a Redis Cluster. */
export const CLUSTER_SLOTS = 16_384;

/** CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0), one entry per byte value. */
const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte += 1) {
    let crc = byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
    table[byte] = crc & 0xffff;
  }
  return table;
})();

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) ^ (CRC16_TABLE[((crc >> 8) ^ byte) & 0xff] ?? 0)) & 0xffff;
  return crc;
}

/**
 * The hash slot of `key`, as Redis Cluster computes it: CRC16 of the key
 * modulo 16384, where only the part between the first `{` and the next `}`
 * counts when that part is non-empty (a hash tag), so keys sharing a tag
 * share a slot. Same result as `CLUSTER KEYSLOT` and the cluster-key-slot
 * package (https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags).
 * Kept here rather than depending on cluster-key-slot: this private package
 * needs it only to tell which fleet node owns a key.
 *
 * @example
 * ```ts
 * keySlot('{user:1}:lock') === keySlot('{user:1}:queue'); // true: same hash tag
 * ```
 */
export function keySlot(key: string | Uint8Array): number {
  const bytes = typeof key === 'string' ? Buffer.from(key) : key;
  const open = bytes.indexOf(0x7b); // '{'
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1); // '}'
    if (close > open + 1) return crc16(bytes.subarray(open + 1, close)) % CLUSTER_SLOTS;
  }
  return crc16(bytes) % CLUSTER_SLOTS;
}
