import type { PGlite } from "@electric-sql/pglite";
import { type AIMessage, HumanMessage } from "@langchain/core/messages";
import { chatTools } from "../../../graph/tools/registry";
import { startLocalPostgres } from "../../../infra/local/postgres";
import { HashingEmbeddings } from "../../../shared/models/hashing-embeddings";
import { OfflineChatModel } from "../../../shared/models/offline-chat-model";
import { RpcAgentStore } from "../../../shared/stores/rpc-agent-store";
import { sqlRpc } from "../../../shared/stores/sql-rpc";

let db: PGlite;
let store: RpcAgentStore;
beforeAll(async () => {
  db = await startLocalPostgres();
  store = new RpcAgentStore(sqlRpc(db));
  await db.query(
    `insert into user_context (user_id, plan, preferences) values
       ('paris', 'pro', '{"timezone": "Europe/Paris"}'), ('tokyo', null, '{"time_zone": "Asia/Tokyo"}'),
       ('bogus', null, '{"timezone": "Mars/Olympus_Mons"}')`,
  );
}, 60_000);
afterAll(() => db.close());

const tools = () =>
  Object.fromEntries(
    chatTools({ store, embeddings: new HashingEmbeddings(64), minMemoryScore: 0.15 }).map((t) => [t.name, t]),
  );
const now = async (userId: string) =>
  JSON.parse(String(await tools().get_current_time!.invoke({}, { configurable: { user_id: userId } })));

describe("get_current_time, a tool over existing data (the user's context)", () => {
  it("answers in the user's saved time zone, under either key", async () => {
    const paris = await now("paris");
    expect(paris).toMatchObject({ success: true, timeZone: "Europe/Paris" });
    const weekday = new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Paris", weekday: "long" }).format(
      new Date(paris.iso),
    );
    expect(paris.summary).toContain(weekday);
    expect((await now("tokyo")).timeZone).toBe("Asia/Tokyo");
  });

  it("falls back to UTC for a user with no context or an unknown zone, and says so", async () => {
    expect(await now("nobody")).toMatchObject({
      timeZone: "UTC",
      summary: expect.stringMatching(/no time zone is saved/),
    });
    expect((await now("bogus")).timeZone).toBe("UTC");
  });

  it("is called by the offline stand-in for a question about the time, and only it", async () => {
    const model = new OfflineChatModel({}).bindTools(Object.values(tools()));
    const call = (await model.invoke([new HumanMessage("What time is it for me?")])) as AIMessage;
    expect(call.tool_calls?.map((c) => c.name)).toEqual(["get_current_time"]);
    const general = (await model.invoke([new HumanMessage("how do refunds work?")])) as AIMessage;
    expect(general.tool_calls?.map((c) => c.name)).not.toContain("get_current_time");
  });
});
