/** A lock's identity: names live inside the namespace of the API key. */
export interface LockRef {
  ns: string;
  name: string;
}
