/**
 * The unit tier's promise, kept by the tier itself: a `*.unit.test.ts` file that starts PGlite
 * (and so the local stack) or makes a CDK app fails here with the tier to move to, instead of
 * slowly growing the inner loop. PGlite is swapped for this module by the unit project's alias
 * (vitest.config.ts); CDK's App calls the init hook below as it is made.
 */
const refuse = (what: string, tier: string) => {
  throw new Error(`a unit test may not start ${what}: name the file *.${tier}.test.ts (see vitest.config.ts)`);
};

export class PGlite {
  static create(): never {
    return refuse("PGlite", "integration");
  }
  constructor() {
    refuse("PGlite", "integration");
  }
}

(globalThis as Record<symbol, unknown>)[Symbol.for("@aws-cdk/core.App#initHook")] = () => refuse("a CDK app", "infra");
