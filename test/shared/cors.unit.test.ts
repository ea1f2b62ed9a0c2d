import { corsHeaders, isLoopbackHost, LOOPBACK, parseOrigins, preflightHeaders } from "../../shared/cors";

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

  // The local stack's default: a page on this machine (the playground, Agent Chat UI on its own
  // port) may call it; a web page from anywhere else may not read or erase local users' data.
  it.each([
    "http://localhost:3300",
    "http://localhost",
    "http://127.0.0.1:5173",
    "https://localhost:8443",
    "http://[::1]:3000",
  ])("allow %s under loopback", (origin) => {
    expect(corsHeaders([LOOPBACK], origin)["access-control-allow-origin"]).toBe(origin);
    expect(preflightHeaders([LOOPBACK], origin)["access-control-allow-methods"]).toContain("DELETE");
  });

  it.each([
    "https://evil.example.org",
    "http://localhost.evil.example.org",
    "http://127.0.0.1.nip.io",
    "http://localhost@evil.example.org",
    "http://localhost:3000/",
    "http://LOCALHOST:3000",
    "null",
    "file://",
    "",
  ])("refuse %j under loopback", (origin) => {
    expect(corsHeaders([LOOPBACK], origin)).toEqual({});
    expect(preflightHeaders([LOOPBACK], origin)).toEqual({});
  });

  it("allow a named origin beside loopback (a hosted UI calling a local stack)", () => {
    const allowed = parseOrigins("loopback, https://ui.example.com");
    expect(corsHeaders(allowed, "https://ui.example.com")["access-control-allow-origin"]).toBe(
      "https://ui.example.com",
    );
    expect(corsHeaders(allowed, "http://localhost:3000")["access-control-allow-origin"]).toBe("http://localhost:3000");
    expect(corsHeaders(allowed, "https://evil.example.org")).toEqual({});
  });

  it("tell a Host header naming this machine from any other (DNS rebinding)", () => {
    for (const host of ["localhost:3000", "127.0.0.1:3000", "[::1]:3000", "localhost", "LOCALHOST:3000"])
      expect(isLoopbackHost(host)).toBe(true);
    for (const host of [
      "rebind.attacker.example:3000",
      "localhost.attacker.example:3000",
      "127.0.0.1.nip.io:3000",
      "evil@localhost:3000",
      "localhost:3000/x",
      "",
      undefined,
    ])
      expect(isLoopbackHost(host)).toBe(false);
  });
});
