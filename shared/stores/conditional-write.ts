import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";

/**
 * A conditional write's outcome: true when it was made, false when its condition did not hold
 * (DynamoDB's ConditionalCheckFailedException); any other failure is thrown.
 */
export async function conditionalWrite(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}
