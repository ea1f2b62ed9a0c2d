import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import {
  BatchGetCommand,
  type BatchGetCommandOutput,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  ScanCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { randomInt, randomUUID } from "node:crypto";
import { type SessionSettings, type SettingsPatch, storedSettings } from "../session-settings";
import { CHECKPOINT_TABLE } from "./checkpoint-table";
import { conditionalWrite } from "./conditional-write";
import { queryItems } from "./query-items";
import {
  type CancelAction,
  holdLease,
  LEASE_MS,
  LEASE_RUN_ATTRIBUTE,
  type Lease,
  requestCancel,
} from "./session-lease";
import { type UpdateInput, writeTogether } from "./write-together";

/** Sort key of the owner record in a thread's partition; the checkpoint saver ignores it. */
export const OWNER_SORT_KEY = "session";

export interface SessionRecord {
  userId: string;
  projectId: string | null | undefined;
  /** the tool groups on and whether the session is private (defaults for a session recorded before settings) */
  settings: SessionSettings;
  /** the session's ready data files, as the prompt lists them (DATA_FILE_PREFIX attributes) */
  dataFiles: DataFileSummary[];
  /** tools whose calls wait for approval in this session: names, or "*" for every one */
  approveTools?: string[] | "*";
  /**
   * A deletion began: "running" while it holds the lease (a turn waits for it, as for any holder),
   * "stalled" once it let go without finishing (a store failed part-way): gone to its owner until
   * a retried deletion finishes it.
   */
  deleting?: "running" | "stalled";
}

/**
 * A ready data file as the system prompt lists it, kept on the session's owner record (one
 * attribute per file, DATA_FILE_PREFIX + its id) when the file becomes ready and removed when it
 * is deleted: the turn's lease update returns the record, so the prompt needs no read of its own.
 * Bounded: at most DATA_FILE_SUMMARY_COLUMN_BYTES of column list, its full count beside it.
 */
export interface DataFileSummary {
  file_id: string;
  name: string;
  table: string;
  row_count: number;
  created_at: string;
  columns: { name: string; type: string }[];
  /** how many columns the file has (columns may list fewer) */
  column_count: number;
}

export const DATA_FILE_PREFIX = "data_file_";
export const DATA_FILE_SUMMARY_COLUMN_BYTES = 1024;

/** What taking a session's lease found: the lease (absent while another run holds it) and the session (absent: not the caller's). */
export interface SessionLeaseAttempt {
  session?: SessionRecord;
  lease?: Lease;
  /**
   * (A turn's lease) the message a turn added and never saw through: that turn's lease was not
   * let go by the turn itself (its process died, or lost the lease), so its messages may be in the
   * graph state and not in the transcript. The taker checks and takes them out (ChatService).
   */
  unfinished?: string;
}

/**
 * Who holds a lease. A run of the Agent Server API names itself (`runId`); a chat turn or run of
 * the graph names the message it adds, if any (`turn`): kept on the record (LEASE_MESSAGE) while
 * it runs and removed when it lets go, so the next turn learns of one that died between writing
 * the graph state and the transcript. A lease for anything else (a state write, a deletion)
 * leaves that mark as it is.
 */
export interface LeaseHolder {
  runId?: string;
  turn?: { messageId?: string };
}

/** The owner record's attribute naming the message of the turn holding the lease (LeaseHolder). */
export const LEASE_MESSAGE = "lease_message";
/** The owner record's count of lease takings and releases: a write conditional on it finds nobody took or let go the lease since a read. */
const GENERATION = "lease_gen";
/**
 * Where a new record's count starts: at random, so a session deleted and made again under the same
 * id between a read and a lease write (a client may choose the id) does not read as unchanged.
 */
const firstGeneration = () => randomInt(1, 2 ** 31);
/** The owner record's count of what the session's last turn spent, in model tokens (its next turn's reservation). */
export const TURN_TOKENS = "turn_tokens";
/**
 * On the owner record of a session made since the checkpoint keys' current layout
 * (graph/checkpoint/keys.ts): its state has nothing in the legacy one, where a read need not look.
 */
const CURRENT_LAYOUT = "state_layout";

/** A session's owner record as a read found it (DynamoDBSaver.latestWith): what a turn needs before taking its lease. */
export interface SeenSession {
  item: Record<string, unknown>;
  session: SessionRecord;
  /** held by a run now (or a deletion is running) */
  busy: boolean;
  /** the lease generation read (0: never taken) */
  generation: number;
  /** what the session's last turn spent, if it was counted */
  lastTurnTokens?: number;
  /** made before the checkpoint keys' current layout: its state may be in the legacy one */
  mayHaveLegacyState: boolean;
}

/** The owner record as a read found it, or undefined when the item is not one. */
export function seenSession(item: Record<string, unknown> | undefined): SeenSession | undefined {
  if (item?.sk !== OWNER_SORT_KEY || typeof item.user_id !== "string") return undefined;
  const session = recordOf(item);
  const held = typeof item.lease_until === "number" && item.lease_until >= Date.now();
  return {
    item,
    session,
    busy: held || session.deleting === "running",
    generation: typeof item[GENERATION] === "number" ? item[GENERATION] : 0,
    ...(typeof item[TURN_TOKENS] === "number" ? { lastTurnTokens: item[TURN_TOKENS] } : {}),
    mayHaveLegacyState: item[CURRENT_LAYOUT] !== 2,
  };
}

/**
 * Who owns each chat session, kept in the thread's own partition of the checkpoint table:
 * one consistent GetItem per turn, a conditional put when a session starts, and it goes
 * with the thread on deleteThread. It does not depend on Supabase, so sessions stay
 * private even in a deployment without it.
 */
export class SessionOwners {
  private readonly doc: DynamoDBDocumentClient;

  constructor(
    client: DynamoDBClient,
    private readonly tableName: string,
    private readonly ttlDays?: number,
    private readonly leaseMs = LEASE_MS,
  ) {
    this.doc = DynamoDBDocumentClient.from(client);
  }

  /**
   * Starts a session for `userId` in `projectId` (null: none) for good, its lease held by the
   * caller: one conditional put, in one transaction with `alongside` (the turn's admission) when
   * given. No lease when the id is already taken; `refused` when the condition of `alongside` did
   * not hold (and nothing was written).
   */
  async claimLeased(
    sessionId: string,
    userId: string,
    projectId: string | null,
    settings: SessionSettings,
    { runId, turn }: LeaseHolder = {},
    alongside?: UpdateInput,
  ): Promise<{ lease?: Lease; refused?: true }> {
    const token = randomUUID();
    const now = Date.now();
    const put = {
      TableName: this.tableName,
      Item: {
        pk: sessionId,
        sk: OWNER_SORT_KEY,
        user_id: userId,
        project_id: projectId,
        settings,
        lease_token: token,
        lease_until: now + this.leaseMs,
        [GENERATION]: firstGeneration(),
        [CURRENT_LAYOUT]: 2,
        ...(runId ? { [LEASE_RUN_ATTRIBUTE]: runId } : {}),
        ...(turn?.messageId ? { [LEASE_MESSAGE]: turn.messageId } : {}),
        ...this.expiry(),
      },
      ConditionExpression: "attribute_not_exists(pk)",
    };
    if (alongside) {
      const refused = await writeTogether(this.doc, [{ Put: put }, { Update: alongside }]);
      if (refused?.[0] === "ConditionalCheckFailed") return {};
      if (refused) return { refused: true };
    } else if (!(await conditionalWrite(this.doc.send(new PutCommand(put))))) return {};
    return { lease: this.held(sessionId, token, now, turn !== undefined) };
  }

  /**
   * Takes the lease of `userId`'s session, kept on the session's owner record so that the owner
   * check, the project and the lease are one conditional update (and the record's expiry is
   * pushed back in the same write). Only when that fails is the record read, to tell a session
   * that is not the caller's (or one being deleted) from one another run holds.
   */
  lease(sessionId: string, userId: string, holder: LeaseHolder = {}): Promise<SessionLeaseAttempt> {
    return this.take(sessionId, userId, holder);
  }

  /** The lease, waiting for it with backoff for at most `waitMs`; answers at once for a session that is not the caller's. */
  leaseWaiting(
    sessionId: string,
    userId: string,
    waitMs: number,
    holder: LeaseHolder = {},
  ): Promise<SessionLeaseAttempt> {
    return waiting(() => this.take(sessionId, userId, holder), waitMs);
  }

  /**
   * The lease for deleting the session, waiting as leaseWaiting does. The same write marks the
   * record `deleting`, which it keeps until the deletion removes it: a deletion that fails
   * part-way (the transcript gone, the graph state not yet) leaves a session that takes no turn
   * and that ownership checks (shared/ownership.ts) answer as gone, until a retried deletion,
   * which this lease still admits, finishes it.
   */
  leaseToDelete(sessionId: string, userId: string, waitMs: number): Promise<SessionLeaseAttempt> {
    return waiting(() => this.take(sessionId, userId, { deleting: true }), waitMs);
  }

  private async take(
    sessionId: string,
    userId: string,
    holder: LeaseHolder & { deleting?: boolean },
  ): Promise<SessionLeaseAttempt> {
    const taking = this.leaseUpdate(sessionId, userId, holder);
    try {
      const out = await this.doc.send(
        // The record as it was: what the session is (this write changes only the lease's
        // attributes and the expiry), and the mark of a turn that did not finish, in one request.
        new UpdateCommand({ ...taking.update, ReturnValues: "ALL_OLD" }),
      );
      return this.taken(sessionId, out.Attributes!, taking, holder.turn !== undefined);
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
    const session = await this.session(sessionId, userId);
    return session?.userId === userId && (holder.deleting || session.deleting !== "stalled") ? { session } : {};
  }

  /**
   * Takes the lease of a session a turn has just read (`seen`, the owner record as that read found
   * it, with the latest checkpoint: DynamoDBSaver.latestWith), only if nobody has taken it since:
   * the write is conditional on the record's lease generation, which every taking and release raises, and
   * every writer of the thread's state holds the lease, so what the turn read is still the state.
   * `alongside` (the turn's admission, shared/stores/user-usage.ts) is written in the same
   * request, in one transaction. `changed`: someone took the lease since the read, which the
   * caller reads again; `refused`: the condition of `alongside` did not hold.
   */
  async leaseAfterRead(
    sessionId: string,
    userId: string,
    holder: LeaseHolder,
    seen: SeenSession,
    alongside?: UpdateInput,
  ): Promise<{ lease?: Lease; session?: SessionRecord; unfinished?: string; changed?: true; refused?: true }> {
    const taking = this.leaseUpdate(sessionId, userId, holder, seen.generation);
    if (alongside) {
      const refused = await writeTogether(this.doc, [{ Update: taking.update }, { Update: alongside }]);
      if (refused?.[0] === "ConditionalCheckFailed") return { changed: true };
      if (refused) return { refused: true };
      return this.taken(sessionId, seen.item, taking, holder.turn !== undefined);
    }
    // The record as it was when taken (settings changed since the read apply), in the same request.
    let before: Record<string, unknown> | undefined;
    const wrote = await conditionalWrite(
      this.doc.send(new UpdateCommand({ ...taking.update, ReturnValues: "ALL_OLD" })).then((out) => {
        before = out.Attributes;
      }),
    );
    if (!wrote) return { changed: true };
    return this.taken(sessionId, before ?? seen.item, taking, holder.turn !== undefined);
  }

  /** The conditional update that takes a session's lease for `userId` (the generation read, if any, unchanged). */
  private leaseUpdate(
    sessionId: string,
    userId: string,
    { runId, turn, deleting = false }: LeaseHolder & { deleting?: boolean },
    generation?: number,
  ) {
    const token = randomUUID();
    const now = Date.now();
    const ttl = this.expiry();
    // A turn's message, or none; any other holder leaves the mark of a turn that did not finish.
    const message = turn?.messageId ? `, ${LEASE_MESSAGE} = :msg` : "";
    const removes = [...(runId ? [] : [LEASE_RUN_ATTRIBUTE]), ...(turn && !turn.messageId ? [LEASE_MESSAGE] : [])];
    // The run it is held for, or none (an earlier holder's name never outlives its lease).
    const holderClauses = `${runId ? `, ${LEASE_RUN_ATTRIBUTE} = :run` : ""}${message}${removes.length ? ` REMOVE ${removes.join(", ")}` : ""}`;
    const unchanged =
      generation === undefined
        ? ""
        : generation === 0
          ? ` AND attribute_not_exists(${GENERATION})`
          : ` AND ${GENERATION} = :gen`;
    const update: UpdateInput = {
      TableName: this.tableName,
      Key: { pk: sessionId, sk: OWNER_SORT_KEY },
      UpdateExpression: `SET lease_token = :token, lease_until = :until${ttl[CHECKPOINT_TABLE.ttlAttribute] ? ", #e = :e" : ""}${deleting ? ", deleting = :true" : ""}${holderClauses} ADD ${GENERATION} :one`,
      ConditionExpression: `user_id = :user AND (attribute_not_exists(lease_until) OR lease_until < :now)${deleting ? "" : " AND attribute_not_exists(deleting)"}${unchanged}`,
      ...(ttl[CHECKPOINT_TABLE.ttlAttribute]
        ? { ExpressionAttributeNames: { "#e": CHECKPOINT_TABLE.ttlAttribute } }
        : {}),
      ExpressionAttributeValues: {
        ":token": token,
        ":until": now + this.leaseMs,
        ":user": userId,
        ":now": now,
        ":one": 1,
        ...(ttl[CHECKPOINT_TABLE.ttlAttribute] ? { ":e": ttl[CHECKPOINT_TABLE.ttlAttribute] } : {}),
        ...(runId ? { ":run": runId } : {}),
        ...(deleting ? { ":true": true } : {}),
        ...(turn?.messageId ? { ":msg": turn.messageId } : {}),
        ...(generation ? { ":gen": generation } : {}),
      },
    };
    return { update, token, now };
  }

  /** The lease a taking made, with the session as it was before and the mark of a turn that did not finish. */
  private taken(
    sessionId: string,
    before: Record<string, unknown>,
    taking: { token: string; now: number },
    turn: boolean,
  ): SessionLeaseAttempt {
    const unfinished =
      turn && typeof before[LEASE_MESSAGE] === "string" ? (before[LEASE_MESSAGE] as string) : undefined;
    return {
      session: recordOf(before),
      lease: this.held(sessionId, taking.token, taking.now, turn),
      ...(unfinished ? { unfinished } : {}),
    };
  }

  /**
   * Asks the run holding `userId`'s session's lease to stop (the Agent Server API's interrupt and
   * rollback), or, naming `runId`, only that run while it holds it (a cancel of one run). The mark
   * is conditional on the owner, so nobody else's request can stop a run.
   */
  requestCancel(sessionId: string, userId: string, action: CancelAction, runId?: string): Promise<boolean> {
    const key = { pk: sessionId, sk: OWNER_SORT_KEY };
    return requestCancel(
      this.doc,
      {
        tableName: this.tableName,
        key,
        tokenAttribute: "lease_token",
        owner: { attribute: "user_id", userId },
        ...(runId ? { runId } : {}),
      },
      action,
    );
  }

  private held(sessionId: string, token: string, now: number, turn = false): Lease {
    return holdLease(this.doc, {
      sessionId,
      tableName: this.tableName,
      key: { pk: sessionId, sk: OWNER_SORT_KEY },
      tokenAttribute: "lease_token",
      token,
      heldUntil: now + this.leaseMs,
      leaseMs: this.leaseMs,
      // The record's own TTL is the session's, not the lease's: a heartbeat only moves lease_until.
      renewal: (at) => ({ lease_until: at + this.leaseMs }),
      release: "remove",
      // A release changes what a read of the record found (its mark, the lease): a read before it
      // must not pass a taking's condition.
      generation: GENERATION,
      // A turn's lease carries its mark, which its release clears, keeps or restores.
      ...(turn ? { mark: LEASE_MESSAGE } : {}),
    });
  }

  private async put(sessionId: string, attributes: Record<string, unknown>): Promise<boolean> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            pk: sessionId,
            sk: OWNER_SORT_KEY,
            ...attributes,
            [GENERATION]: firstGeneration(),
            [CURRENT_LAYOUT]: 2,
            ...this.expiry(),
          },
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /**
   * Records a new session for `userId`, in `projectId` (null: none) for good: a session's project
   * is fixed when it starts. False when the id is already taken.
   */
  async claim(sessionId: string, userId: string, projectId: string | null = null): Promise<boolean> {
    return this.put(sessionId, { user_id: userId, project_id: projectId });
  }

  /**
   * Changes some of `userId`'s session's settings; the next turn runs with them (a running turn
   * keeps those it started with). Undefined when the session is not the caller's. Two conditional
   * updates: a session recorded before settings existed gets its map first, so that each setting
   * is then set on its own and two concurrent changes of different settings both stand.
   */
  async updateSettings(sessionId: string, userId: string, patch: SettingsPatch): Promise<SessionSettings | undefined> {
    const key = { pk: sessionId, sk: OWNER_SORT_KEY };
    const entries = Object.entries(patch).filter(([, v]) => v !== undefined);
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: "SET settings = if_not_exists(settings, :defaults)",
          ConditionExpression: "user_id = :user",
          ExpressionAttributeValues: { ":defaults": storedSettings(undefined), ":user": userId },
        }),
      );
      if (entries.length === 0) return (await this.session(sessionId, userId))?.settings;
      const out = await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: key,
          UpdateExpression: `SET ${entries.map((_, i) => `settings.#k${i} = :v${i}`).join(", ")}`,
          ConditionExpression: "user_id = :user",
          ExpressionAttributeNames: Object.fromEntries(entries.map(([k], i) => [`#k${i}`, k])),
          ExpressionAttributeValues: {
            ":user": userId,
            ...Object.fromEntries(entries.map(([, v], i) => [`:v${i}`, v])),
          },
          ReturnValues: "ALL_NEW",
        }),
      );
      return recordOf(out.Attributes!).settings;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return undefined;
      throw err;
    }
  }

  /**
   * Sets which tools' calls wait for approval in `userId`'s session (none: an empty list); the next
   * run reads it with its lease. False when the session is not the caller's.
   */
  async updateApproval(sessionId: string, userId: string, tools: string[] | "*"): Promise<boolean> {
    try {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: sessionId, sk: OWNER_SORT_KEY },
          UpdateExpression: "SET approve_tools = :t",
          ConditionExpression: "user_id = :user",
          ExpressionAttributeValues: { ":t": tools, ":user": userId },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  /** Several sessions' records at once (a page of the sessions list); missing ones are absent. */
  async sessions(sessionIds: string[]): Promise<Map<string, SessionRecord>> {
    const found = new Map<string, SessionRecord>();
    for (let i = 0; i < sessionIds.length; i += 100) {
      let keys: Record<string, unknown>[] | undefined = sessionIds
        .slice(i, i + 100)
        .map((pk) => ({ pk, sk: OWNER_SORT_KEY }));
      // Unprocessed keys come back under throttling: asked again until none are left.
      for (let attempt = 0; keys && keys.length > 0; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** Math.min(attempt, 5)));
        const out: BatchGetCommandOutput = await this.doc.send(
          new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: keys, ConsistentRead: true } } }),
        );
        for (const item of out.Responses?.[this.tableName] ?? []) found.set(item.pk as string, recordOf(item));
        keys = out.UnprocessedKeys?.[this.tableName]?.Keys;
      }
    }
    return found;
  }

  /**
   * Every session `userId` owns: a Query of the table's user index (CHECKPOINT_TABLE.userIndex),
   * for erasure and export, never on a turn's path. Where the index cannot be read (being built
   * after an upgrade, or a local table made before it), a filtered Scan of the owner records gives
   * the same answer at the cost of reading the whole table.
   */
  async sessionsOf(userId: string): Promise<string[]> {
    const { name, partitionKey, sortKey } = CHECKPOINT_TABLE.userIndex;
    try {
      const items = await queryItems(this.doc, {
        TableName: this.tableName,
        IndexName: name,
        KeyConditionExpression: "#u = :u AND #s = :s",
        ExpressionAttributeNames: { "#u": partitionKey, "#s": sortKey },
        ExpressionAttributeValues: { ":u": userId, ":s": OWNER_SORT_KEY },
      });
      return items.map((item) => item.pk as string);
    } catch (err) {
      // DynamoDB's answer for an index that is missing or still being built; any other refusal
      // (a malformed request) is a bug, not a reason to read the whole table.
      const { name, message } = err as { name?: string; message?: string };
      if (name !== "ValidationException" || !/index/i.test(message ?? "")) throw err;
    }
    const ids: string[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.doc.send(
        new ScanCommand({
          TableName: this.tableName,
          ProjectionExpression: "pk",
          FilterExpression: "sk = :s AND user_id = :u",
          ExpressionAttributeValues: { ":s": OWNER_SORT_KEY, ":u": userId },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of out.Items ?? []) ids.push(item.pk as string);
      start = out.LastEvaluatedKey;
    } while (start !== undefined);
    return ids;
  }

  /**
   * Whether a run holds the session's lease now, or (naming `runId`) that Agent Server run does
   * (LEASE_RUN_ATTRIBUTE): a strongly consistent read of its owner record.
   */
  async leaseHeld(sessionId: string, runId?: string): Promise<boolean> {
    const out = await this.doc.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { pk: sessionId, sk: OWNER_SORT_KEY },
        ConsistentRead: true,
        ProjectionExpression: "lease_until, #run",
        ExpressionAttributeNames: { "#run": LEASE_RUN_ATTRIBUTE },
      }),
    );
    const held = typeof out.Item?.lease_until === "number" && out.Item.lease_until > Date.now();
    return held && (runId === undefined || out.Item?.[LEASE_RUN_ATTRIBUTE] === runId);
  }

  /** The owner, or undefined for a session that does not exist. */
  async owner(sessionId: string): Promise<string | undefined> {
    return (await this.session(sessionId))?.userId;
  }

  /**
   * The session's owner and project (null: none; undefined: a session recorded before projects
   * were kept here), or undefined for a session that does not exist. A read on behalf of its
   * owner (`forUser`) keeps an active session from expiring; anyone else's read changes nothing.
   */
  async session(sessionId: string, forUser?: string): Promise<SessionRecord | undefined> {
    const out = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: { pk: sessionId, sk: OWNER_SORT_KEY }, ConsistentRead: true }),
    );
    if (!out.Item) return undefined;
    const expiresAt = out.Item[CHECKPOINT_TABLE.ttlAttribute] as number | undefined;
    // A session being deleted is not kept alive by its owner's reads (they answer 404).
    const owned = forUser !== undefined && out.Item.user_id === forUser && out.Item.deleting !== true;
    if (
      owned &&
      this.ttlDays !== undefined &&
      expiresAt !== undefined &&
      expiresAt - now() < (this.ttlDays * 86_400) / 2
    ) {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: sessionId, sk: OWNER_SORT_KEY },
          UpdateExpression: "SET #e = :e",
          ExpressionAttributeNames: { "#e": CHECKPOINT_TABLE.ttlAttribute },
          ExpressionAttributeValues: { ":e": this.expiry()[CHECKPOINT_TABLE.ttlAttribute] },
        }),
      );
    }
    return recordOf(out.Item);
  }

  private expiry(): Record<string, number> {
    return this.ttlDays === undefined
      ? {}
      : { [CHECKPOINT_TABLE.ttlAttribute]: now() + Math.round(this.ttlDays * 86_400) };
  }
}

