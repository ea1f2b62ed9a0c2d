import { TransactionCanceledException } from "@aws-sdk/client-dynamodb";
import {
  type DynamoDBDocumentClient,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { backoff, CONFLICT_RETRY } from "./batch";
import { conditionalWrite } from "./conditional-write";

export type TogetherItem = NonNullable<TransactWriteCommandInput["TransactItems"]>[number];
/** An update as a transaction part takes it (and UpdateItem too). */
export type UpdateInput = NonNullable<TogetherItem["Update"]>;

/**
 * Writes `items` in one TransactWriteItems: all or none, in one request. Undefined when written;
 * when a condition refused it, each item's cancellation code, in order (`None` for the items
 * that were not the reason), so the caller can tell whose condition failed. A conflict with
 * another write in flight on one of the items (`TransactionConflict`, which the SDK does not
 * retry) is tried again.
 */
export async function writeTogether(doc: DynamoDBDocumentClient, items: TogetherItem[]): Promise<string[] | undefined> {
  for (let attempt = 0; ; attempt++) {
    try {
      await doc.send(new TransactWriteCommand({ TransactItems: items }));
      return undefined;
    } catch (err) {
      if (!(err instanceof TransactionCanceledException)) throw err;
      const codes = (err.CancellationReasons ?? []).map((reason) => reason.Code ?? "None");
      if (codes.includes("TransactionConflict") && attempt + 1 < CONFLICT_RETRY.maxAttempts) {
        await backoff(attempt, CONFLICT_RETRY);
        continue;
      }
      if (codes.includes("ConditionalCheckFailed")) return codes;
      throw err;
    }
  }
}

/** An update made only while its condition holds, and the update to make instead when it does not. */
export interface GuardedUpdate {
  update: UpdateInput;
  otherwise?: UpdateInput;
}

/** A guarded update on its own: its update, or, refused, its `otherwise` (a second request only then). */
export async function writeGuarded(doc: DynamoDBDocumentClient, guarded: GuardedUpdate): Promise<void> {
  if (await conditionalWrite(doc.send(new UpdateCommand(guarded.update)))) return;
  if (guarded.otherwise) await doc.send(new UpdateCommand(guarded.otherwise));
}
