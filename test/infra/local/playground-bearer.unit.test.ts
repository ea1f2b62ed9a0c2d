import { bearerFor, jwtClaims } from "../../../infra/playground/src/auth/bearer";

// Which of its tokens the deployed playground sends: the one whose `aud` the authorizer checks.

const jwt = (claims: Record<string, unknown>) =>
  `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.sig`;

describe("the playground's bearer token", () => {
  it("is the access token when it is a JWT for the API's audience (Auth0, Okta)", () => {
    const access = jwt({ aud: ["agent-api", "https://tenant.auth0.com/userinfo"], sub: "u" });
    expect(bearerFor("agent-api", access, jwt({ aud: "spa-client" }))).toBe(access);
    expect(bearerFor("agent-api", jwt({ aud: "agent-api" }), "id")).not.toBe("id");
  });

  it("is the ID token when the access token has no such audience (Cognito) or is opaque", () => {
    const id = jwt({ aud: "app-client", sub: "u" });
    expect(bearerFor("app-client", jwt({ client_id: "app-client", token_use: "access" }), id)).toBe(id);
    expect(bearerFor("app-client", "opaque-access-token", id)).toBe(id);
    expect(bearerFor("app-client", jwt({ aud: "someone-else" }), id)).toBe(id);
  });

  it("reads claims from a JWT, and nothing from anything else", () => {
    expect(jwtClaims(jwt({ exp: 1_900_000_000, name: "Zoë" })).exp).toBe(1_900_000_000);
    expect(jwtClaims("not.a-jwt")).toEqual({});
    expect(jwtClaims(`x.${Buffer.from("null").toString("base64url")}.y`)).toEqual({});
    expect(jwtClaims("")).toEqual({});
  });
});
