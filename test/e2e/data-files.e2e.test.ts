import { localStackForTests } from "../support/local-stack";
import { Client } from "@langchain/langgraph-sdk";
import { apiCaller } from "../support/api-call";

// A data file the API accepted never breaks its session: every data file of a session is a table
// of its own, whatever its name, and a file that cannot be described is refused with a reason.
const local = localStackForTests("data-files", { OFFLINE_STREAM_DELAY_MS: "0" });

const call = apiCaller(() => local.stack.url);

async function upload(user: string, session: string, name: string, content: string, mediaType = "text/csv") {
  const bytes = Buffer.from(content);
  const created = await call("POST", `/api/sessions/${session}/files`, user, {
    name,
    media_type: mediaType,
    bytes: bytes.length,
  });
  expect(created.status).toBe(201);
  const put = await fetch(created.body.upload_url, { method: "PUT", body: bytes, headers: created.body.headers });
  expect(put.status).toBe(200);
  return call("POST", `/api/sessions/${session}/files/${created.body.file_id}/complete`, user);
}

const ask = async (user: string, session: string, sql: string) =>
  (await call("POST", "/api/chat", user, { session_id: session, message: `run \`${sql}\`` })).body.reply as string;

describe("data files of one session", () => {
  it("sales.csv beside Sales.tsv are two tables, and every query of the session still runs", async () => {
    const session = (await call("POST", "/api/chat", "ann", { message: "hi" })).body.session_id as string;
    expect((await upload("ann", session, "sales.csv", "region,amount\nnorth,1\n")).body).toMatchObject({
      status: "ready",
      table: "sales",
    });
    expect(
      (await upload("ann", session, "Sales.tsv", "region\tamount\nsouth\t2\n", "text/tab-separated-values")).body,
    ).toMatchObject({ status: "ready", table: "sales_2" });
    const listed = (await call("GET", `/api/sessions/${session}/files`, "ann")).body.files;
    expect(listed.map((f: { table: string }) => f.table)).toEqual(["sales", "sales_2"]);
    expect(await ask("ann", session, "SELECT region FROM sales")).toContain("north");
    expect(await ask("ann", session, "SELECT region FROM sales_2")).toContain("south");
  });

  it("two files named in another script are two tables too", async () => {
    const session = (await call("POST", "/api/chat", "ann", { message: "hi" })).body.session_id as string;
    expect((await upload("ann", session, "продажи.csv", "n\n1\n")).body).toMatchObject({ table: "продажи" });
    expect((await upload("ann", session, "клиенты.csv", "n\n2\n")).body).toMatchObject({ table: "клиенты" });
    const reply = await ask("ann", session, 'SELECT n FROM "продажи" UNION ALL SELECT n FROM клиенты ORDER BY n');
    expect(reply).toMatch(/2 rows:\nn\n1\n2/);
  });

  it("a file whose column list could not be stored is rejected with its reason, not left pending", async () => {
    const session = (await call("POST", "/api/chat", "ann", { message: "hi" })).body.session_id as string;
    const header = Array.from({ length: 1_700 }, (_, i) => `column_${i}_${"x".repeat(240)}`).join(",");
    const done = await upload("ann", session, "wide.csv", `${header}\n${Array(1_700).fill("1").join(",")}\n`);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: "rejected", reason: expect.stringMatching(/columns take \d+ KB/) });
    const listed = (await call("GET", `/api/sessions/${session}/files`, "ann")).body.files;
    expect(listed).toEqual([expect.objectContaining({ name: "wide.csv", status: "rejected" })]);
  });

  it("are queried by the Agent Server's runs as by the chat routes: waited for, streamed and in the background", async () => {
    const session = (await call("POST", "/api/chat", "ann", { message: "hi" })).body.session_id as string;
    expect((await upload("ann", session, "orders.csv", "item,qty\nkettle,3\n")).body).toMatchObject({
      status: "ready",
    });
    const sdk = new Client({ apiUrl: local.stack.url, defaultHeaders: { "x-user-id": "ann" } });
    const input = (sql: string) => ({ messages: [{ role: "user", content: `run \`${sql}\`` }] });
    const lastReply = async () => {
      const state = await sdk.threads.getState<{ messages: { content: unknown }[] }>(session);
      return JSON.stringify(state.values.messages.at(-1)?.content);
    };
    // Each run asks for a value no earlier run answered, so a reply from the one before cannot pass.
    await sdk.runs.wait(session, "chat", { input: input("SELECT qty * 10 AS q FROM orders") });
    expect(await lastReply()).toContain("30");
    for await (const _ of sdk.runs.stream(session, "chat", { input: input("SELECT qty * 20 AS q FROM orders") }));
    expect(await lastReply()).toContain("60");
    const background = await sdk.runs.create(session, "chat", { input: input("SELECT qty * 30 AS q FROM orders") });
    await sdk.runs.join(session, background.run_id);
    expect(await lastReply()).toContain("90");
  });
});
