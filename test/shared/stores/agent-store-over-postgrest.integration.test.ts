import { postgrestOver } from "../../support/postgrest-stand-in";
import { agentStoreContractOver } from "./agent-store-contract";

// The store over the production transport: the calls Lambda makes, through the real postgrest-js
// client, answered by the PostgREST stand-in on PGlite with the migrations.
agentStoreContractOver("agent store over PostgREST (stand-in on PGlite)", postgrestOver);
