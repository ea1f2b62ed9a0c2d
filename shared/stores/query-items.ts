import {
  type DynamoDBDocumentClient,
  paginateQuery,
  paginateScan,
  type QueryCommandInput,
  type ScanCommandInput,
} from "@aws-sdk/lib-dynamodb";

/** Every item a Query matches, all its pages read (the document client's own paginator). */
export async function queryItems(doc: DynamoDBDocumentClient, input: QueryCommandInput) {
  const items: Record<string, unknown>[] = [];
  for await (const page of paginateQuery({ client: doc }, input)) items.push(...(page.Items ?? []));
  return items;
}

/** Every item a Scan matches, all its pages read. */
export async function scanItems(doc: DynamoDBDocumentClient, input: ScanCommandInput) {
  const items: Record<string, unknown>[] = [];
  for await (const page of paginateScan({ client: doc }, input)) items.push(...(page.Items ?? []));
  return items;
}
