import { App, Stack } from "aws-cdk-lib";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Playground } from "../../infra/aws/playground";
import { Match, Template } from "aws-cdk-lib/assertions";
import { AwsSolutionsChecks } from "cdk-nag";
import { readSettings, type StackSettings } from "../../infra/aws/settings";
import { AgentStack } from "../../infra/aws/stack";
import { BLOCKS_ALL_PUBLIC_ACCESS, NO_BUNDLING, PRODUCTION_CONTEXT, PRODUCTION_SETTINGS } from "../support/deployment";
import { synthesized } from "../support/synth";

// `-c playground=true`: the playground's static build on a private bucket behind CloudFront, its
// users signed in with the deployment's OIDC issuer, the API open to its origin (CORS).

const deploy = (settings: Partial<StackSettings> = {}) => {
  const app = new App({ context: NO_BUNDLING });
  const stack = new AgentStack(app, "Pg", { settings: { ...PRODUCTION_SETTINGS, playground: true, ...settings } });
  return { app, stack, template: Template.fromStack(stack) };
};
const { app, stack, template } = deploy();
const json = template.toJSON() as { Resources: Record<string, { Type: string; Properties: any }>; Outputs: any };
const ofType = (type: string) => Object.entries(json.Resources).filter(([, r]) => r.Type === type);
/** CloudFront's domain name, as the template refers to it. */
const domain = {
  "Fn::GetAtt": [stack.getLogicalId(stack.playground!.distribution.node.defaultChild as any), "DomainName"],
};
const origin = { "Fn::Join": ["", ["https://", domain]] };

