import { heartbeatOperation, leaseEndOperation, lockWaitSocket } from "../../http/operations/leaseOperations.js";
import { READ_ERRORS, WRITE_ERRORS } from "../../http/openapi/openapiOps.js";
import { releaseBody } from "../../wire/schemas.js";
import { ELECTION } from "./types.js";
import { operation } from "../../http/operations/operation.js";
import { campaignBody, changesResponse, leaderResponse, leadership, proclaimBody, proclaimResponse, resignResponse } from "./schemas.js";
import { campaign, changes, leader, proclaim, resign } from "./service.js";

/** The election as the lease operations name it: its key, and its schemas' names' start. */
const names = { key: ELECTION, names: "Election" };

/** /v1/elections/{name}: leader election, one value per operation (docs/API.md "Elections"). */
export const electionOperations = [
  operation({
    method: "post",
    step: "campaign",
    operationId: "electionCampaign",
    summary: "Campaign: lead the election, or wait in line to",
    needs: ["acquire"],
    body: ["CampaignRequest", campaignBody],
    ok: [[200, "Leadership", leadership]],
    errors: WRITE_ERRORS,
    run: async (request, name, body, signal) => {
      const { grant, delivery } = await campaign(request, name, body, signal);
      return { body: grant, delivery };
    },
  }),
  lockWaitSocket(names, "Campaign over a WebSocket"),
  heartbeatOperation(names, "Extend a leader's lease"),
  operation({
    method: "post",
    step: "proclaim",
    operationId: "electionProclaim",
    summary: "Change the leader's value, keeping its term",
    needs: ["heartbeat"],
    body: ["ProclaimRequest", proclaimBody],
    ok: [[200, "ProclaimResponse", proclaimResponse]],
    errors: WRITE_ERRORS,
    onLease: true,
    run: async (request, name, body) => ({ body: await proclaim(request, name, body.token, body.value) }),
  }),
  leaseEndOperation(names, {
    step: "resign",
    summary: "Resign: the next in line leads at once",
    body: ["ReleaseRequest", releaseBody],
    ok: ["ResignResponse", resignResponse],
    run: (request, name, body) => resign(request, name, body.token),
  }),
  operation({
    method: "get",
    step: "",
    operationId: "electionLeader",
    summary: "Who leads an election",
    needs: ["inspect"],
    ok: [[200, "Leader", leaderResponse]],
    errors: READ_ERRORS,
    run: async (request, name) => ({ body: { name, ...(await leader(request, name)) } }),
  }),
  operation({
    method: "get",
    step: "changes",
    operationId: "electionChanges",
    summary: "An election's recent changes, in order",
    needs: ["inspect"],
    query: [
      {
        name: "since",
        description:
          "Only the changes after this position (the last one the caller saw): a whole number up to the history's last position, else 400 invalid_position",
        schema: { type: "integer", minimum: 0 },
      },
    ],
    ok: [[200, "ElectionChanges", changesResponse]],
    errors: READ_ERRORS,
    run: async (request, name, _body, _signal, query) => ({ body: { name, ...(await changes(request, name, query.since)) } }),
  }),
];
