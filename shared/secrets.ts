import { ConfigError } from "./config";

/**
 * A secret: from the environment where one is given (local stack, tests), else from Secrets
 * Manager by ARN (AWS: never a plain environment variable there), read once and cached.
 */
export async function secretValue(name: string, plain: string | undefined, arn: string | undefined): Promise<string> {
  if (plain) return plain;
  if (!arn) throw new ConfigError(`Missing configuration: ${name} or ${name}_SECRET_ARN must be set`);
  const { getSecret } = await import("@aws-lambda-powertools/parameters/secrets");
  const value = await getSecret(arn, { maxAge: 3600 });
  if (typeof value !== "string" || value.length === 0) throw new ConfigError(`the secret for ${name} is empty`);
  return value;
}
