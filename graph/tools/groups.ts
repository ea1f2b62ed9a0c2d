import type { StructuredToolInterface } from "@langchain/core/tools";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { DEFAULT_SETTINGS, type SessionSettings, storedSettings, type ToolGroup } from "../../shared/session-settings";

/** Metadata keys on a bound tool: its settings group, and whether it writes memories. */
export const TOOL_GROUP = "agent_tool_group";
export const WRITES_MEMORY = "agent_tool_writes_memory";

/** What a tool says about itself, for the session settings to turn it on or off. */
export interface ToolSwitch {
  /**
   * the settings group that turns it on. Every tool has one, so a user can switch any tool off
   * (test/graph/tools/settings-groups.unit.test.ts checks each one the agent binds).
   */
  group: ToolGroup;
  /** it stores memories: never offered in a private session */
  writesMemory?: boolean;
}

export const switchMetadata = (s: ToolSwitch) => ({
  [TOOL_GROUP]: s.group,
  ...(s.writesMemory ? { [WRITES_MEMORY]: true } : {}),
});

/** The run's session settings (graph/chat/service.ts puts them in the configuration); defaults when absent. */
export function settingsOf(config: LangGraphRunnableConfig | undefined): SessionSettings {
  const given = config?.configurable?.settings;
  return given === undefined ? DEFAULT_SETTINGS : storedSettings(given);
}

/** Why a tool is off in these settings, or undefined when it is on. */
export function whyOff(tool: StructuredToolInterface, settings: SessionSettings): string | undefined {
  const meta = ((tool as { metadata?: Record<string, unknown> }).metadata ?? {}) as Record<string, unknown>;
  const group = meta[TOOL_GROUP] as ToolGroup | undefined;
  if (group !== undefined && !settings[group]) {
    return `${tool.name} is turned off in this session (its "${group}" setting is off). Tell the user, and that they can turn "${group}" on in the session's settings.`;
  }
  if (meta[WRITES_MEMORY] === true && settings.private) {
    return `${tool.name} is not available: this is a private session, and nothing from it is remembered. Tell the user so; a normal session can remember it.`;
  }
  return undefined;
}

/** The tools these settings turn on. */
export const enabledTools = (tools: StructuredToolInterface[], settings: SessionSettings) =>
  tools.filter((tool) => whyOff(tool, settings) === undefined);
