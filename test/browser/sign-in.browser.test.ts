import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { servePlayground } from "../../infra/local/playground-server";
import { apiCall, baseUrl, browserForFile, expectAccessible, say, screenshot } from "./browser";
import { startJwtGateway } from "./jwt-gateway";
import { closeServer } from "../../infra/local/close-server";
import { startTestIssuer, type TestIssuer } from "./oidc-issuer";

// The playground as `-c playground=true` deploys it: served from its own origin with a config
// naming the API and the OIDC issuer, the API on another origin behind a JWT check. The page must
// sign in by authorization code with PKCE and call the API with the token the authorizer accepts.

const CLIENT_ID = "playground-client";
const USER = { sub: "oidc-user-7f3a", email: "ann@example.com" };

const chromium = browserForFile();
let issuer: TestIssuer;
let gateway: Awaited<ReturnType<typeof startJwtGateway>>;
let site: Server;
let siteUrl = "";

beforeAll(async () => {
  issuer = await startTestIssuer({ clientId: CLIENT_ID, redirectUri: () => `${siteUrl}/`, user: USER });
  gateway = await startJwtGateway({
    target: baseUrl(),
    issuer: issuer.url,
    audience: CLIENT_ID,
    allowOrigin: () => siteUrl,
  });
  site = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const config = {
      mode: "oidc",
      apiUrl: `${gateway.url}/`,
      issuer: issuer.url,
      clientId: CLIENT_ID,
      audience: CLIENT_ID,
      scope: "openid email",
    } as const;
    if (!servePlayground(req, res, url, { config, connect: [gateway.url, issuer.url] })) res.writeHead(404).end();
  });
  await new Promise<void>((r) => site.listen(0, "127.0.0.1", () => r()));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await Promise.all([issuer?.close(), gateway?.close(), site && closeServer(site)]);
});

async function open() {
  // The page's own CSP stays on here: the config's API and issuer are what it lets the page call.
  const context = await chromium.browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  return { page, problems, context };
}

describe("the deployed playground's sign-in", () => {
  it("signs in by authorization code with PKCE, then calls the API as the token's user", async () => {
    const { page, problems, context } = await open();
    await page.goto(`${siteUrl}/?panel=chat`);
    const signIn = page.getByRole("button", { name: "Sign in" });
    await signIn.waitFor();
    expect(gateway.calls).toEqual([]); // nothing is asked of the API before sign-in
    await expectAccessible(page, "sign-in page");
    await screenshot(page, "sign-in-1440");

    await signIn.click();
    await page.getByText(`Signed in as ${USER.email}`).waitFor({ timeout: 15_000 });
    // The issuer saw one exchange, whose verifier matched the challenge; the code left the address bar.
    expect(issuer.exchanges).toEqual([{ pkce: true, clientId: CLIENT_ID }]);
    expect(new URL(page.url()).searchParams.has("code")).toBe(false);
    expect(new URL(page.url()).searchParams.get("panel")).toBe("chat");
    // Deployed, there is no user switch and no Intercom stand-in.
    expect(await page.getByRole("textbox", { name: "User (x-user-id)" }).count()).toBe(0);
    expect(await page.getByRole("tab", { name: "Intercom" }).count()).toBe(0);

    await say(page, "Remember that my favourite city is Lisbon");
    // Every call the page made carried a token the JWT check accepted, naming the signed-in user.
    expect(gateway.calls.length).toBeGreaterThan(0);
    expect(gateway.calls.filter((c) => c.sub !== USER.sub)).toEqual([]);
    // And the stack holds the session under that user, as another client sees it.
    const sessions = await apiCall<{ sessions: Array<{ session_id: string }> }>(USER.sub, "/api/sessions");
    expect(sessions.body.sessions).toHaveLength(1);
    await page.locator('.sessions [aria-current="page"]').waitFor({ timeout: 15_000 });

    // A reload keeps the sign-in (this tab's sessionStorage) and the session.
    const exchanges = issuer.exchanges.length;
    await page.reload();
    await page.getByText(`Signed in as ${USER.email}`).waitFor();
    expect(issuer.exchanges.length).toBe(exchanges);
    await page.getByTestId("message-human").filter({ hasText: "my favourite city is Lisbon" }).waitFor();
    await expectAccessible(page, "signed in");

    // Signing out forgets the token: the API is not called again until the next sign-in.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    const calls = gateway.calls.length;
    await page.reload();
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    expect(gateway.calls.length).toBe(calls);
    expect(problems).toEqual([]);
    await context.close();
  });

  it("shows the issuer's refusal, and refuses a callback whose state is not the one it sent", async () => {
    const { page, problems, context } = await open();
    await page.goto(`${siteUrl}/`);
    issuer.refuseNext = "access_denied";
    await page.getByRole("button", { name: "Sign in" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor({ timeout: 15_000 });
    expect(await alert.textContent()).toContain("sign_in_failed");
    expect(await alert.textContent()).toContain("access_denied: the user declined");
    expect(await page.getByRole("button", { name: "Sign in" }).isEnabled()).toBe(true);

    // A callback carrying someone else's state (a forged link) is refused before any code exchange.
    const exchanges = issuer.exchanges.length;
    issuer.forgeNextState = true;
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: /state/ }).waitFor({ timeout: 15_000 });
    expect(issuer.exchanges.length).toBe(exchanges);
    expect(await page.getByText(/Signed in as/).count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  });

  it("signs in again when the token runs out, back on the same session", async () => {
    const { page, problems, context } = await open();
    await page.goto(`${siteUrl}/?panel=chat`);
    issuer.nextLifetime = "3s";
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText(`Signed in as ${USER.email}`).waitFor({ timeout: 15_000 });
    await say(page, "hello there");
    const thread = new URL(page.url()).searchParams.get("thread");
    expect(thread).toMatch(/^[0-9a-f-]{36}$/);
    const exchanges = issuer.exchanges.length;
    await page.waitForTimeout(3_500);

    // The next call finds the token expired and goes to the issuer first, not to a 401.
    const unauthorized = gateway.calls.filter((c) => !c.sub).length;
    await page.getByRole("tab", { name: "Memories" }).click();
    await expect.poll(() => issuer.exchanges.length, { timeout: 15_000 }).toBe(exchanges + 1);
    await page.getByText(`Signed in as ${USER.email}`).waitFor({ timeout: 15_000 });
    expect(new URL(page.url()).searchParams.get("thread")).toBe(thread);
    expect(gateway.calls.filter((c) => !c.sub).length).toBe(unauthorized);
    expect(problems).toEqual([]);
    await context.close();
  });
});
