import { chmodSync, chownSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type DaemonWorld, makeDaemonWorld } from "prime-agent-test-support/daemon-world";
import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import { type LoopbackServer, openAiCompletionsServer } from "prime-agent-test-support/loopback-servers";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/index.js";
import { ExitCode } from "../src/errors.js";
import { memoryIo } from "./cli-io.js";

let world: TempWorld | undefined;
let server: LoopbackServer | undefined;
let daemonWorld: DaemonWorld | undefined;
afterEach(async () => {
	await server?.close();
	world?.cleanup();
	await daemonWorld?.teardown();
	server = undefined;
	world = undefined;
	daemonWorld = undefined;
});

async function localWorld(): Promise<{ world: TempWorld; server: LoopbackServer }> {
	server = await openAiCompletionsServer([{ text: "first" }, { text: "second" }]);
	world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests() });
	world.writeHome("models.json", { providers: { local: { baseUrl: server.baseUrl, models: [{ id: "m" }] } } });
	return { world, server };
}

const modeOf = (path: string) => statSync(path).mode & 0o7777;
const isRoot = process.getuid?.() === 0;
/** uid 65534 is `nobody` on Linux. */
const NOBODY = 65534;

describe("an agent home other users can write or own", () => {
	it("a world-writable home loses group and other write, a world-open sessions folder goes back to 0700, with one warning each; the run goes on", async () => {
		const { world, server } = await localWorld();
		const sessions = join(world.home, "sessions");
		mkdirSync(sessions);
		chmodSync(world.home, 0o777);
		chmodSync(sessions, 0o777);
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "hi", "--model", "local/m"], io)).toBe(ExitCode.ok);
		expect(io.err()).toBe(
			`Warning: other users could write the agent home ${world.home} (mode 0777); its mode is now 0755.\n` +
				`Warning: other users could read and write the sessions folder ${sessions} (mode 0777); its mode is now 0700 (for you alone, as prime-agent makes it).\n`,
		);
		expect(modeOf(world.home)).toBe(0o755);
		expect(modeOf(sessions)).toBe(0o700);
		expect(io.out()).toBe("first\n");
		expect(server.requests.length).toBe(1);

		// Once: the next run has nothing to say.
		const again = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "hi", "--model", "local/m"], again)).toBe(ExitCode.ok);
		expect(again.err()).toBe("");
	});

	it("the home's files and folders that run code or hold keys, open to others, are fixed with one warning each; the run goes on", async () => {
		const { world, server } = await localWorld();
		const home = (name: string) => join(world.home, name);
		world.writeHome("settings.json", {});
		world.writeHome("mcp.json", { mcpServers: {} });
		world.writeHome("auth.json", {});
		world.writeHome("trusted-projects.json", { version: 1, projects: {} });
		writeFileSync(home("kernel-state.key"), "00".repeat(32));
		for (const name of ["settings.json", "models.json", "mcp.json", "auth.json", "trusted-projects.json"]) {
			chmodSync(home(name), 0o666);
		}
		chmodSync(home("kernel-state.key"), 0o644);
		const sessions = home("sessions");
		mkdirSync(sessions);
		chmodSync(sessions, 0o755);
		for (const name of ["skills", "extensions", "packages", "harness"]) {
			mkdirSync(home(name));
			chmodSync(home(name), 0o777);
		}

		const io = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "hi", "--model", "local/m"], io)).toBe(ExitCode.ok);
		const alone = " (for you alone, as prime-agent makes it)";
		expect(io.err()).toBe(
			[
				`Warning: other users could read the sessions folder ${sessions} (mode 0755); its mode is now 0700${alone}.`,
				`Warning: other users could write the skills folder ${home("skills")} (mode 0777); its mode is now 0755.`,
				`Warning: other users could write the extensions folder ${home("extensions")} (mode 0777); its mode is now 0755.`,
				`Warning: other users could write the packages folder ${home("packages")} (mode 0777); its mode is now 0755.`,
				`Warning: other users could write the harness folder ${home("harness")} (mode 0777); its mode is now 0755.`,
				`Warning: other users could write the settings file ${home("settings.json")} (mode 0666); its mode is now 0644.`,
				`Warning: other users could write the models file ${home("models.json")} (mode 0666); its mode is now 0644.`,
				`Warning: other users could write the MCP servers file ${home("mcp.json")} (mode 0666); its mode is now 0644.`,
				`Warning: other users could write the project approvals file ${home("trusted-projects.json")} (mode 0666); its mode is now 0644.`,
				`Warning: other users could read and write the keys file ${home("auth.json")} (mode 0666); its mode is now 0600${alone}.`,
				`Warning: other users could read the kernel-state key ${home("kernel-state.key")} (mode 0644); its mode is now 0600${alone}.`,
				"",
			].join("\n"),
		);
		expect(modeOf(home("auth.json"))).toBe(0o600);
		expect(modeOf(home("kernel-state.key"))).toBe(0o600);
		expect(modeOf(home("mcp.json"))).toBe(0o644);
		expect(modeOf(home("skills"))).toBe(0o755);
		expect(modeOf(sessions)).toBe(0o700);
		expect(io.out()).toBe("first\n");
		expect(server.requests.length).toBe(1);

		const again = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "hi", "--model", "local/m"], again)).toBe(ExitCode.ok);
		expect(again.err()).toBe("");
	});

	it("doctor names each file and folder others may use, with its chmod, and changes nothing", async () => {
		const { world } = await localWorld();
		const auth = join(world.home, "auth.json");
		const skills = join(world.home, "skills");
		world.writeHome("auth.json", {});
		chmodSync(auth, 0o666);
		mkdirSync(skills);
		chmodSync(skills, 0o777);
		const io = memoryIo(world.project, world.env);
		await runCli(["doctor"], io);
		expect(io.out()).toContain(
			`! Agent home: other users can write ${skills} (mode 0777): the next run sets 0755\n    fix: chmod go-w ${skills}\n` +
				`! Agent home: other users can read and write ${auth} (mode 0666): the next run sets 0600\n    fix: chmod go-rwx ${auth}\n`,
		);
		expect(io.out()).toContain("✓ auth.json: present\n");
		expect(modeOf(auth)).toBe(0o666);
		expect(modeOf(skills)).toBe(0o777);
	});

	it("doctor reports a writable home and changes nothing", async () => {
		const { world } = await localWorld();
		chmodSync(world.home, 0o775);
		const io = memoryIo(world.project, world.env);
		await runCli(["doctor"], io);
		expect(io.out()).toContain(
			`! Agent home: other users can write ${world.home} (mode 0775): the next run sets 0755\n    fix: chmod go-w ${world.home}\n`,
		);
		expect(modeOf(world.home)).toBe(0o775);
	});

	it("a daemon folder others can write is set to 0700 with a warning on the command's stderr (daemon mode, real processes)", async () => {
		daemonWorld = await makeDaemonWorld([{ text: "from the worker" }]);
		const daemonDir = join(daemonWorld.home, "daemon");
		mkdirSync(daemonDir);
		chmodSync(daemonDir, 0o777);
		const run = await daemonWorld.cli(["-p", "hi", "--model", "local/coder"]);
		expect(run.code).toBe(ExitCode.ok);
		expect(run.stdout).toBe("from the worker\n");
		expect(run.stderr).toBe(
			`Warning: other users could read and write the daemon folder ${daemonDir} (mode 0777); its mode is now 0700 (for you alone, as prime-agent makes it).\n`,
		);
		expect(modeOf(daemonDir)).toBe(0o700);
	}, 180_000);

	it.skipIf(!isRoot)(
		"a home owned by another user is refused before any model call, naming it and its owner (needs root to chown; skipped otherwise)",
		async () => {
			const { world, server } = await localWorld();
			chownSync(world.home, NOBODY, NOBODY);
			const io = memoryIo(world.project, world.env);
			expect(await runCli(["-p", "hi", "--model", "local/m"], io)).toBe(ExitCode.usage);
			expect(io.err()).toBe(
				`Error: The agent home ${world.home} belongs to nobody (uid 65534), not to you (root): that user could change your sessions and settings and what the agent runs, so it is not used.\n` +
					`Point PRIME_AGENT_DIR at a folder of your own, or have it handed to you (\`sudo chown -R root ${world.home}\`).\n`,
			);
			expect(server.requests.length).toBe(0);
			// Refused, never changed.
			expect(statSync(world.home).uid).toBe(NOBODY);
			expect(modeOf(world.home)).toBe(0o700);
		},
	);

	it.skipIf(!isRoot)(
		"a sessions folder owned by another user is refused the same way (needs root to chown; skipped otherwise)",
		async () => {
			const { world, server } = await localWorld();
			const sessions = join(world.home, "sessions");
			mkdirSync(sessions, { mode: 0o700 });
			chownSync(sessions, NOBODY, NOBODY);
			const io = memoryIo(world.project, world.env);
			expect(await runCli(["-p", "hi", "--model", "local/m"], io)).toBe(ExitCode.usage);
			expect(io.err()).toContain(`Error: The sessions folder ${sessions} belongs to nobody (uid 65534), not to you`);
			expect(server.requests.length).toBe(0);
			const doctor = memoryIo(world.project, world.env);
			expect(await runCli(["doctor"], doctor)).toBe(ExitCode.usage);
			expect(doctor.out()).toContain(`✗ Agent home: ${sessions} belongs to nobody (uid 65534): runs refuse it`);
		},
	);
});
