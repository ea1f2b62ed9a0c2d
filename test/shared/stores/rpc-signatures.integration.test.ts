import type { PGlite } from "@electric-sql/pglite";
import { startLocalPostgres } from "../../../infra/local/postgres";
import { AGENT_STORE_CALLS } from "../../../shared/stores/rpc-agent-store";
import { CONVERSATION_STORE_CALLS } from "../../../shared/stores/rpc-conversations";
import { USER_DATA_CALLS } from "../../../shared/stores/user-data";
import { heldToTable, signatureProblems } from "../../support/rpc-signatures";

// Every call the stores make names a function of the migrations and its arguments exactly, as
// pg_proc declares them after the migrations run. The store contracts run each store through
// heldToTable, so what a store sends is what its table says.
let db: PGlite;
beforeAll(async () => {
  db = await startLocalPostgres();
}, 60_000);
afterAll(() => db.close());

describe("the stores' calls against the migrations' functions", () => {
  it("match a function and its argument names, for every call of every store", async () => {
    expect(await signatureProblems(db, AGENT_STORE_CALLS)).toEqual([]);
    expect(await signatureProblems(db, CONVERSATION_STORE_CALLS)).toEqual([]);
    expect(await signatureProblems(db, USER_DATA_CALLS)).toEqual([]);
  });

  it("reports a misnamed argument, naming the function as declared", async () => {
    expect(await signatureProblems(db, { ...AGENT_STORE_CALLS, delete_memory: ["p_user", "p_id"] })).toEqual([
      "delete_memory(p_user, p_id): Could not find the function public.delete_memory(p_id, p_user) in the schema cache. Perhaps you meant to call public.delete_memory(p_user_id, p_id)",
    ]);
  });

  it("reports a missing argument, an argument the function lacks, and an unknown function", async () => {
    const problems = await signatureProblems(db, {
      record_turn: ["p_session_id", "p_user_id"],
      get_user_context: ["p_user_id", "p_project_id"],
      get_user_contexts: ["p_user_id"],
    });
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(/^record_turn\(p_session_id, p_user_id\): Could not find/);
    expect(problems[1]).toMatch(/^get_user_context\(p_user_id, p_project_id\): Could not find/);
    expect(problems[2]).toBe(
      "get_user_contexts(p_user_id): Could not find the function public.get_user_contexts(p_user_id) in the schema cache",
    );
  });

  it("lets a call leave out an argument that has a default", async () => {
    expect(await signatureProblems(db, { list_memories: ["p_user_id", "p_limit"], ping: [] })).toEqual([]);
  });
});

describe("a store held to its table", () => {
  const echo = { call: async (fn: string) => fn, allRows: async (fn: string) => [fn] };
  const held = heldToTable(echo, { delete_memory: ["p_user_id", "p_id"] });

  it("passes a call that sends exactly the table's names", async () => {
    expect(await held.call("delete_memory", { p_id: "1", p_user_id: "u" })).toBe("delete_memory");
  });

  it("refuses a call with another name, one name fewer or more, or a function not in the table", async () => {
    await expect(held.call("delete_memory", { p_user: "u", p_id: "1" })).rejects.toThrow(/not in the store's table/);
    await expect(held.call("delete_memory", { p_id: "1" })).rejects.toThrow(/not in the store's table/);
    await expect(held.call("delete_memory", { p_id: "1", p_user_id: "u", x: 1 })).rejects.toThrow(
      /not in the store's table/,
    );
    await expect(held.call("ping", {})).rejects.toThrow(/not in the store's table/);
  });
});
