import { resolve } from "node:path";
import { defineConfig } from "vite";

/**
 * The playground's build: React compiled by Vite's own JSX transform (no plugin needed for a
 * production build), everything bundled from node_modules into dist/, which the local stack serves
 * at `/` (infra/local/playground-server.ts). No CDN: the page's CSP allows only its own origin.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  logLevel: "warn",
  build: {
    outDir: resolve(import.meta.dirname, "dist"),
    emptyOutDir: true,
    assetsDir: "assets",
    // Under a second on the local stack: one modest bundle, no source maps to fetch.
    sourcemap: false,
    chunkSizeWarningLimit: 1024,
    rolldownOptions: {
      // The SDK's React entry starts with "use client" (for React Server Components): meaningless in
      // a plain client bundle, so its warning is noise.
      onwarn(warning, warn) {
        if (warning.code !== "MODULE_LEVEL_DIRECTIVE") warn(warning);
      },
    },
  },
});
