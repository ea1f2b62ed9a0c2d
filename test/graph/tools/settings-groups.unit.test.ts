import type { Embeddings } from "@langchain/core/embeddings";
import type { StructuredToolInterface } from "@langchain/core/tools";
import { dataFileTools, type DataFileDeps } from "../../../graph/tools/data-files";
import { enabledTools } from "../../../graph/tools/groups";
import { TOOLS } from "../../../graph/tools/registry";
import { asLangChainTool } from "../../../graph/tools/langchain-tool";
import { DEFAULT_SETTINGS, TOOL_GROUPS } from "../../../shared/session-settings";
import type { AgentStore } from "../../../shared/stores/agent-store";

// A user turns tools off by their session's settings (docs/session-settings.md): every tool the
// chat agent can bind must be one a setting switches off, or the user cannot. A tool added without
// a group (docs/adding-a-tool.md says to give it one) fails here by name.

// Binding a tool reads only its definition; nothing here runs one, so the backends are empty shells.
// Each is bound inside its own test, so a tool whose definition lacks a switch fails under its name.
const deps = { store: {} as AgentStore, embeddings: {} as Embeddings, minMemoryScore: 0 };
const bindings: [string, () => StructuredToolInterface][] = [
  ...TOOLS.map((tool) => [tool.name, () => asLangChainTool(tool, deps)] as [string, () => StructuredToolInterface]),
  ...dataFileTools({} as DataFileDeps).map(
    (tool) => [tool.name, () => tool] as [string, () => StructuredToolInterface],
  ),
];

describe("every tool the chat agent binds can be switched off by a session setting", () => {
  it("covers the registry and the data-file tools", () => {
    expect(bindings.map(([name]) => name)).toEqual(
      expect.arrayContaining([...TOOLS.map((t) => t.name), "list_files", "describe_data_file", "query_data"]),
    );
  });

  it.each(bindings)("%s is on by default and off with its group", (name, bind) => {
    const tool = bind();
    expect(enabledTools([tool], DEFAULT_SETTINGS)).toEqual([tool]);
    const offBy = TOOL_GROUPS.filter(
      (group) => enabledTools([tool], { ...DEFAULT_SETTINGS, [group]: false }).length === 0,
    );
    expect(offBy, `${name} is in no settings group: no session can turn it off`).toHaveLength(1);
  });
});
