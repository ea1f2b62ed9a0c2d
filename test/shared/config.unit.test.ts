import { describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_MAX_MESSAGE_BYTES, loadConfig, required } from "../../shared/config";

describe("loadConfig", () => {
  it("gives every setting its default when nothing is set, and each default is valid", () => {
    const config = loadConfig({});
    // Every setting is read: one whose default failed its own schema would throw here.
    const all = { ...config };
    expect(Object.keys(all).length).toBeGreaterThan(70);
    expect(all).toMatchObject({
      CHECKPOINT_TABLE: "agent-checkpoints",
      MAX_MESSAGE_BYTES: DEFAULT_MAX_MESSAGE_BYTES,
      AUTH_MODE: "authorizer",
      MODELS_WITHOUT_TOOLS: [],
      PROJECT_SETTINGS: {},
      USER_QUOTAS: {},
    });
    expect(all.BEDROCK_MODEL_ID).toBeUndefined();
  });

  it("parses what is set: numbers, lists and JSON settings", () => {
    const config = loadConfig({
      SQL_TIMEOUT_MS: "2500",
      MODELS_WITHOUT_TOOLS: " a , b,,",
      USER_QUOTAS: '{"turnsPerMinute": 3}',
      BEDROCK_MODEL_ID: "m",
    });
    expect(config.SQL_TIMEOUT_MS).toBe(2500);
    expect(config.MODELS_WITHOUT_TOOLS).toEqual(["a", "b"]);
    expect(config.USER_QUOTAS).toEqual({ turnsPerMinute: 3 });
    expect(required(config, "BEDROCK_MODEL_ID")).toBe("m");
  });

  it("fails at load on every bad value that is set, naming each setting", () => {
    const load = () =>
      loadConfig({ SQL_TIMEOUT_MS: "12", AUTH_MODE: "open", USER_QUOTAS: "[", EXTRACTION_QUEUE_URL: "not a url" });
    expect(load).toThrow(ConfigError);
    const message = (() => {
      try {
        load();
      } catch (err) {
        return (err as Error).message;
      }
    })();
    expect(message).toMatch(/^Invalid configuration: /);
    for (const key of ["SQL_TIMEOUT_MS", "AUTH_MODE", "USER_QUOTAS", "EXTRACTION_QUEUE_URL"])
      expect(message).toContain(`${key}: `);
    expect(message).toContain("USER_QUOTAS: must be a JSON object");
  });

  it("names the field of a JSON setting that is wrong", () => {
    expect(() => loadConfig({ USER_QUOTAS: '{"turnsPerMinute": -1}' })).toThrow(/USER_QUOTAS: turnsPerMinute: /);
  });

  it("counts an empty value as unset", () => {
    const config = loadConfig({ SQL_TIMEOUT_MS: "", CHECKPOINT_TABLE: "" });
    expect(config.SQL_TIMEOUT_MS).toBe(5_000);
    expect(config.CHECKPOINT_TABLE).toBe("agent-checkpoints");
  });

  it("works out an unset setting when first read, and keeps it", () => {
    const config = loadConfig({ CHECKPOINT_TABLE: "t-1" });
    expect(Object.getOwnPropertyDescriptor(config, "CHECKPOINT_TABLE")?.value).toBe("t-1");
    // Not built at load: a getter until read.
    expect(Object.getOwnPropertyDescriptor(config, "PROJECT_SETTINGS")?.get).toBeTypeOf("function");
    const first = config.PROJECT_SETTINGS;
    expect(Object.getOwnPropertyDescriptor(config, "PROJECT_SETTINGS")?.get).toBeUndefined();
    expect(config.PROJECT_SETTINGS).toBe(first);
  });

  it("takes a value assigned to an unset setting before it is read", () => {
    const config = loadConfig({});
    config.SQL_MAX_ROWS = 7;
    expect(config.SQL_MAX_ROWS).toBe(7);
  });

  it("ignores variables that are not settings", () => {
    const config = loadConfig({ PATH: "/bin", HOME: "/root" });
    expect(Object.keys(config)).not.toContain("PATH");
  });

  it("lets a copy override a setting, as tests and the local stack do", () => {
    const config = { ...loadConfig({}), CHECKPOINT_TABLE: "other" };
    expect(config.CHECKPOINT_TABLE).toBe("other");
    expect(config.SQL_MAX_ROWS).toBe(200);
  });
});
