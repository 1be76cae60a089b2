import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { kernelPythonProblem, resolveKernelPython } from "prime-agent-kernel";
import { type ChildEnvironment, childEnvironment } from "../child-env/index.js";
import {
	type AgentPaths,
	access,
	chmodFix,
	type FolderFinding,
	inspectHomeFolders,
	kernelEnvKeep,
	loadSettings,
	octal,
	readJsonFile,
	SETTINGS_KEYS,
} from "../home/index.js";
import { chooseKernelServer } from "../kernel-server/index.js";
import { checkMcpServers } from "../mcp/index.js";
import {
	Credentials,
	type CustomProviderConfig,
	chooseDefaultModel,
	DEFAULT_MODELS,
	findCredential,
	LOCAL_SERVER_KEY,
	loadAuthFile,
	loadModelsFile,
	ModelRegistry,
} from "../providers/index.js";
import { SessionKernel } from "../tools/index.js";
import { HOW_TO_APPROVE, type ProjectTrust, projectTrust } from "../trust/index.js";
import type { CheckResult } from "./check-result.js";

const ok = (name: string, detail: string): CheckResult => ({ name, status: "ok", detail });
const warn = (name: string, detail: string, fix: string): CheckResult => ({ name, status: "warn", detail, fix });
const fail = (name: string, detail: string, fix: string): CheckResult => ({ name, status: "fail", detail, fix });

/** Every check `prime-agent doctor` runs, in order (`cwd`: the project whose MCP config is checked). Checks never throw. */
export async function runChecks(
	paths: AgentPaths,
	env: NodeJS.ProcessEnv = process.env,
	cwd = process.cwd(),
): Promise<CheckResult[]> {
	const results: CheckResult[] = [checkNode(), ...checkHome(paths), ...checkConfigFiles(paths)];
	results.push(...checkProviders(paths, env));
	results.push(...(await checkLocalServers(paths, env)));
	const kernelEnv = kernelEnvironment(paths, env);
	results.push(checkKernelEnvironment(kernelEnv));
	const python = await checkPython(env);
	results.push(python);
	if (python.status === "ok") results.push(await checkKernel(env, kernelEnv.env));
	// Loaded when doctor runs: only a configured server needs the Jupyter client.
	const { checkKernelServer } = await import("./kernel-server.js");
	results.push(...(await checkKernelServer(paths, env)));
	// The project's servers are started only when approved, as in a session.
	const trust = projectTrust({ cwd, agentHome: paths.root });
	results.push(...(await checkMcpServers({ agentHome: paths.root, cwd, env, withoutProject: !trust.allows("mcp") })));
	results.push(...checkProjectCode(trust));
	// Loaded when doctor runs: the package's entry point loads none of the daemon.
	const { daemonDoctorCheck } = await import("./daemon.js");
	results.push(await daemonDoctorCheck(paths.root, env));
	return results;
}

/** One line per item of project code that does not run (not approved, or changed); one line when all of it is approved. */
function checkProjectCode(trust: ProjectTrust): CheckResult[] {
	const problem = trust.notices().find((line) => line.startsWith("Project approvals could not be read"));
	if (problem) return [warn("Project code", problem, "Fix or remove the file; then approve the project again.")];
	if (trust.items.length === 0) return [];
	if (trust.held.length === 0) {
		const count = trust.items.length;
		return [ok("Project code", `${count} item${count === 1 ? "" : "s"} approved in ${trust.root}`)];
	}
	// Doctor itself takes no --trust-project: it names the run that does.
	const fix = `${HOW_TO_APPROVE[0]?.toUpperCase()}${HOW_TO_APPROVE.slice(1)} to a run (\`prime-agent --trust-project\`).`;
	return trust.held.map((item) => {
		const state = trust.heldState(item);
		switch (item.kind) {
			case "mcp":
				return warn(`Project MCP servers (${item.key})`, `${state}, not started: ${item.names.join(", ")}`, fix);
			case "skill":
				return warn(`Project skill "${item.names[0]}" (${item.key})`, `${state}, not loaded`, fix);
			case "extensions":
				return warn(`Project extensions (${item.key})`, `${state}, not loaded`, fix);
			default:
				return warn(`Project extension packages (${item.key})`, `${state}, not loaded`, fix);
		}
	});
}

function checkNode(): CheckResult {
	const major = Number(process.versions.node.split(".")[0]);
	return major >= 20
		? ok("Node.js", process.versions.node)
		: fail("Node.js", `${process.versions.node} is too old`, "Install Node.js 20 or newer.");
}

