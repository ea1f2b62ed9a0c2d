import { IntercomClient } from "../../shared/intercom/client";
import { secretSource, SECRET_MAX_AGE_SECONDS } from "../../shared/secrets";
import { supabaseRest } from "../../shared/stores/postgrest";
import { recordingServer } from "../support/recording-server";

/** A secret that an operator replaces while the container stays warm. */
function rotatingSecret(first: string) {
  let value = first;
  return { read: async () => value, rotate: (next: string) => (value = next) };
}

describe("rotated secrets reach warm containers", () => {
  it("caches a secret for minutes, not an hour", () => {
    expect(SECRET_MAX_AGE_SECONDS).toBeLessThanOrEqual(300);
  });

  it("sends Supabase the key current at each request", async () => {
    const server = await recordingServer(() => ({ status: 200, body: [] }));
    try {
      const secret = rotatingSecret("key-1");
      const rest = supabaseRest(server.url, secret.read);
      await rest.from("agent_memories").select("id");
      secret.rotate("key-2");
      await rest.from("agent_memories").select("id");
      expect(server.requests.map((r) => [r.headers.apikey, r.headers.authorization])).toEqual([
        ["key-1", "Bearer key-1"],
        ["key-2", "Bearer key-2"],
      ]);
    } finally {
      await server.close();
    }
  });

  it("sends Intercom the token current at each request", async () => {
    const server = await recordingServer(() => ({ status: 200, body: { type: "admin", id: "1" } }));
    try {
      const secret = rotatingSecret("t-1");
      const intercom = new IntercomClient({ baseUrl: server.url, token: secret.read });
      await intercom.getConversation("1").catch(() => {});
      secret.rotate("t-2");
      await intercom.getConversation("1").catch(() => {});
      expect(server.requests.map((r) => r.headers.authorization)).toEqual(["Bearer t-1", "Bearer t-2"]);
    } finally {
      await server.close();
    }
  });

  it("refuses a secret with neither a value nor an ARN, naming it", () => {
    expect(() => secretSource("INTERCOM_ACCESS_TOKEN", undefined, undefined)).toThrow(/INTERCOM_ACCESS_TOKEN/);
  });
});
