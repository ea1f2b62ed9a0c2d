import type { APIGatewayProxyEvent, Context } from "aws-lambda";
import * as z from "zod";
import { assistant, graphJson, graphOf, graphSchemas, searchAssistants } from "../graph/agent-server/assistants";
import {
  AssistantSearch,
  HistoryQuery,
  RunCreate,
  ThreadCreate,
  ThreadPatch,
  ThreadSearch,
} from "../graph/agent-server/requests";
import { executeRun, runJson } from "../graph/agent-server/runs";
import { ItemKey, ListNamespaces, PutItem, SearchItems } from "../graph/agent-server/store";
import { type AgentServer, deferredAgentServer } from "../graph/agent-server/runtime";
import { apiHandler } from "../shared/api-handler";
import type { Config } from "../shared/config";
import { runDeadline } from "../shared/deadline";
import { badRequest, notFound } from "../shared/errors";
import { json, parseJsonBody } from "../shared/http";
import { callerId } from "../shared/identity";
import { createLogger } from "../shared/logger";
import { once } from "../shared/once";
import { awsWiring, type Wiring } from "../shared/wiring";

const logger = createLogger("agent-server");

type Route = (ctx: {
  server: AgentServer;
  userId: string;
  event: APIGatewayProxyEvent;
  context: Context;
}) => Promise<unknown>;

const body = <S extends z.ZodType>(event: APIGatewayProxyEvent, schema: S): z.infer<S> =>
  parseJsonBody(event, schema, { maxBytes: 1024 * 1024 });
const param = (event: APIGatewayProxyEvent, name: string) => event.pathParameters?.[name] ?? "";

/** A graph's state keys, for its schemas. */
const channelsOf = (server: { graph: unknown }) => Object.keys((server.graph as { channels: object }).channels);

/** The read-only support assistant's graph, drawn from its shape: loaded only when asked for. */
const supportShape = once(async () => (await import("../graph/support/graph")).supportGraphShape());

const ROUTES: Record<string, Route> = {
  "POST /assistants/search": async ({ event }) => searchAssistants(body(event, AssistantSearch)),
  "GET /assistants/{assistant_id}": async ({ event }) => assistant(graphOf(param(event, "assistant_id"))),
  "GET /assistants/{assistant_id}/graph": async ({ event, server }) => {
    const graphId = graphOf(param(event, "assistant_id"));
    return graphJson(graphId === "chat" ? server.graph : await supportShape());
  },
  "GET /assistants/{assistant_id}/schemas": async ({ event, server }) => {
    const graphId = graphOf(param(event, "assistant_id"));
    return graphSchemas(graphId, graphId === "chat" ? channelsOf(server) : channelsOf({ graph: await supportShape() }));
  },
  "POST /threads": async ({ event, server, userId }) => server.threads.create(userId, body(event, ThreadCreate)),
  "POST /threads/search": async ({ event, server, userId }) => server.threads.search(userId, body(event, ThreadSearch)),
  "GET /threads/{thread_id}": async ({ event, server, userId }) =>
    server.threads.get(userId, param(event, "thread_id")),
  "PATCH /threads/{thread_id}": async ({ event, server, userId }) =>
    server.threads.patch(userId, param(event, "thread_id"), body(event, ThreadPatch).metadata ?? {}),
  "DELETE /threads/{thread_id}": async ({ event, server, userId }) => {
    await server.threads.delete(userId, param(event, "thread_id"));
    return undefined;
  },
  "GET /threads/{thread_id}/state": async ({ event, server, userId }) =>
    server.threads.state(userId, param(event, "thread_id")),
  "GET /threads/{thread_id}/state/{checkpoint_id}": async ({ event, server, userId }) =>
    server.threads.state(userId, param(event, "thread_id"), param(event, "checkpoint_id")),
  "POST /threads/{thread_id}/history": async ({ event, server, userId }) =>
    server.threads.history(userId, param(event, "thread_id"), body(event, HistoryQuery)),
  "POST /threads/{thread_id}/runs/wait": async (ctx) => wait(ctx, param(ctx.event, "thread_id")),
  "POST /runs/wait": async (ctx) => wait(ctx, undefined),
  "GET /threads/{thread_id}/runs/{run_id}": async ({ event, server, userId }) => {
    const threadId = param(event, "thread_id");
    await server.threads.assertOwned(userId, threadId);
    const run = await server.runs.get(threadId, param(event, "run_id"));
    if (!run) throw notFound("run_not_found", "no such run in this thread");
    return runJson(run);
  },
  "POST /threads/{thread_id}/runs/{run_id}/cancel": async ({ event, server, userId }) => {
    const threadId = param(event, "thread_id");
    await server.threads.assertOwned(userId, threadId);
    const run = await server.runs.get(threadId, param(event, "run_id"));
    if (!run) throw notFound("run_not_found", "no such run in this thread");
    const action = CancelQuery.safeParse(event.queryStringParameters ?? {});
    if (!action.success) throw badRequest("invalid_action", 'action: must be "interrupt" or "rollback"');
    if (run.status === "running" || run.status === "pending")
      await server.runDeps.requestCancel(threadId, action.data.action);
    return { statusCode: 202, body: "" };
  },
  "PUT /store/items": async ({ event, server, userId }) => {
    await server.items.put(userId, body(event, PutItem));
    return undefined;
  },
  "GET /store/items": async ({ event, server, userId }) => {
    const query = event.queryStringParameters ?? {};
    const key = ItemKey.safeParse({ namespace: (query.namespace ?? "").split("."), key: query.key });
    if (!key.success) throw badRequest("invalid_item", "namespace (dot-separated) and key are required");
    return server.items.get(userId, key.data.namespace, key.data.key);
  },
  "DELETE /store/items": async ({ event, server, userId }) => {
    const { namespace, key } = body(event, ItemKey);
    await server.items.delete(userId, namespace, key);
    return undefined;
  },
  "POST /store/items/search": async ({ event, server, userId }) =>
    server.items.search(userId, body(event, SearchItems)),
  "POST /store/namespaces": async ({ event, server, userId }) =>
    server.items.namespaces(userId, body(event, ListNamespaces)),
};

