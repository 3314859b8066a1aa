/**
 * CRC-32 (ISO-HDLC: reflected polynomial 0xEDB88320, the one of zlib, PNG
 * and GitHub's token checksums), table-driven. Node 20 has no zlib.crc32
 * (it came in 22.2), and 15 lines do not justify a dependency.
 */
const table = new Uint32Array(256);
for (let byte = 0; byte < 256; byte += 1) {
  let value = byte;
  for (let bit = 0; bit < 8; bit += 1) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1;
  table[byte] = value >>> 0;
}

/** The CRC-32 of the bytes, as an unsigned 32-bit integer. */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = (table[(crc ^ byte) & 0xff] ?? 0) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
