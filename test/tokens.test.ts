// Derived owner tokens (src/tokens.ts): the HMAC key is imported once per secret and reused, so what
// is checked is that a token is still the HMAC of its own secret when several secrets take turns.
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { tokenFromSecret } from "../src/tokens.js";

/** The token as the contract derives it, computed without src/tokens.ts: hf_ + base64url of the first 18 bytes of the HMAC. */
function expected(secret: string, message: string): string {
  return `hf_${createHmac("sha256", secret).update(message).digest().subarray(0, 18).toString("base64url")}`;
}

describe("tokenFromSecret", () => {
  it("is the HMAC of its own secret, whichever secret signed before it", async () => {
    const secrets = ["key-aaaaaaaa", "key-bbbbbbbb", "key-aaaaaaaa", "ключ-ü", "key-bbbbbbbb"];
    for (const [i, secret] of secrets.entries()) {
      const message = `tenant-a\nacquire\nclient-id-${i}`;
      expect(await tokenFromSecret(secret, message)).toBe(expected(secret, message));
    }
  });

  it("gives the same token for the same inputs, and another for another secret", async () => {
    const a = await tokenFromSecret("key-aaaaaaaa", "m");
    expect(await tokenFromSecret("key-aaaaaaaa", "m")).toBe(a);
    expect(await tokenFromSecret("key-bbbbbbbb", "m")).not.toBe(a);
  });
});
