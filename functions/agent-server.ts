import type { APIGatewayProxyEvent, Context } from "aws-lambda";
import * as z from "../shared/zod";
import { graphJson, graphSchemas } from "../graph/agent-server/assistants";
import { agentServerErrorResponse, malformedId } from "../graph/agent-server/errors";
import { guardThread } from "../graph/agent-server/guard";
import { createBackgroundRun, runAsItStands, runEnded } from "../graph/agent-server/background";
import { CronCount, CronCreate, CronPatch, CronSearch } from "../graph/agent-server/crons";
import {
  AssistantCount,
  CheckpointId,
  AssistantCreate,
  AssistantLatest,
  AssistantPatch,
  AssistantSearch,
  AssistantVersions,
  HistoryQuery,
  MAX_REQUEST_BYTES,
  RunCreate,
  StateAtCheckpoint,
  ThreadCount,
  ThreadCreate,
  ThreadPatch,
  ThreadSearch,
  ThreadStateUpdate,
} from "../graph/agent-server/requests";
import { executeRun } from "../graph/agent-server/runs";
import { withdrawRun } from "../graph/agent-server/run-webhook";
import { ItemKey, ItemQuery, ListNamespaces, PutItem, SearchItems } from "../graph/agent-server/store";
import { type AgentServer, deferredAgentServer } from "../graph/agent-server/runtime";
import { apiHandler } from "../shared/api-handler";
import { runJson } from "../shared/stores/agent-json";
import type { Config } from "../shared/config";
import { runDeadline } from "../shared/deadline";
import { AppError, notFound } from "../shared/errors";
import { json, parseJsonBody, parseQuery } from "../shared/http";
import { callerId } from "../shared/identity";
import { createLogger } from "../shared/logger";
import { once } from "../shared/once";
import type { RequestSchemas, RouteSchemas } from "../shared/request-schemas";
import { storableText } from "../shared/text";
import { awsWiring, type Wiring } from "../shared/wiring";

const logger = createLogger("agent-server");

interface RouteContext {
  server: AgentServer;
  userId: string;
  event: APIGatewayProxyEvent;
  context: Context;
}
type Parsed<S> = S extends z.ZodMiniType ? z.infer<S> : undefined;

/** A route: the schemas of what it takes from the request (parsed before it runs), and what it does. */
interface Route extends RequestSchemas {
  handle(ctx: RouteContext & { body: unknown; query: unknown; path: unknown }): Promise<unknown>;
}
function route<
  B extends z.ZodMiniType | undefined = undefined,
  Q extends z.ZodMiniType | undefined = undefined,
  P extends z.ZodMiniType | undefined = undefined,
>(spec: {
  body?: B;
  query?: Q;
  path?: P;
  handle(ctx: RouteContext & { body: Parsed<B>; query: Parsed<Q>; path: Parsed<P> }): Promise<unknown>;
}): Route {
  return spec as Route;
}

const AssistantPath = z.object({ assistant_id: storableText({ min: 1, max: 128 }) });
const ThreadPath = z.object({ thread_id: z.uuid() });
const CheckpointPath = z.extend(ThreadPath, { checkpoint_id: CheckpointId });
const RunPath = z.extend(ThreadPath, { run_id: z.uuid() });
const CronPath = z.object({ cron_id: z.uuid() });
const CancelQuery = z.lazy(() =>
  z.looseObject({
    action: z._default(z.enum(["interrupt", "rollback"], { error: 'must be "interrupt" or "rollback"' }), "interrupt"),
    wait: z.optional(z.enum(["0", "1", "true", "false"])),
  }),
);
const RunListQuery = z.lazy(() =>
  z.object({
    limit: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(1000)), 10),
    offset: z._default(z.coerce.number().check(z.int(), z.gte(0)), 0),
    status: z.optional(z.enum(["pending", "running", "error", "success", "timeout", "interrupted"])),
    // Accepted and ignored: every run's fields are small.
    select: z.optional(z.union([storableText({ max: 64 }), z.array(storableText({ max: 64 })).check(z.maxLength(32))])),
  }),
);

