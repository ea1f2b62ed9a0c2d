import type { Rpc, Signatures } from "../../shared/stores/rpc";
import type { SqlClient } from "../../shared/stores/sql";
import { schemaCache } from "../../shared/stores/sql-functions";

/**
 * What is wrong with a store's table of calls against the functions the migrations declare in
 * `db` (pg_proc, exact): one line per call no function takes (an unknown function, a misnamed
 * or missing argument, an argument the function does not have). Empty when every call fits.
 */
export async function signatureProblems(db: SqlClient, calls: Signatures): Promise<string[]> {
  const schema = schemaCache(db);
  const problems: string[] = [];
  for (const [fn, args] of Object.entries(calls)) {
    try {
      await schema.resolve(fn, [...args]);
    } catch (err) {
      const { message, hint } = err as { message: string; hint?: string | null };
      problems.push(`${fn}(${args.join(", ")}): ${message}${hint ? `. ${hint}` : ""}`);
    }
  }
  return problems;
}

/**
 * `rpc`, refusing any call whose function and argument names are not exactly an entry of `calls`:
 * a store run through it proves its table (which the signature test checks) is what it sends.
 */
export function heldToTable(rpc: Rpc, calls: Signatures): Rpc {
  const held = (fn: string, args: Record<string, unknown>) => {
    const sent = Object.keys(args).sort();
    const declared = calls[fn] ? [...calls[fn]].sort() : undefined;
    if (!declared || sent.join() !== declared.join())
      throw new Error(`${fn}(${sent.join(", ")}) is not in the store's table of calls`);
  };
  return {
    async call(fn, args) {
      held(fn, args);
      return rpc.call(fn, args);
    },
    async allRows(fn, args, orderBy) {
      held(fn, args);
      return rpc.allRows(fn, args, orderBy);
    },
  };
}
