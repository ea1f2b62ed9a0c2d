/**
 * The layer rules, checked by dependency-cruiser in `npm test` (npm run lint:deps):
 * functions/ and infra/ use graph/ and shared/; graph/ uses shared/; shared/ uses neither.
 * Type-only imports count too: a layer that names another's types depends on it.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "shared-is-the-bottom-layer",
      comment: "shared/ must not import graph/, functions/ or infra/",
      severity: "error",
      from: { path: "^shared/" },
      to: { path: "^(graph|functions|infra)/" },
    },
    {
      name: "graph-uses-only-shared",
      comment: "graph/ must not import functions/ or infra/",
      severity: "error",
      from: { path: "^graph/" },
      to: { path: "^(functions|infra)/" },
    },
    {
      name: "functions-do-not-use-infra",
      comment: "a handler must not depend on how it is deployed",
      severity: "error",
      from: { path: "^functions/" },
      to: { path: "^infra/" },
    },
    {
      name: "schemas-use-zod-mini",
      comment:
        "the project's schemas are zod/mini, through shared/zod.ts (which also sets English messages): classic zod costs every cold start (docs/costs-and-benchmarks.md)",
      severity: "error",
      from: { path: "^(shared|graph|functions|infra)/", pathNot: "^shared/zod\\.ts$" },
      to: { path: "node_modules/zod/" },
    },
    {
      name: "production-code-does-not-use-tests",
      severity: "error",
      from: { path: "^(shared|graph|functions|infra)/" },
      to: { path: "^test/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".js", ".json"] },
  },
};
