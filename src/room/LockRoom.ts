import { DurableObject } from "cloudflare:workers";
export class LockRoom extends DurableObject {}
