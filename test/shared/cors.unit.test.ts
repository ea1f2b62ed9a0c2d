import { corsHeaders, parseOrigins, preflightHeaders } from "../../shared/cors";

describe("CORS headers", () => {
  it("name no origin unless it is allowed", () => {
    expect(corsHeaders([], "https://a.example.org")).toEqual({});
    expect(corsHeaders(parseOrigins(""), undefined)).toEqual({});
    const allowed = parseOrigins(" https://a.example.org ,https://b.example.org");
    expect(corsHeaders(allowed, "https://evil.example.org")).toEqual({});
    expect(corsHeaders(allowed, "https://b.example.org")).toMatchObject({
      "access-control-allow-origin": "https://b.example.org",
      "access-control-expose-headers": "content-location,location,x-pagination-total,x-pagination-next",
      vary: "origin",
    });
    expect(corsHeaders(["*"], undefined)["access-control-allow-origin"]).toBe("*");
  });

  it("answer a preflight only for an allowed origin", () => {
    expect(preflightHeaders(["https://a.example.org"], "https://evil.example.org")).toEqual({});
    expect(
      preflightHeaders(["https://a.example.org"], "https://a.example.org")["access-control-allow-headers"],
    ).toContain("x-api-key");
    // Agent Chat UI sends its auth scheme beside its API key.
    expect(
      preflightHeaders(["https://a.example.org"], "https://a.example.org")["access-control-allow-headers"],
    ).toContain("x-auth-scheme");
  });
});
