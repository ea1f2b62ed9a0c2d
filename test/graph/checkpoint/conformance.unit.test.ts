import {
  deltaChannelHistoryTests,
  validate,
  type CheckpointSaverTestInitializer,
} from "@langchain/langgraph-checkpoint-validation";
import type { DynamoDBSaver } from "../../../graph/checkpoint";
import { checkpointHarness } from "../../support/dynamo";

// LangGraph's own checkpointer conformance suite (718 tests), run against dynalite.
let harness: Awaited<ReturnType<typeof checkpointHarness>>;
const tables = new WeakMap<DynamoDBSaver, string>();

const initializer: CheckpointSaverTestInitializer<DynamoDBSaver> = {
  checkpointerName: "DynamoDBSaver",
  async beforeAll() {
    harness = await checkpointHarness();
  },
  beforeAllTimeout: 30_000,
  async afterAll() {
    await harness.close();
  },
  async createCheckpointer() {
    const { saver, tableName } = await harness.newSaver();
    tables.set(saver, tableName);
    return saver;
  },
  async destroyCheckpointer(saver) {
    await harness.dropTable(tables.get(saver)!);
  },
};

validate(initializer);
// Opt-in in the package (the API is beta): DeltaChannel reconstruction over this storage.
deltaChannelHistoryTests(initializer);
