export { DynamoDBSaver, type DynamoDBSaverOptions } from "./saver";
export { createCheckpointTable } from "./table";
export { CHECKPOINT_TABLE } from "./schema";