const now = () => Math.floor(Date.now() / 1000);

/** A lease attempt repeated with backoff for at most `waitMs`, until it holds the lease or finds the session not the caller's. */
async function waiting(attempt: () => Promise<SessionLeaseAttempt>, waitMs: number): Promise<SessionLeaseAttempt> {
  const deadline = Date.now() + waitMs;
  for (let delay = 50; ; delay = Math.min(delay * 2, 1000)) {
    const tried = await attempt();
    if (tried.lease || !tried.session || Date.now() + delay > deadline) return tried;
    await new Promise((r) => setTimeout(r, delay + Math.random() * delay));
  }
}

const recordOf = (item: Record<string, unknown>): SessionRecord => ({
  userId: item.user_id as string,
  projectId: item.project_id as string | null | undefined,
  settings: storedSettings(item.settings),
  ...(item.approve_tools === "*" || Array.isArray(item.approve_tools)
    ? { approveTools: item.approve_tools as string[] | "*" }
    : {}),
  ...(item.deleting === true
    ? { deleting: typeof item.lease_until === "number" && item.lease_until >= Date.now() ? "running" : "stalled" }
    : {}),
  dataFiles: Object.entries(item)
    .filter(([name]) => name.startsWith(DATA_FILE_PREFIX))
    .map(([, value]) => value as DataFileSummary)
    .sort((a, b) => a.created_at.localeCompare(b.created_at)),
});
