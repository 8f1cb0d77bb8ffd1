import { EXIT } from "./exitCodes.js";

export const HELP = `Usage:
  holdfast run --lock NAME [--ttl 30s] [--wait 0] [--grace 10s] -- CMD [ARGS...]
  holdfast run --once KEY [--retain 1d] [--ttl 30s] [--wait 0] -- CMD [ARGS...]
  holdfast run --limit KEY [--concurrency N] [--rate COUNT/WINDOW] [--ttl 30s] [--wait 0] -- CMD [ARGS...]
  holdfast elect NAME --value V [--ttl 30s] [--grace 10s] -- CMD [ARGS...]
  holdfast leader NAME [--watch]
  holdfast status NAME [--kind mutex|rwlock|semaphore|flow|election|idempotency]
  holdfast release NAME --token TOKEN [--kind ...] [--mode read|write]
  holdfast list [--kind mutex|rwlock|semaphore|flow|election|idempotency] [--prefix P]
  holdfast force-release NAME --reason TEXT [--fence N] [--holder LABEL]
                         [--kind mutex|rwlock|semaphore|flow|election]
  holdfast audit [--limit 50]

Hold a holdfast lock while a command runs, across machines.

run --lock NAME
  Takes the mutex NAME, runs CMD while heartbeating its lease, and releases
  it when CMD exits. If the lease is lost (or cannot be renewed in time),
  CMD is sent SIGTERM, then SIGKILL after --grace, early enough that CMD is
  gone before anyone else can hold the lock; without a terminal, CMD runs in
  its own process group and the whole group is signalled. CMD gets HOLDFAST_FENCE
  (pass it to anything that can reject stale writers), HOLDFAST_TOKEN and
  HOLDFAST_LEASE (a JSON handle another process can resume).

run --once KEY
  Runs CMD at most once per KEY across machines (an idempotency key). A run
  that exits 0 marks KEY done for --retain; a later run prints that it was
  done and exits 0 without running CMD. A run that fails frees KEY again.

run --limit KEY
  Takes a slot of the flow limit KEY, shared by every caller of KEY: at most
  --concurrency N running at once and at most COUNT started in any WINDOW
  (--rate 120/1m); waits in line up to --wait, then runs CMD as run --lock
  does and gives the slot back when CMD exits. Every caller of KEY must ask
  for the same limit.

elect NAME --value V
  Campaigns in the election NAME and runs CMD only while it leads (V is what
  everyone sees: an address, an instance id); CMD gets HOLDFAST_FENCE, the
  term. When the term is lost, CMD is stopped as above and holdfast
  campaigns again; when CMD exits, holdfast resigns (the next in line leads
  at once) and exits with CMD's status.

leader NAME      Who leads the election NAME, as JSON; --watch prints every
                 change after (new leader, new value), one JSON line each,
                 over a WebSocket (Node 22+; on an older Node, a usage error).
status NAME      Shows a lock's state (never its token) as JSON, with the kind
                 it looked at: the mutex NAME, or when no mutex NAME is in
                 use, the --once key NAME if one was begun (--kind to choose).
release NAME     Releases a lease by its token (for operators).
list             The namespace's held (or waited-on) locks of --kind, one JSON
                 object per line.
force-release NAME
                 Frees NAME whoever holds it (an admin key only), written to
                 the audit log with --reason; --fence frees only the lease of
                 that fence (a mutex's, or an election's term), --holder only
                 a read-write lock's, semaphore's or flow limit's holders with
                 that label.
audit            The audit log of force releases, newest first.

Options:
  --ttl D        lease length, renewed every third of it (default 30s)
  --wait D       how long to wait for the lock (default 0: try once), any
                 length, keeping its place in line; when it has to wait,
                 holdfast says once on stderr whom for and how
  --wait-channel auto|socket|http
                 how to wait: over a WebSocket to the lock (leaves the line
                 at once if holdfast dies), or a held-open HTTP request; auto
                 (default) takes the socket where this Node has WebSocket
                 (22+) (default: $HOLDFAST_WAIT_CHANNEL or auto); socket
                 on a Node without WebSocket is a usage error
  --grace D      between SIGTERM and SIGKILL when the lease is lost (default
                 10s, at most a quarter of --ttl; under half of it)
  --retain D     how long a --once result is remembered (default 1d)
  --holder TEXT  who holds the --lock (or runs the --once), shown to operators
                 and to anyone kept waiting (default: USER@HOST pid PID)
  --url URL      the service (default: $HOLDFAST_URL)
  --api-key KEY  the API key (default: $HOLDFAST_API_KEY; prefer the variable:
                 flags show in the process list)
  -q, --quiet    none of holdfast's own messages (the waiting line among
                 them); errors still show
  -h, --help     this text
  Durations: 500ms, 30s, 5m, 2h, 1d, or a number of seconds.

Exit status:
  run: CMD's own status when it ran (128+N when signal N ended it), else
  0    done (status, list, ...; run --once: done already)
  ${EXIT.notHeld}    release: the token does not hold it; force-release: not held
  ${EXIT.usage}   bad usage (the message says what to pass instead)
  ${EXIT.unavailable}   service unreachable, or its store unavailable
  ${EXIT.software}   unexpected error (the message says what)
  ${EXIT.notAcquired}   lock not acquired within --wait (--once: run elsewhere)
  ${EXIT.noPermission}   API key refused, or not an admin key for force-release
  ${EXIT.config}   no URL or API key configured
  ${EXIT.leaseLost}   lease lost while CMD ran: CMD was stopped
  ${EXIT.cannotExecute}  CMD could not be run (not executable)
  ${EXIT.notFound}  CMD not found
  128+N  signal N reached holdfast before CMD ran

Examples:
  holdfast run --lock nightly-report --ttl 1m -- ./report.sh
  holdfast run --once "invoice-$(date +%F)" --retain 2d -- ./send-invoices
  holdfast status nightly-report
`;
