import type { SqlClient } from "./sql";

/**
 * The migrations' functions as Postgres declares them (pg_proc), how a call by argument names
 * finds one, and the statement that runs it with PostgREST's semantics. The SQL transport runs
 * calls with it; the tests' PostgREST stand-in and the signature check use the same resolution.
 * Hand-written: PostgREST does this inside its own server, and no library does it over a client.
 */
export interface FunctionSignature {
  name: string;
  /** input arguments in declaration order, with their types as SQL spells them */
  args: { name: string; type: string }[];
  /** how many leading arguments have no default */
  required: number;
  /** `returns table`/`returns setof`: the result is the rows */
  returnsSet: boolean;
  /** `returns void`: no result (PostgREST answers 204) */
  returnsVoid: boolean;
}

/** No function of that name takes those argument names: PostgREST's PGRST202 (404). */
export class FunctionNotFound extends Error {
  readonly code = "PGRST202";
  constructor(
    readonly fn: string,
    readonly argNames: string[],
    readonly details: string,
    readonly hint: string | null,
  ) {
    super(`Could not find the function public.${fn}(${argNames.join(", ")}) in the schema cache`);
    this.name = "FunctionNotFound";
  }
}

/** More than one overload takes those argument names: PostgREST's PGRST203 (300). */
export class AmbiguousFunction extends Error {
  readonly code = "PGRST203";
  constructor(readonly fn: string) {
    super(`Could not choose the best candidate function between overloads of public.${fn}`);
    this.name = "AmbiguousFunction";
  }
}

/** Every overload of a function in the public schema (PostgREST's default exposed schema). */
export async function functionSignatures(db: SqlClient, fn: string): Promise<FunctionSignature[]> {
  const { rows } = await db.query<{
    arg_names: string[];
    arg_types: string[];
    required: number;
    returns_set: boolean;
    returns_void: boolean;
  }>(
    `select coalesce(array(
              select a.n from unnest(p.proargnames, coalesce(p.proargmodes, array_fill('i'::"char", array[p.pronargs])))
                with ordinality as a(n, m, i)
               where a.m in ('i', 'b', 'v') order by a.i), '{}') as arg_names,
            array(select format_type(t.oid, null) from unnest(p.proargtypes::oid[]) with ordinality as t(oid, i)
                   order by t.i) as arg_types,
            p.pronargs - p.pronargdefaults as required,
            p.proretset as returns_set,
            p.prorettype = 'void'::regtype as returns_void
       from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'public' and p.proname = $1 and p.prokind = 'f'`,
    [fn],
  );
  return rows.map((r) => ({
    name: fn,
    args: r.arg_types.map((type, i) => ({ name: r.arg_names[i] ?? "", type })),
    required: r.required,
    returnsSet: r.returns_set,
    returnsVoid: r.returns_void,
  }));
}

/**
 * The overload a call with these argument names reaches, as PostgREST chooses it: every name is
 * one of its arguments and every argument without a default is named.
 */
export function resolveCall(fn: string, candidates: FunctionSignature[], argNames: string[]): FunctionSignature {
  const fits = candidates.filter((s) => {
    const names = s.args.map((a) => a.name);
    return argNames.every((n) => names.includes(n)) && names.slice(0, s.required).every((n) => argNames.includes(n));
  });
  if (fits.length === 1) return fits[0]!;
  if (fits.length > 1) throw new AmbiguousFunction(fn);
  const declared = candidates.map((s) => `public.${fn}(${s.args.map((a) => a.name).join(", ")})`);
  throw new FunctionNotFound(
    fn,
    [...argNames].sort(),
    `Searched for the function public.${fn} with parameters ${[...argNames].sort().join(", ") || "(none)"}, but no matches were found`,
    declared.length ? `Perhaps you meant to call ${declared.join(" or ")}` : null,
  );
}

/**
 * Resolves calls against the functions' signatures, read from pg_proc once per function, as
 * PostgREST reads them into its schema cache: build it after the migrations are applied.
 */
export function schemaCache(db: SqlClient) {
  const signatures = new Map<string, Promise<FunctionSignature[]>>();
  return {
    async resolve(fn: string, argNames: string[]): Promise<FunctionSignature> {
      let found = signatures.get(fn);
      if (!found) {
        found = functionSignatures(db, fn);
        signatures.set(fn, found);
        // A failed lookup (the database was unreachable) is asked again next time.
        found.catch(() => signatures.delete(fn));
      }
      return resolveCall(fn, await found, argNames);
    },
  };
}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * The statement that calls `sig` with the named arguments in $1, a JSON object, and answers with
 * one row whose `result` is the JSON PostgREST would send. The arguments are read from the JSON
 * with json_to_record, typed as the function declares them, as PostgREST reads a request body:
 * so a value converts (or fails to) exactly as it would there.
 */
export function callStatement(sig: FunctionSignature, argNames: string[]): string {
  const args = sig.args.filter((a) => argNames.includes(a.name));
  const call = `public.${ident(sig.name)}(${args.map((a) => `${ident(a.name)} => _args.${ident(a.name)}`).join(", ")})`;
  const source = args.length
    ? `json_to_record($1::json) as _args(${args.map((a) => `${ident(a.name)} ${a.type}`).join(", ")})`
    : "(select $1::json) as _args";
  return sig.returnsSet
    ? `select coalesce(json_agg(_row), '[]'::json) as result from ${source} cross join lateral ${call} as _row`
    : `select to_json(${call}) as result from ${source}`;
}
