import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage } from "@mariozechner/pi-ai";
import { useFauxSessions } from "prime-agent-test-support/faux-session";
import { kernelPythonForTests } from "prime-agent-test-support/kernel-python";
import { type LoopbackServer, openAiCompletionsServer } from "prime-agent-test-support/loopback-servers";
import { makeTempWorld, type TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, describe, expect, it } from "vitest";
import { childEnvironment } from "../src/child-env/index.js";
import { runCli } from "../src/cli/index.js";
import { runChecks } from "../src/doctor/index.js";
import { UserError } from "../src/errors.js";
import { agentPaths } from "../src/home/index.js";
import { cell, lastToolResult, scriptAgents } from "./agent-scripts.js";
import { memoryIo } from "./cli-io.js";

const sessions = useFauxSessions({ provider: "fauxenv", models: [{ id: "m" }] });

/** Secrets of every kind the rule covers, plus variables that must pass. */
const HOST_ENV = {
	OPENAI_API_KEY: "sk-openai-fake",
	ANTHROPIC_API_KEY: "sk-ant-fake",
	MY_SERVICE_TOKEN: "svc-fake",
	/** models.json's apiKeyEnv: matched by no ending, withheld because models.json names it. */
	LOCAL_MODEL_KEY: "local-model-fake",
	/** pi-ai's Bedrock sign-in: the credential is withheld, the profile name is not. */
	AWS_SECRET_ACCESS_KEY: "aws-secret-fake",
	AWS_PROFILE: "dev",
	db_password: "pw-fake",
	KEPT_TOKEN: "kept-fake",
	PLAIN_SETTING: "plain",
};
const NAMES = [...Object.keys(HOST_ENV), "PATH"];
/** What the kernel may see of NAMES (KEPT_TOKEN through `kernel.env.keep`). */
const VISIBLE = ["AWS_PROFILE", "KEPT_TOKEN", "PATH", "PLAIN_SETTING"];
const WITHHELD = [
	"ANTHROPIC_API_KEY",
	"AWS_SECRET_ACCESS_KEY",
	"LOCAL_MODEL_KEY",
	"MY_SERVICE_TOKEN",
	"OPENAI_API_KEY",
	"db_password",
];

const PRINT_NAMES = `import os\nprint("kernel sees", sorted(n for n in ${JSON.stringify(NAMES)} if n in os.environ))`;
const BASH_NAMES = `%%bash\necho bash sees $(env | cut -d= -f1 | grep -xE '${NAMES.join("|")}' | sort)`;

