import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCliText } from "prime-agent-test-support/cli-process";
import { type LoopbackServer, localModelWorld, type ScriptedReply } from "prime-agent-test-support/loopback-servers";
import type { TempWorld } from "prime-agent-test-support/temp-home";
import { afterEach, describe, expect, it } from "vitest";
import { parseArgs } from "../src/cli/index.js";
import { approveItems, findProjectCode, projectTrust, TRUST_FILE } from "../src/trust/index.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/mcp-server.mjs", import.meta.url));

/** What the model runs: the project's MCP server and skill, each failure printed (the run goes on). */
const USE_PROJECT_CODE = `print(repr(mcp))
try:
    import mcp_servers.marker as m
    print("tools:", len(m.tools()))
except Exception as error:
    print(type(error).__name__ + ":", error)
try:
    skills.load("marker-skill", quiet=True)
    print("skill loaded")
except Exception as error:
    print(type(error).__name__ + ":", error)`;

const NOT_APPROVED = {
	mcp: "Project MCP servers in .prime/mcp.json are not approved, not started: run prime-agent in this folder to review them, or pass --trust-project.",
	skills:
		"Project skills in .prime/skills (marker-skill) are not approved: their code does not run; run prime-agent in this folder to review them, or pass --trust-project.",
	extensions:
		"Project extensions in .prime/agent/extensions are not approved, not loaded: run prime-agent in this folder to review them, or pass --trust-project.",
};

let world: TempWorld | undefined;
let server: LoopbackServer | undefined;
afterEach(async () => {
	await server?.close();
	server = undefined;
	world?.cleanup();
	world = undefined;
});

