/**
 * Skills in Prime Agent, through the public extension API: the index of skills after the system
 * prompt, the kernel's `skills` handle (`skills.list()`, `skills.load(name)`,
 * `await skills.create(name, request)`), and `/skill`. The skills themselves live in `src/skills/`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { resolveKernelPython } from "prime-agent-kernel";
import type { ExtensionAPI, ExtensionFactory } from "../../extensions/api.js";
import { trajectoryText } from "../../harness/index.js";
import {
	askModel,
	createSkill,
	discoverSkills,
	existingSkills,
	moduleCollision,
	projectSkillsDir,
	type SessionModel,
	SKILL_FILE,
	type Skill,
	type SkillDiscovery,
	skillProblemLine,
	skillPromptSection,
	skillRoots,
	userSkillsDir,
} from "../../skills/index.js";
import { approveOwnSkills, type ProjectTrust } from "../../trust/index.js";

export const SKILLS_EXTENSION_NAME = "builtin:skills";
/** Host requests of the kernel's `skills` handle. */
export const SKILLS_REQUESTS = { list: "skills.list", load: "skills.load", create: "skills.create" } as const;

const USAGE = "Usage: /skill [list], /skill show <name>, /skill create <name> [--project] [what it should do]";

/**
 * The skills extension; `model` is the session's, for the skill creator's drafting call; `trust`
 * decides whether a project skill's package may be imported (checked at each load).
 */
export function skillsExtension(model: SessionModel, trust: ProjectTrust): ExtensionFactory {
	return (api: ExtensionAPI) => {
		const roots = skillRoots({ agentHome: api.agentHome, cwd: api.cwd });
		const discover = () => discoverSkills(roots);
		const find = (name: unknown): Skill => {
			const discovery = discover();
			const found = discovery.skills;
			const skill = found.find((entry) => entry.name === name);
			if (skill) return skill;
			const collided = discovery.collided.find((entry) => entry.name === name);
			if (collided) {
				const group = discovery.collided.filter((entry) => entry.module === collided.module);
				throw new Error(moduleCollision(group));
			}
			const names = found.map((entry) => entry.name);
			throw new Error(
				`no skill named "${String(name)}" (skills: ${names.length > 0 ? names.join(", ") : "none"}); skills.list() lists them.`,
			);
		};
		const create = async (name: string, request: string | undefined, scope: unknown) => {
			if (scope !== "user" && scope !== "project")
				throw new Error(`scope must be "user" or "project", not ${String(scope)}.`);
			const result = await createSkill({
				name,
				request,
				trajectory: trajectoryText(api.getBranch()),
				root: scope === "project" ? projectSkillsDir(api.cwd) : userSkillsDir(api.agentHome),
				source: scope,
				python: resolveKernelPython(api.env),
				env: api.childEnv,
				existing: existingSkills(discover()),
				ask: (systemPrompt, text) => askModel(model, systemPrompt, text),
			});
			if (result.status === "invalid") throw new Error(result.report);
			// The session's own new skill is the user's: it loads without a review.
			if (scope === "project") approveOwnSkills(api.agentHome, api.cwd, [result.skill.dir]);
			return result.report;
		};

		api.addKernelStartup("from prime_agent_runtime import skills as _skills\n_skills.install()\ndel _skills\n", {
			names: ["skills"],
		});
		api.on("before_agent_start", () => ({ systemPromptAppend: skillPromptSection(discover().skills) }));

		api.onHostRequest(SKILLS_REQUESTS.list, () => ({
			skills: discover().skills.map((skill) => ({
				name: skill.name,
				description: skill.description,
				source: skill.source,
				dir: skill.dir,
			})),
		}));
		api.onHostRequest(SKILLS_REQUESTS.load, (payload) => {
			const skill = find(payload.name);
			const refused = skill.hasPackage ? trust.skillRefusal(skill.dir, skill.name) : undefined;
			if (refused) throw new Error(refused);
			return {
				name: skill.name,
				dir: skill.dir,
				module: skill.module,
				has_package: skill.hasPackage,
				skill_md: readFileSync(join(skill.dir, SKILL_FILE), "utf8"),
			};
		});
		api.onHostRequest(SKILLS_REQUESTS.create, async (payload) => {
			if (typeof payload.name !== "string") throw new Error("skills.create(name): name must be a string.");
			const request = typeof payload.request === "string" ? payload.request : undefined;
			return { report: await create(payload.name, request, payload.scope ?? "user") };
		});

		api.registerCommand("skill", {
			description: "skills: /skill list, /skill show <name>, /skill create <name> [--project] [what it should do]",
			handler: async (args) => {
				const [action = "list", name, ...rest] = args.split(/\s+/).filter(Boolean);
				switch (action) {
					case "list":
						return describeSkills(discover());
					case "show": {
						if (!name) throw new Error(`/skill show needs a skill name. ${USAGE}`);
						const skill = find(name);
						return `${skill.dir} (${skill.source})\n\n${readFileSync(join(skill.dir, SKILL_FILE), "utf8")}`;
					}
					case "create": {
						if (!name) throw new Error(`/skill create needs a name for the new skill. ${USAGE}`);
						const project = rest.includes("--project");
						const request = rest.filter((word) => word !== "--project").join(" ");
						return create(name, request || undefined, project ? "project" : "user");
					}
					default:
						throw new Error(`unknown /skill command "${action}". ${USAGE}`);
				}
			},
		});
	};
}

/** One line per skill (name, source, one-line description), or where to put one; then the folders left out. */
export function describeSkills(found: SkillDiscovery): string {
	const lines = found.skills.map(
		(skill) => `${skill.name}  (${skill.source})  ${skill.description.replace(/\s+/g, " ")}`,
	);
	if (lines.length === 0) {
		lines.push(
			"No skills yet. Put skill folders in .prime/skills/ or ~/.prime/agent/skills/, install one with `prime-agent skill install <path|npm:name>`, or draft one from this session with /skill create <name>.",
		);
	}
	return [...lines, ...found.problems.map(skillProblemLine)].join("\n");
}
