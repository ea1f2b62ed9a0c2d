import { type DynamoDBDocumentClient, paginateQuery, type QueryCommandInput } from "@aws-sdk/lib-dynamodb";

/** Every item a Query matches, all its pages read (the document client's own paginator). */
export async function queryItems(doc: DynamoDBDocumentClient, input: QueryCommandInput) {
  const items: Record<string, unknown>[] = [];
  for await (const page of paginateQuery({ client: doc }, input)) items.push(...(page.Items ?? []));
  return items;
}
