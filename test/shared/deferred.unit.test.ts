import { beforeEach, describe, expect, it } from "vitest";
import { deferredRegistry, loadedOnFirstCall } from "../../shared/deferred";

// A registry of each test's own: the files before this one in the worker (isolate: false)
// registered their handlers' loads in the process's.
let deferred: ReturnType<typeof deferredRegistry>;
beforeEach(() => {
  deferred = deferredRegistry();
});

describe("deferred modules", () => {
  it("loadDeferred loads what the deferred modules register as they load, each once", async () => {
    const { deferredModule, deferredRuntime, loadDeferred } = deferred;
    const loaded: string[] = [];
    const inner = () => deferredModule(async () => loaded.push("inner"));
    const build = deferredRuntime(
      async () => {
        loaded.push("outer");
        // A module that registers another as it is evaluated (as bedrock-client.ts registers @langchain/aws).
        return { innerLoad: inner() };
      },
      async ({ innerLoad }) => innerLoad(),
    );
    await loadDeferred();
    expect(loaded).toEqual(["outer", "inner"]);
    // The first request reuses both: nothing is loaded again.
    await build();
    await loadDeferred();
    expect(loaded).toEqual(["outer", "inner"]);
  });

  it("a module's load that failed is tried again by the next caller", async () => {
    const { deferredModule, loadDeferred } = deferred;
    let attempts = 0;
    const load = deferredModule(async () => {
      attempts += 1;
      if (attempts === 1) throw new Error("not yet");
      return attempts;
    });
    await expect(loadDeferred()).rejects.toThrow("not yet");
    await loadDeferred();
    expect(await load()).toBe(2);
  });

  it("loadedOnFirstCall loads the implementation with the first call, once, and calls it as itself", async () => {
    let loads = 0;
    class Bucket {
      readonly name = "attachments";
      async read(key: string) {
        return `${this.name}/${key}`;
      }
      async remove(keys: string[]) {
        return keys.length;
      }
    }
    const bucket = loadedOnFirstCall<Pick<Bucket, "read" | "remove">>(
      async () => {
        loads += 1;
        return new Bucket();
      },
      { read: true, remove: true },
    );
    expect(loads).toBe(0);
    expect(await Promise.all([bucket.read("a"), bucket.remove(["a", "b"])])).toEqual(["attachments/a", 2]);
    expect(await bucket.read("b")).toBe("attachments/b");
    expect(loads).toBe(1);
  });

  it("loadedOnFirstCall tries a failed load again on the next call, and passes its error on", async () => {
    let loads = 0;
    const engine = loadedOnFirstCall<{ query: (sql: string) => Promise<string> }>(
      async () => {
        loads += 1;
        if (loads === 1) throw new Error("module missing");
        return { query: async (sql) => `ran ${sql}` };
      },
      { query: true },
    );
    await expect(engine.query("select 1")).rejects.toThrow("module missing");
    expect(await engine.query("select 1")).toBe("ran select 1");
  });
});
