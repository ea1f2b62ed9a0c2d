import { AIMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { MemoryExtractor } from "../../../graph/memory/extractor";
import { buildExtractionRuntime } from "../../../graph/memory/runtime";
import { startLocalDynamo, type LocalDynamo } from "../../../infra/local/dynamo";
import { loadConfig } from "../../../shared/config";
import { OfflineChatModel } from "../../../shared/models/offline-chat-model";
import { extractionHarness } from "../../support/extraction";

// Memory extraction's tokens count toward the user's tokensPerDay (a review's findings): an
// answer that does not parse was spent all the same, and a count that cannot be written is
// bookkeeping, not the memory's failure (which would call the model again on the retry).

let h: Awaited<ReturnType<typeof extractionHarness>>;
let dynamo: LocalDynamo;
beforeAll(async () => {
  [h, dynamo] = await Promise.all([extractionHarness(), startLocalDynamo()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([h.db.close(), dynamo.close()]);
});

const turn = (message: string) => ({
  user_id: "tia",
  project_id: null,
  session_id: crypto.randomUUID(),
  turn_id: crypto.randomUUID(),
  user_message: message,
  assistant_reply: "Noted.",
  turn_at: new Date().toISOString(),
});

/** A model whose structured answer cannot be parsed, its usage reported as Bedrock reports it. */
class GarbledModel extends OfflineChatModel {
  override withStructuredOutput(): any {
    return RunnableLambda.from(async () => ({
      raw: new AIMessage({
        content: "",
        usage_metadata: { input_tokens: 300, output_tokens: 20, total_tokens: 320 },
      }),
      parsed: null,
    }));
  }
}

describe("memory extraction's tokens", () => {
  it("are counted when the model's answer does not parse, before the extraction fails", async () => {
    const counted: number[] = [];
    const extractor = new MemoryExtractor({
      model: new GarbledModel(),
      store: h.store,
      embeddings: h.embeddings,
      duplicateThreshold: loadConfig({}).MEMORY_DUPLICATE_THRESHOLD,
      countTokens: async (_turn, tokens) => void counted.push(tokens),
    });
    await expect(extractor.process(turn("I like tea"))).rejects.toThrow();
    expect(counted).toEqual([320]);
  });

  it("do not fail the extraction when they cannot be written", async () => {
    const { extractor } = await buildExtractionRuntime({
      // A table that is not there: every count fails.
      config: loadConfig({ USER_QUOTAS: '{"tokensPerDay":100000}', CHECKPOINT_TABLE: "no-such-table" }),
      dynamo: dynamo.client,
      store: h.store,
    });
    await expect(extractor.process(turn("Remember that I prefer aisle seats"))).resolves.toMatchObject({ added: 1 });
  });
});