/** The agent home: one line for it, or one for each file or folder of it others may use (see `secureHomeFolders`). */
function checkHome(paths: AgentPaths): CheckResult[] {
	if (!existsSync(paths.root)) {
		return [ok("Agent home", `${paths.root} (created on first use)`)];
	}
	const findings = inspectHomeFolders(paths);
	if (findings.length > 0) return findings.map(describeFinding);
	const mode = statSync(paths.root).mode & 0o777;
	if (mode & 0o077) {
		return [
			warn(
				"Agent home",
				`${paths.root} is readable by other users (mode ${mode.toString(8)})`,
				`chmod 700 ${paths.root}`,
			),
		];
	}
	return [ok("Agent home", paths.root)];
}

/** A file or folder of the home others may use or own, as doctor says it (a run fixes or refuses it). */
function describeFinding(finding: FolderFinding): CheckResult {
	if (finding.kind === "foreign") {
		return fail(
			"Agent home",
			`${finding.path} belongs to ${finding.owner}: runs refuse it`,
			"Point PRIME_AGENT_DIR at a folder of your own.",
		);
	}
	const can = `other users can ${access(finding.mode, finding.forbidden)} ${finding.path}`;
	if (finding.kind === "root-exposed") {
		return fail(
			"Agent home",
			`${can} (mode ${octal(finding.mode)}, owned by root): runs refuse it`,
			"Point PRIME_AGENT_DIR at a folder of your own.",
		);
	}
	return warn(
		"Agent home",
		`${can} (mode ${octal(finding.mode)}): the next run sets ${octal(finding.fixedMode)}`,
		`${chmodFix(finding.forbidden)} ${finding.path}`,
	);
}

function checkConfigFiles(paths: AgentPaths): CheckResult[] {
	const results: CheckResult[] = [];
	try {
		const settings = loadSettings(paths.settings);
		const raw = (readJsonFile(paths.settings) ?? {}) as Record<string, unknown>;
		const unknown = Object.keys(raw).filter((key) => !(SETTINGS_KEYS as readonly string[]).includes(key));
		results.push(
			unknown.length > 0
				? warn("settings.json", `unknown keys: ${unknown.join(", ")}`, `Known keys: ${SETTINGS_KEYS.join(", ")}.`)
				: ok("settings.json", existsSync(paths.settings) ? JSON.stringify(settings) : "not present (defaults)"),
		);
	} catch (error) {
		results.push(fail("settings.json", (error as Error).message, (error as { hint?: string }).hint ?? "Fix the file."));
	}
	try {
		const file = loadModelsFile(paths.models);
		const names = Object.keys(file.providers);
		results.push(ok("models.json", names.length > 0 ? `providers: ${names.join(", ")}` : "not present"));
	} catch (error) {
		results.push(fail("models.json", (error as Error).message, (error as { hint?: string }).hint ?? "Fix the file."));
	}
	try {
		loadAuthFile(paths.auth);
		// Its mode is the agent home's check (`checkHome`), as for every file there that runs code or holds keys.
		results.push(ok("auth.json", existsSync(paths.auth) ? "present" : "not present"));
	} catch (error) {
		results.push(fail("auth.json", (error as Error).message, (error as { hint?: string }).hint ?? "Fix the file."));
	}
	return results;
}

function checkProviders(paths: AgentPaths, env: NodeJS.ProcessEnv): CheckResult[] {
	let registry: ModelRegistry;
	let credentials: Credentials;
	try {
		registry = new ModelRegistry(loadModelsFile(paths.models));
		credentials = Credentials.load(registry.file, paths.auth, env);
	} catch {
		return []; // already reported by the config file checks
	}
	const configured = registry
		.providers()
		.map((provider) => ({ provider, found: credentials.find(provider) }))
		.filter((entry) => entry.found);
	const results: CheckResult[] = [
		configured.length > 0
			? ok("Providers", configured.map((entry) => `${entry.provider} (${entry.found?.source})`).join(", "))
			: fail(
					"Providers",
					"no provider has a key",
					`Export a key (ANTHROPIC_API_KEY, OPENAI_API_KEY, ...), add it to ${paths.auth}, or configure a local server in ${paths.models}.`,
				),
	];
	try {
		const settings = loadSettings(paths.settings);
		const model = chooseDefaultModel(registry, credentials, settings.defaultModel);
		const key = credentials.find(model.provider);
		results.push(
			key
				? ok("Default model", `${model.provider}/${model.id}`)
				: fail(
						"Default model",
						`${model.provider}/${model.id} has no key`,
						`Add a key for ${model.provider} or change "defaultModel" in ${paths.settings}.`,
					),
		);
	} catch (error) {
		results.push(
			warn(
				"Default model",
				(error as Error).message,
				`Pass --model, or set "defaultModel" in settings.json (tried: ${DEFAULT_MODELS.join(", ")}).`,
			),
		);
	}
	return results;
}

