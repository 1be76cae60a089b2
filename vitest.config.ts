import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (pkg: string) => fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url));

export default defineConfig({
	resolve: {
		// Tests import sibling packages from source so a test run never sees a stale build.
		alias: {
			"prime-agent-kernel": src("kernel"),
			"prime-agent-context": src("context"),
			// Before "prime-agent", whose alias would take it as a folder of that file.
			"prime-agent/view": fileURLToPath(new URL("./packages/agent/src/view/index.ts", import.meta.url)),
			"prime-agent": src("agent"),
		},
	},
	test: {
		globalSetup: ["./vitest.global-setup.ts"],
		include: [
			"packages/*/src/**/*.test.ts",
			"packages/*/test/**/*.test.ts",
			"bench/src/**/*.test.ts",
			"bench/test/**/*.test.ts",
		],
		testTimeout: 30_000,
		hookTimeout: 60_000,
		// Two cores: real kernels and processes in tests; keep parallelism modest.
		maxWorkers: 2,
	},
});
