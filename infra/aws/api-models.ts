import { JsonSchemaVersion, type JsonSchema } from "aws-cdk-lib/aws-apigateway";
import * as z from "../../shared/zod";

/**
 * A handler's zod schema as the JSON Schema (draft 4) API Gateway validates bodies with, so the
 * gateway and the handler check one definition. Checks JSON Schema cannot say (the message's byte
 * size, text after trimming) stay with the handler; the gateway only refuses what it would refuse.
 */
export function apiModelSchema(schema: z.ZodMiniType): JsonSchema {
  const { $schema: _draft, ...json } = z.toJSONSchema(schema, { target: "draft-4", io: "input" });
  // zod writes the JSON Schema keywords CDK's JsonSchema type names, and string type names equal to its enum values.
  return { schema: JsonSchemaVersion.DRAFT4, ...(json as JsonSchema) };
}
