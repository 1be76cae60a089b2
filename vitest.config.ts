import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (pkg: string) => fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url));

export default defineConfig({
	resolve: {
		// Tests import sibling packages from source so a test run never sees a stale build.
		alias: {
			"prime-agent-kernel": src("kernel"),
			"prime-agent-context": src("context"),
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
		// Bounds, not waits: tests await events. Generous, because real kernels and processes on a
		// loaded two-core machine (CI, or several runs side by side) take many times their quiet time.
		testTimeout: 120_000,
		hookTimeout: 120_000,
		// Two cores: real kernels and processes in tests; keep parallelism modest.
		maxWorkers: 2,
	},
});
