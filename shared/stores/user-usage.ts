import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { createHash, randomUUID } from "node:crypto";
import type { AppError } from "../errors";
import { limitsAnything, quotaExceeded, quotaScope, type UserQuotas, windowsOf } from "../quotas";
import { conditionalWrite } from "./conditional-write";
import { REPLY_MAX_TOKENS } from "../models/reply-limit";
import { CHECKPOINT_TABLE } from "./checkpoint-table";
import { type GuardedUpdate, type UpdateInput, writeGuarded } from "./write-together";

/**
 * Partition key of a user's usage items in the checkpoint table; one item per UTC day, its sort key
 * the day (`<day>#<project>` for a project with quotas of its own). Under a hash of the user's id,
 * not the id: an erasure leaves the counters (they name nobody, and expire two days after their
 * day), so erasing one's data is no way around one's limits.
 */
export const usagePartition = (userId: string) => `${USAGE_ITEM_PREFIX}${hashedUserId(userId)}`;
/** A user's id as the items that must outlive their erasure name it: by a hash, naming nobody. */
export const hashedUserId = (userId: string) => createHash("sha256").update(userId).digest("base64url");
/** What every usage item's partition key starts with: a role may be held to these items alone (the "usage" grant). */
export const USAGE_ITEM_PREFIX = "usage#";
const usageKey = (userId: string, day: string, scope: string | undefined) => ({
  pk: usagePartition(userId),
  sk: scope === undefined ? day : `${day}#${scope}`,
});

/** A day's item outlives its day by this much, for GET /api/me/usage around midnight; TTL removes it after. */
const KEEP_SECONDS = 2 * 86_400;

/** What a turn's admission counted it in: the day and count it went to, and the tokens it holds until it ends. */
export interface Admission {
  day: string;
  /** the epoch minute it was counted in (its per-minute counter) */
  minute: number;
  scope: string | undefined;
  reserved: number;
  /** the attribute marking its reservation as taken (`h_<id>`: when), removed when it settles */
  hold?: string;
  /** when it was counted */
  at: number;
}

/** The least a turn under a token limit holds until it ends: a reply's ceiling (reservation). */
export const RESERVED_TOKENS = REPLY_MAX_TOKENS;

/** Lambda's longest run (15 minutes): a reservation taken longer ago than this belongs to a turn that ended without settling. */
const RESERVATION_LIFE_MS = 15 * 60_000;
/** A reservation's mark on the day's item: `h_<admission id>`, when it was taken. */
const HOLD_PREFIX = "h_";

export interface UsageToday {
  day: string;
  turns: number;
  /** the day's tokens: what ended turns spent, and the reservations running turns hold */
  tokens: number;
  /** the reservations in `tokens` not yet settled: running turns', and dead ones' */
  held: number;
  /** of those, how many were taken lately enough (RESERVATION_LIFE_MS) to be running turns' */
  liveReservations: number;
  /** turns in the current minute */
  turnsThisMinute: number;
}

/**
 * Counts each user's turns and model tokens against the deployment's quotas (USER_QUOTAS). The
 * day's item holds the day's turns and tokens and one counter per minute (`m<epoch minute>`), so a
 * turn is admitted, counted and checked against both limits in one conditional UpdateItem: no read
 * first, and two turns at once cannot both slip under a limit. Each admission removes the previous
 * minute's counter; a minute followed by a longer pause stays until the day's item expires.
 */
export class UserUsage {
  private readonly doc: DynamoDBDocumentClient;

  constructor(
    client: DynamoDBClient,
    private readonly tableName: string,
    readonly quotas: UserQuotas,
    private readonly now: () => number = Date.now,
  ) {
    this.doc = DynamoDBDocumentClient.from(client);
  }

  /** Whether any limit is set, the deployment's or a project's: with none, turns are not counted. */
  get enabled(): boolean {
    const { projects, ...deployment } = this.quotas;
    return limitsAnything(deployment) || Object.values(projects ?? {}).some(limitsAnything);
  }

  /**
   * The reservation a turn of a session holds under a token limit until it ends: what the
   * session's last turn spent (a session's turns grow slowly, and its next is the best guess of
   * what it will spend), never less than RESERVED_TOKENS (a reply's ceiling, and a new session's
   * first turn) and never more than a quarter of the day's limit (so one huge turn does not keep
   * every later one waiting until midnight).
   */
  reservation(projectId: string | null | undefined, lastTurnTokens: number | undefined): number {
    const { tokensPerDay } = quotaScope(this.quotas, projectId).limits;
    const cap = Math.max(RESERVED_TOKENS, Math.floor((tokensPerDay ?? 0) / 4));
    return Math.min(cap, Math.max(RESERVED_TOKENS, Math.round(lastTurnTokens ?? 0)));
  }

