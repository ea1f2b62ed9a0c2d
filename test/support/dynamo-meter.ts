import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { marshall } from "@aws-sdk/util-dynamodb";

/**
 * Counts DynamoDB requests and item bytes by attaching middleware to a client.
 * Item sizes follow DynamoDB's billing rule (attribute name lengths plus value
 * sizes), so "bytes written" is what write capacity is charged on, whatever the
 * wire encoding.
 */
export interface Meter {
  requests: number;
  byCommand: Record<string, number>;
  bytesWritten: number;
  /** write request units: each item write is billed per started KB */
  writeUnits: number;
  bytesRead: number;
  /** sort keys (`sk`) of the items written, in order */
  writtenKeys: string[];
  /** ConsistentRead flags of every read request */
  consistentReads: boolean[];
  reset(): void;
  detach(): void;
  snapshot(): { requests: number; bytesWritten: number; writeUnits: number; bytesRead: number };
}

type AttributeValue = Record<string, unknown>;

export function attributeSize(value: AttributeValue): number {
  const [type, v] = Object.entries(value)[0] ?? [];
  switch (type) {
    case "S":
      return Buffer.byteLength(v as string);
    case "N":
      return (
        Math.ceil(
          String(v)
            .replace(/^-|\.|e.*$/gi, "")
            .replace(/^0+/, "").length / 2,
        ) + 1
      );
    case "B":
      return (v as Uint8Array).byteLength;
    case "BOOL":
    case "NULL":
      return 1;
    case "SS":
      return (v as string[]).reduce((n, s) => n + Buffer.byteLength(s), 0);
    case "NS":
      return (v as string[]).reduce((n, s) => n + attributeSize({ N: s }), 0);
    case "BS":
      return (v as Uint8Array[]).reduce((n, b) => n + b.byteLength, 0);
    case "L":
      return 3 + (v as AttributeValue[]).reduce((n, e) => n + 1 + attributeSize(e), 0);
    case "M":
      return 3 + itemSize(v as Record<string, AttributeValue>);
    default:
      return 0;
  }
}

export function itemSize(item: Record<string, AttributeValue>): number {
  return Object.entries(item).reduce((n, [name, value]) => n + Buffer.byteLength(name) + attributeSize(value), 0);
}

function writtenItems(command: string, input: any): Record<string, AttributeValue>[] {
  switch (command) {
    case "PutItemCommand":
      return [input.Item];
    case "BatchWriteItemCommand":
      return Object.values(input.RequestItems as Record<string, any[]>)
        .flat()
        .filter((r) => r.PutRequest)
        .map((r) => r.PutRequest.Item);
    case "TransactWriteItemsCommand":
      return (input.TransactItems as any[]).filter((t) => t.Put).map((t) => t.Put.Item);
    default:
      return [];
  }
}

const TYPES = new Set(["S", "N", "B", "BOOL", "NULL", "SS", "NS", "BS", "L", "M"]);
const isAttributeValue = (v: unknown) =>
  typeof v === "object" &&
  v !== null &&
  !(v instanceof Uint8Array) &&
  Object.keys(v).length === 1 &&
  TYPES.has(Object.keys(v)[0]!);

/**
 * Items a read returned. A DocumentClient has already unmarshalled them by the time
 * any client middleware sees the output, so plain items are marshalled back to size them.
 */
function readItems(command: string, output: any): Record<string, AttributeValue>[] {
  let items: Record<string, unknown>[];
  switch (command) {
    case "GetItemCommand":
      items = output.Item ? [output.Item] : [];
      break;
    case "QueryCommand":
    case "ScanCommand":
      items = output.Items ?? [];
      break;
    case "BatchGetItemCommand":
      items = Object.values((output.Responses ?? {}) as Record<string, any[]>).flat();
      break;
    default:
      items = [];
  }
  return items.map((item) =>
    Object.values(item).every(isAttributeValue)
      ? (item as Record<string, AttributeValue>)
      : (marshall(item, { removeUndefinedValues: true, convertClassInstanceToMap: true }) as unknown as Record<
          string,
          AttributeValue
        >),
  );
}

let meters = 0;

export function meter(clients: DynamoDBClient | readonly DynamoDBClient[]): Meter {
  const all: readonly DynamoDBClient[] = Array.isArray(clients) ? clients : [clients as DynamoDBClient];
  const name = `requestMeter${++meters}`;
  const m: Meter = {
    requests: 0,
    byCommand: {},
    bytesWritten: 0,
    writeUnits: 0,
    bytesRead: 0,
    writtenKeys: [],
    consistentReads: [],
    reset() {
      m.writtenKeys = [];
      m.consistentReads = [];
      m.requests = 0;
      m.byCommand = {};
      m.bytesWritten = 0;
      m.writeUnits = 0;
      m.bytesRead = 0;
    },
    detach: () => {
      for (const client of all) client.middlewareStack.remove(name);
    },
    snapshot: () => ({
      requests: m.requests,
      bytesWritten: m.bytesWritten,
      writeUnits: m.writeUnits,
      bytesRead: m.bytesRead,
    }),
  };
  for (const client of all)
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const command = context.commandName ?? "unknown";
        m.requests += 1;
        m.byCommand[command] = (m.byCommand[command] ?? 0) + 1;
        for (const item of writtenItems(command, args.input)) {
          const size = itemSize(item);
          m.bytesWritten += size;
          m.writeUnits += Math.max(1, Math.ceil(size / 1024));
          if (item.sk && "S" in item.sk) m.writtenKeys.push(item.sk.S as string);
        }
        const input = args.input as any;
        if (command === "BatchGetItemCommand") {
          for (const req of Object.values(input.RequestItems ?? {}) as any[])
            m.consistentReads.push(req.ConsistentRead === true);
        } else if (["GetItemCommand", "QueryCommand", "ScanCommand"].includes(command)) {
          m.consistentReads.push(input.ConsistentRead === true);
        }
        const result = await next(args);
        for (const item of readItems(command, result.output)) m.bytesRead += itemSize(item);
        return result;
      },
      // Inputs are marshalled by now (lib-dynamodb marshals in the serialize step).
      { step: "build", name },
    );
  return m;
}
