import { readFileSync } from "node:fs";
import { join } from "node:path";
import { KernelSetupError, resolveKernelPython } from "prime-agent-kernel";
import { childEnvironment } from "../child-env/index.js";
import { ExitCode, type ExitCodeValue, UserError } from "../errors.js";
import { approveOwnSkills } from "../trust/index.js";
import { discoverSkills, skillProblemLine, skillRoots } from "./discover.js";
import { installSkills, removeSkill } from "./install.js";
import { SKILL_FILE } from "./skill-file.js";

export const SKILL_USAGE = `Usage:
  prime-agent skill list                                   skills of this project, the agent home and packages
  prime-agent skill show <name>                            a skill's folder and its SKILL.md
  prime-agent skill install <path|npm:name[@version]> [--local] [--force]
                                                           copy skills in (--local: this project's .prime/skills;
                                                           --force: replace a skill of the same name there)
  prime-agent skill remove <name> [--local]                remove an installed skill`;

/** What `prime-agent skill` writes to and reads from. */
export interface SkillCliIo {
	cwd: string;
	agentHome: string;
	/** The environment: the kernel's interpreter is found from it, and the import check runs in it without keys. */
	env: NodeJS.ProcessEnv;
	out(text: string): void;
	err(text: string): void;
}

/** `prime-agent skill ...` (the arguments after `skill`). Bad input is a `UserError`. */
export async function runSkillCommand(argv: readonly string[], io: SkillCliIo): Promise<ExitCodeValue> {
	const local = argv.includes("--local");
	const force = argv.includes("--force");
	const words = argv.filter((arg) => arg !== "--local" && arg !== "--force");
	const unknownFlag = words.find((word) => word.startsWith("-"));
	if (words[0] === "--help" || words[0] === "-h") {
		io.out(`${SKILL_USAGE}\n`);
		return ExitCode.ok;
	}
	if (unknownFlag)
		throw new UserError(`Unknown option ${unknownFlag} for \`prime-agent skill\`.`, SKILL_USAGE, ExitCode.usage);
	const [action, target, extra] = words;
	const scope = { agentHome: io.agentHome, cwd: io.cwd, local };
	if (force && action !== "install") {
		throw new UserError(
			"--force goes with `prime-agent skill install` only (it replaces an installed skill of the same name).",
			SKILL_USAGE,
			ExitCode.usage,
		);
	}
	if (extra !== undefined)
		throw new UserError(`Unexpected argument "${extra}".`, "Name one skill at a time.", ExitCode.usage);
	const needTarget = (what: string): string => {
		if (!target) throw new UserError(`\`prime-agent skill ${action}\` needs ${what}.`, SKILL_USAGE, ExitCode.usage);
		return target;
	};
	switch (action) {
		case "list": {
			const found = discoverSkills(skillRoots(scope));
			if (found.skills.length === 0) io.out("No skills. Add one with `prime-agent skill install <path|npm:name>`.\n");
			for (const skill of found.skills) {
				io.out(`${skill.name}  (${skill.source})  ${skill.description.replace(/\s+/g, " ")}\n`);
			}
			for (const skill of found.shadowed) {
				io.out(`${skill.name}  (${skill.source}, hidden by the one above)  ${skill.dir}\n`);
			}
			for (const problem of found.problems) io.err(`${skillProblemLine(problem)}\n`);
			return ExitCode.ok;
		}
		case "show": {
			const name = needTarget("a skill name");
			const skill = discoverSkills(skillRoots(scope)).skills.find((entry) => entry.name === name);
			if (!skill) {
				throw new UserError(`No skill named "${name}".`, "List them with `prime-agent skill list`.", ExitCode.usage);
			}
			io.out(`${skill.dir} (${skill.source})\n\n${readFileSync(join(skill.dir, SKILL_FILE), "utf8")}`);
			return ExitCode.ok;
		}
		case "install": {
			const source = needTarget("a folder or npm:name");
			const installed = await installSkills(source, scope, {
				force,
				python: () => kernelPython(io.env),
				env: childEnvironment(io.env).env,
				log: (line) => io.err(`${line}\n`),
			});
			for (const skill of installed) io.out(`Installed ${skill.name} into ${skill.dir}\n`);
			// Installed by the user into the project: approved as installed (a later change is asked about).
			if (local)
				approveOwnSkills(
					scope.agentHome,
					scope.cwd,
					installed.map((skill) => skill.dir),
				);
			io.out(
				`New sessions ${local ? "in this project" : "everywhere"} list ${installed.length === 1 ? "it" : "them"}.\n`,
			);
			return ExitCode.ok;
		}
		case "remove": {
			const dir = removeSkill(needTarget("a skill name"), scope);
			io.out(`Removed ${dir}\n`);
			return ExitCode.ok;
		}
		default:
			throw new UserError(
				`\`prime-agent skill\` needs list, show, install or remove${action ? `, not "${action}"` : ""}.`,
				SKILL_USAGE,
				ExitCode.usage,
			);
	}
}

/** The kernel's interpreter, which checks that an installed package imports; a missing one installs nothing. */
function kernelPython(env: NodeJS.ProcessEnv): string {
	try {
		return resolveKernelPython(env);
	} catch (error) {
		if (!(error instanceof KernelSetupError)) throw error;
		throw new UserError(
			`Nothing was installed: a skill's package is checked with the kernel's Python, which is not ready: ${error.message}`,
			"Set it up as said above, then install again.",
		);
	}
}