describe("the kernel starts without the host's keys", () => {
	let world: TempWorld | undefined;
	let server: LoopbackServer | undefined;
	afterEach(async () => {
		await server?.close();
		world?.cleanup();
	});

	it("a cell and %%bash see no provider key, apiKeyEnv or *_TOKEN-like name; kernel.env.keep passes one; the host still sends its key", async () => {
		server = await openAiCompletionsServer([{ code: PRINT_NAMES }, { code: BASH_NAMES }, { text: "done" }]);
		world = makeTempWorld({ PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests(), ...HOST_ENV });
		world.writeHome("models.json", {
			providers: {
				local: {
					baseUrl: server.baseUrl,
					api: "openai-completions",
					apiKeyEnv: "LOCAL_MODEL_KEY",
					models: [{ id: "coder" }],
				},
			},
		});
		world.writeHome("settings.json", { kernel: { env: { keep: ["KEPT_TOKEN"] } } });
		const io = memoryIo(world.project, world.env);
		expect(await runCli(["-p", "show the environment", "--model", "local/coder"], io)).toBe(0);
		const messages = (server.requests.at(-1)?.messages ?? []) as { role: string; content: unknown }[];
		const toolResults = messages
			.filter((message) => message.role === "tool")
			.map((message) => JSON.stringify(message.content));
		expect(toolResults).toHaveLength(2);
		expect(toolResults[0]).toContain(`kernel sees [${VISIBLE.map((n) => `'${n}'`).join(", ")}]`);
		expect(toolResults[1]).toContain(`bash sees ${VISIBLE.join(" ")}`);
		// The host process itself keeps the key it calls the model with.
		expect(server.headers.map((headers) => headers.authorization)).toEqual(Array(3).fill("Bearer local-model-fake"));
		const sent = JSON.stringify(server.requests);
		for (const value of ["sk-openai-fake", "sk-ant-fake", "svc-fake", "local-model-fake", "aws-secret-fake", "pw-fake"])
			expect(sent).not.toContain(value);
	});

	it("a sub-agent's kernel is scrubbed too", async () => {
		sessions.newWorld({ OPENAI_API_KEY: "sk-openai-fake", MY_SERVICE_TOKEN: "svc-fake", PLAIN_SETTING: "plain" });
		const started = await sessions.start();
		const seen = scriptAgents(sessions, {
			root: [cell('await rlm("look around", name="kid")'), fauxAssistantMessage("waiting"), fauxAssistantMessage("ok")],
			kid: [cell(PRINT_NAMES), fauxAssistantMessage("looked")],
		});
		await started.agentSession.prompt("spawn");
		await started.whenSettled();
		expect(lastToolResult(seen.get("kid")?.[1])).toBe("kernel sees ['PATH', 'PLAIN_SETTING']");
	});

	it("an autonomous gate runs without the keys", async () => {
		const world = sessions.newWorld({
			OPENAI_API_KEY: "sk-openai-fake",
			MY_SERVICE_TOKEN: "svc-fake",
			PLAIN_SETTING: "plain",
		});
		const seen = join(world.project, "..", "gate-env.txt");
		sessions.faux.setResponses([fauxAssistantMessage("Done.")]);
		const started = await sessions.start({
			autonomous: { gates: [`env | cut -d= -f1 | grep -xE '${NAMES.join("|")}' | sort > ${seen}`] },
		});
		await started.agentSession.prompt("finish");
		await started.whenSettled();
		expect(started.autonomous?.ending).toEqual({ status: "passed" });
		expect(readFileSync(seen, "utf8")).toBe("PATH\nPLAIN_SETTING\n");
	});

	it("a drafted skill's import check runs without the keys (its failure goes back to the model)", async () => {
		sessions.newWorld({ OPENAI_API_KEY: "sk-openai-fake", PLAIN_SETTING: "plain" });
		const started = await sessions.start();
		const draft = [
			'<file path="SKILL.md">\n---\nname: env-probe\ndescription: Probe the environment.\n---\n\nNothing to use.\n</file>',
			'<file path="__init__.py">\nimport os\nraise RuntimeError("probe " + os.environ.get("OPENAI_API_KEY", "no key") + " " + os.environ.get("PLAIN_SETTING", "no plain"))\n</file>',
		].join("\n");
		sessions.faux.setResponses([() => fauxAssistantMessage(draft)]);
		const outcome = await started.agentSession.prompt("/skill create env-probe");
		expect(outcome.command?.message).toContain("RuntimeError: probe no key plain");
	});
});

