import { AssetHashType, CfnOutput, Duration, RemovalPolicy } from "aws-cdk-lib";
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  HeadersFrameOption,
  HeadersReferrerPolicy,
  HttpVersion,
  ResponseHeadersPolicy,
  ViewerProtocolPolicy,
} from "aws-cdk-lib/aws-cloudfront";
import { S3BucketOrigin } from "aws-cdk-lib/aws-cloudfront-origins";
import type { IRole } from "aws-cdk-lib/aws-iam";
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from "aws-cdk-lib/aws-s3";
import { BucketDeployment, CacheControl, Source } from "aws-cdk-lib/aws-s3-deployment";
import { Construct } from "constructs";
import { PLAYGROUND_SOURCE, playgroundBuildArgs } from "../playground-build";
import { type PlaygroundConfig, playgroundCsp } from "../playground-config";
import { localBundling } from "./bundle/local-bundling";

/**
 * The playground (`-c playground=true`): the same static build `npm start` serves, on a private
 * bucket that only this CloudFront distribution reads (origin access control), with the page told
 * at /config.json where the API is and which OIDC issuer signs its users in.
 */
export class Playground extends Construct {
  readonly distribution: Distribution;
  /** https://<distribution>.cloudfront.net: the API's CORS origin and the issuer's callback URL */
  readonly origin: string;
  /** the private bucket holding the build, read only through the distribution */
  readonly bucket: Bucket;
  /** the role of CDK's deployment function, which copies the build into the bucket (set by publish) */
  deployRole?: IRole;
  /** what the page reads at /config.json (set by publish) */
  config?: PlaygroundConfig;

  /** `connect`: the origins the page may call besides its own (playgroundConnectSources) */
  constructor(scope: Construct, id: string, props: { connect: readonly string[] }) {
    super(scope, id);
    this.bucket = new Bucket(this, "Site", {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // Only the build is here, and every deploy puts it back.
      removalPolicy: RemovalPolicy.DESTROY,
      autoDeleteObjects: true,
    });
    this.distribution = new Distribution(this, "Distribution", {
      comment: "Agent playground",
      defaultRootObject: "index.html",
      httpVersion: HttpVersion.HTTP2_AND_3,
      defaultBehavior: {
        origin: S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
        // Each file's own Cache-Control decides (see publish): no-cache for the page, a year for assets.
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
        compress: true,
        responseHeadersPolicy: new ResponseHeadersPolicy(this, "Headers", {
          securityHeadersBehavior: {
            // Scripts and styles from the distribution only; calls only where the page must go.
            contentSecurityPolicy: { contentSecurityPolicy: playgroundCsp(props.connect), override: true },
            contentTypeOptions: { override: true },
            frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
            referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
            strictTransportSecurity: {
              accessControlMaxAge: Duration.days(365),
              includeSubdomains: true,
              override: true,
            },
          },
        }),
      },
    });
    this.origin = `https://${this.distribution.distributionDomainName}`;
  }

  /**
   * Uploads the build and its config. Called once the API exists, since the config names its URL.
   * The hashed assets go first and are kept for good; then the page and its config, which browsers
   * must re-read (no-cache) and CloudFront is told to drop, so a deploy is visible at once and a
   * page never names an asset that is not there yet.
   */
  publish(config: PlaygroundConfig): void {
    this.config = config;
    const build = playgroundBuild();
    const entry = ["index.html", "config.json"];
    const assets = new BucketDeployment(this, "Assets", {
      sources: [build],
      destinationBucket: this.bucket,
      exclude: entry,
      // Older builds' assets stay: a page still open (or cached) loads its own chunks after a deploy.
      prune: false,
      cacheControl: [CacheControl.setPublic(), CacheControl.maxAge(Duration.days(365)), CacheControl.immutable()],
      memoryLimit: 256,
    });
    const page = new BucketDeployment(this, "Page", {
      sources: [build, Source.jsonData("config.json", config)],
      destinationBucket: this.bucket,
      exclude: ["*"],
      include: entry,
      prune: false,
      cacheControl: [CacheControl.noCache()],
      distribution: this.distribution,
      distributionPaths: ["/", ...entry.map((name) => `/${name}`)],
      memoryLimit: 256,
    });
    page.node.addDependency(assets);
    // Both deployments share one CDK-provided function (a singleton per memory size).
    this.deployRole = page.handlerRole;
    new CfnOutput(this, "Url", {
      key: "PlaygroundUrl",
      description:
        "The playground. Register this exact URL with your OIDC issuer as the app client's callback (redirect) URL",
      value: `${this.origin}/`,
    });
  }
}

/**
 * Where the deployed page sends requests: the API and S3's presigned uploads (AWS endpoints), the
 * issuer (discovery and, mostly, the token endpoint), Cognito's hosted domains for a Cognito issuer
 * (its token endpoint lives there), and any the deployer adds (`playgroundConnectSources`, e.g. a
 * custom sign-in domain). AWS hosts by wildcard: the API's and buckets' names are only known at
 * deploy, and a wrong guess at S3's host form would break uploads on the first deploy.
 */
export function playgroundConnectSources(issuer: string, extra: readonly string[] = []): string[] {
  const { origin, hostname } = new URL(issuer);
  return [
    "https://*.amazonaws.com",
    origin,
    ...(hostname.startsWith("cognito-idp.") ? ["https://*.amazoncognito.com"] : []),
    ...extra,
  ];
}

/**
 * The page built by Vite, as `npm start` builds it, at synth on this machine like the functions'
 * bundles. Hashed by output, so an unchanged page is not uploaded again.
 */
function playgroundBuild() {
  return Source.asset(PLAYGROUND_SOURCE, {
    assetHashType: AssetHashType.OUTPUT,
    // React's production build, whatever NODE_ENV the synth runs under (vitest sets "test").
    bundling: localBundling(playgroundBuildArgs, { NODE_ENV: "production" }),
  });
}
