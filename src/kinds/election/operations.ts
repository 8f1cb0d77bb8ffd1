import { heartbeatOperation, lockWaitSocket, READ_ERRORS, releaseRequest, WRITE_ERRORS } from "../../http/operations/leaseOperations.js";
import { operation } from "../../http/operations/operation.js";
import { campaignBody, changesResponse, leaderResponse, leadership, proclaimBody, proclaimResponse, resignResponse } from "./schemas.js";
import { campaign, changes, heartbeatLeader, leader, proclaim, resign } from "./service.js";

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
    run: async (ctx, name, body, signal) => {
      const { grant, delivery } = await campaign(ctx, name, body, signal);
      return { body: grant, delivery };
    },
  }),
  lockWaitSocket("wait", "electionWait", "Campaign over a WebSocket"),
  heartbeatOperation("heartbeat", "electionHeartbeat", "Extend a leader's lease", heartbeatLeader),
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
    run: async (ctx, name, body) => ({ body: await proclaim(ctx, name, body.token, body.value) }),
  }),
  operation({
    method: "post",
    step: "resign",
    operationId: "electionResign",
    summary: "Resign: the next in line leads at once",
    needs: ["release"],
    body: releaseRequest,
    ok: [[200, "ResignResponse", resignResponse]],
    errors: WRITE_ERRORS,
    onLease: true,
    run: async (ctx, name, body) => ({ body: await resign(ctx, name, body.token) }),
  }),
  operation({
    method: "get",
    step: "",
    operationId: "electionLeader",
    summary: "Who leads an election",
    needs: ["inspect"],
    ok: [[200, "Leader", leaderResponse]],
    errors: READ_ERRORS,
    run: async (ctx, name) => ({ body: { name, ...(await leader(ctx, name)) } }),
  }),
  operation({
    method: "get",
    step: "changes",
    operationId: "electionChanges",
    summary: "An election's recent changes, in order",
    needs: ["inspect"],
    ok: [[200, "ElectionChanges", changesResponse]],
    errors: READ_ERRORS,
    run: async (ctx, name) => ({ body: { name, ...(await changes(ctx, name)) } }),
  }),
];