describe("kernel.env.keep and doctor", () => {
	it("doctor names the withheld variables and the kept ones, never a value", async () => {
		const world = sessions.newWorld(HOST_ENV);
		world.writeHome("models.json", {
			providers: { local: { baseUrl: "http://127.0.0.1:9/v1", apiKeyEnv: "LOCAL_MODEL_KEY", models: [{ id: "c" }] } },
		});
		world.writeHome("settings.json", { kernel: { env: { keep: ["KEPT_TOKEN"] } } });
		const checks = await runChecks(agentPaths(world.home), world.env, world.project);
		const check = checks.find((entry) => entry.name === "Kernel environment");
		expect(check).toEqual({
			name: "Kernel environment",
			status: "ok",
			detail: `withheld from the kernel and gates: ${WITHHELD.join(", ")}; passed through by kernel.env.keep: KEPT_TOKEN`,
		});
		expect(checks.find((entry) => entry.name === "Kernel")?.status).toBe("ok");
	});

	it("a kernel.env.keep that is not a list of variable names stops the start with the file and an example", async () => {
		const world = sessions.newWorld();
		const file = join(world.home, "settings.json");
		const example = 'Write it as "kernel": {"env": {"keep": ["GITHUB_TOKEN"]}}.';
		const refused = async (settings: unknown) => {
			world.writeHome("settings.json", settings);
			const error = await sessions.start().catch((caught: unknown) => caught);
			expect(error).toBeInstanceOf(UserError);
			expect((error as UserError).hint).toBe(example);
			return (error as Error).message;
		};
		expect(await refused({ kernel: { env: { keep: ["GOOD", "MY-TOKEN"] } } })).toBe(
			`"kernel.env.keep" in ${file} must be a list of environment variable names; "MY-TOKEN" is not one.`,
		);
		expect(await refused({ kernel: { env: { keep: "GITHUB_TOKEN" } } })).toBe(
			`"kernel.env.keep" in ${file} must be a list of environment variable names.`,
		);
		expect(await refused({ kernel: { env: { pass: [] } } })).toBe(`"kernel.env.pass" in ${file} is not a known key.`);
		expect(await refused({ kernel: [] })).toBe(`"kernel" in ${file} must be an object.`);
	});
});

describe("which variables are withheld", () => {
	it("pi-ai's key variables, its AWS credentials (not profile or file names), apiKeyEnv, and the secret endings in any case", () => {
		const host = {
			GITHUB_TOKEN: "1",
			HF_TOKEN: "1",
			GEMINI_API_KEY: "1",
			AWS_ACCESS_KEY_ID: "1",
			AWS_SECRET_ACCESS_KEY: "1",
			AWS_SESSION_TOKEN: "1",
			AWS_BEARER_TOKEN_BEDROCK: "1",
			AWS_PROFILE: "1",
			AWS_REGION: "1",
			AWS_WEB_IDENTITY_TOKEN_FILE: "1",
			AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: "1",
			GOOGLE_CLOUD_PROJECT: "1",
			LOCAL_MODEL_KEY: "1",
			my_db_Password: "1",
			Stripe_Secret: "1",
			TOKENIZERS_PARALLELISM: "1",
			PASSWORD_STORE_DIR: "1",
			SSH_AUTH_SOCK: "1",
			KEPT_TOKEN: "1",
		};
		const scrubbed = childEnvironment(host, {
			models: { providers: { local: { apiKeyEnv: "LOCAL_MODEL_KEY" } } },
			keep: ["KEPT_TOKEN", "AWS_PROFILE"],
		});
		expect(scrubbed.withheld).toEqual([
			"AWS_ACCESS_KEY_ID",
			"AWS_BEARER_TOKEN_BEDROCK",
			"AWS_SECRET_ACCESS_KEY",
			"AWS_SESSION_TOKEN",
			"GEMINI_API_KEY",
			"GITHUB_TOKEN",
			"HF_TOKEN",
			"LOCAL_MODEL_KEY",
			"Stripe_Secret",
			"my_db_Password",
		]);
		expect(Object.keys(scrubbed.env).sort()).toEqual([
			"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
			"AWS_PROFILE",
			"AWS_REGION",
			"AWS_WEB_IDENTITY_TOKEN_FILE",
			"GOOGLE_CLOUD_PROJECT",
			"KEPT_TOKEN",
			"PASSWORD_STORE_DIR",
			"SSH_AUTH_SOCK",
			"TOKENIZERS_PARALLELISM",
		]);
		// Only a name the rule matched counts as kept (AWS_PROFILE passes anyway).
		expect(scrubbed.kept).toEqual(["KEPT_TOKEN"]);
	});
});
