import * as z from "../shared/zod";
import { apiHandler } from "../shared/api-handler";
import type { Backends } from "../shared/backends";
import { ConfigError } from "../shared/config";
import { awsWiring, type Wiring } from "../shared/wiring";
import { once } from "../shared/once";
import { AppError, badRequest, unauthorized } from "../shared/errors";
import { json } from "../shared/http";
import { verifyIntercomSignature } from "../shared/intercom/signature";
import { createLogger } from "../shared/logger";
import type { QueuePublisher } from "../shared/queue";
import { secretSource } from "../shared/secrets";
import { OnceMarkers } from "../shared/stores/once-markers";
import type { RouteSchemas } from "../shared/request-schemas";
import { intercomField } from "../shared/intercom/support-message";

const logger = createLogger("intercom-webhook");

// An id over its cap is a 400: a 5xx would be retried forever.
const Author = z.object({ type: intercomField(64), id: z.optional(intercomField(128)) });
const Part = z.object({ id: intercomField(128), author: Author });
/**
 * Any notification: its topic is read before its item, so a topic it does not handle is
 * acknowledged whatever its item holds (Intercom retries a refused notification, and can suspend
 * a webhook that keeps failing).
 */
const Envelope = z.object({
  type: z.literal("notification_event"),
  id: intercomField(256).check(z.minLength(1)),
  topic: intercomField(128).check(z.minLength(1)),
  data: z.optional(z.unknown()),
});
/** A notification of a topic it handles: its item is a conversation. */
const Notification = z.object({
  ...Envelope.shape,
  data: z.object({
    item: z.looseObject({
      id: z.optional(intercomField(128)),
      source: z.nullish(z.partial(Part, { id: true })),
      conversation_parts: z.optional(z.object({ conversation_parts: z.array(Part) })),
    }),
  }),
});
const notAnIntercomNotification = () => badRequest("invalid_notification", "body is not an Intercom notification");

const CONVERSATION_TOPICS = new Set(["conversation.user.created", "conversation.user.replied"]);
/** Parts written by the team or a bot never start a run: the agent cannot answer itself. */
const NOT_CUSTOMERS = new Set(["admin", "bot", "team"]);

export interface WebhookDeps {
  /** read on each request (cached): a rotated secret reaches a warm container within minutes */
  clientSecret: string | (() => Promise<string>);
  queue: QueuePublisher;
  notifications: OnceMarkers;
}

/**
 * POST /webhooks/intercom: verify the signature on the raw bytes, answer Intercom's checks,
 * and queue customer messages for the support worker. Answers fast (Intercom wants < 500 ms):
 * the agent runs behind the queue.
 */
export function createIntercomWebhookHandler(deps: () => Promise<WebhookDeps>, corsOrigins?: () => string | undefined) {
  return apiHandler(
    logger,
    async (event) => {
      if (event.httpMethod === "HEAD") return { statusCode: 200, body: "" };
      const { clientSecret: secret, queue, notifications } = await deps();
      const clientSecret = typeof secret === "string" ? secret : await secret();
      const raw =
        event.body == null ? Buffer.alloc(0) : Buffer.from(event.body, event.isBase64Encoded ? "base64" : "utf8");
      if (!verifyIntercomSignature(raw, event.headers?.["x-hub-signature"], clientSecret))
        throw unauthorized("missing or invalid X-Hub-Signature");

      let body: unknown;
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        throw notAnIntercomNotification();
      }
      const envelope = Envelope.safeParse(body);
      if (!envelope.success) throw notAnIntercomNotification();
      if (envelope.data.topic === "ping") return json(200, { status: "pong" });
      if (!CONVERSATION_TOPICS.has(envelope.data.topic))
        return json(200, { status: "ignored", reason: `topic ${envelope.data.topic}` });
      const conversation = Notification.safeParse(body);
      if (!conversation.success) throw notAnIntercomNotification();
      const parsed = conversation.data;

      const item = parsed.data.item;
      const parts = item.conversation_parts?.conversation_parts ?? [];
      const part = parsed.topic === "conversation.user.replied" && parts.length ? parts[parts.length - 1] : item.source;
      if (!item.id || !part?.id)
        throw badRequest("invalid_notification", "the notification names no conversation part");
      if (NOT_CUSTOMERS.has(part.author.type))
        return json(200, { status: "ignored", reason: `part written by ${part.author.type}` });

      // Intercom retries deliveries: a notification is queued once it is known not to be queued
      // yet, and marked queued only after. Marked first, an invocation stopped mid-publish (its
      // timeout) would leave the mark, and Intercom's retry would be dropped as a duplicate. Two
      // deliveries at once may both queue it: the worker answers each part once (respondNode).
      const key = `intercom-notification#${parsed.id}`;
      if (await notifications.claimed(key)) return json(200, { status: "duplicate" });
      try {
        await queue.publish({
          notification_id: parsed.id,
          conversation_id: item.id,
          part_id: part.id,
          topic: parsed.topic,
        });
      } catch (err) {
        throw new AppError(503, "queue_unavailable", "could not queue the notification", { cause: err });
      }
      await notifications.claim(key);
      logger.info("notification queued", { notificationId: parsed.id, conversationId: item.id, partId: part.id });
      return json(200, { status: "queued" });
    },
    { corsOrigins },
  );
}

export const webhookDeps = (backends: Backends, queue: QueuePublisher) => async (): Promise<WebhookDeps> => ({
  clientSecret: secretSource(
    "INTERCOM_CLIENT_SECRET",
    backends.config.INTERCOM_CLIENT_SECRET,
    backends.config.INTERCOM_CLIENT_SECRET_ARN,
  ),
  queue,
  notifications: new OnceMarkers(backends.dynamo, backends.config.IDEMPOTENCY_TABLE),
});

/** The routes' request schemas, for the storable-text walk (shared/request-schemas.ts). */
export const requestSchemas: RouteSchemas = {
  "POST /webhooks/intercom": { body: Notification },
  "HEAD /webhooks/intercom": {},
};

/** The handler on any wiring: Lambda's below, or the local stack's. */
export const createHandler = ({ config, backends }: Wiring) =>
  createIntercomWebhookHandler(
    once(async () => {
      const b = await backends();
      if (!b.supportQueue) throw new ConfigError("Missing configuration: SUPPORT_QUEUE_URL must be set");
      return webhookDeps(b, b.supportQueue)();
    }),
    () => config().CORS_ORIGINS,
  );

export const handler = createHandler(awsWiring());
export { loadDeferred } from "../shared/deferred";
