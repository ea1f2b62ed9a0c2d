import { localStackForTests } from "../support/local-stack";

// A browser app on another origin (the deployed playground, a team's own UI) reads an answer only
// when it carries CORS headers for that origin: every browser-facing route, its errors included.

const ORIGIN = "https://app.example.com";
const local = localStackForTests("cors", { CORS_ORIGINS: ORIGIN });
const missing = "0b5e7a4c-3c1d-4f6e-9a2b-8c7d6e5f4a3b";

const call = (path: string, init: RequestInit & { origin?: string } = {}) =>
  fetch(`${local.stack.url}${path}`, {
    ...init,
    headers: {
      origin: init.origin ?? ORIGIN,
      "x-user-id": "cors-user",
      "content-type": "application/json",
      ...init.headers,
    },
  });

describe("CORS on the API's own routes", () => {
  it.each([
    ["GET /api/sessions", "/api/sessions", {}, 200],
    ["GET /api/memories", "/api/memories", {}, 200],
    ["GET /api/health/deep", "/api/health/deep", {}, 200],
    ["POST /api/chat", "/api/chat", { method: "POST", body: JSON.stringify({ message: "hi" }) }, 200],
    ["an unknown session's files (404)", `/api/sessions/${missing}/files`, {}, 404],
    ["a bad chat body (400)", "/api/chat", { method: "POST", body: "{" }, 400],
    ["a streamed chat refused (400)", "/api/chat/stream", { method: "POST", body: "{}" }, 400],
    ["the knowledge admin for a non-admin (403)", "/api/knowledge/documents", {}, 403],
  ] as const)("marks %s for the allowed origin", async (_, path, init, status) => {
    const response = await call(path, init);
    expect(response.status).toBe(status);
    expect(response.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(response.headers.get("vary")).toMatch(/origin/i);
  });

  it("names no other origin", async () => {
    const response = await call("/api/sessions", { origin: "https://evil.example.com" });
    expect(response.status).toBe(200);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("marks a streamed chat's event stream", async () => {
    const response = await call("/api/chat/stream", { method: "POST", body: JSON.stringify({ message: "hi" }) });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    expect(response.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    await response.text();
  });
});