  /**
   * The update that counts a turn in `projectId` and checks it against both limits, for the
   * caller to send (admit) or to write with its lease in one transaction (ChatService). Under a
   * token limit it also holds `reserve` tokens of the day until the turn ends (settlement), and
   * is admitted only while the day's tokens, every running turn's reservation in them, are under
   * the limit, so turns at once cannot all start on what is left. Undefined where no limit
   * applies: such a turn is not counted, and costs no request.
   */
  admission(
    userId: string,
    projectId: string | null | undefined,
    reserve = RESERVED_TOKENS,
  ): { update: UpdateInput; admission: Admission } | undefined {
    const { scope, limits } = quotaScope(this.quotas, projectId);
    if (!limitsAnything(limits)) return undefined;
    const at = this.now();
    const { minute, day } = windowsOf(at);
    const { turnsPerMinute, tokensPerDay } = limits;
    const reserves = tokensPerDay !== undefined;
    const hold = `${HOLD_PREFIX}${randomUUID().slice(0, 8)}`;
    const conditions = [
      ...(turnsPerMinute !== undefined ? ["(attribute_not_exists(#m) OR #m < :tpm)"] : []),
      ...(reserves ? ["(attribute_not_exists(tokens) OR tokens < :tpd)"] : []),
    ];
    const update: UpdateInput = {
      TableName: this.tableName,
      Key: usageKey(userId, day, scope),
      // The reservation is added to the day's tokens and, apart, to what turns hold (`held`),
      // with a mark of its own saying when it was taken (`h_<id>`, removed when it settles): a
      // refusal then tells a day spent from one held only until running turns end.
      UpdateExpression: `ADD turns :one, #m :one${reserves ? ", tokens :r, held :r" : ""} SET #e = :e${reserves ? ", #h = :at" : ""} REMOVE #prev`,
      ConditionExpression: conditions.join(" AND "),
      ExpressionAttributeNames: {
        "#m": `m${minute}`,
        "#prev": `m${minute - 1}`,
        "#e": CHECKPOINT_TABLE.ttlAttribute,
        ...(reserves ? { "#h": hold } : {}),
      },
      ExpressionAttributeValues: {
        ":one": 1,
        ":e": expiresAt(at),
        ...(turnsPerMinute !== undefined ? { ":tpm": turnsPerMinute } : {}),
        ...(reserves ? { ":tpd": tokensPerDay, ":r": reserve, ":at": at } : {}),
      },
    };
    return {
      update,
      admission: { day, minute, scope, reserved: reserves ? reserve : 0, ...(reserves ? { hold } : {}), at },
    };
  }

  /**
   * Counts a turn in `projectId` on its own (admission), or throws 429 quota_exceeded (with the
   * limit hit and Retry-After) when it is over one. Undefined where no limit applies.
   */
  async admit(userId: string, projectId?: string | null, reserve = RESERVED_TOKENS): Promise<Admission | undefined> {
    const counted = this.admission(userId, projectId, reserve);
    if (!counted) return undefined;
    if (await conditionalWrite(this.doc.send(new UpdateCommand(counted.update)))) return counted.admission;
    throw await this.refusal(userId, projectId, counted.admission.at);
  }

  /**
   * The 429 for a turn whose admission was refused: one read to say which limit (a refused turn may
   * cost a request more, an admitted one never), named as the project's when the limit hit is one
   * the project sets itself.
   */
  async refusal(userId: string, projectId: string | null | undefined, at = this.now()): Promise<AppError> {
    const { scope, limits } = quotaScope(this.quotas, projectId);
    const { turnsPerMinute, tokensPerDay } = limits;
    const usage = await this.today(userId, at, projectId);
    const own = scope === undefined ? undefined : this.quotas.projects?.[scope];
    if (turnsPerMinute !== undefined && usage.turnsThisMinute >= turnsPerMinute)
      return quotaExceeded("turnsPerMinute", turnsPerMinute, at, own?.turnsPerMinute !== undefined ? scope : undefined);
    // Over only through reservations that turns took lately, which clear as they end: come back
    // soon. A reservation older than a function can run was a turn that died: spent for the day.
    const heldByRunningTurns = usage.liveReservations > 0 && usage.tokens - usage.held < (tokensPerDay ?? 0);
    return quotaExceeded(
      "tokensPerDay",
      tokensPerDay ?? 0,
      at,
      own?.tokensPerDay !== undefined ? scope : undefined,
      heldByRunningTurns,
    );
  }