const REACH_TIMEOUT_MS = 3000;

/**
 * Servers configured in models.json answer as an API at their `baseUrl`, with the key a run would
 * send (none for a local server without one). The model list is asked for (`GET <base>/models`, or
 * `<base>/v1/models` for the Anthropic API, whose base has no `/v1`); where there is none (404), the
 * API's own path is tried (`POST` of an empty request to `chat/completions`, `responses` or
 * `v1/messages`): a server that has neither is up, but `baseUrl` is wrong (most often a missing
 * `/v1`) and every model call would fail so. A refusal (401, 403) is a key to fix.
 */
async function checkLocalServers(paths: AgentPaths, env: NodeJS.ProcessEnv): Promise<CheckResult[]> {
	let file: ReturnType<typeof loadModelsFile>;
	try {
		file = loadModelsFile(paths.models);
	} catch {
		return [];
	}
	// A broken auth.json is reported by its own check; the servers are still asked, without its keys.
	let auth: ReturnType<typeof loadAuthFile> = {};
	try {
		auth = loadAuthFile(paths.auth);
	} catch {}
	const servers = Object.entries(file.providers).filter(([, config]) => config.models && config.baseUrl);
	return Promise.all(
		servers.map(([name, config]) => checkServer(name, config, findCredential(name, auth, config, env), paths)),
	);
}

/** The paths `checkLocalServers` asks, under the base: the model list, then the API's own. */
function probePaths(config: CustomProviderConfig): { list: string; api: string } {
	if (config.api === "anthropic-messages") return { list: "v1/models", api: "v1/messages" };
	return { list: "models", api: config.api === "openai-responses" ? "responses" : "chat/completions" };
}

/** The headers that carry `key` as the server's API expects it (none without a key). */
function keyHeaders(config: CustomProviderConfig, key: string | undefined): Record<string, string> {
	if (!key) return {};
	if (config.api === "anthropic-messages") return { "x-api-key": key, "anthropic-version": "2023-06-01" };
	return { authorization: `Bearer ${key}` };
}

/** One models.json server, asked as `checkLocalServers` says. */
async function checkServer(
	name: string,
	config: CustomProviderConfig,
	credential: ReturnType<typeof findCredential>,
	paths: AgentPaths,
): Promise<CheckResult> {
	const url = String(config.baseUrl);
	const base = url.replace(/\/+$/, "");
	const check = `Server "${name}"`;
	const fixUrl = `fix "baseUrl" of "${name}" in ${paths.models}`;
	const key = credential && credential.key !== LOCAL_SERVER_KEY ? credential.key : undefined;
	const headers = keyHeaders(config, key);
	const ask = async (path: string, post: boolean): Promise<number> => {
		const response = await fetch(`${base}/${path}`, {
			method: post ? "POST" : "GET",
			headers: post ? { ...headers, "content-type": "application/json" } : headers,
			...(post ? { body: "{}" } : {}),
			signal: AbortSignal.timeout(REACH_TIMEOUT_MS),
		});
		await response.body?.cancel();
		return response.status;
	};
	const probe = probePaths(config);
	let status: number;
	let asked = `${base}/${probe.list}`;
	try {
		status = await ask(probe.list, false);
		if (status === 404) {
			status = await ask(probe.api, true);
			// Any answer but "no such path" or a refusal (a 400 for the empty request, most often) says
			// the API is there.
			if (status !== 404 && status !== 401 && status !== 403) {
				return ok(check, `${url} answers (HTTP ${status} for an empty request; it has no model list)`);
			}
			asked = `${base}/${probe.api}`;
		}
	} catch (error) {
		return warn(check, `${url} does not answer (${networkReason(error)})`, `Start the server, or ${fixUrl}.`);
	}
	if (status < 400) return ok(check, `${url} answers (HTTP ${status})`);
	if (status === 401 || status === 403) {
		// A key named by a variable that is not set is no key: say which variable, as a run does.
		const unset = !key && config.apiKeyEnv ? config.apiKeyEnv : undefined;
		const refused = key ? `the key from ${credential?.source}` : "calls without a key";
		const fix = key
			? `Check the key (${credential?.source}) for "${name}".`
			: unset
				? `Export ${unset}=<key> and run doctor again.`
				: `Give "${name}" a key in ${paths.models}: "apiKeyEnv": "<VARIABLE>" (or "apiKey").`;
		const why = unset ? `: models.json names $${unset}, which is not set` : "";
		return warn(check, `${url} refuses ${refused} (HTTP ${status})${why}`, fix);
	}
	if (status === 404) {
		const v1 = config.api !== "anthropic-messages" && !/\/v1$/.test(base);
		const fix = `F${fixUrl.slice(1)}${v1 ? `: an OpenAI-compatible server's usually ends in /v1 (${base}/v1)` : ""}.`;
		return warn(
			check,
			`${url} answers, but neither the model list nor ${asked} is there (HTTP 404): model calls to this baseUrl would fail`,
			fix,
		);
	}
	return warn(
		check,
		`${url} answers with an error (HTTP ${status} for ${asked})`,
		`Check the server's log, or ${fixUrl}.`,
	);
}

