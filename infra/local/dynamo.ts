import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { AddressInfo } from "node:net";
// dynalite ships no types; its factory returns an http.Server.
// @ts-expect-error no declaration file
import dynalite from "dynalite";
import type { Server } from "node:http";
import { retryingTransactionConflicts } from "../../shared/stores/transaction-conflicts";
import { closeServer } from "./close-server";

export interface LocalDynamo {
  client: DynamoDBClient;
  endpoint: string;
  close(): Promise<void>;
}

/**
 * Starts dynalite, the DynamoDB wire protocol over LevelDB, on a loopback port.
 * `path` persists data on disk; without it everything stays in memory (tests).
 */
export async function startLocalDynamo(options: { path?: string; port?: number } = {}): Promise<LocalDynamo> {
  const server: Server = dynalite({ path: options.path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    client: localDynamoClient(endpoint),
    endpoint,
    close: () => closeServer(server),
  };
}

export function localDynamoClient(endpoint: string): DynamoDBClient {
  return retryingTransactionConflicts(
    new DynamoDBClient({
      endpoint,
      region: "local",
      credentials: { accessKeyId: "local", secretAccessKey: "local" },
    }),
  );
}
