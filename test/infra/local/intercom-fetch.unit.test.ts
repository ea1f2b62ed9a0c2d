import { localIntercomFetch } from "../../../infra/local/intercom";
import { recordingServer } from "../../support/recording-server";

// A probe's finding: the local stack always sent the support worker's Intercom calls to its
// stand-in, whatever INTERCOM_API_URL said, so a fake Intercom that fails on cue could not be used.
describe("the local stack's way to Intercom", () => {
  it("goes to the stand-in in place of Intercom's own API, and to any other INTERCOM_API_URL as it is", async () => {
    const standIn = await recordingServer(() => ({ status: 200, body: { from: "stand-in" } }));
    const other = await recordingServer(() => ({ status: 200, body: { from: "other" } }));
    try {
      const viaDefault = localIntercomFetch("https://api.intercom.io", () => `${standIn.url}/_local/intercom/api`);
      expect(await (await viaDefault("https://api.intercom.io/conversations/1")).json()).toEqual({ from: "stand-in" });
      expect(standIn.requests[0]!.path).toBe("/_local/intercom/api/conversations/1");
      const viaOther = localIntercomFetch(`${other.url}/`, () => `${standIn.url}/_local/intercom/api`);
      expect(await (await viaOther(`${other.url}/conversations/2`)).json()).toEqual({ from: "other" });
      expect(other.requests[0]!.path).toBe("/conversations/2");
    } finally {
      await Promise.all([standIn.close(), other.close()]);
    }
  });
});
