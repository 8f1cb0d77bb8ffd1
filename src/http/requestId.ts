import { InvalidInputError } from "../errors.js";

/**
 * The header a client sends so that its retries of one write apply once. The
 * client picks a new value per operation and sends the same value on every
 * retry of it; the stores remember answers by it (2 minutes), and a new
 * acquire or begin derives its owner token from it, so a retried acquire
 * finds its own earlier grant.
 */
export const REQUEST_ID_HEADER = "Holdfast-Request-Id";

/** 16..128 characters: enough entropy to be one caller's, short enough for a storage key. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{16,128}$/;

/** The client's request id, checked, or undefined when it sent none. */
export function clientRequestId(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (!REQUEST_ID_PATTERN.test(header)) {
    throw new InvalidInputError("invalid_request_id", `${REQUEST_ID_HEADER} is 16..128 characters of A-Z a-z 0-9 . _ : -`);
  }
  return header;
}
