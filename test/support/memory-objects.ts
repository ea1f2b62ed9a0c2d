import type { FileObjects } from "../../shared/files/objects";

/** A bucket in memory: what the file service writes and deletes is all a test looks at. */
export function memoryObjects(): FileObjects & { stored: Map<string, Uint8Array> } {
  const stored = new Map<string, Uint8Array>();
  return {
    stored,
    uploadUrl: async (key) => ({ url: `memory://${key}`, headers: {} }),
    downloadUrl: async (key) => `memory://${key}`,
    read: async (key) => stored.get(key),
    write: async (key, body) => void stored.set(key, body),
    deleteUnder: async (prefix) => {
      for (const k of [...stored.keys()]) if (k.startsWith(prefix)) stored.delete(k);
    },
    delete: async (keys) => {
      for (const k of keys) stored.delete(k);
    },
  };
}
