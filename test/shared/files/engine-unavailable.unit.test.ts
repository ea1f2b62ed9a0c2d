import { vi } from "vitest";

// A bundle without DuckDB's native binding for its platform: the engine cannot load. What the
// user and the model are told must say so, not that the file is unreadable.
vi.mock("@duckdb/node-api", () => {
  throw new Error("Cannot find module '@duckdb/node-bindings-linux-arm64/duckdb.node'");
});

const { inspectFile } = await import("../../../shared/files/data-inspect");
const { SqlEngineUnavailable, SqlSandbox } = await import("../../../shared/files/sql-sandbox");

describe("without the SQL engine", () => {
  it("rejects a data file saying data files are unavailable here, not that it is unreadable", async () => {
    const csv = new TextEncoder().encode("region,amount\neast,3\n");
    const result = await inspectFile(csv, { name: "sales.csv", media_type: "text/csv" }, 1000);
    expect(result).toEqual({ ok: false, reason: expect.stringMatching(/not available in this deployment/) });
  });

  it("fails a query with the same plain reason", async () => {
    await expect(SqlSandbox.open([])).rejects.toBeInstanceOf(SqlEngineUnavailable);
  });
});
