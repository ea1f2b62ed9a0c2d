export { CHECKPOINT_TABLE } from "../../shared/stores/checkpoint-table";