const CancelQuery = z.object({ action: z.enum(["interrupt", "rollback"]).default("interrupt") }).loose();

/** A run that answers once it finished, with the thread's values (or `__error__`, as the platform does). */
async function wait({ event, server, userId, context }: Parameters<Route>[0], threadId: string | undefined) {
  const result = await executeRun(
    server.runDeps,
    { userId, threadId, deadline: runDeadline(context) },
    body(event, RunCreate),
    { started: () => {}, event: () => {} },
  );
  const location = { "content-location": `/threads/${result.threadId}/runs/${result.runId}` };
  if (result.error)
    return json(200, { __error__: { error: result.error.code, message: result.error.message } }, location);
  return json(200, result.values ?? {}, location);
}

/**
 * The LangGraph Agent Server API's JSON routes (assistants, threads, state, history, runs that
 * answer when done), for @langchain/langgraph-sdk's Client and useStream. Streaming runs are
 * functions/agent-server-stream.ts. /ok and /info are behind the authorizer like every route.
 */
export function createAgentServerHandler(config: Config, server: () => Promise<AgentServer>) {
  return apiHandler(
    logger,
    async (event, context) => {
      const key = `${event.httpMethod} ${event.resource}`;
      if (key === "GET /ok") return json(200, { ok: true });
      if (key === "GET /info")
        return json(200, { version: "agent-server-api", flags: { assistants: true, crons: false, langsmith: false } });
      const route = ROUTES[key];
      if (!route) throw notFound("not_found", `no route for ${key}`);
      const ready = await server();
      const userId = callerId(event, ready.config.AUTH_MODE);
      const result = await route({ server: ready, userId, event, context });
      if (result === undefined) return { statusCode: 204, body: "" };
      if (typeof result === "object" && result !== null && "statusCode" in result)
        return result as ReturnType<typeof json>;
      return json(200, result);
    },
    { corsOrigins: () => config.CORS_ORIGINS },
  );
}

/** The handler on any wiring: Lambda's below, or the local stack's. */
export const createHandler = ({ config, backends }: Wiring) =>
  createAgentServerHandler(config(), deferredAgentServer(logger, backends));

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
