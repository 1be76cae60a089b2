import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, describe, expect, it } from "vitest";
import { childEnvironment } from "../src/child-env/index.js";
import { parseSpawnRequest, SpawnRefused } from "../src/children/options.js";
import { runCli } from "../src/cli/index.js";
import { ExitCode, UserError } from "../src/errors.js";
import { loadSettings } from "../src/home/index.js";
import {
	chooseKernelServer,
	type KernelServerInput,
	recordOwnerAlive,
	resolveKernelServer,
	ServerKernelRegistry,
} from "../src/kernel-server/index.js";
import { buildSystemPrompt } from "../src/prompt/index.js";
import { memoryIo } from "./cli-io.js";

const SETTINGS = "/home/me/.prime/agent/settings.json";
const resolve = (input: Partial<KernelServerInput>) =>
	resolveKernelServer({ env: {}, settingsPath: SETTINGS, ...input });
/** The UserError `run` throws, as `message | hint`. */
const refusal = (run: () => unknown): string => {
	try {
		run();
	} catch (error) {
		if (error instanceof UserError) return `${error.message} | ${error.hint}`;
		throw error;
	}
	throw new Error("no UserError was thrown");
};

describe("which Jupyter Server the kernels run on", () => {
	it("none given: a local kernel", () => {
		expect(resolve({})).toBeUndefined();
		expect(resolve({ env: { PRIME_AGENT_KERNEL_URL: "  " }, settings: { env: { keep: [] } } })).toBeUndefined();
	});

	it("--kernel-url wins over PRIME_AGENT_KERNEL_URL, which wins over settings; settings' tokenEnv, kernelName and cwd apply to either", () => {
		const settings = { url: "http://settings:8888", tokenEnv: "JPY_PASS", kernelName: "py311", cwd: "work" };
		const env = { PRIME_AGENT_KERNEL_URL: "http://env-host:9999/", JPY_PASS: "s3cret", JUPYTER_TOKEN: "other" };
		expect(resolve({ flagUrl: "https://flag-host/user/me/", env, settings })).toEqual({
			options: { url: "https://flag-host/user/me", token: "s3cret", kernelName: "py311", cwd: "work" },
			tokenEnv: "JPY_PASS",
			source: "--kernel-url",
		});
		expect(resolve({ env, settings })?.options.url).toBe("http://env-host:9999");
		expect(resolve({ env, settings })?.source).toBe("PRIME_AGENT_KERNEL_URL");
		const fromSettings = resolve({ env: { JPY_PASS: "s3cret" }, settings });
		expect(fromSettings?.options.url).toBe("http://settings:8888");
		expect(fromSettings?.source).toBe(`"kernel.url" in ${SETTINGS}`);
	});

	it("the token comes from JUPYTER_TOKEN by default, and a server without one is asked without a token", () => {
		expect(resolve({ flagUrl: "http://h:1", env: { JUPYTER_TOKEN: "tok" } })).toEqual({
			options: { url: "http://h:1", token: "tok" },
			tokenEnv: "JUPYTER_TOKEN",
			source: "--kernel-url",
		});
		expect(resolve({ flagUrl: "http://h:1" })?.options).toEqual({ url: "http://h:1" });
	});

	it("`local` asks for a local kernel over a server configured elsewhere", () => {
		const settings = { url: "http://settings:8888" };
		expect(resolve({ flagUrl: "local", settings })).toBeUndefined();
		expect(resolve({ env: { PRIME_AGENT_KERNEL_URL: "local" }, settings })).toBeUndefined();
	});

	it("a value that is not an http(s) URL says where it came from and how to write one", () => {
		const hint =
			'Give the server\'s address with its scheme, e.g. http://gpu-box:8888 (or "local" for a kernel on this machine).';
		expect(refusal(() => resolve({ flagUrl: "gpu-box:8888" }))).toBe(
			`--kernel-url is "gpu-box:8888", which is not the http(s) URL of a Jupyter Server. | ${hint}`,
		);
		expect(refusal(() => resolve({ env: { PRIME_AGENT_KERNEL_URL: "not a url" } }))).toBe(
			`PRIME_AGENT_KERNEL_URL is "not a url", which is not the http(s) URL of a Jupyter Server. | ${hint}`,
		);
		expect(refusal(() => resolve({ settings: { url: "ftp://h/" } }))).toBe(
			`"kernel.url" in ${SETTINGS} is "ftp://h/", which is not the http(s) URL of a Jupyter Server. | ${hint}`,
		);
	});

	it("a URL carrying a token or a password is refused without repeating it", () => {
		const withToken = refusal(() => resolve({ flagUrl: "http://h:8888/lab?token=abc123secret" }));
		expect(withToken).toBe(
			'--kernel-url holds a token: a URL is shown in process lists, shell history and logs, so it must not carry one. | Give the URL without it (http://h:8888/lab) and put the token in JUPYTER_TOKEN (or the variable "kernel.tokenEnv" in settings.json names).',
		);
		const withPassword = refusal(() => resolve({ env: { PRIME_AGENT_KERNEL_URL: "https://me:pw-secret@h/" } }));
		expect(withPassword).toContain("PRIME_AGENT_KERNEL_URL holds a user name or password");
		expect(withPassword).toContain("(https://h/)");
		expect(withPassword).not.toContain("pw-secret");
		// Malformed and holding a token: the message masks it.
		expect(refusal(() => resolve({ flagUrl: "h:8888/?token=abc123secret" }))).not.toContain("abc123secret");
	});

	it("a tokenEnv naming an unset or empty variable is refused, naming it", () => {
		const settings = { url: "http://h:8888", tokenEnv: "JPY_PASS" };
		expect(refusal(() => resolve({ settings }))).toBe(
			`"kernel.tokenEnv" in ${SETTINGS} names JPY_PASS, which is not set: the Jupyter Server's token is read from it. | Export JPY_PASS=<the server's token>, or remove "tokenEnv" to read the token from JUPYTER_TOKEN.`,
		);
		expect(refusal(() => resolve({ settings, env: { JPY_PASS: "" } }))).toContain("names JPY_PASS, which is empty");
	});

	it("settings.json's kernel keys are checked for their types when the file loads", () => {
		const dir = mkdtempSync(join(tmpdir(), "prime-agent-settings-"));
		const file = join(dir, "settings.json");
		const hint =
			'Write it as "kernel": {"url": "http://gpu-box:8888", "tokenEnv": "JUPYTER_TOKEN", "kernelName": "python3", "cwd": "work"}.';
		const loaded = (kernel: unknown) => {
			writeFileSync(file, JSON.stringify({ kernel }));
			return refusal(() => loadSettings(file));
		};
		try {
			expect(loaded({ url: 8888 })).toBe(`"kernel.url" in ${file} must be a non-empty string. | ${hint}`);
			expect(loaded({ cwd: "" })).toBe(`"kernel.cwd" in ${file} must be a non-empty string. | ${hint}`);
			expect(loaded({ tokenEnv: "abc-123-the-token" })).toBe(
				`"kernel.tokenEnv" in ${file} must name an environment variable (letters, digits and _), not hold the token. | ${hint}`,
			);
			writeFileSync(file, JSON.stringify({ kernel: { url: "http://h", tokenEnv: "T", kernelName: "k", cwd: "c" } }));
			expect(loadSettings(file).kernel).toEqual({ url: "http://h", tokenEnv: "T", kernelName: "k", cwd: "c" });
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});

describe("the token never reaches a process running the model's code", () => {
	it("the variable tokenEnv names is withheld whatever its name, even when kernel.env.keep lists it", () => {
		const settings = { kernel: { tokenEnv: "JPY_PASS", env: { keep: ["JPY_PASS", "JUPYTER_TOKEN"] } } };
		const env = { JPY_PASS: "s3cret", JUPYTER_TOKEN: "kept-on-purpose", PLAIN: "1" };
		// A local session still withholds it: its sub-agents or a later run may use the server.
		const local = chooseKernelServer({}, env, settings, SETTINGS);
		expect(local).toEqual({ server: undefined, tokenVariables: ["JPY_PASS"] });
		const scrubbed = childEnvironment(env, { keep: settings.kernel.env.keep, withhold: local.tokenVariables });
		expect(scrubbed.env).toEqual({ JUPYTER_TOKEN: "kept-on-purpose", PLAIN: "1" });
		expect(scrubbed.withheld).toEqual(["JPY_PASS"]);
		expect(scrubbed.kept).toEqual(["JUPYTER_TOKEN"]);
	});

	it("with a server, the variable its token came from is withheld, kept or not", () => {
		const settings = { kernel: { env: { keep: ["JUPYTER_TOKEN"] } } };
		const env = { JUPYTER_TOKEN: "tok", PLAIN: "1" };
		const remote = chooseKernelServer({ kernelUrl: "http://h:8888" }, env, settings, SETTINGS);
		expect(remote.tokenVariables).toEqual(["JUPYTER_TOKEN"]);
		expect(childEnvironment(env, { keep: ["JUPYTER_TOKEN"], withhold: remote.tokenVariables }).env).toEqual({
			PLAIN: "1",
		});
	});

	it("a sub-agent's choice made by its parent is taken as it is", () => {
		const server = resolve({ flagUrl: "http://h:8888" });
		const settings = { kernel: { url: "http://elsewhere:1" } };
		expect(chooseKernelServer({ kernelServer: "local" }, {}, settings, SETTINGS).server).toBeUndefined();
		expect(chooseKernelServer({ kernelServer: server }, {}, settings, SETTINGS).server).toBe(server);
	});
});

describe("the command line", () => {
	let world: TempWorld | undefined;
	afterEach(() => world?.cleanup());

	it("--kernel-url with a bad URL stops the run before anything starts (exit 2)", async () => {
		world = makeTempWorld({ OPENAI_API_KEY: "sk-fake" });
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["--kernel-url", "gpu-box:8888", "-p", "hello"], io)).toBe(ExitCode.usage);
		expect(io.err()).toBe(
			'Error: --kernel-url is "gpu-box:8888", which is not the http(s) URL of a Jupyter Server.\nGive the server\'s address with its scheme, e.g. http://gpu-box:8888 (or "local" for a kernel on this machine).\n',
		);
		expect(readdirSync(world.home)).not.toContain("sessions");
	});

	it("--kernel-url belongs to a session's start, not to doctor", async () => {
		world = makeTempWorld();
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["doctor", "--kernel-url", "http://h:8888"], io)).toBe(ExitCode.usage);
		expect(io.err()).toBe(
			'Error: --kernel-url works only when a session starts, not with `prime-agent doctor`.\nDoctor checks the server PRIME_AGENT_KERNEL_URL or settings.json\'s "kernel.url" names: PRIME_AGENT_KERNEL_URL=<url> prime-agent doctor.\n',
		);
	});
});

