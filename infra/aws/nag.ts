import { Stack, Validations, type CfnElement } from "aws-cdk-lib";
import type { IConstruct } from "constructs";
import type { Playground } from "./playground";

/**
 * The AwsSolutions (cdk-nag) findings this stack accepts, each with its reason. Anything not
 * listed here fails the test that runs the pack (test/infra/nag.test.ts).
 */
export function acknowledgeNagFindings(
  stack: Stack,
  granted: {
    documentsBucket: IConstruct;
    documentsBucketArn: string;
    documentsPrefix: string;
    tracing: boolean;
    checkpointTableArn: string;
  },
): void {
  const managed = "Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/";
  const iam5 = "Wildcards are CDK's grantRead actions (s3:GetObject*/List*) on the documents prefix only.";
  Validations.of(granted.documentsBucket).acknowledge({
    id: "AwsSolutions-S1",
    reason:
      "The documents bucket holds knowledge-base files written by the deploying team; object-level audit belongs to CloudTrail data events, an account choice.",
  });
  Validations.of(stack).acknowledge(
    ...["AWSLambdaBasicExecutionRole", "AmazonAPIGatewayPushToCloudWatchLogs"].map((policy) => ({
      id: `AwsSolutions-IAM4[${managed}${policy}]`,
      reason: "AWS's own scoped service-role policies: Lambda log writing, and API Gateway's CloudWatch logging role.",
    })),
    ...["s3:GetBucket*", "s3:GetObject*", "s3:List*"].map((action) => ({
      id: `AwsSolutions-IAM5[Action::${action}]`,
      reason: iam5,
    })),
    { id: `AwsSolutions-IAM5[Resource::<${granted.documentsBucketArn}>/${granted.documentsPrefix}*]`, reason: iam5 },
    {
      id: `AwsSolutions-IAM5[Resource::<${granted.checkpointTableArn}>/index/*]`,
      reason: "CDK's table grants name the state table's indexes so: it has one, the user index (keys only).",
    },
    ...(granted.tracing
      ? [
          {
            id: "AwsSolutions-IAM5[Resource::*]",
            reason: "X-Ray's PutTraceSegments and PutTelemetryRecords support no resource-level permissions.",
          },
        ]
      : []),
    {
      id: "AwsSolutions-APIG3",
      reason:
        "WAF is the deploying account's choice (shared web ACLs cost per ACL); throttling and the JWT authorizer cover the API.",
    },
    {
      id: "AwsSolutions-APIG4",
      reason:
        "The only unauthenticated routes are POST/HEAD /webhooks/intercom: Intercom cannot send a JWT, and the function verifies its HMAC signature.",
    },
    {
      id: "AwsSolutions-COG4",
      reason:
        "Users come from any OIDC issuer (Cognito, Auth0, Okta): a Lambda authorizer verifies its JWTs against the issuer's JWKS.",
    },
    {
      id: "AwsSolutions-L1",
      reason:
        "Node.js 22 is pinned on purpose: the code and its dependencies are built and tested for it (esbuild target node22).",
    },
    {
      id: "AwsSolutions-SMG4",
      reason:
        "The secrets are third-party credentials (Supabase service-role key, Intercom token and client secret) that AWS cannot rotate, and the users' API key value, which API Gateway holds as a copy a rotation would not update.",
    },
  );
}

/**
 * The playground's findings (`-c playground=true`), acknowledged on its own constructs so they hide
 * nothing elsewhere in the stack.
 */
export function acknowledgePlaygroundFindings(playground: Playground): void {
  Validations.of(playground.distribution).acknowledge(
    {
      id: "AwsSolutions-CFR1",
      reason:
        "The playground serves the deploying team's users wherever they are; it is static files, and the API it calls needs a signed-in user.",
    },
    {
      id: "AwsSolutions-CFR2",
      reason:
        "WAF is the deploying account's choice, as for the API (APIG3); the distribution serves only static files from a private bucket.",
    },
    {
      id: "AwsSolutions-CFR3",
      reason: "Static files of a developer tool: every call that matters goes to the API, whose access logs record it.",
    },
    {
      id: "AwsSolutions-CFR4",
      reason:
        "The distribution uses its cloudfront.net name and CloudFront's default certificate, whose TLS policy CloudFront sets; a custom domain and certificate are the deploying team's.",
    },
  );
  Validations.of(playground.bucket).acknowledge({
    id: "AwsSolutions-S1",
    reason: "The playground's bucket holds only the build, which every deploy writes again; CloudFront alone reads it.",
  });
  // CDK's deployment function (the role's scope), whose runtime CDK chooses and keeps current.
  const deployFunction = playground.deployRole?.node.scope;
  if (deployFunction)
    Validations.of(deployFunction).acknowledge({
      id: "AwsSolutions-L1",
      reason:
        "CDK's BucketDeployment function runs on the Python runtime the installed aws-cdk-lib pins; upgrading aws-cdk-lib moves it.",
    });
  if (playground.deployRole)
    Validations.of(playground.deployRole).acknowledge(
      {
        id: "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]",
        reason: "CDK's BucketDeployment function writes its logs with AWS's own scoped policy.",
      },
      ...[
        "Action::s3:GetBucket*",
        "Action::s3:GetObject*",
        "Action::s3:List*",
        "Action::s3:DeleteObject*",
        "Action::s3:Abort*",
        "Resource::*",
      ].map((finding) => ({
        id: `AwsSolutions-IAM5[${finding}]`,
        reason:
          "CDK's BucketDeployment function, which copies the build from CDK's asset bucket into the playground's bucket and invalidates the distribution (CreateInvalidation takes no resource).",
      })),
      {
        id: "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*]",
        reason: "CDK's BucketDeployment function reads the build from CDK's own asset bucket.",
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${Stack.of(playground).getLogicalId(playground.bucket.node.defaultChild as CfnElement)}.Arn>/*]`,
        reason:
          "CDK's BucketDeployment function writes and prunes the build's files, which are the whole of the playground's bucket.",
      },
    );
}
