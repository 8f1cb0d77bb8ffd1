/**
 * The holdfast Worker (src/worker.ts) with what Cloudflare and Upstash bill
 * counted, for the bench's cost table (bench/billableUnits.ts). Nothing it
 * does changes: each count is taken beside the call it counts.
 *
 * - Worker requests: each request the Worker serves.
 * - Durable Object requests: each RPC method call and each fetch on a stub
 *   (the Worker's and the objects' own, through their env), each alarm
 *   invocation, and each incoming WebSocket message (billed at 1/20).
 * - Rows read and written (SQLite-backed objects): by Cloudflare's rule for
 *   the key-value API, which keeps its records in a hidden SQLite table: a
 *   key read is a row read, a key written or deleted a row written, a list a
 *   row read per entry; each setAlarm a row written. SQL statements count
 *   what their cursors say (rowsRead, rowsWritten).
 * - Upstash commands: each command sent to the Upstash REST API (a script
 *   call is one; a pipeline, one per command in it).
 *
 * GET /__units answers the counts; POST /__units/reset sets them to zero.
 * Workers and objects of one script share an isolate under local workerd,
 * so one module-level record holds every count.
 */
import worker, { LockObject as ServiceLockObject, NamespaceObject as ServiceNamespaceObject } from "../../src/worker";

const units = {
  workerRequests: 0,
  objectRequests: 0,
  objectRpcCalls: 0,
  objectFetches: 0,
  alarms: 0,
  wsMessagesIn: 0,
  rowsRead: 0,
  rowsWritten: 0,
  setAlarms: 0,
  upstashCommands: 0,
};
const reset = () => {
  for (const k of Object.keys(units) as Array<keyof typeof units>) units[k] = 0;
};

// Upstash commands: @upstash/redis looks fetch up at call time, so this wrapper sees every one.
let upstashUrl: string | undefined;
const realFetch = globalThis.fetch;
globalThis.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  if (upstashUrl && url.startsWith(upstashUrl)) {
    const body = typeof init?.body === "string" ? init.body : "";
    const path = new URL(url).pathname;
    let commands = 1;
    if (/\/(pipeline|multi-exec)$/.test(path)) {
      try {
        commands = (JSON.parse(body) as unknown[]).length;
      } catch {}
    }
    units.upstashCommands += commands;
  }
  return realFetch(input, init);
}) as typeof fetch;

/** A stub whose every method call (an RPC session, or a fetch) is counted as one request to its object. */
function countedStub<T extends object>(stub: T): T {
  return new Proxy(stub, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof prop !== "string" || prop === "then" || typeof value !== "function") return value;
      return (...args: unknown[]) => {
        units.objectRequests++;
        if (prop === "fetch") units.objectFetches++;
        else units.objectRpcCalls++;
        // Reflect.apply: on an RPC stub, `.apply` would be a remote method of that name.
        return Reflect.apply(value as (...a: unknown[]) => unknown, target, args);
      };
    },
  });
}

/** A namespace whose stubs count their calls. */
function countedNamespace<T extends object>(ns: T): T {
  return new Proxy(ns, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== "function") return value;
      if (prop === "get" || prop === "getByName")
        return (...args: unknown[]) => countedStub((value as (...a: unknown[]) => object).apply(target, args));
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}

function countedEnv<E extends Record<string, unknown>>(env: E): E {
  if (typeof env.UPSTASH_REDIS_REST_URL === "string" && env.UPSTASH_REDIS_REST_URL) upstashUrl = env.UPSTASH_REDIS_REST_URL;
  return {
    ...env,
    LOCK_OBJECT: countedNamespace(env.LOCK_OBJECT as object),
    NAMESPACE_OBJECT: countedNamespace(env.NAMESPACE_OBJECT as object),
  };
}