/** The most specific reason a fetch failed (`ECONNREFUSED` rather than "fetch failed"). */
function networkReason(error: unknown): string {
	const cause = (error as { cause?: { code?: string; message?: string; errors?: { code?: string }[] } }).cause;
	return cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message ?? (error as Error).message;
}

/** The interpreter exists and has the modules the kernel needs (a run refuses to start otherwise). */
async function checkPython(env: NodeJS.ProcessEnv): Promise<CheckResult> {
	let python: string;
	try {
		python = resolveKernelPython(env);
	} catch (error) {
		return fail("Kernel Python", (error as Error).message, "Run `prime-agent setup`.");
	}
	const found = await kernelPythonProblem(python, Boolean(env.PRIME_AGENT_KERNEL_PYTHON));
	return found ? fail("Kernel Python", found.problem, found.fix) : ok("Kernel Python", python);
}

/** The environment a session's kernel would get here (a broken settings or models file is its own check's to report). */
function kernelEnvironment(paths: AgentPaths, env: NodeJS.ProcessEnv): ChildEnvironment {
	const read = <T>(load: () => T, fallback: T): T => {
		try {
			return load();
		} catch {
			return fallback;
		}
	};
	const models = read(() => loadModelsFile(paths.models), undefined);
	const settings = read(() => loadSettings(paths.settings), {});
	// A bad kernel server setting is its own check's to report; the token variable is withheld still.
	const withhold = read(
		() => chooseKernelServer({}, env, settings, paths.settings).tokenVariables,
		[settings.kernel?.tokenEnv].filter((name) => name !== undefined),
	);
	return childEnvironment(env, { models, keep: kernelEnvKeep(settings), withhold });
}

/** Which variables the kernel, gates and skill checks start without: names only, never a value. */
function checkKernelEnvironment({ withheld, kept }: ChildEnvironment): CheckResult {
	const parts = [
		withheld.length > 0
			? `withheld from the kernel and gates: ${withheld.join(", ")}`
			: "no keys in the environment to withhold from the kernel and gates",
	];
	if (kept.length > 0) parts.push(`passed through by kernel.env.keep: ${kept.join(", ")}`);
	return ok("Kernel environment", parts.join("; "));
}

async function checkKernel(env: NodeJS.ProcessEnv, baseEnv: Record<string, string>): Promise<CheckResult> {
	const scratch = mkdtempSync(join(tmpdir(), "prime-agent-doctor-"));
	const kernel = new SessionKernel({
		cwd: scratch,
		baseEnv,
		outputDir: join(scratch, "outputs"),
		python: resolveKernelPython(env),
	});
	const began = Date.now();
	try {
		const run = await kernel.run("import sys; print(sys.version.split()[0], callable(edit))");
		if (run.cell.status !== "ok" || !run.cell.stdout.includes("True")) {
			return fail(
				"Kernel",
				`started, but the agent runtime is missing: ${run.cell.error?.evalue ?? run.cell.stdout.trim()}`,
				"Run `prime-agent setup` again; report the problem if it persists.",
			);
		}
		return ok(
			"Kernel",
			`Python ${run.cell.stdout.split(" ")[0]}, ready in ${((Date.now() - began) / 1000).toFixed(1)}s`,
		);
	} catch (error) {
		return fail("Kernel", `did not start: ${(error as Error).message}`, "Run `prime-agent setup`, then retry.");
	} finally {
		await kernel.dispose();
		rmSync(scratch, { recursive: true, force: true });
	}
}
