import { DynamoDBServiceException } from "@aws-sdk/client-dynamodb";
import { S3ServiceException } from "@aws-sdk/client-s3";
import type { Backends } from "../../shared/backends";
import type { CronScheduler } from "../../shared/cron-scheduler";
import { S3_ACTIONS, type FileObjects } from "../../shared/files/objects";
import type { ObjectSource } from "../../shared/ingest/object-source";
import {
  ATTACHMENT_ACCESS,
  attachmentPermissions,
  DOCUMENT_ADMIN_ACTIONS,
  keyMatches,
  type ObjectPermission,
} from "../grants";
import type { FunctionSpec, Grant } from "../manifest";
import { USAGE_ITEM_PREFIX } from "../../shared/stores/user-usage";
import { localDynamoClient } from "./dynamo";

/**
 * Each function's backends as its grants leave them in AWS (infra/aws/stack.ts), so the local
 * stack, and every test on it, fails where a deployment would:
 * - what the stack hands over by environment only with a grant (a queue's URL, the crons' group,
 *   the attachments bucket, the data function's name, the documents bucket's admin side) is absent
 *   without it, as awsBackends then builds it;
 * - what every function is told of but only some may use (the checkpoint and idempotency tables,
 *   Supabase's secret, the documents bucket's objects) refuses the others with AccessDenied, as
 *   IAM does;
 * - bucket objects are held to the actions and keys the grants name (infra/grants.ts).
 * Not held locally: Bedrock (the offline stand-ins call no model) and the Intercom secrets.
 */
export function grantedBackends(spec: FunctionSpec, all: Backends, dynamoEndpoint: string): Backends {
  const has = (grant: Grant) => spec.grants.includes(grant);
  const filePermissions = spec.grants.flatMap((g) => {
    const access = ATTACHMENT_ACCESS[g];
    return access ? attachmentPermissions(access) : [];
  });
  const files = all.files && filePermissions.length > 0 ? heldTo(all.files, filePermissions, spec.name) : undefined;
  const knowledge =
    all.knowledge && has("documents:admin")
      ? {
          ...all.knowledge,
          objects: heldTo(
            all.knowledge.objects,
            DOCUMENT_ADMIN_ACTIONS.map((action) => ({ action, keys: `${all.knowledge!.prefix}*` })),
            spec.name,
          ),
        }
      : undefined;
  const tables = new Set([
    ...(has("checkpoints") ? [all.config.CHECKPOINT_TABLE] : []),
    ...(has("idempotency") ? [all.config.IDEMPOTENCY_TABLE] : []),
  ]);
  const supabase = has("supabase");
  // The usage grant's items: UpdateItem on the checkpoint table, keys under USAGE_ITEM_PREFIX only.
  const items = has("usage") && !has("checkpoints") ? { table: all.config.CHECKPOINT_TABLE } : undefined;
  return {
    config: all.config,
    dynamo: tableGated(dynamoEndpoint, tables, spec.name, items),
    ...(all.conversations ? { conversations: supabase ? all.conversations : refused(spec.name, "supabase") } : {}),
    ...(all.store ? { store: supabase ? all.store : refused(spec.name, "supabase") } : {}),
    ...(all.userData ? { userData: supabase ? all.userData : refused(spec.name, "supabase") } : {}),
    ...(has("send:extraction") && all.extractionQueue ? { extractionQueue: all.extractionQueue } : {}),
    ...(has("send:support") && all.supportQueue ? { supportQueue: all.supportQueue } : {}),
    ...(has("send:runs") && all.runsQueue ? { runsQueue: all.runsQueue } : {}),
    ...(has("send:webhooks") && all.webhooksQueue ? { webhooksQueue: all.webhooksQueue } : {}),
    ...(all.cronScheduler && (has("crons") || has("crons:remove"))
      ? { cronScheduler: has("crons") ? all.cronScheduler : removeOnly(all.cronScheduler, spec.name) }
      : {}),
    ...(files ? { files } : {}),
    // Only beside the bucket, as awsBackends builds it.
    ...(files && has("invoke:data") && all.dataEngine ? { dataEngine: all.dataEngine } : {}),
    ...(all.documents
      ? { documents: has("documents") ? all.documents : refused<ObjectSource>(spec.name, "documents") }
      : {}),
    ...(all.documentProcessor ? { documentProcessor: all.documentProcessor } : {}),
    ...(all.intercomFetch ? { intercomFetch: all.intercomFetch } : {}),
    ...(knowledge ? { knowledge } : {}),
  };
}

const refusal = (functionName: string, what: string) =>
  `local IAM: function ${functionName} is not authorized to ${what}: add the grant to its entry in infra/manifest.ts`;

/** What DynamoDB answers a call the role does not allow (400 AccessDeniedException); Supabase's secret read is refused so too. */
export class AccessDenied extends DynamoDBServiceException {
  constructor(functionName: string, what: string) {
    super({
      name: "AccessDeniedException",
      $fault: "client",
      $metadata: { httpStatusCode: 400 },
      message: refusal(functionName, what),
    });
    // The SDK's exceptions set their own prototype, as each modeled one does after super().
    Object.setPrototypeOf(this, AccessDenied.prototype);
  }
}

