import { App } from "aws-cdk-lib";
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { startLocalPostgres } from "../../infra/local/postgres";

const TEST_DIR = join(import.meta.dirname, "..");

// The unit tier keeps itself fast: what belongs to a slower tier fails here, naming that tier.
describe("the unit tier", () => {
  it("refuses to start PGlite, naming the integration tier", async () => {
    await expect(startLocalPostgres()).rejects.toThrow(/\*\.integration\.test\.ts/);
  });

  it("refuses to make a CDK app, naming the infra tier", () => {
    expect(() => new App()).toThrow(/\*\.infra\.test\.ts/);
  });
});

describe("test files", () => {
  it("each name a tier, so none is silently left out of npm test", () => {
    const files = readdirSync(TEST_DIR, { recursive: true, encoding: "utf8" })
      .filter((f) => /\.(test|spec)\.tsx?$/.test(f))
      .map((f) => relative(TEST_DIR, join(TEST_DIR, f)));
    const untiered = files.filter((f) => !/\.(unit|integration|e2e|infra|browser)\.test\.ts$/.test(f));
    expect(files.length).toBeGreaterThan(80);
    expect(untiered).toEqual([]);
  });
});
