import { newOwnerToken, newRequestId, tokenFromSecret } from "../tokens.js";

/**
 * Where one request's owner token and request ids come from. Without a
 * client request id, fresh random ones. With one, they are derived from it,
 * so a client's retry of the same write (same id) is recognised by the
 * store: the same request id gets the remembered answer, and a new acquire
 * gets the same owner token, which the store answers with its earlier grant
 * instead of a second one. `op` keeps one id's uses apart (a release and a
 * re-entry never share a remembered answer).
 */
export interface RequestIds {
  /** A new owner token for this request's acquire or begin. */
  token(op: string): Promise<string>;
  /** The request id the store remembers this write's answer under. */
  requestId(op: string): string;
  /** Whether the client sent its own id (its retries may come back). */
  readonly fromClient: boolean;
}

export const randomRequestIds: RequestIds = {
  token: async () => newOwnerToken(),
  requestId: () => newRequestId(),
  fromClient: false,
};

/**
 * Ids derived from the client's: the token is an HMAC under the caller's API
 * key, so it stays a secret only that caller can know even though request
 * ids may be logged along the way.
 */
export function clientRequestIds(clientId: string, secret: string, scope: string): RequestIds {
  return {
    token: (op) => tokenFromSecret(secret, `${scope}\n${op}\n${clientId}`),
    requestId: (op) => `c:${op}:${clientId}`,
    fromClient: true,
  };
}
