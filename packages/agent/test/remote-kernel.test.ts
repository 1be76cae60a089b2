import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { startJupyterServer, type TestJupyterServer } from "prime-agent-kernel/testing";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { openAiCompletionsServer } from "prime-agent-test-support/loopback-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/index.js";
import { checkKernelServer } from "../src/doctor/kernel-server.js";
import { ExitCode, UserError } from "../src/errors.js";
import { agentPaths } from "../src/home/index.js";
import { ServerKernelRegistry } from "../src/kernel-server/index.js";
import { allText, cell, lastToolResult, scriptAgents } from "./agent-scripts.js";
import { memoryIo } from "./cli-io.js";

const sessions = useFauxSessions({ provider: "fauxremote", models: [{ id: "m" }] });

let server: TestJupyterServer;
beforeAll(async () => {
	server = await startJupyterServer();
}, 240_000);
afterAll(async () => {
	await server?.stop();
});

/** The kernels the server runs now. */
async function serverKernels(): Promise<string[]> {
	const reply = await fetch(`${server.url}/api/kernels`, { headers: { Authorization: `token ${server.token}` } });
	return ((await reply.json()) as { id: string }[]).map((kernel) => kernel.id);
}

/** Where a cell runs and whether it can see the token's variables. */
const WHERE = `import os, socket\nprint(socket.gethostname(), os.getcwd(), sorted(n for n in ("JUPYTER_TOKEN", "JPY_PASS") if n in os.environ))`;

describe("a session whose kernel runs on a Jupyter Server", () => {
	it("runs its cells there, tells the model the machine and folder, keeps the token out of the kernel, the model and the session file, and deletes the kernel at the end", async () => {
		const world = sessions.newWorld({ JPY_PASS: server.token });
		mkdirSync(join(server.root, "work"));
		world.writeHome("settings.json", { kernel: { tokenEnv: "JPY_PASS", cwd: "work" } });
		const seen = scriptAgents(sessions, { root: [cell(WHERE), fauxAssistantMessage("done")] });
		const started = await sessions.start({ kernelUrl: server.url });
		const location = started.kernel.location;
		expect(location?.kind).toBe("jupyter-server");
		if (location?.kind !== "jupyter-server") return;
		// Recorded in the agent home while it runs.
		const registry = new ServerKernelRegistry(world.home);
		expect(registry.list().records.map((record) => [record.url, record.kernelId, record.session])).toEqual([
			[server.url, location.kernelId, started.session.id],
		]);
		expect(await serverKernels()).toEqual([location.kernelId]);

		await started.agentSession.prompt("where do you run?");
		const workDir = join(server.root, "work");
		const contexts = seen.get("root") ?? [];
		expect(lastToolResult(contexts[1])).toBe(`${location.hostname} ${workDir} []`);
		const prompt = contexts[0]?.systemPrompt ?? "";
		expect(prompt).toContain(
			`Your kernel runs on a Jupyter Server (${server.url}), not on the user's machine: on the machine\n"${location.hostname}", in the folder ${workDir}.`,
		);
		expect(prompt).toContain(`Working directory: ${workDir} (on ${location.hostname})`);

		await started.dispose();
		expect(await serverKernels()).toEqual([]);
		expect(registry.list().records).toEqual([]);
		const sessionFile = readFileSync(started.session.path, "utf8");
		expect(sessionFile).toContain(workDir);
		for (const text of [sessionFile, JSON.stringify(contexts)]) expect(text).not.toContain(server.token);
	});

	it("a wrong token stops the start with what to fix (exit 4), and leaves no kernel on the server", async () => {
		sessions.newWorld({ JUPYTER_TOKEN: "wrong-token-123" });
		const error = await sessions.start({ kernelUrl: server.url }).catch((caught: unknown) => caught);
		expect(error).toBeInstanceOf(UserError);
		const refused = error as UserError;
		expect(refused.exitCode).toBe(ExitCode.kernel);
		expect(refused.message).toMatch(
			new RegExp(
				`^The kernel could not start on the Jupyter Server ${server.url} \\(from --kernel-url\\): .*refused the token \\(403\\)`,
			),
		);
		expect(refused.hint).toBe(
			"Check the server, the URL and the token in JUPYTER_TOKEN; `prime-agent doctor` asks the server. `--kernel-url local` runs the kernel on this machine.",
		);
		expect(refused.message).not.toContain("wrong-token-123");
		expect(await serverKernels()).toEqual([]);
		expect(new ServerKernelRegistry(sessions.world.home).list().records).toEqual([]);
	});

	it("a sub-agent's kernel runs on the parent's server; rlm(kernel=\"local\") runs one on this machine", async () => {
		// The token's variable has no secret-like name: only its being the token keeps it from the local kernel.
		const world = sessions.newWorld({ JPY_PASS: server.token });
		mkdirSync(join(server.root, "kids"));
		world.writeHome("settings.json", { kernel: { cwd: "kids", tokenEnv: "JPY_PASS" } });
		const seen = scriptAgents(sessions, {
			root: [
				cell('await rlm("look around", name="remote-kid")\nawait rlm("look here", name="local-kid", kernel="local")'),
				fauxAssistantMessage("waiting"),
				fauxAssistantMessage("ok"),
				fauxAssistantMessage("ok"),
			],
			"remote-kid": [cell(WHERE), fauxAssistantMessage("looked")],
			"local-kid": [cell(WHERE), fauxAssistantMessage("looked")],
		});
		const started = await sessions.start({ kernelUrl: server.url });
		await started.agentSession.prompt("spawn two");
		await started.whenSettled();
		const remote = seen.get("remote-kid") ?? [];
		const local = seen.get("local-kid") ?? [];
		expect(lastToolResult(remote[1])).toMatch(new RegExp(` ${join(server.root, "kids")} \\[\\]$`));
		expect(remote[0]?.systemPrompt).toContain("# Where your code runs");
		expect(lastToolResult(local[1])).toMatch(new RegExp(` ${world.project} \\[\\]$`));
		expect(local[0]?.systemPrompt).not.toContain("# Where your code runs");
		expect(allText(seen.get("root")?.at(-1))).not.toContain(server.token);
		await started.dispose();
		expect(await serverKernels()).toEqual([]);
		expect(new ServerKernelRegistry(world.home).list().records).toEqual([]);
	});
});