/** The synchronous key-value API, its rows counted. */
function countedKv(kv: SyncKvStorage): SyncKvStorage {
  return {
    get<T>(key: string) {
      units.rowsRead++;
      return kv.get<T>(key);
    },
    put<T>(key: string, value: T) {
      units.rowsWritten++;
      kv.put(key, value);
    },
    delete(key: string) {
      const had = kv.delete(key);
      if (had) units.rowsWritten++;
      return had;
    },
    *list<T>(options?: SyncKvListOptions) {
      let seen = 0;
      for (const entry of kv.list<T>(options)) {
        seen++;
        units.rowsRead++;
        yield entry;
      }
      if (seen === 0) units.rowsRead++;
    },
  } as SyncKvStorage;
}

/** SQL statements, counted by their cursors once consumed or dropped: read when the call returns, for the rows of a statement run whole. */
function countedSql(sql: SqlStorage): SqlStorage {
  return new Proxy(sql, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (prop !== "exec") return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      return (query: string, ...bindings: unknown[]) => {
        const cursor = target.exec(query, ...bindings);
        // The statement's rows, read out now so the counts are final (the callers read them all anyway).
        const rows = cursor.toArray();
        units.rowsRead += cursor.rowsRead;
        units.rowsWritten += cursor.rowsWritten;
        return replay(rows, cursor);
      };
    },
  });
}

/** A cursor's rows again, for a caller that reads them after the counts were taken. */
function replay(rows: Record<string, SqlStorageValue>[], cursor: SqlStorageCursor<Record<string, SqlStorageValue>>) {
  let i = 0;
  const again = {
    toArray: () => rows.slice(i),
    one: () => {
      if (rows.length !== 1) throw new Error(`expected exactly one row, got ${rows.length}`);
      return rows[0];
    },
    next: () => (i < rows.length ? { done: false, value: rows[i++] } : { done: true, value: undefined }),
    raw: () => rows.map((r) => Object.values(r))[Symbol.iterator](),
    columnNames: cursor.columnNames,
    rowsRead: cursor.rowsRead,
    rowsWritten: cursor.rowsWritten,
    [Symbol.iterator]: () => again,
  };
  return again as unknown as SqlStorageCursor<Record<string, SqlStorageValue>>;
}

/**
 * The object's storage, counted in place: the runtime's DurableObject base class takes only the real state
 * object, so its storage gets counting kv, sql and setAlarm as its own properties before the object is made.
 */
function countStorage(ctx: DurableObjectState): void {
  const storage = ctx.storage;
  const kv = countedKv(storage.kv);
  const sql = countedSql(storage.sql);
  const setAlarm = storage.setAlarm.bind(storage);
  Object.defineProperty(storage, "kv", { value: kv, configurable: true });
  Object.defineProperty(storage, "sql", { value: sql, configurable: true });
  Object.defineProperty(storage, "setAlarm", {
    value: (...args: Parameters<DurableObjectStorage["setAlarm"]>) => {
      units.setAlarms++;
      units.rowsWritten++;
      return setAlarm(...args);
    },
    configurable: true,
  });
}

type Ctor<T> = new (ctx: DurableObjectState, env: never) => T;

export class LockObject extends (ServiceLockObject as unknown as Ctor<ServiceLockObject>) {
  constructor(ctx: DurableObjectState, env: Record<string, unknown>) {
    countStorage(ctx);
    super(ctx, countedEnv(env) as never);
  }
  override async alarm(): Promise<void> {
    units.alarms++;
    units.objectRequests++;
    await super.alarm();
  }
  override webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): void {
    units.wsMessagesIn++;
    super.webSocketMessage(ws, message);
  }
}

export class NamespaceObject extends (ServiceNamespaceObject as unknown as Ctor<ServiceNamespaceObject>) {
  constructor(ctx: DurableObjectState, env: Record<string, unknown>) {
    countStorage(ctx);
    super(ctx, countedEnv(env) as never);
  }
  override async alarm(): Promise<void> {
    units.alarms++;
    units.objectRequests++;
    await super.alarm();
  }
}

export default {
  async fetch(request: Request, env: Record<string, unknown>, ctx: ExecutionContext): Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname === "/__units") return Response.json(units);
    if (pathname === "/__units/reset") {
      reset();
      return Response.json(units);
    }
    units.workerRequests++;
    return (worker as unknown as ExportedHandler<Record<string, unknown>>).fetch!(request as never, countedEnv(env), ctx);
  },
};