/** A graph's state keys, for its schemas. */
const channelsOf = (server: { graph: unknown }) => Object.keys((server.graph as { channels: object }).channels);

/** The read-only support assistant's graph, drawn from its shape: loaded only when asked for. */
const supportShape = once(async () => (await import("../graph/support/graph")).supportGraphShape());

const AssistantDeleteQuery = z.looseObject({ delete_threads: z.optional(z.enum(["true", "false"])) });

/** A page's place in all that matched, as LangGraph's server tells it. */
function paginationHeaders(offset: number, count: number, total: number): Record<string, string> {
  const next = offset + count;
  return { "x-pagination-total": String(total), ...(next < total ? { "x-pagination-next": String(next) } : {}) };
}

const runOf = async (server: AgentServer, path: z.infer<typeof RunPath>) => {
  const run = await server.runs.get(path.thread_id, path.run_id);
  if (!run) throw notFound("run_not_found", "no such run in this thread");
  return runAsItStands(server, run);
};

/**
 * Every route, keyed as the manifest declares it. A route whose path names a thread runs only for
 * the thread's owner: the dispatcher checks that first (ThreadService.assertOwned), before anything
 * is parsed, read, written or cancelled, so no route can forget it.
 */
const ROUTES: Record<string, Route> = {
  "POST /assistants": route({
    body: AssistantCreate,
    handle: async ({ body, server, userId }) => server.assistants.create(userId, body),
  }),
  "POST /assistants/search": route({
    body: AssistantSearch,
    handle: async ({ body, server, userId }) => {
      const { assistants, total } = await server.assistants.search(userId, body);
      return json(200, assistants, paginationHeaders(body.offset, assistants.length, total));
    },
  }),
  "POST /assistants/count": route({
    body: AssistantCount,
    handle: async ({ body, server, userId }) => server.assistants.count(userId, body),
  }),
  "GET /assistants/{assistant_id}": route({
    path: AssistantPath,
    handle: async ({ path, server, userId }) => server.assistants.get(userId, path.assistant_id),
  }),
  "PATCH /assistants/{assistant_id}": route({
    path: AssistantPath,
    body: AssistantPatch,
    handle: async ({ path, body, server, userId }) => server.assistants.update(userId, path.assistant_id, body),
  }),
  "DELETE /assistants/{assistant_id}": route({
    path: AssistantPath,
    query: AssistantDeleteQuery,
    handle: async ({ path, query, server, userId }) => {
      // delete_threads: the caller's threads its runs marked as this assistant's go first.
      const threads = async () => {
        for (const thread of await server.threads.records.list(userId))
          if (thread.metadata.assistant_id === path.assistant_id) await server.threads.delete(userId, thread.threadId);
      };
      await server.assistants.delete(userId, path.assistant_id, query.delete_threads === "true" ? threads : undefined);
      return undefined;
    },
  }),
  "POST /assistants/{assistant_id}/versions": route({
    path: AssistantPath,
    body: AssistantVersions,
    handle: async ({ path, body, server, userId }) => server.assistants.versions(userId, path.assistant_id, body),
  }),
  "POST /assistants/{assistant_id}/latest": route({
    path: AssistantPath,
    body: AssistantLatest,
    handle: async ({ path, body, server, userId }) =>
      server.assistants.setLatest(userId, path.assistant_id, body.version),
  }),
  "GET /assistants/{assistant_id}/graph": route({
    path: AssistantPath,
    handle: async ({ path, server, userId }) => {
      const { graph_id } = await server.assistants.get(userId, path.assistant_id);
      return graphJson(graph_id === "chat" ? server.graph : await supportShape());
    },
  }),
  "GET /assistants/{assistant_id}/schemas": route({
    path: AssistantPath,
    handle: async ({ path, server, userId }) => {
      const { graph_id } = await server.assistants.get(userId, path.assistant_id);
      return graphSchemas(
        graph_id,
        graph_id === "chat" ? channelsOf(server) : channelsOf({ graph: await supportShape() }),
      );
    },
  }),
  "POST /threads": route({
    body: ThreadCreate,
    handle: async ({ body, server, userId }) => server.threads.create(userId, body),
  }),
  "POST /threads/search": route({
    body: ThreadSearch,
    handle: async ({ body, server, userId }) => {
      const { threads, total } = await server.threads.search(userId, body);
      return json(200, threads, paginationHeaders(body.offset, threads.length, total));
    },
  }),
  "POST /threads/count": route({
    body: ThreadCount,
    handle: async ({ body, server, userId }) => server.threads.count(userId, body),
  }),
  "POST /threads/{thread_id}/copy": route({
    path: ThreadPath,
    handle: async ({ path, server, userId }) => server.threads.copy(userId, path.thread_id),
  }),
  "POST /threads/{thread_id}/state": route({
    path: ThreadPath,
    body: ThreadStateUpdate,
    handle: async ({ path, body, server, userId }) =>
      server.threads.updateState(userId, path.thread_id, {
        values: body.values,
        ...(body.as_node ? { asNode: body.as_node } : {}),
        ...(body.checkpoint?.checkpoint_id || body.checkpoint_id
          ? { checkpointId: (body.checkpoint?.checkpoint_id ?? body.checkpoint_id)! }
          : {}),
      }),
  }),
  "POST /threads/{thread_id}/state/checkpoint": route({
    path: ThreadPath,
    body: StateAtCheckpoint,
    handle: async ({ path, body, server }) => server.threads.state(path.thread_id, body.checkpoint.checkpoint_id),
  }),
  "GET /threads/{thread_id}": route({
    path: ThreadPath,
    handle: async ({ path, server, userId }) => server.threads.get(userId, path.thread_id),
  }),
  "PATCH /threads/{thread_id}": route({
    path: ThreadPath,
    body: ThreadPatch,
    handle: async ({ path, body, server, userId }) => server.threads.patch(userId, path.thread_id, body.metadata ?? {}),
  }),
  "DELETE /threads/{thread_id}": route({
    path: ThreadPath,
    handle: async ({ path, server, userId }) => {
      await server.threads.delete(userId, path.thread_id);
      return undefined;
    },
  }),
  "GET /threads/{thread_id}/state": route({
    path: ThreadPath,
    handle: async ({ path, server }) => server.threads.state(path.thread_id),
  }),
  "GET /threads/{thread_id}/state/{checkpoint_id}": route({
    path: CheckpointPath,
    handle: async ({ path, server }) => server.threads.state(path.thread_id, path.checkpoint_id),
  }),
  "POST /threads/{thread_id}/history": route({
    path: ThreadPath,
    body: HistoryQuery,
    handle: async ({ path, body, server }) => server.threads.history(path.thread_id, body),
  }),
  "POST /threads/{thread_id}/runs/wait": route({
    path: ThreadPath,
    body: RunCreate,
    handle: async (ctx) => wait(ctx, ctx.body, ctx.path.thread_id),
  }),
  "POST /runs/wait": route({ body: RunCreate, handle: async (ctx) => wait(ctx, ctx.body, undefined) }),
  "GET /threads/{thread_id}/runs/{run_id}": route({
    path: RunPath,
    handle: async ({ path, server }) => runJson(await runOf(server, path)),
  }),
  // runs.create: a background run, answered at once; the run worker runs it (graph/agent-server/background.ts).
  "POST /threads/{thread_id}/runs": route({
    path: ThreadPath,
    body: RunCreate,
    handle: async ({ path, body, server, userId }) => {
      const run = await createBackgroundRun(server, userId, path.thread_id, body);
      return json(200, runJson(run), { "content-location": `/threads/${path.thread_id}/runs/${run.runId}` });
    },
  }),
  // Newest first, as LangGraph's server lists them.
  "GET /threads/{thread_id}/runs": route({
    path: ThreadPath,
    query: RunListQuery,
    handle: async ({ path, query, server }) => {
      const listed = await Promise.all((await server.runs.list(path.thread_id)).map((r) => runAsItStands(server, r)));
      const runs = listed.filter((r) => !query.status || r.status === query.status).reverse();
      return runs.slice(query.offset, query.offset + query.limit).map(runJson);
    },
  }),
  // Crons on a thread: each firing a background run (graph/agent-server/crons.ts).
  "POST /threads/{thread_id}/runs/crons": route({
    path: ThreadPath,
    body: CronCreate,
    handle: async ({ path, body, server, userId }) => server.cronService.create(userId, path.thread_id, body),
  }),
  "POST /runs/crons": route({
    body: CronCreate,
    handle: async () => {
      throw new AppError(
        422,
        "stateless_crons_unsupported",
        "crons run on a thread here: create one with POST /threads/{thread_id}/runs/crons",
      );
    },
  }),
  "POST /runs/crons/search": route({
    body: CronSearch,
    handle: async ({ body, server, userId }) => server.cronService.search(userId, body),
  }),
  "POST /runs/crons/count": route({
    body: CronCount,
    handle: async ({ body, server, userId }) => server.cronService.count(userId, body),
  }),
  "PATCH /runs/crons/{cron_id}": route({
    path: CronPath,
    body: CronPatch,
    handle: async ({ path, body, server, userId }) => server.cronService.update(userId, path.cron_id, body),
  }),
  "DELETE /runs/crons/{cron_id}": route({
    path: CronPath,
    handle: async ({ path, server, userId }) => {
      await server.cronService.delete(userId, path.cron_id);
      return undefined;
    },
  }),
  "DELETE /threads/{thread_id}/runs/{run_id}": route({
    path: RunPath,
    handle: async ({ path, server, userId }) => {
      const run = await runOf(server, path);
      const running = () => new AppError(409, "run_running", "the run is running: cancel it first");
      if (run.status === "running") throw running();
      // Its event log holds its messages: it goes with the run rather than with the TTL, before the
      // record that names it (a retry after a failure between the two still finds the run).
      await server.events.remove(path.run_id);
      if (!(await server.runs.remove(path.thread_id, path.run_id))) throw running();
      // A run that waited made its thread busy: with it gone, the thread may not be.
      await server.threads.settleWaiting(userId, path.thread_id, { gone: run });
      return undefined;
    },
  }),
  "POST /threads/{thread_id}/runs/{run_id}/cancel": route({
    path: RunPath,
    query: CancelQuery,
    handle: async ({ path, query, server, userId, context }) => {
      const run = await runOf(server, path);
      // A background run that has not begun (pending, or waiting for its thread) never runs; one
      // that began is asked to stop through the thread's lease, only while it is that run's.
      const live = run.status === "running" || run.status === "pending";
      const withdrawn = live && (await withdrawRun(server.runDeps, run, query.action));
      // A withdrawn run made its thread busy while it waited: with it gone, the thread may not be.
      if (withdrawn) await server.threads.settleWaiting(userId, path.thread_id);
      else if (live) await server.runDeps.requestCancel(path.thread_id, userId, query.action, path.run_id);
      // wait: answered once the run stopped (a run notices within CANCEL_POLL_MS), or at the
      // function's deadline, still 202.
      if (live && (query.wait === "1" || query.wait === "true"))
        await runEnded(server, path.thread_id, path.run_id, {
          deadline: Math.min(runDeadline(context), Date.now() + 25_000),
        }).catch((err: unknown) => {
          // Deleted while it stopped (a rollback's withdrawal): it stopped.
          if (!(err instanceof AppError && err.status === 404)) throw err;
        });
      return { statusCode: 202, body: "" };
    },
  }),
  "PUT /store/items": route({
    body: PutItem,
    handle: async ({ body, server, userId }) => {
      await server.items.put(userId, body);
      return undefined;
    },
  }),
  "GET /store/items": route({
    query: ItemQuery,
    handle: async ({ query, server, userId }) => {
      // A key the store does not hold is null, as LangGraph's store answers it (the SDK reads null).
      const item = await server.items.get(userId, query.namespace, query.key);
      return item === null ? json(200, null) : item;
    },
  }),
  "DELETE /store/items": route({
    body: ItemKey,
    handle: async ({ body, server, userId }) => {
      await server.items.delete(userId, body.namespace, body.key);
      return undefined;
    },
  }),
  "POST /store/items/search": route({
    body: SearchItems,
    handle: async ({ body, server, userId }) => server.items.search(userId, body),
  }),
  "POST /store/namespaces": route({
    body: ListNamespaces,
    handle: async ({ body, server, userId }) => server.items.namespaces(userId, body),
  }),
};