describe("kernels an agent killed outright left on the server", () => {
	it("are deleted when the next session of this home starts there, and said so", async () => {
		const world = sessions.newWorld({ JUPYTER_TOKEN: server.token });
		const made = await fetch(`${server.url}/api/kernels`, {
			method: "POST",
			headers: { Authorization: `token ${server.token}` },
			body: JSON.stringify({ name: "python3" }),
		});
		const leftover = ((await made.json()) as { id: string }).id;
		const registry = new ServerKernelRegistry(world.home);
		registry.add({
			url: server.url,
			kernelId: leftover,
			kernelName: "python3",
			session: "s-killed",
			host: { hostname: hostname(), pid: spawnSync("true").pid as number },
		});
		const started = await sessions.start({ kernelUrl: server.url });
		try {
			const location = started.kernel.location;
			if (location?.kind !== "jupyter-server") throw new Error("the kernel is not on the server");
			expect(started.notices).toContain(`Deleted 1 kernel an earlier agent of this home left on ${server.url}.`);
			expect(await serverKernels()).toEqual([location.kernelId]);
			expect(registry.list().records.map((record) => record.kernelId)).toEqual([location.kernelId]);
		} finally {
			await started.dispose();
		}
	});
});

describe("doctor and the kernels of ours left on the server", () => {
	/** A kernel made on the server through its API, as one of ours whose agent is gone would be left. */
	async function makeServerKernel(): Promise<string> {
		const reply = await fetch(`${server.url}/api/kernels`, {
			method: "POST",
			headers: { Authorization: `token ${server.token}` },
			body: JSON.stringify({ name: "python3" }),
		});
		return ((await reply.json()) as { id: string }).id;
	}

	it("lists a recorded kernel still on the server whose agent is gone, with the command that deletes it; forgets one the server no longer has", async () => {
		const world = sessions.newWorld({ PRIME_AGENT_KERNEL_URL: server.url, JUPYTER_TOKEN: server.token });
		const registry = new ServerKernelRegistry(world.home);
		const leftover = await makeServerKernel();
		const inUse = await makeServerKernel();
		try {
			const gone = { hostname: hostname(), pid: spawnSync("true").pid as number };
			registry.add({
				url: server.url,
				kernelId: leftover,
				kernelName: "python3",
				session: "s-left",
				host: gone,
				startedAt: "2026-12-05T10:00:00.000Z",
			});
			registry.add({
				url: server.url,
				kernelId: inUse,
				kernelName: "python3",
				session: "s-live",
				startedAt: "2026-12-05T11:00:00.000Z",
			});
			registry.add({
				url: server.url,
				kernelId: "deleted-already",
				kernelName: "python3",
				session: "s-old",
				host: gone,
			});
			registry.add({
				url: "http://other-host:8888",
				kernelId: "k9",
				kernelName: "python3",
				session: "s-far",
				startedAt: "2026-12-05T12:00:00.000Z",
			});
			const checks = await checkKernelServer(agentPaths(world.home), world.env);
			// A kernel of doctor's own ran the runtime there (and is gone again).
			const [ownKernel] = checks.splice(1, 1);
			expect(ownKernel?.name).toBe("Kernel on the server");
			expect(ownKernel?.status).toBe("ok");
			expect(ownKernel?.detail).toMatch(
				new RegExp(`^python3: Python 3\\.\\d+\\.\\d+ on ${hostname()} in \\S+, ready in \\d+\\.\\ds$`),
			);
			expect(checks).toEqual([
				{
					name: "Kernel server",
					status: "ok",
					detail: `${server.url} (from PRIME_AGENT_KERNEL_URL) answers: 2 kernels running, 1 in use by agents of this home, 1 left over`,
				},
				{
					name: "Kernel server",
					status: "warn",
					detail: `kernel ${leftover} (python3) of session s-left, started 2026-12-05T10:00:00.000Z by process ${gone.pid} on ${gone.hostname}, is left over on ${server.url}`,
					fix: `Delete it: curl -X DELETE -H "Authorization: token $JUPYTER_TOKEN" ${server.url}/api/kernels/${leftover}`,
				},
				{
					name: "Kernel server",
					status: "warn",
					detail:
						"1 kernel started by this agent home on http://other-host:8888 is not known to be deleted (not the server configured now)",
					fix: "Ask that server: PRIME_AGENT_KERNEL_URL=<url> prime-agent doctor (with its token in the environment).",
				},
			]);
			expect(registry.list().records.map((record) => record.session)).toEqual(["s-left", "s-live", "s-far"]);
			// The command doctor names works as written.
			const fix = spawnSync(
				"sh",
				[
					"-c",
					`curl -sS -o /dev/null -w '%{http_code}' -X DELETE -H "Authorization: token $JUPYTER_TOKEN" ${server.url}/api/kernels/${leftover}`,
				],
				{ env: { ...process.env, JUPYTER_TOKEN: server.token }, encoding: "utf8" },
			);
			expect(fix.stdout).toBe("204");
			expect(await serverKernels()).toEqual([inUse]);
			expect(readdirSync(registry.dir)).toHaveLength(3);
		} finally {
			for (const id of [leftover, inUse])
				await fetch(`${server.url}/api/kernels/${id}`, {
					method: "DELETE",
					headers: { Authorization: `token ${server.token}` },
				});
		}
	});

	it("a server that refuses the token, or does not answer, is a failed check saying what to fix", async () => {
		const world = sessions.newWorld({ JUPYTER_TOKEN: "wrong-token-123" });
		world.writeHome("settings.json", { kernel: { url: server.url } });
		const [refused] = await checkKernelServer(agentPaths(world.home), world.env);
		expect(refused?.status).toBe("fail");
		expect(refused?.detail).toContain(`${server.url} refused the token (403)`);
		expect(refused?.detail).not.toContain("wrong-token-123");
		expect(refused?.fix).toBe(
			`Start the server or fix the URL ("kernel.url" in ${join(world.home, "settings.json")}) and the token (JUPYTER_TOKEN).`,
		);
		const down = await checkKernelServer(agentPaths(world.home), {
			...world.env,
			PRIME_AGENT_KERNEL_URL: "http://127.0.0.1:9",
		});
		expect(down).toHaveLength(1);
		expect(down[0]?.status).toBe("fail");
		// Why exactly (connection refused) is the kernel package's to say.
		expect(down[0]?.detail).toMatch(/^Cannot reach the Jupyter Server at http:\/\/127\.0\.0\.1:9\b/);
		expect(down[0]?.fix).toBe(
			"Start the server or fix the URL (PRIME_AGENT_KERNEL_URL) and the token (JUPYTER_TOKEN).",
		);
	});

	it("says nothing when no server is configured or recorded; a bad setting is a failed check", async () => {
		const world = sessions.newWorld();
		expect(await checkKernelServer(agentPaths(world.home), world.env)).toEqual([]);
		world.writeHome("settings.json", { kernel: { url: "http://h:8888", tokenEnv: "JPY_PASS" } });
		expect(await checkKernelServer(agentPaths(world.home), world.env)).toEqual([
			{
				name: "Kernel server",
				status: "fail",
				detail: `"kernel.tokenEnv" in ${join(world.home, "settings.json")} names JPY_PASS, which is not set: the Jupyter Server's token is read from it.`,
				fix: 'Export JPY_PASS=<the server\'s token>, or remove "tokenEnv" to read the token from JUPYTER_TOKEN.',
			},
		]);
	});
});

