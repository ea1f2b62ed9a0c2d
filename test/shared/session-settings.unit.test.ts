import { loadConfig } from "../../shared/config";
import { DEFAULT_SETTINGS, startingSettings, storedSettings } from "../../shared/session-settings";

describe("session settings", () => {
  it("start from the defaults, then every project's, then the session's project's, then the request's", () => {
    const projects = loadConfig({
      PROJECT_SETTINGS: JSON.stringify({ "*": { files: false }, acme: { memory: false, files: true } }),
    }).PROJECT_SETTINGS;
    expect(startingSettings(projects, null, undefined)).toEqual({ ...DEFAULT_SETTINGS, files: false });
    expect(startingSettings(projects, "acme", undefined)).toEqual({ ...DEFAULT_SETTINGS, memory: false });
    expect(startingSettings(projects, "acme", { memory: true, private: true })).toEqual({
      ...DEFAULT_SETTINGS,
      private: true,
    });
  });

  it("refuse a PROJECT_SETTINGS that is not JSON, or names an unknown setting, at startup", () => {
    expect(() => loadConfig({ PROJECT_SETTINGS: "{memory:false}" })).toThrow(/PROJECT_SETTINGS: must be a JSON object/);
    expect(() => loadConfig({ PROJECT_SETTINGS: '{"acme":{"memmory":false}}' })).toThrow(/PROJECT_SETTINGS/);
    expect(() => loadConfig({ PROJECT_SETTINGS: '{"acme":{"memory":"no"}}' })).toThrow(/acme.memory/);
  });

  it("read back only booleans from storage: a session recorded before settings gets the defaults", () => {
    expect(storedSettings(undefined)).toEqual(DEFAULT_SETTINGS);
    expect(storedSettings({ memory: false, private: "yes", extra: true })).toEqual({
      ...DEFAULT_SETTINGS,
      memory: false,
    });
    expect(storedSettings("garbage")).toEqual(DEFAULT_SETTINGS);
  });

  it("list the models declared without tool support", () => {
    expect(loadConfig({ MODELS_WITHOUT_TOOLS: " a.model-v1 , b.model " }).MODELS_WITHOUT_TOOLS).toEqual([
      "a.model-v1",
      "b.model",
    ]);
  });
});