interface Repo {
	world: TempWorld;
	/** Marker files: each exists only once its code ran. */
	markers: { mcp: string; skill: string; extension: string };
	/** The tool results the model was sent, in order. */
	toolResults(): string[];
	run(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/**
 * A repository (a git folder) whose `.prime/mcp.json` server, `.prime/skills/marker-skill`
 * package and `.prime/agent/extensions/marker.js` each create a marker file when they run; the
 * model (a loopback server) answers each run with `USE_PROJECT_CODE`, then "done".
 */
async function crafted(runs = 1): Promise<Repo> {
	const script: ScriptedReply[] = [];
	for (let i = 0; i < runs; i++) script.push({ code: USE_PROJECT_CODE }, { text: "done" });
	const local = await localModelWorld(script);
	world = local.world;
	server = local.server;
	const markers = {
		mcp: join(world.home, "..", "mcp-started"),
		skill: join(world.home, "..", "skill-imported"),
		extension: join(world.home, "..", "extension-loaded"),
	};
	mkdirSync(join(world.project, ".git"));
	world.writeProject(
		".prime/mcp.json",
		JSON.stringify({
			mcpServers: { marker: { command: process.execPath, args: [FIXTURE], env: { MCP_FIXTURE_STARTS: markers.mcp } } },
		}),
	);
	world.writeProject(
		".prime/skills/marker-skill/SKILL.md",
		"---\nname: marker-skill\ndescription: Marks.\n---\nUse it.\n",
	);
	world.writeProject(
		".prime/skills/marker-skill/__init__.py",
		`open(${JSON.stringify(markers.skill)}, "w").write("imported")\n`,
	);
	world.writeProject(
		".prime/agent/extensions/marker.js",
		`import { writeFileSync } from "node:fs";\nexport default function () { writeFileSync(${JSON.stringify(markers.extension)}, "loaded"); }\n`,
	);
	const current = world;
	const requests = local.server.requests;
	return {
		world: current,
		markers,
		toolResults: () =>
			requests.flatMap((request) => {
				const last = (request.messages as { role: string; content: unknown }[]).at(-1);
				return last?.role === "tool" ? [String(last.content)] : [];
			}),
		run: (...args) => runCliText(["--model", "local/coder", ...args], current.project, current.env),
	};
}

const ran = (markers: Repo["markers"]) => ({
	mcp: existsSync(markers.mcp),
	skill: existsSync(markers.skill),
	extension: existsSync(markers.extension),
});

describe("project code runs only once approved", () => {
	it("with no approval nothing of the project runs, -p says so once on stderr, and the kernel says how to approve", async () => {
		const repo = await crafted();
		const result = await repo.run("-p", "use the project's tools");
		expect(result.code).toBe(0);
		expect(ran(repo.markers)).toEqual({ mcp: false, skill: false, extension: false });
		for (const line of Object.values(NOT_APPROVED)) expect(result.stderr.split(line).length - 1).toBe(1);
		expect(repo.toolResults()).toHaveLength(1);
		expect(repo.toolResults()[0]?.split("\n")[0]).toBe("<mcp: no server runs (marker); import one to see why>");
		expect(repo.toolResults()[0]).toContain(
			'ModuleNotFoundError: MCP server "marker" of .prime/mcp.json is not approved, so it was not started: run prime-agent in this folder to review it, or pass --trust-project.',
		);
		expect(repo.toolResults()[0]).toContain(
			`SkillError: skills.load('marker-skill'): the project skill "marker-skill" (.prime/skills/marker-skill) is not approved, so its code is not run: run prime-agent in this folder to review it, or pass --trust-project.`,
		);
	}, 180_000);

	it("/mcp names the project's server that did not start, and how to approve it", async () => {
		const repo = await crafted(0);
		const result = await repo.run("-p", "/mcp");
		expect(result.code).toBe(0);
		expect(result.stdout).toBe(
			'MCP server "marker" of .prime/mcp.json is not approved, so it was not started: run prime-agent in this folder to review it, or pass --trust-project.\n',
		);
		expect(existsSync(repo.markers.mcp)).toBe(false);
	}, 180_000);

	it("an extension package of the project's settings.json loads only once approved, and again only unchanged", async () => {
		const repo = await crafted(0);
		const marker = join(repo.world.home, "..", "package-loaded");
		const pkg = join(repo.world.project, "vendor", "ext");
		repo.world.writeProject(
			"vendor/ext/index.js",
			`import { writeFileSync } from "node:fs";\nexport default function () { writeFileSync(${JSON.stringify(marker)}, "loaded"); }\n`,
		);
		repo.world.writeProject(".prime/agent/settings.json", JSON.stringify({ packages: [pkg] }));
		const held = await repo.run("-p", "/mcp");
		expect(existsSync(marker)).toBe(false);
		expect(held.stderr).toContain(
			"Extension packages of .prime/agent/settings.json are not approved, not loaded: run prime-agent in this folder to review them, or pass --trust-project.",
		);
		const code = findProjectCode(repo.world.project);
		approveItems(
			repo.world.home,
			code.root,
			code.items.filter((item) => item.kind === "packages"),
		);
		expect((await repo.run("-p", "/mcp")).code).toBe(0);
		expect(existsSync(marker)).toBe(true);
		// The package's own code changed: the approval of the settings file does not cover it.
		rmSync(marker);
		repo.world.writeProject("vendor/ext/index.js", "export default function () {}\n// changed\n");
		const changed = await repo.run("-p", "/mcp");
		expect(changed.stderr).toContain(
			"Extension packages of .prime/agent/settings.json are changed since they were approved, not loaded",
		);
	}, 180_000);

	it("--trust-project runs the project's server, skill and extension, and records no approval", async () => {
		const repo = await crafted();
		const result = await repo.run("--trust-project", "-p", "use the project's tools");
		expect(result.code).toBe(0);
		expect(ran(repo.markers)).toEqual({ mcp: true, skill: true, extension: true });
		expect(result.stderr).not.toContain("not approved");
		expect(repo.toolResults()[0]).toBe(
			"<mcp: servers marker; `import mcp_servers.NAME as m`, then m.tools()>\ntools: 8\nskill loaded",
		);
		expect(existsSync(join(repo.world.home, TRUST_FILE))).toBe(false);
	}, 180_000);

	it("an approval holds for the content approved: a changed file does not run until approved again", async () => {
		const repo = await crafted(3);
		const code = findProjectCode(repo.world.project);
		expect(code.items.map((item) => item.key)).toEqual([
			".prime/mcp.json",
			".prime/skills/marker-skill",
			".prime/agent/extensions",
		]);
		approveItems(repo.world.home, code.root, code.items);
		const store = join(repo.world.home, TRUST_FILE);
		expect(statSync(store).mode & 0o777).toBe(0o600);
		expect(Object.keys(JSON.parse(readFileSync(store, "utf8")).projects)).toEqual([code.root]);

		const approved = await repo.run("-p", "use them");
		expect(approved.code).toBe(0);
		expect(ran(repo.markers)).toEqual({ mcp: true, skill: true, extension: true });
		expect(approved.stderr).not.toContain("approved");

		for (const marker of Object.values(repo.markers)) rmSync(marker);
		const mcpJson = JSON.parse(readFileSync(join(repo.world.project, ".prime/mcp.json"), "utf8"));
		mcpJson.mcpServers.marker.args.push("--extra");
		repo.world.writeProject(".prime/mcp.json", JSON.stringify(mcpJson));
		repo.world.writeProject(
			".prime/skills/marker-skill/__init__.py",
			`open(${JSON.stringify(repo.markers.skill)}, "w").write("changed")\n`,
		);
		const changed = await repo.run("--mode", "json", "-p", "use them again");
		expect(changed.code).toBe(0);
		expect(ran(repo.markers)).toEqual({ mcp: false, skill: false, extension: true });
		const session = JSON.parse(changed.stdout.split("\n")[0] as string) as { notices: string[] };
		expect(session.notices).toEqual([
			"Project MCP servers in .prime/mcp.json are changed since they were approved, not started: run prime-agent in this folder to review them, or pass --trust-project.",
			"Project skills in .prime/skills (marker-skill) are changed since they were approved: their code does not run; run prime-agent in this folder to review them, or pass --trust-project.",
		]);
		expect(repo.toolResults()[1]).toContain(
			'the project skill "marker-skill" (.prime/skills/marker-skill) is changed since it was approved, so its code is not run',
		);

		rmSync(repo.markers.extension);
		approveItems(repo.world.home, code.root, findProjectCode(repo.world.project).items);
		const again = await repo.run("-p", "and once more");
		expect(again.code).toBe(0);
		expect(ran(repo.markers)).toEqual({ mcp: true, skill: true, extension: true });
	}, 180_000);

	it("doctor does not start an unapproved project server and says so; once approved it starts it", async () => {
		const repo = await crafted(0);
		const doctor = await runCliText(["doctor"], repo.world.project, repo.world.env);
		expect(existsSync(repo.markers.mcp)).toBe(false);
		expect(doctor.stdout).toContain(
			"! Project MCP servers (.prime/mcp.json): not approved, not started: marker\n    fix: Run prime-agent in this folder to review them, or pass --trust-project to a run (`prime-agent --trust-project`).",
		);
		const code = findProjectCode(repo.world.project);
		approveItems(repo.world.home, code.root, code.items);
		const approved = await runCliText(["doctor"], repo.world.project, repo.world.env);
		expect(existsSync(repo.markers.mcp)).toBe(true);
		expect(approved.stdout).toMatch(/✓ MCP server "marker": 8 tools, ready in \d+\.\ds/);
		expect(approved.stdout).toContain(`✓ Project code: 3 items approved in ${code.root}`);
	}, 120_000);
});

describe("the approvals file", () => {
	it("is keyed by the project's real path: a link to the repository finds its approvals", async () => {
		const repo = await crafted(0);
		const code = findProjectCode(repo.world.project);
		approveItems(repo.world.home, code.root, code.items);
		const link = join(repo.world.home, "..", "linked-project");
		symlinkSync(repo.world.project, link);
		const trust = projectTrust({ cwd: join(link, ".prime"), agentHome: repo.world.home });
		expect(trust.root).toBe(code.root);
		expect(trust.held).toEqual([]);
	});

	it("a skill folder linked into .prime/skills from elsewhere is still the project's: held until approved", async () => {
		const repo = await crafted(0);
		const outside = join(repo.world.home, "..", "elsewhere", "linked-skill");
		mkdirSync(outside, { recursive: true });
		writeFileSync(join(outside, "SKILL.md"), "---\nname: linked-skill\ndescription: Linked.\n---\n");
		writeFileSync(join(outside, "__init__.py"), "X = 1\n");
		const link = join(repo.world.project, ".prime", "skills", "linked-skill");
		symlinkSync(outside, link);
		const trust = projectTrust({ cwd: repo.world.project, agentHome: repo.world.home });
		expect(trust.skillRefusal(link, "linked-skill")).toBe(
			'the project skill "linked-skill" (.prime/skills/linked-skill) is not approved, so its code is not run: run prime-agent in this folder to review it, or pass --trust-project.',
		);
		const code = findProjectCode(repo.world.project);
		approveItems(repo.world.home, code.root, code.items);
		expect(trust.skillRefusal(link, "linked-skill")).toBeUndefined();
		// The folder the link points to changed: held again.
		writeFileSync(join(outside, "__init__.py"), "X = 2\n");
		expect(trust.skillRefusal(link, "linked-skill")).toContain("is changed since it was approved");
	});

	it("the review of .prime/mcp.json shows each server's command or URL, which of the user's variables it gets, and what it turns off", async () => {
		const repo = await crafted(0);
		repo.world.writeProject(
			".prime/mcp.json",
			JSON.stringify({
				mcpServers: {
					gh: {
						command: "npx",
						args: ["-y", "gh-server"],
						// biome-ignore lint/suspicious/noTemplateCurlyInString: ${VAR} is the config file's own syntax.
						env: { GITHUB_TOKEN: "${GITHUB_TOKEN}", DEBUG: "1", LEVEL: "${LOG_LEVEL:-info}" },
					},
					// biome-ignore lint/suspicious/noTemplateCurlyInString: ${VAR} is the config file's own syntax.
					docs: { url: "https://example.com/mcp", headers: { Authorization: "Bearer ${DOCS_TOKEN}" } },
					off: { command: "never", disabled: true },
				},
			}),
		);
		const mcp = findProjectCode(repo.world.project).items.find((item) => item.kind === "mcp");
		expect(mcp?.details).toEqual([
			// biome-ignore lint/suspicious/noTemplateCurlyInString: as written in the file.
			"docs: https://example.com/mcp (headers: Authorization=Bearer ${DOCS_TOKEN})",
			// biome-ignore lint/suspicious/noTemplateCurlyInString: as written in the file.
			"gh: npx -y gh-server (env: GITHUB_TOKEN=${GITHUB_TOKEN}, DEBUG, LEVEL=${LOG_LEVEL:-info})",
			`off: "disabled": true (turns off the agent home's "off")`,
		]);
		expect(mcp?.names).toEqual(["docs", "gh"]);
	});

	it("a file that is not an approvals file approves nothing, says so, and is never overwritten", async () => {
		const repo = await crafted(0);
		const store = join(repo.world.home, TRUST_FILE);
		writeFileSync(store, '{"projects": []}', { mode: 0o600 });
		const trust = projectTrust({ cwd: repo.world.project, agentHome: repo.world.home });
		expect(trust.held).toHaveLength(3);
		expect(trust.notices()[0]).toBe(
			`Project approvals could not be read (${store} is not an approvals file ({"version": 1, "projects": {...}})); nothing of the project runs.`,
		);
		expect(() => approveItems(repo.world.home, trust.root, trust.items)).toThrow(
			`The approvals were not saved: ${store} is not an approvals file`,
		);
		expect(readFileSync(store, "utf8")).toBe('{"projects": []}');
	});

	it("--trust-project is a flag of a session run only", () => {
		expect(parseArgs(["--trust-project", "-p", "x"]).trustProject).toBe(true);
		expect(() => parseArgs(["doctor", "--trust-project"])).toThrow(
			"--trust-project works only when a session starts, not with `prime-agent doctor`.",
		);
	});
});
