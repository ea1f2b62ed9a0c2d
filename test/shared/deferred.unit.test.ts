import { beforeEach, describe, expect, it } from "vitest";
import { deferredRegistry } from "../../shared/deferred";

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
});