describe("the record of kernels started on servers", () => {
	let home: string | undefined;
	afterEach(() => {
		if (home) rmSync(home, { recursive: true, force: true });
	});

	it("one private file per kernel, listed oldest first, gone once removed; a broken file is named, not fatal", () => {
		home = mkdtempSync(join(tmpdir(), "prime-agent-registry-"));
		const registry = new ServerKernelRegistry(home);
		const first = registry.add({
			url: "http://h:1",
			kernelId: "../../etc/passwd",
			kernelName: "python3",
			session: "s1",
		});
		const second = registry.add({
			url: "http://h:2",
			kernelId: "k2",
			kernelName: "py",
			session: "s2",
			startedAt: "2999-01-01T00:00:00.000Z",
		});
		expect(first.host).toEqual({ hostname: hostname(), pid: process.pid });
		expect(statSync(registry.dir).mode & 0o777).toBe(0o700);
		const files = readdirSync(registry.dir);
		expect(files).toHaveLength(2);
		for (const name of files) {
			expect(name).toMatch(/^[0-9a-f]{32}\.json$/);
			expect(statSync(join(registry.dir, name)).mode & 0o777).toBe(0o600);
		}
		writeFileSync(join(registry.dir, "broken.json"), "{");
		expect(registry.list()).toEqual({ records: [first, second], unreadable: [join(registry.dir, "broken.json")] });
		registry.remove("http://h:1", "../../etc/passwd");
		expect(registry.list().records).toEqual([second]);
		expect(recordOwnerAlive(second)).toBe(true);
		expect(recordOwnerAlive({ ...second, host: { hostname: hostname(), pid: 2 ** 22 + 1 } })).toBe(false);
		expect(recordOwnerAlive({ ...second, host: { hostname: "another-machine", pid: 2 ** 22 + 1 } })).toBe(true);
	});
});