  /**
   * Settles an admitted turn: its model tokens replace its reservation in the day it was admitted
   * in (a turn refused after its admission spent none, and gives the reservation back). The
   * update that does it, for the turn's last write to carry (its lease's release:
   * ReleaseOptions.alongside); undefined when there is nothing to settle.
   */
  settlement(userId: string, tokens: number, admission: Admission | undefined): GuardedUpdate | undefined {
    if (!admission) return undefined;
    const spent = tokens > 0 ? Math.round(tokens) : 0;
    if (spent === 0 && admission.reserved === 0) return undefined;
    return {
      update: {
        TableName: this.tableName,
        Key: usageKey(userId, admission.day, admission.scope),
        UpdateExpression: `ADD tokens :n${admission.reserved > 0 ? ", held :unheld" : ""} SET #e = :e${admission.hold ? " REMOVE #h" : ""}`,
        ExpressionAttributeNames: {
          "#e": CHECKPOINT_TABLE.ttlAttribute,
          ...(admission.hold ? { "#h": admission.hold } : {}),
        },
        ExpressionAttributeValues: {
          ":n": spent - admission.reserved,
          ...(admission.reserved > 0 ? { ":unheld": -admission.reserved } : {}),
          ":e": expiresAt(this.now()),
        },
      },
    };
  }

  /** Settles an admitted turn in a request of its own (settlement, written alone). */
  async addTokens(userId: string, tokens: number, admission: Admission | undefined): Promise<void> {
    const settlement = this.settlement(userId, tokens, admission);
    if (settlement) await writeGuarded(this.doc, settlement);
  }

  /**
   * Counts model tokens spent for the user outside a turn (memory extraction, after the reply) in
   * today's count of `projectId`'s turns: nothing is admitted or refused, the day's tokens just
   * grow. Not counted (no request) where no token limit applies, as turns are not.
   */
  async addSpent(userId: string, projectId: string | null | undefined, tokens: number): Promise<void> {
    const { scope, limits } = quotaScope(this.quotas, projectId);
    const spent = Math.round(tokens);
    if (limits.tokensPerDay === undefined || !(spent > 0)) return;
    const at = this.now();
    await this.doc.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: usageKey(userId, windowsOf(at).day, scope),
        UpdateExpression: "ADD tokens :n SET #e = :e",
        ExpressionAttributeNames: { "#e": CHECKPOINT_TABLE.ttlAttribute },
        ExpressionAttributeValues: { ":n": spent, ":e": expiresAt(at) },
      }),
    );
  }

  /**
   * Gives a turn refused after its admission back whole: its count in the day, in its minute while
   * that minute lasts (a past minute's counter is read by nobody, and the next admission removes
   * it), and its reservation. The update that does it, for the turn's release to carry
   * (ReleaseOptions.alongside); undefined for a turn that was not counted.
   */
  refunding(userId: string, admission: Admission | undefined): GuardedUpdate | undefined {
    if (!admission) return undefined;
    const sameMinute = windowsOf(this.now()).minute === admission.minute;
    return {
      update: {
        TableName: this.tableName,
        Key: usageKey(userId, admission.day, admission.scope),
        UpdateExpression: `ADD turns :minus${sameMinute ? ", #m :minus" : ""}${admission.reserved > 0 ? ", tokens :back, held :back" : ""}${admission.hold ? " REMOVE #h" : ""}`,
        ...(sameMinute || admission.hold
          ? {
              ExpressionAttributeNames: {
                ...(sameMinute ? { "#m": `m${admission.minute}` } : {}),
                ...(admission.hold ? { "#h": admission.hold } : {}),
              },
            }
          : {}),
        ExpressionAttributeValues: {
          ":minus": -1,
          ...(admission.reserved > 0 ? { ":back": -admission.reserved } : {}),
        },
      },
    };
  }

  /** The user's turns and tokens today (UTC), and turns this minute, in the count `projectId`'s turns go to. */
  async today(userId: string, at = this.now(), projectId?: string | null): Promise<UsageToday> {
    const { minute, day } = windowsOf(at);
    const { scope } = quotaScope(this.quotas, projectId);
    const out = await this.doc.send(
      new GetCommand({ TableName: this.tableName, Key: usageKey(userId, day, scope), ConsistentRead: true }),
    );
    const item = out.Item ?? {};
    return {
      day,
      turns: Number(item.turns ?? 0),
      tokens: Number(item.tokens ?? 0),
      held: Number(item.held ?? 0),
      liveReservations: Object.entries(item).filter(
        ([name, takenAt]) => name.startsWith(HOLD_PREFIX) && Number(takenAt) > at - RESERVATION_LIFE_MS,
      ).length,
      turnsThisMinute: Number(item[`m${minute}`] ?? 0),
    };
  }
}

const expiresAt = (at: number) => Math.ceil(at / 1000) + KEEP_SECONDS;
