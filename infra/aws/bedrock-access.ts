import { Aws, type Stack } from "aws-cdk-lib";
import { PolicyStatement, type IGrantable } from "aws-cdk-lib/aws-iam";

/**
 * Where each system-defined cross-region inference profile may route a request, by its id's
 * prefix. Bedrock authorises the call against the profile ARN in the source region and against the
 * foundation model in the destination region it picks, so the role needs the model in each of
 * these. The lists follow Bedrock's "Supported Regions and models for inference profiles" page
 * (all destination regions of each geography); a region added there must be added here.
 * `global.` profiles route to every commercial region: IAM then wants the region-less model ARN.
 */
export const PROFILE_DESTINATIONS: Record<string, readonly string[] | "global"> = {
  us: ["us-east-1", "us-east-2", "us-west-1", "us-west-2", "ca-central-1"],
  "us-gov": ["us-gov-east-1", "us-gov-west-1"],
  ca: ["ca-central-1", "ca-west-1"],
  eu: ["eu-central-1", "eu-central-2", "eu-north-1", "eu-south-1", "eu-south-2", "eu-west-1", "eu-west-2", "eu-west-3"],
  apac: [
    "ap-east-2",
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-northeast-3",
    "ap-south-1",
    "ap-south-2",
    "ap-southeast-1",
    "ap-southeast-2",
    "ap-southeast-3",
    "ap-southeast-4",
    "ap-southeast-5",
    "ap-southeast-7",
  ],
  jp: ["ap-northeast-1", "ap-northeast-3"],
  au: ["ap-southeast-2", "ap-southeast-4"],
  global: "global",
};

/** A model id split into its profile prefix (if any) and the foundation model it names. */
export function parseModelId(modelId: string): { profile?: string; foundationModel: string } {
  const dot = modelId.indexOf(".");
  const prefix = modelId.slice(0, dot);
  if (dot > 0 && prefix in PROFILE_DESTINATIONS) return { profile: prefix, foundationModel: modelId.slice(dot + 1) };
  return { foundationModel: modelId };
}

/**
 * The ARNs a role needs to invoke `modelId` from `region`: a base model in that region; or an
 * inference profile in that region plus its foundation model in every region the profile routes to.
 */
export function bedrockModelArns(
  modelId: string,
  { partition = Aws.PARTITION, region = Aws.REGION, account = Aws.ACCOUNT_ID } = {},
): string[] {
  const { profile, foundationModel } = parseModelId(modelId);
  const model = (r: string) => `arn:${partition}:bedrock:${r}::foundation-model/${foundationModel}`;
  if (!profile) return [model(region)];
  const destinations = PROFILE_DESTINATIONS[profile]!;
  return [
    `arn:${partition}:bedrock:${region}:${account}:inference-profile/${modelId}`,
    ...(destinations === "global" ? [model(region), model("")] : [...new Set([region, ...destinations])].map(model)),
  ];
}

/**
 * Invoke rights on the deployment's models for the functions that call them: one statement per
 * function, listing exactly the model and profile ARNs (no wildcard), with streaming only for
 * those that stream.
 */
export class BedrockAccess {
  constructor(
    private readonly stack: Stack,
    private readonly models: { chat?: string; embedding?: string; naming?: string; region?: string },
  ) {}

  /** Chat and naming models (and embeddings for memory), for the agent's functions. */
  grantChat(fn: IGrantable, { streaming = false, embeddings = true } = {}): void {
    this.grant(fn, [this.models.chat, this.models.naming, embeddings ? this.models.embedding : undefined], streaming);
  }

  /** The embedding model only (ingestion). */
  grantEmbeddings(fn: IGrantable): void {
    this.grant(fn, [this.models.embedding], false);
  }

  private grant(fn: IGrantable, modelIds: Array<string | undefined>, streaming: boolean): void {
    const ids = [...new Set(modelIds.filter((m): m is string => Boolean(m)))];
    if (ids.length === 0) return;
    const region = this.models.region ?? this.stack.region;
    fn.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: streaming ? ["bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"] : ["bedrock:InvokeModel"],
        resources: [
          ...new Set(
            ids.flatMap((id) =>
              bedrockModelArns(id, { partition: this.stack.partition, region, account: this.stack.account }),
            ),
          ),
        ],
      }),
    );
  }
}
