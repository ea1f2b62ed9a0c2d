import * as z from "../../shared/zod";
import { FUNCTIONS } from "../../infra/manifest";
import type { RouteSchemas } from "../../shared/request-schemas";
import { checksStorableJson, Metadata } from "../../shared/storable-json";
import { checksStorableText, identifier, storableText } from "../../shared/text";

// Storable text by construction: every route of the manifest declares its request schemas (each
// API function exports `requestSchemas`), and every string in them that a client chooses is
// storable text (shared/text.ts's storableText or identifier()), a format that is ASCII by
// definition (a UUID, base64), an enum or a literal. Free JSON (metadata, a filter) must be
// storableJson (shared/storable-json.ts). A new route, or a new field, that skips them fails here.

/** String formats whose every value is ASCII without NUL: storable whatever the client sends. */
const ASCII_FORMATS = new Set([
  "uuid",
  "guid",
  "base64",
  "base64url",
  "email",
  "datetime",
  "date",
  "time",
  "cuid",
  "ulid",
]);

type Def = {
  type: string;
  format?: string;
  shape?: Record<string, z.ZodMiniType>;
  catchall?: z.ZodMiniType;
  element?: z.ZodMiniType;
  keyType?: z.ZodMiniType;
  valueType?: z.ZodMiniType;
  options?: z.ZodMiniType[];
  innerType?: z.ZodMiniType;
  in?: z.ZodMiniType;
  left?: z.ZodMiniType;
  right?: z.ZodMiniType;
  items?: z.ZodMiniType[];
  getter?: () => z.ZodMiniType;
};
const defOf = (schema: z.ZodMiniType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Where a schema lets a string (or free JSON) through unchecked: their paths. */
function unchecked(schema: z.ZodMiniType, path: string): string[] {
  if (checksStorableJson(schema)) return [];
  const def = defOf(schema);
  switch (def.type) {
    case "string":
      return checksStorableText(schema) || ASCII_FORMATS.has(def.format ?? "") ? [] : [path];
    case "unknown":
    case "any":
    case "custom":
      return [`${path} (free JSON: use storableJson)`];
    case "object": {
      const fields = Object.entries(def.shape ?? {}).flatMap(([k, v]) => unchecked(v, `${path}.${k}`));
      // .loose() lets unknown keys through untouched: a handler reads only the declared ones.
      const rest = def.catchall && !["unknown", "never"].includes(defOf(def.catchall).type);
      return rest ? [...fields, ...unchecked(def.catchall!, `${path}.*`)] : fields;
    }
    case "array":
      return unchecked(def.element!, `${path}[]`);
    case "tuple":
      return (def.items ?? []).flatMap((item, i) => unchecked(item, `${path}[${i}]`));
    case "record":
      return [...unchecked(def.keyType!, `${path}{key}`), ...unchecked(def.valueType!, `${path}{}`)];
    case "union":
      return (def.options ?? []).flatMap((o, i) => unchecked(o, `${path}|${i}`));
    case "intersection":
      return [...unchecked(def.left!, path), ...unchecked(def.right!, path)];
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "readonly":
    case "catch":
    case "nonoptional":
      return unchecked(def.innerType!, path);
    case "pipe":
      return unchecked(def.in!, path);
    case "lazy":
      return unchecked(def.getter!(), path);
    default:
      // number, boolean, enum, literal, null, undefined, never, date, bigint: no text
      return [];
  }
}

const routeSchemas = async (): Promise<[string, RouteSchemas][]> =>
  Promise.all(
    FUNCTIONS.filter((f) => f.routes?.length).map(async (f) => {
      const module = (await import(`../../functions/${f.name}.ts`)) as {
        requestSchemas?: RouteSchemas;
      };
      return [f.name, module.requestSchemas ?? {}] as [string, RouteSchemas];
    }),
  );

describe("every route's request schema keeps its strings storable", () => {
  it("tells the walk's cases apart", () => {
    expect(unchecked(z.object({ a: z.string() }), "body")).toEqual(["body.a"]);
    expect(unchecked(z.object({ a: z.optional(storableText({ max: 3 })) }), "body")).toEqual([]);
    expect(
      unchecked(
        z.object({
          a: z.nullish(storableText({ max: 3 }).check(z.refine(() => true))),
        }),
        "body",
      ),
    ).toEqual([]);
    expect(unchecked(z.object({ a: z.array(identifier()) }), "body")).toEqual([]);
    expect(unchecked(z.record(z.string(), z.number()), "q")).toEqual(["q{key}"]);
    expect(unchecked(z.object({ m: z.record(z.string(), z.unknown()) }), "body")).toEqual([
      "body.m{key}",
      "body.m{} (free JSON: use storableJson)",
    ]);
    expect(unchecked(z.looseObject({ m: z.optional(Metadata), id: z.uuid() }), "body")).toEqual([]);
    expect(unchecked(z.union([z.string(), z.array(z.object({ t: z.string() }))]), "c")).toEqual(["c|0", "c|1[].t"]);
    // A bound added after storableText keeps its check (zod copies checks to the new schema).
    expect(unchecked(storableText({ max: 9 }).check(z.maxLength(3)), "x")).toEqual([]);
    expect(unchecked(z.string().check(z.maxLength(3)), "x")).toEqual(["x"]);
    // A schema built on first use (z.lazy) is walked as what it builds.
    expect(
      unchecked(
        z.lazy(() => z.object({ a: z.string() })),
        "body",
      ),
    ).toEqual(["body.a"]);
  });

  it("walks every route of the manifest: each declares its schemas, none lets unchecked text through", async () => {
    const problems: string[] = [];
    for (const [name, schemas] of await routeSchemas()) {
      const fn = FUNCTIONS.find((f) => f.name === name)!;
      for (const route of fn.routes!) {
        const key = `${route.method} ${route.path}`;
        const declared = schemas[key];
        if (!declared) {
          problems.push(`${key}: functions/${name}.ts declares no requestSchemas entry`);
          continue;
        }
        for (const part of ["path", "query", "body"] as const) {
          const schema = declared[part];
          if (schema) problems.push(...unchecked(schema, part).map((p) => `${key} ${p}`));
        }
        // Every path parameter the route names is parsed by its path schema.
        const params = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
        const shape = declared.path ? (defOf(declared.path).shape ?? {}) : {};
        for (const p of params) if (!(p in shape)) problems.push(`${key}: path parameter ${p} has no schema`);
      }
      const known = new Set(fn.routes!.map((r) => `${r.method} ${r.path}`));
      for (const key of Object.keys(schemas))
        if (!known.has(key)) problems.push(`${key}: declared by functions/${name}.ts but not in the manifest`);
    }
    expect(problems).toEqual([]);
  });
});
