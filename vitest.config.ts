import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

/** A package's source file: what `import "name"` (or a subpath of it) means in a test. */
const src = (pkg: string, file = "index.ts") =>
	fileURLToPath(new URL(`./packages/${pkg}/src/${file}`, import.meta.url));

/**
 * The kernel's behaviour contract, run against a kernel on a Jupyter Server: every kernel test
 * file that is not about local processes (its tests about pids, process groups, the guard or local
 * paths skip themselves there, saying why), and the tests only a server has.
 */
const KERNEL_CONFORMANCE = [
	"packages/kernel/test/caps.test.ts",
	"packages/kernel/test/host-requests.test.ts",
	"packages/kernel/test/interrupt.test.ts",
	"packages/kernel/test/kernel-cuts.test.ts",
	"packages/kernel/test/kernel-execute.test.ts",
	"packages/kernel/test/kernel-lifecycle.test.ts",
	"packages/kernel/test/output-files.test.ts",
	"packages/kernel/test/on-jupyter-server.test.ts",
];
/** Tests that need a kernel on a Jupyter Server: in that project only. */
const SERVER_ONLY = ["packages/kernel/test/on-jupyter-server.test.ts"];

export default defineConfig({
	resolve: {
		// Tests import sibling packages from source so a test run never sees a stale build.
		// A package's subpaths come before its name, whose alias would take them as folders of that file
		// (each one as the package's `exports` maps it).
		alias: {
			"prime-agent-kernel/testing": src("kernel", "testing/jupyter-server.ts"),
			"prime-agent-kernel": src("kernel"),
			"prime-agent-context": src("context"),
			"prime-agent/extensions": src("agent", "extensions/api.ts"),
			"prime-agent/view": src("agent", "view/index.ts"),
			"prime-agent/daemon": src("agent", "daemon/index.ts"),
			"prime-agent": src("agent"),
		},
	},
	test: {
		globalSetup: ["./vitest.global-setup.ts"],
		// Bounds, not waits: tests await events. Generous, because real kernels and processes on a
		// loaded two-core machine (CI, or several runs side by side) take many times their quiet time.
		testTimeout: 120_000,
		hookTimeout: 120_000,
		// Two cores: real kernels and processes in tests; keep parallelism modest.
		maxWorkers: 2,
		projects: [
			{
				extends: true,
				test: {
					name: "default",
					include: [
						"packages/*/src/**/*.test.ts",
						"packages/*/test/**/*.test.ts",
						"bench/src/**/*.test.ts",
						"bench/test/**/*.test.ts",
					],
					exclude: ["**/node_modules/**", ...SERVER_ONLY],
				},
			},
			{
				extends: true,
				test: {
					name: "kernel-on-jupyter-server",
					// Its own include (the root has none: a project's include is added to the root's).
					include: KERNEL_CONFORMANCE,
					// One loopback Jupyter Server for the whole project (see packages/kernel/test/kernels.ts).
					globalSetup: ["./packages/kernel/test/jupyter-server-setup.ts"],
					env: { PRIME_KERNEL_TEST_PROVIDER: "jupyter-server" },
				},
			},
		],
	},
});
