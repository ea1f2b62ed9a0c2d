import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Intercom signs each webhook with `X-Hub-Signature: sha1=<hex>`, an HMAC-SHA1 of the raw
 * body keyed with the app's client secret. Compared in constant time, over the exact bytes
 * received (re-serialised JSON would not match).
 */
export function signIntercom(body: Uint8Array | string, secret: string): string {
  return `sha1=${createHmac("sha1", secret).update(body).digest("hex")}`;
}

export function verifyIntercomSignature(body: Uint8Array, header: string | undefined, secret: string): boolean {
  if (!header || !/^sha1=[0-9a-f]{40}$/i.test(header.trim())) return false;
  const expected = Buffer.from(signIntercom(body, secret));
  const given = Buffer.from(header.trim().toLowerCase());
  return given.length === expected.length && timingSafeEqual(given, expected);
}