/** Every route's request schemas, for the storable-text walk (shared/request-schemas.ts). */
export const requestSchemas: RouteSchemas = {
  "GET /ok": {},
  "GET /info": {},
  ...Object.fromEntries(Object.entries(ROUTES).map(([key, { body, query, path }]) => [key, { body, query, path }])),
};

/** A run that answers once it finished, with the thread's values (or `__error__`, as the platform does). */
async function wait(
  { server, userId, context }: RouteContext,
  body: z.infer<typeof RunCreate>,
  threadId: string | undefined,
) {
  const result = await executeRun(server.runDeps, { userId, threadId, deadline: runDeadline(context) }, body, {
    started: () => {},
    event: () => {},
  });
  const location = { "content-location": `/threads/${result.threadId}/runs/${result.runId}` };
  if (result.error) return json(200, { __error__: result.error }, location);
  return json(200, result.values ?? {}, location);
}

/** A path parameter that cannot be an id of its kind is 400, as LangGraph's server answers it: it names nothing. */
function parsePath(event: APIGatewayProxyEvent, schema: z.ZodMiniType | undefined) {
  if (!schema) return undefined;
  const parsed = schema.safeParse(event.pathParameters ?? {});
  if (parsed.success) return parsed.data;
  throw malformedId(String(parsed.error.issues[0]!.path[0] ?? "path"));
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
        return json(200, { version: "agent-server-api", flags: { assistants: true, crons: true, langsmith: false } });
      const route = ROUTES[key];
      if (!route) throw notFound("not_found", `no route for ${key}`);
      try {
        const ready = await server();
        const userId = callerId(event, ready.config.AUTH_MODE);
        // Ownership before effect: nothing of a thread is touched, not even its request parsed, for anyone but its owner.
        if (event.resource.includes("{thread_id}")) await guardThread(ready, userId, event);
        const result = await route.handle({
          server: ready,
          userId,
          event,
          context,
          path: parsePath(event, route.path),
          query: route.query ? parseQuery(event, route.query) : undefined,
          body: route.body ? parseJsonBody(event, route.body, { maxBytes: MAX_REQUEST_BYTES }) : undefined,
        });
        if (result === undefined) return { statusCode: 204, body: "" };
        if (typeof result === "object" && result !== null && "statusCode" in result)
          return result as ReturnType<typeof json>;
        return json(200, result);
      } catch (err) {
        // LangGraph's wording beside the project's codes; anything else is the middleware's 500.
        if (err instanceof AppError && err.status < 500) return agentServerErrorResponse(err);
        throw err;
      }
    },
    { corsOrigins: () => config.CORS_ORIGINS },
  );
}

/** The handler on any wiring: Lambda's below, or the local stack's. */
export const createHandler = ({ config, backends }: Wiring) =>
  createAgentServerHandler(config(), deferredAgentServer(logger, backends));

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