describe("the system prompt", () => {
	const base = { cwd: "/home/me/project", date: "2026-12-05" };
	const remote = {
		kind: "jupyter-server" as const,
		url: "http://gpu-box:8888",
		kernelId: "k1",
		kernelName: "python3",
		hostname: "gpu-box-7",
		cwd: "/srv/jupyter/work",
	};

	it("a local kernel changes nothing", () => {
		expect(buildSystemPrompt({ ...base, kernel: { kind: "local", hostname: "laptop", cwd: base.cwd } })).toBe(
			buildSystemPrompt(base),
		);
	});

	it("a kernel on a server names its machine and folder, and the user's own folder", () => {
		const prompt = buildSystemPrompt({ ...base, kernel: remote });
		expect(prompt).toContain(
			'# Where your code runs\n\nYour kernel runs on a Jupyter Server (http://gpu-box:8888), not on the user\'s machine: on the machine\n"gpu-box-7", in the folder /srv/jupyter/work.',
		);
		expect(prompt).toContain("The user's session runs in\n/home/me/project on their own machine");
		expect(prompt).toContain("Working directory: /srv/jupyter/work (on gpu-box-7)\nToday's date: 2026-12-05");
		expect(prompt).not.toContain("Working directory: /home/me/project");
		expect(prompt).toContain('`rlm(task, kernel="local")` runs one on the user\'s');
		expect(buildSystemPrompt({ ...base, kernel: remote, canSpawn: false })).not.toContain("rlm(task, kernel=");
	});
});

describe("rlm(kernel=...)", () => {
	it('"local" is the one value taken; another is refused saying so', () => {
		expect(parseSpawnRequest({ task: "t", options: { kernel: "local" } })).toEqual({ task: "t", kernel: "local" });
		expect(parseSpawnRequest({ task: "t", options: { kernel: null } })).toEqual({ task: "t" });
		expect(() => parseSpawnRequest({ task: "t", options: { kernel: "gpu" } })).toThrow(
			new SpawnRefused(
				'rlm(kernel="gpu"): only "local" is accepted (a kernel on the user\'s machine); leave it out for a kernel where yours runs.',
			),
		);
	});
});
