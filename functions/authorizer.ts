import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from "aws-lambda";
import { loadConfig, required } from "../shared/config";
import { InvalidToken, jwtVerifier } from "../shared/jwt";
import { createLogger } from "../shared/logger";

const logger = createLogger("authorizer");

/**
 * API Gateway TOKEN authorizer: `Authorization: Bearer <JWT>` from the configured OIDC issuer.
 * Allows the whole API for a valid token (so API Gateway can cache the decision across
 * routes) and hands the token's `sub` to the functions as `userId`. Anything else is
 * "Unauthorized", which API Gateway answers with 401.
 */
export function createAuthorizer(verify: (token: string) => Promise<{ sub: string }>) {
  return async (event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> => {
    const token = /^Bearer\s+(\S+)$/i.exec(event.authorizationToken ?? "")?.[1];
    if (!token) throw new Error("Unauthorized");
    let sub: string;
    try {
      ({ sub } = await verify(token));
    } catch (err) {
      if (err instanceof InvalidToken) {
        logger.info("token rejected", { reason: err.message });
        throw new Error("Unauthorized");
      }
      throw err;
    }
    // arn:aws:execute-api:region:account:api-id/stage/METHOD/path -> every method and path of the stage
    const [arnPrefix, stage] = event.methodArn.split("/");
    return {
      principalId: sub,
      policyDocument: {
        Version: "2012-10-17",
        Statement: [{ Action: "execute-api:Invoke", Effect: "Allow", Resource: `${arnPrefix}/${stage}/*/*` }],
      },
      context: { userId: sub },
    };
  };
}

let verifier: ReturnType<typeof jwtVerifier> | undefined;

export const handler = createAuthorizer((token) => {
  if (!verifier) {
    const config = loadConfig();
    verifier = jwtVerifier({
      issuer: required(config, "OIDC_ISSUER"),
      audience: required(config, "OIDC_AUDIENCE"),
      jwksUrl: config.OIDC_JWKS_URL,
    });
  }
  return verifier(token);
});