describe("prime-agent --kernel-url", () => {
	it("runs a -p request with its kernel on the server; nothing the command prints or sends holds the token", async () => {
		const model = await openAiCompletionsServer([{ code: "import os; print('cwd', os.getcwd())" }, { text: "done" }]);
		try {
			const world = sessions.newWorld({ JUPYTER_TOKEN: server.token, LOCAL_KEY: "local-key" });
			mkdirSync(join(server.root, "cli"));
			world.writeHome("models.json", {
				providers: {
					local: {
						baseUrl: model.baseUrl,
						api: "openai-completions",
						apiKeyEnv: "LOCAL_KEY",
						models: [{ id: "coder" }],
					},
				},
			});
			world.writeHome("settings.json", { kernel: { cwd: "cli" } });
			const io = memoryIo(world.project, world.env);
			const code = await runCli(["--kernel-url", server.url, "-p", "where?", "--model", "local/coder"], io);
			expect(io.err()).not.toContain("Error");
			expect(code).toBe(ExitCode.ok);
			expect(io.out()).toBe("done\n");
			const sent = JSON.stringify(model.requests);
			expect(sent).toContain(`cwd ${join(server.root, "cli")}`);
			expect(sent).toContain("# Where your code runs");
			for (const text of [sent, io.out(), io.err()]) expect(text).not.toContain(server.token);
			expect(await serverKernels()).toEqual([]);
			expect(new ServerKernelRegistry(world.home).list().records).toEqual([]);
		} finally {
			await model.close();
		}
	});
});
