import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A socket path proves nothing: after a crash the recorded path may be
 * bound by another user. So the server that holds DATA_DIR's lock writes
 * a fresh secret into DATA_DIR/control (0600, in folders only the owner
 * enters), and answers each command's nonce with an HMAC of it under the
 * secret. Only a process of the owner that read it while the lock was held
 * can answer; the secret itself never crosses the socket.
 */
const secretName = 'server-secret';

const secretBytes = 32;

export function writeServerSecret(home: string): Buffer {
  const secret = randomBytes(secretBytes);
  const path = join(home, secretName);
  rmSync(path, { force: true });
  // wx: a file planted at the path is never written through.
  writeFileSync(path, secret.toString('hex'), { mode: 0o600, flag: 'wx' });
  return secret;
}

export function removeServerSecret(home: string): void {
  rmSync(join(home, secretName), { force: true });
}

/** The running server's secret; undefined when no server wrote one (none started, or it stopped cleanly). */
export function readServerSecret(home: string): Buffer | undefined {
  try {
    const text = readFileSync(join(home, secretName), 'utf8').trim();
    return /^[0-9a-f]{64}$/.test(text) ? Buffer.from(text, 'hex') : undefined;
  } catch {
    return undefined;
  }
}

export function newNonce(): string {
  return randomBytes(16).toString('hex');
}

export function proofOf(secret: Buffer, nonce: string): string {
  return createHmac('sha256', secret).update(nonce).digest('hex');
}

export function isProof(secret: Buffer, nonce: string, proof: unknown): boolean {
  if (typeof proof !== 'string') return false;
  const expected = Buffer.from(proofOf(secret, nonce), 'utf8');
  const given = Buffer.from(proof, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
