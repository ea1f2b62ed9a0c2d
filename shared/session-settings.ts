import * as z from "./zod";
import { storableText } from "./text";

/** The tool groups a session can turn on or off; a tool names its group (graph/tools). */
export const TOOL_GROUPS = ["memory", "knowledge", "user_context", "files"] as const;
export type ToolGroup = (typeof TOOL_GROUPS)[number];

/**
 * A session's settings: which tool groups it binds, and whether it is private (the "temporary
 * chat" assistants offer: it may read memories, never writes any, and nothing of it is queued
 * for extraction).
 */
export interface SessionSettings {
  memory: boolean;
  knowledge: boolean;
  user_context: boolean;
  files: boolean;
  private: boolean;
}

/** Every group on, not private: what a session gets when neither it nor its project says otherwise. */
export const DEFAULT_SETTINGS: SessionSettings = {
  memory: true,
  knowledge: true,
  user_context: true,
  files: true,
  private: false,
};

const flag = z.boolean({ error: "must be true or false" });

/**
 * Settings as a client sends them: any subset, each a boolean; an unknown key is refused rather
 * than ignored, so a typo ("memmory": false) never leaves memory on unnoticed.
 */
export const SettingsPatch = z.strictObject({
  memory: z.optional(flag),
  knowledge: z.optional(flag),
  user_context: z.optional(flag),
  files: z.optional(flag),
  private: z.optional(flag),
});
export type SettingsPatch = z.infer<typeof SettingsPatch>;

/** Project defaults as configured: `{"<project id>": {...}, "*": {...}}` ("*" for every project and none). */
export const ProjectSettings = z.record(z.string(), SettingsPatch);
export type ProjectSettings = z.infer<typeof ProjectSettings>;

/** A new session's settings: the built-in defaults, then "*", then its project's, then what it asked for. */
export function startingSettings(
  projects: ProjectSettings,
  projectId: string | null | undefined,
  asked: SettingsPatch | undefined,
): SessionSettings {
  return {
    ...DEFAULT_SETTINGS,
    ...projects["*"],
    ...(projectId ? projects[projectId] : undefined),
    ...asked,
  };
}

/**
 * Settings read back from storage: a session recorded before settings existed has none and gets
 * the defaults; a stored value is trusted only where it is a boolean.
 */
export function storedSettings(value: unknown): SessionSettings {
  const stored = (value && typeof value === "object" ? value : {}) as Record<string, unknown>;
  const out = { ...DEFAULT_SETTINGS };
  for (const key of Object.keys(out) as (keyof SessionSettings)[]) {
    if (typeof stored[key] === "boolean") out[key] = stored[key];
  }
  return out;
}

/**
 * A run's settings within what its assistant allows: a tool group the assistant turns off is off,
 * and an assistant that is private makes the run private. It never turns on what the session has off.
 */
export function withinAssistant(settings: SessionSettings, assistant: SettingsPatch | undefined): SessionSettings {
  if (!assistant) return settings;
  const out = { ...settings };
  for (const group of TOOL_GROUPS) if (assistant[group] === false) out[group] = false;
  if (assistant.private === true) out.private = true;
  return out;
}

/**
 * Tools whose calls wait for a person's approval (graph/tools/approval.ts), as a session, an
 * assistant or a run asks for it: tool names, or "*" for every tool.
 */
export const ApproveTools = z.union([
  z.literal("*"),
  // "*" among names is every tool too: read as a name, it matched no tool and nothing waited.
  z.pipe(
    z.array(storableText({ min: 1, max: 128 })).check(z.maxLength(64)),
    z.transform((names): string[] | "*" => (names.includes("*") ? "*" : names)),
  ),
]);
