import { ConfigError } from "./config";
import { deferredModule } from "./deferred";

/**
 * How long a warm container keeps a secret before reading it again: a value replaced in Secrets
 * Manager reaches every warm container within this time (plus one in-flight request).
 */
export const SECRET_MAX_AGE_SECONDS = 300;

/**
 * Powertools' Secrets Manager provider, loaded on the first read of a secret: in AWS, a function's
 * first request that reaches Supabase. Registered so the cold-start bench counts it there.
 */
const secretsProvider = deferredModule(() => import("@aws-lambda-powertools/parameters/secrets"));

/** A secret read where it is used, so a rotated value is picked up without a cold start. */
export type SecretSource = () => Promise<string>;

/**
 * A secret: from the environment where one is given (local stack, tests), else from Secrets
 * Manager by ARN (AWS: never a plain environment variable there), cached for
 * SECRET_MAX_AGE_SECONDS by Powertools Parameters.
 */
export async function secretValue(name: string, plain: string | undefined, arn: string | undefined): Promise<string> {
  if (plain) return plain;
  if (!arn) throw new ConfigError(`Missing configuration: ${name} or ${name}_SECRET_ARN must be set`);
  const { getSecret } = await secretsProvider();
  const value = await getSecret(arn, { maxAge: SECRET_MAX_AGE_SECONDS });
  if (typeof value !== "string" || value.length === 0) throw new ConfigError(`the secret for ${name} is empty`);
  return value;
}

/** The same secret as a source to call on each use (cheap: cached, one read per max age). */
export function secretSource(name: string, plain: string | undefined, arn: string | undefined): SecretSource {
  if (!plain && !arn) throw new ConfigError(`Missing configuration: ${name} or ${name}_SECRET_ARN must be set`);
  return () => secretValue(name, plain, arn);
}
