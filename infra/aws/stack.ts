import { Duration, RemovalPolicy, Stack, type StackProps } from "aws-cdk-lib";
import { LambdaIntegration, RestApi } from "aws-cdk-lib/aws-apigateway";
import { AttributeType, Billing, TableV2 } from "aws-cdk-lib/aws-dynamodb";
import { PolicyStatement } from "aws-cdk-lib/aws-iam";
import { Architecture, Runtime } from "aws-cdk-lib/aws-lambda";
import { NodejsFunction, type NodejsFunctionProps } from "aws-cdk-lib/aws-lambda-nodejs";
import { LogGroup, RetentionDays } from "aws-cdk-lib/aws-logs";
import { Secret, type ISecret } from "aws-cdk-lib/aws-secretsmanager";
import type { Construct } from "constructs";
import { join } from "node:path";
import { CHECKPOINT_TABLE } from "../../graph/checkpoint/schema";
import { readSettings, type StackSettings } from "./settings";

const FUNCTIONS = join(import.meta.dirname, "../../functions");

/** The agent backend. Grows resource by resource with the functions that use them. */
export class AgentStack extends Stack {
  readonly checkpointTable: TableV2;
  readonly api: RestApi;
  readonly chatFunction: NodejsFunction;
  readonly sessionsFunction: NodejsFunction;
  readonly memoriesFunction: NodejsFunction;

  constructor(scope: Construct, id: string, props?: StackProps & { settings?: StackSettings }) {
    super(scope, id, props);
    const settings = props?.settings ?? readSettings(this);

    // Graph state: one item per checkpoint, write and stored message (graph/checkpoint).
    // On-demand billing because chat traffic is spiky; PITR because a thread's state
    // is user data; TTL so abandoned threads age out.
    this.checkpointTable = new TableV2(this, "CheckpointTable", {
      partitionKey: { name: CHECKPOINT_TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: CHECKPOINT_TABLE.sortKey, type: AttributeType.STRING },
      billing: Billing.onDemand(),
      timeToLiveAttribute: CHECKPOINT_TABLE.ttlAttribute,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const supabaseKey: ISecret = settings.supabaseSecretArn
      ? Secret.fromSecretCompleteArn(this, "SupabaseServiceRoleKey", settings.supabaseSecretArn)
      : new Secret(this, "SupabaseServiceRoleKey", {
          description:
            "Supabase service-role key for the agent backend: replace the generated value with the project's key",
        });

    const environment = {
      CHECKPOINT_TABLE: this.checkpointTable.tableName,
      SUPABASE_URL: settings.supabaseUrl,
      SUPABASE_SERVICE_ROLE_KEY_SECRET_ARN: supabaseKey.secretArn,
      ...(settings.bedrockModelId ? { BEDROCK_MODEL_ID: settings.bedrockModelId } : {}),
      ...(settings.bedrockEmbeddingModelId ? { BEDROCK_EMBEDDING_MODEL_ID: settings.bedrockEmbeddingModelId } : {}),
      ...(settings.checkpointTtlDays ? { CHECKPOINT_TTL_DAYS: String(settings.checkpointTtlDays) } : {}),
      NODE_OPTIONS: "--enable-source-maps",
    };

    this.chatFunction = this.fn("ChatFunction", "chat.ts", {
      environment,
      timeout: Duration.seconds(29),
      memorySize: 1024,
    });
    this.checkpointTable.grantReadWriteData(this.chatFunction);
    supabaseKey.grantRead(this.chatFunction);
    if (settings.bedrockModelId) {
      this.chatFunction.addToRolePolicy(
        new PolicyStatement({
          actions: ["bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream"],
          resources: bedrockModelArns(this, settings.bedrockModelId),
        }),
      );
    }

    this.sessionsFunction = this.fn("SessionsFunction", "sessions.ts", {
      environment,
      timeout: Duration.seconds(10),
      memorySize: 512,
    });
    supabaseKey.grantRead(this.sessionsFunction);

    this.memoriesFunction = this.fn("MemoriesFunction", "memories.ts", {
      environment,
      timeout: Duration.seconds(10),
      memorySize: 512,
    });
    supabaseKey.grantRead(this.memoriesFunction);

    this.api = new RestApi(this, "Api", {
      description: "Agent backend API",
      deployOptions: { stageName: "v1", throttlingRateLimit: 50, throttlingBurstLimit: 100 },
    });
    const api = this.api.root.addResource("api");
    api.addResource("chat").addMethod("POST", new LambdaIntegration(this.chatFunction));
    api
      .addResource("sessions")
      .addResource("{id}")
      .addResource("messages")
      .addMethod("GET", new LambdaIntegration(this.sessionsFunction));
    const memories = api.addResource("memories");
    const memoriesIntegration = new LambdaIntegration(this.memoriesFunction);
    memories.addMethod("GET", memoriesIntegration);
    memories.addResource("{id}").addMethod("DELETE", memoriesIntegration);
  }

  /** Every handler: Node 22 on Graviton, minified, the SDK left to the runtime's copy. */
  private fn(id: string, entry: string, props: NodejsFunctionProps): NodejsFunction {
    return new NodejsFunction(this, id, {
      entry: join(FUNCTIONS, entry),
      handler: "handler",
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      logGroup: new LogGroup(this, `${id}Logs`, {
        retention: RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      }),
      bundling: { minify: true, sourceMap: true, externalModules: ["@aws-sdk/*"], target: "node22" },
      ...props,
    });
  }
}

/** A model id may be a foundation model or a cross-region inference profile (us.anthropic...). */
function bedrockModelArns(stack: Stack, modelId: string): string[] {
  const base = modelId.replace(/^(us|eu|apac|global)\./, "");
  return [
    `arn:${stack.partition}:bedrock:*::foundation-model/${base}`,
    `arn:${stack.partition}:bedrock:${stack.region}:${stack.account}:inference-profile/${modelId}`,
  ];
}
