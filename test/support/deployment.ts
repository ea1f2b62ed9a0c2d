import type { StackSettings } from "../../infra/aws/settings";

/** A complete production deployment's context, as a team would pass it with -c key=value. */
export const PRODUCTION_CONTEXT = {
  bedrockModelId: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
  bedrockEmbeddingModelId: "amazon.titan-embed-text-v2:0",
  bedrockNamingModelId: "us.anthropic.claude-haiku-4-5-20251001-v1:0",
  supabaseUrl: "https://abcdefghijklmnop.supabase.co",
  supabaseSecretArn: "arn:aws:secretsmanager:us-east-1:123456789012:secret:agent/supabase-service-role-AbCdEf",
  oidcIssuer: "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_AbCdEfGhI",
  oidcAudience: "agent-api",
  intercomAdminId: "1234567",
  alarmEmail: "oncall@example.com",
} as const;

/** The same deployment as the stack's settings. */
export const PRODUCTION_SETTINGS: StackSettings = {
  ...PRODUCTION_CONTEXT,
  intercom: true,
  documentsPrefix: "knowledge/",
};

/** Bundling skipped: the template is what is tested, and esbuild per function would take seconds. */
export const NO_BUNDLING = { "aws:cdk:bundling-stacks": [] as string[] };

/** A bucket's public access block with every switch on: S3's BlockPublicAccess.BLOCK_ALL, as synthesized. */
export const BLOCKS_ALL_PUBLIC_ACCESS = {
  BlockPublicAcls: true,
  BlockPublicPolicy: true,
  IgnorePublicAcls: true,
  RestrictPublicBuckets: true,
} as const;
