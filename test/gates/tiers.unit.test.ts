import { App } from "aws-cdk-lib";
import { startLocalPostgres } from "../../infra/local/postgres";

// The unit tier keeps itself fast: what belongs to a slower tier fails here, naming that tier.
describe("the unit tier", () => {
  it("refuses to start PGlite, naming the integration tier", async () => {
    await expect(startLocalPostgres()).rejects.toThrow(/\*\.integration\.test\.ts/);
  });

  it("refuses to make a CDK app, naming the infra tier", () => {
    expect(() => new App()).toThrow(/\*\.infra\.test\.ts/);
  });
});
