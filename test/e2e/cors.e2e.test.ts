import { deployedFunctions, type HttpRoute } from "../../infra/manifest";
import { localStackForTests } from "../support/local-stack";

// A browser app on another origin (the deployed playground, a team's own UI) reads an answer only
// when it carries CORS headers for that origin: every route, its errors included.

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

/** A request for a manifest route: path parameters that name nothing, and a body where one goes. */
const exampleRequest = (route: HttpRoute): [string, RequestInit] => [
  route.path.replace(/\{[^}]+\}/g, missing),
  { method: route.method, ...(["POST", "PUT", "PATCH"].includes(route.method) ? { body: "{}" } : {}) },
];
const manifestRoutes = deployedFunctions({ intercom: true }).flatMap((fn) =>
  (fn.routes ?? []).map((route) => [`${route.method} ${route.path}`, route] as const),
);

describe("CORS on the API's own routes", () => {
  // Every route of the deployment manifest, whatever it answers: a function added by
  // docs/adding-a-function.md is checked here without an edit.
  it.each(manifestRoutes)("marks %s for the allowed origin", async (_, route) => {
    const response = await call(...exampleRequest(route));
    await response.body?.cancel();
    expect(response.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(response.headers.get("vary")).toMatch(/origin/i);
  });

  it.each(manifestRoutes)("answers the preflight of %s", async (_, route) => {
    const [path] = exampleRequest(route);
    const response = await call(path, {
      method: "OPTIONS",
      headers: { "access-control-request-method": route.method },
    });
    expect(response.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    // HEAD is one of the methods a browser sends without asking first.
    if (route.method !== "HEAD") expect(response.headers.get("access-control-allow-methods")).toContain(route.method);
  });

  it.each([
    ["a chat turn (200)", "/api/chat", { method: "POST", body: JSON.stringify({ message: "hi" }) }, 200],
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