describe("the playground deployment", () => {
  it("is absent unless asked for", () => {
    const plain = synthesized(PRODUCTION_SETTINGS).template;
    plain.resourceCountIs("AWS::CloudFront::Distribution", 0);
    plain.resourceCountIs("Custom::CDKBucketDeployment", 0);
  });

  it("keeps the build on a private bucket that only the distribution reads, through origin access control", () => {
    const site = stack.getLogicalId(stack.playground!.bucket.node.defaultChild as any);
    expect(json.Resources[site]!.Properties.PublicAccessBlockConfiguration).toEqual(BLOCKS_ALL_PUBLIC_ACCESS);
    expect(json.Resources[site]!.Properties.WebsiteConfiguration).toBeUndefined();
    template.hasResourceProperties("AWS::CloudFront::OriginAccessControl", {
      OriginAccessControlConfig: {
        OriginAccessControlOriginType: "s3",
        SigningBehavior: "always",
        SigningProtocol: "sigv4",
      },
    });
    // The bucket policy lets CloudFront's service read, and only for this distribution.
    const [, policy] = ofType("AWS::S3::BucketPolicy").find(([, p]) => p.Properties.Bucket.Ref === site)!;
    const statements = policy.Properties.PolicyDocument.Statement as any[];
    const read = statements.find((s) => s.Principal?.Service === "cloudfront.amazonaws.com");
    expect(read.Action).toBe("s3:GetObject");
    expect(read.Condition.StringEquals["AWS:SourceArn"]).toBeDefined();
    expect(statements.filter((s) => s.Effect === "Allow" && s.Principal === "*")).toEqual([]);
    // And refuses plain http (enforceSSL).
    expect(statements.some((s) => s.Effect === "Deny" && s.Condition?.Bool?.["aws:SecureTransport"] === "false")).toBe(
      true,
    );
  });

  it("serves the page over https with its CSP: scripts and styles from the distribution only", () => {
    template.hasResourceProperties("AWS::CloudFront::Distribution", {
      DistributionConfig: {
        DefaultRootObject: "index.html",
        DefaultCacheBehavior: { ViewerProtocolPolicy: "redirect-to-https", AllowedMethods: ["GET", "HEAD"] },
      },
    });
    const [, headers] = ofType("AWS::CloudFront::ResponseHeadersPolicy")[0]!;
    const security = headers.Properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig;
    const csp: string = security.ContentSecurityPolicy.ContentSecurityPolicy;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    // Calls go to AWS (the API, S3 uploads), the issuer and Cognito's sign-in domains only.
    expect(csp).toContain(
      "connect-src 'self' https://*.amazonaws.com https://cognito-idp.us-east-1.amazonaws.com https://*.amazoncognito.com;",
    );
    expect(security.StrictTransportSecurity.AccessControlMaxAgeSec).toBe(31_536_000);
    expect(security.FrameOptions.FrameOption).toBe("DENY");
  });

  it("tells the page where the API is and which issuer signs users in, in its config.json", () => {
    const deployments = ofType("Custom::CDKBucketDeployment");
    expect(deployments).toHaveLength(2);
    const page = deployments.find(([, d]) => d.Properties.Include)!;
    const assets = deployments.find(([, d]) => !d.Properties.Include)!;
    // The page and its config are re-read by browsers and dropped from CloudFront's cache on deploy;
    // the hashed assets are kept a year, and older builds' too (a page still open loads its own).
    expect(page[1].Properties.Include).toEqual(["index.html", "config.json"]);
    expect(page[1].Properties.SystemMetadata["cache-control"]).toBe("no-cache");
    expect(page[1].Properties.DistributionPaths).toEqual(["/", "/index.html", "/config.json"]);
    expect(page[1].Properties.Prune).toBe(false);
    expect(assets[1].Properties.Exclude).toEqual(["index.html", "config.json"]);
    expect(assets[1].Properties.Prune).toBe(false);
    expect(assets[1].Properties.SystemMetadata["cache-control"]).toBe("public, max-age=31536000, immutable");
    // The config: its static parts as given, the API's URL a token that the deployment fills in
    // (Source.jsonData's markers), so the page calls this stack's API.
    expect(stack.resolve(stack.playground!.config)).toEqual({
      mode: "oidc",
      apiUrl: stack.resolve(stack.api.url),
      issuer: PRODUCTION_SETTINGS.oidcIssuer,
      clientId: PRODUCTION_SETTINGS.oidcAudience,
      audience: PRODUCTION_SETTINGS.oidcAudience,
      scope: "openid email",
    });
    expect(JSON.stringify(page[1].Properties.SourceMarkers)).toContain(
      stack.getLogicalId(stack.api.node.defaultChild as any),
    );
  });

  it("opens the API, the functions' CORS and the documents bucket's uploads to the playground's origin", () => {
    // API Gateway's preflight answers the distribution's origin.
    const preflights = ofType("AWS::ApiGateway::Method").filter(([, m]) => m.Properties.HttpMethod === "OPTIONS");
    expect(preflights.length).toBeGreaterThan(0);
    const allowOrigin =
      preflights[0]![1].Properties.Integration.IntegrationResponses[0].ResponseParameters[
        "method.response.header.Access-Control-Allow-Origin"
      ];
    expect(allowOrigin).toEqual({ "Fn::Join": ["", ["'https://", domain, "'"]] });
    // The functions add CORS headers for it (shared/cors.ts reads CORS_ORIGINS).
    template.hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: Match.objectLike({ CORS_ORIGINS: origin }) },
    });
    // The gateway's own refusals (401, 429, 504) are readable by the page: they echo its origin.
    for (const type of ["DEFAULT_4XX", "DEFAULT_5XX"])
      template.hasResourceProperties("AWS::ApiGateway::GatewayResponse", {
        ResponseType: type,
        ResponseParameters: { "gatewayresponse.header.Access-Control-Allow-Origin": "method.request.header.Origin" },
      });
    // The Knowledge panel's presigned uploads go straight to the documents bucket.
    template.hasResourceProperties("AWS::S3::Bucket", {
      CorsConfiguration: { CorsRules: [{ AllowedMethods: ["PUT"], AllowedOrigins: [origin], AllowedHeaders: ["*"] }] },
    });
  });

  it("adds the playground's origin to those the context allows, and its errors still reach both", () => {
    const both = deploy({ corsOrigins: ["https://app.example.com"] }).template;
    both.hasResourceProperties("AWS::ApiGateway::GatewayResponse", {
      ResponseType: "DEFAULT_4XX",
      ResponseParameters: { "gatewayresponse.header.Access-Control-Allow-Origin": "method.request.header.Origin" },
    });
    both.hasResourceProperties("AWS::Lambda::Function", {
      Environment: {
        Variables: Match.objectLike({
          CORS_ORIGINS: { "Fn::Join": ["", ["https://app.example.com,https://", Match.anyValue()]] },
        }),
      },
    });
  });

  it("signs in as the given client with the given scopes", () => {
    const { stack, template } = deploy({
      oidcIssuer: "https://tenant.eu.auth0.com/",
      playgroundClientId: "spa-client",
      playgroundScopes: "openid profile",
      playgroundConnectSources: ["https://login.example.com"],
    });
    // No Cognito domain for another issuer; the deployer's extra origin is there.
    const [, headers] = Object.entries(template.findResources("AWS::CloudFront::ResponseHeadersPolicy"))[0]!;
    expect(
      (headers as any).Properties.ResponseHeadersPolicyConfig.SecurityHeadersConfig.ContentSecurityPolicy
        .ContentSecurityPolicy,
    ).toContain("connect-src 'self' https://*.amazonaws.com https://tenant.eu.auth0.com https://login.example.com;");
    expect(stack.playground!.config).toMatchObject({
      clientId: "spa-client",
      audience: "agent-api",
      scope: "openid profile",
    });
  });

  it("outputs the URL to register as the issuer's callback", () => {
    const [output] = Object.entries<any>(json.Outputs).filter(([key]) => key === "PlaygroundUrl");
    expect(output![1].Value).toEqual({ "Fn::Join": ["", ["https://", domain, "/"]] });
    expect(output![1].Description).toMatch(/callback/);
  });

  it("leaves no cdk-nag finding unacknowledged", () => {
    const violations = new AwsSolutionsChecks(app).validateScope(stack).violations;
    expect(violations.map((v) => v.ruleName)).toEqual([]);
  });

  it("builds the page at synth, as `npm start` does: its bundle and style, and nothing served from elsewhere", () => {
    // Bundling on, but only for a stack holding the playground alone (the functions take minutes).
    const app = new App({ outdir: mkdtempSync(join(tmpdir(), "playground-synth-")) });
    const alone = new Stack(app, "PlaygroundAlone");
    new Playground(alone, "Playground", { connect: [] }).publish({
      mode: "oidc",
      apiUrl: "https://api.example.com/v1/",
      issuer: "https://issuer.example.com",
      clientId: "c",
      audience: "c",
      scope: "openid",
    });
    const out = app.synth().directory;
    const built = readdirSync(out)
      .map((name) => join(out, name))
      .find((dir) => existsSync(join(dir, "index.html")))!;
    expect(built).toBeDefined();
    const page = readFileSync(join(built, "index.html"), "utf8");
    const assets = readdirSync(join(built, "assets"));
    expect(assets.some((name) => /^index-.+\.js$/.test(name))).toBe(true);
    expect(assets.some((name) => /^index-.+\.css$/.test(name))).toBe(true);
    for (const name of assets) expect(page).toContain(`/assets/${name}`);
    expect(page).not.toMatch(/src="https?:|href="https?:/);
    // React's production build, though vitest runs with NODE_ENV=test.
    const script = readFileSync(
      join(
        built,
        "assets",
        assets.find((name) => name.endsWith(".js"))!,
      ),
      "utf8",
    );
    expect(script).toContain("Minified React error");
  }, 60_000);

  it("is refused at synth without an OIDC issuer to sign users in with, or with scopes lacking openid", () => {
    const { oidcIssuer: _issuer, oidcAudience: _audience, ...demo } = PRODUCTION_CONTEXT;
    expect(() => readSettings(new App({ context: { ...demo, demo: "true", playground: "true" } }))).toThrow(
      /playground=true needs oidcIssuer and oidcAudience/,
    );
    expect(() => deploy({ demo: true, oidcIssuer: undefined, oidcAudience: undefined })).toThrow(
      /playground=true needs oidcIssuer/,
    );
    const settings = (extra: Record<string, string>) =>
      readSettings(new App({ context: { ...PRODUCTION_CONTEXT, playground: "true", ...extra } }));
    expect(settings({}).playground).toBe(true);
    expect(() => settings({ playground: "yes" })).toThrow(/playground must be true or false/);
    expect(() => settings({ playgroundScopes: "email profile" })).toThrow(/including openid/);
    expect(() => settings({ playgroundScopes: 'openid "quoted"' })).toThrow(/playgroundScopes/);
    expect(settings({ playgroundScopes: "  openid   email " }).playgroundScopes).toBe("openid email");
    expect(settings({ playgroundConnectSources: "https://login.example.com" }).playgroundConnectSources).toEqual([
      "https://login.example.com",
    ]);
    expect(() => settings({ playgroundConnectSources: "*" })).toThrow(
      /playgroundConnectSources: "\*" is not an origin/,
    );
    // Cognito's ID tokens name their own client: another client's would all be refused.
    expect(() => settings({ playgroundClientId: "other-client" })).toThrow(/with Cognito the API accepts only/);
    expect(settings({ playgroundClientId: "spa", oidcIssuer: "https://tenant.eu.auth0.com/" }).playgroundClientId).toBe(
      "spa",
    );
  });
});
