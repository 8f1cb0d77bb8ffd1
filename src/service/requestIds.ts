import type { AnsweredWrite } from "../store/types.js";
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
  /**
   * The request id the store remembers this write's answer under, for the
   * token the write names (a re-entry, release, complete or fail), if any;
   * marked unrepeated when no retry can bring it back (a fresh random one).
   */
  write(op: string, token?: string): Promise<AnsweredWrite>;
  /** Whether the client sent its own id (its retries may come back). */
  readonly fromClient: boolean;
}

export const randomRequestIds: RequestIds = {
  token: async () => newOwnerToken(),
  write: async () => ({ requestId: newRequestId(), idUnrepeated: true }),
  fromClient: false,
};

/**
 * Ids derived from the client's, as HMACs under the caller's API key: the
 * token stays a secret only that caller can know even though request ids
 * may be logged along the way, and a remembered answer is found only by the
 * same key, for the same operation, naming the same token. Someone who saw
 * the request id but holds another key (or does not know the token) gets no
 * answer of it, and so no token out of it.
 */
export function clientRequestIds(clientId: string, secret: string, scope: string): RequestIds {
  return {
    token: (op) => tokenFromSecret(secret, `${scope}\n${op}\n${clientId}`),
    write: async (op, token = "") => ({
      requestId: `c_${(await tokenFromSecret(secret, `${scope}\nanswer\n${op}\n${token}\n${clientId}`)).slice(3)}`,
    }),
    fromClient: true,
  };
}