/** What S3 answers an action the role does not allow: 403 AccessDenied. */
export class S3AccessDenied extends S3ServiceException {
  constructor(functionName: string, what: string) {
    super({
      name: "AccessDenied",
      $fault: "client",
      $metadata: { httpStatusCode: 403 },
      message: refusal(functionName, what),
    });
    Object.setPrototypeOf(this, S3AccessDenied.prototype);
  }
}

/**
 * A DynamoDB client of its own for the function, refusing tables its grants do not name, and on
 * `usage.table` anything but an UpdateItem of a usage item (as IAM's dynamodb:LeadingKeys holds it).
 */
function tableGated(endpoint: string, tables: Set<string>, functionName: string, usage?: { table: string }) {
  const client = localDynamoClient(endpoint);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as TableInput;
      for (const table of tablesOf(input)) {
        if (tables.has(table)) continue;
        if (table === usage?.table && context.commandName === "UpdateItemCommand" && isUsageKey(input.Key)) continue;
        throw new AccessDenied(functionName, `perform dynamodb:${context.commandName ?? "call"} on table ${table}`);
      }
      return next(args);
    },
    { step: "initialize", name: "localIamTables" },
  );
  return client;
}

/** A key whose partition is a usage item's, marshalled (`{ S: ... }`) or not, as the document client may hand it over. */
function isUsageKey(key: Record<string, unknown> | undefined): boolean {
  const pk = key?.pk as string | { S?: string } | undefined;
  const value = typeof pk === "string" ? pk : pk?.S;
  return typeof value === "string" && value.startsWith(USAGE_ITEM_PREFIX);
}

interface TableInput {
  Key?: Record<string, unknown>;
  TableName?: string;
  RequestItems?: Record<string, unknown>;
  TransactItems?: Array<Record<string, { TableName?: string }>>;
}

const tablesOf = (input: TableInput): string[] => [
  ...(input.TableName ? [input.TableName] : []),
  ...Object.keys(input.RequestItems ?? {}),
  ...(input.TransactItems ?? []).flatMap((item) => Object.values(item).map((op) => op.TableName ?? "")),
];

/** A bucket's objects, each method allowed only where every action it needs is granted on its key. */
export function heldTo(objects: FileObjects, permissions: ObjectPermission[], functionName: string): FileObjects {
  const allowed = (action: string, key: string) =>
    permissions.some((p) => p.action === action && keyMatches(p.keys, key));
  const check = (method: keyof FileObjects, keys: string[]) => {
    for (const action of S3_ACTIONS[method])
      for (const key of keys)
        if (!allowed(action, key)) throw new S3AccessDenied(functionName, `perform ${action} on ${key}`);
  };
  // A read of a key that is not there is AccessDenied to a caller that may not list the bucket, as
  // S3 answers it (403, not 404).
  const read = async (key: string) => {
    check("read", [key]);
    const bytes = await objects.read(key);
    // Only listing with no prefix condition counts: a GetObject has no s3:prefix for one to match.
    if (bytes === undefined && !permissions.some((p) => p.action === "s3:ListBucket" && p.keys === "*"))
      throw new S3AccessDenied(functionName, `read ${key}, which is not there, without s3:ListBucket`);
    return bytes;
  };
  // Each call goes to the stand-in itself: it keeps state (its upload hook) that the stack set on it.
  const guarded = <M extends keyof FileObjects>(method: M, keysOf: (...args: Parameters<FileObjects[M]>) => string[]) =>
    (async (...args: Parameters<FileObjects[M]>) => {
      check(method, keysOf(...args));
      return (objects[method] as (...a: Parameters<FileObjects[M]>) => unknown).apply(objects, args);
    }) as FileObjects[M];
  return {
    uploadUrl: guarded("uploadUrl", (key) => [key]),
    downloadUrl: guarded("downloadUrl", (key) => [key]),
    read,
    write: guarded("write", (key) => [key]),
    delete: guarded("delete", (keys) => keys),
    deleteUnder: guarded("deleteUnder", (prefix) => [prefix]),
  };
}

/** The crons' scheduler for a function that may delete schedules and make none (crons:remove). */
function removeOnly(scheduler: CronScheduler, functionName: string): CronScheduler {
  return {
    put: () =>
      Promise.reject(new AccessDenied(functionName, "perform scheduler:CreateSchedule (it needs the crons grant)")),
    remove: (cronId) => scheduler.remove(cronId),
  };
}

/** A backend the function is told of but may not use: every call refused, as IAM refuses it. */
function refused<T extends object>(functionName: string, grant: Grant): T {
  return new Proxy({} as T, {
    get: (_, method) =>
      typeof method === "symbol" || method === "then"
        ? undefined
        : () => Promise.reject(new AccessDenied(functionName, `use ${String(method)} (it needs the ${grant} grant)`)),
  });
}
