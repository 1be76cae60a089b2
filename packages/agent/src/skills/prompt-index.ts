import { cutText } from "../harness/index.js";
import type { Skill } from "./discover.js";

/** At most this many skills are listed in the system prompt; the rest are counted. */
export const SKILL_INDEX_LIMIT = 20;
/** Each listed description is cut to this many characters. */
export const SKILL_DESCRIPTION_CHARS = 180;

const HEADER = `# Skills

A skill is a Python package with instructions (SKILL.md). \`mod = skills.load("name")\` imports one
and prints its SKILL.md: read it before using the skill. \`skills.list()\` lists every skill.
When a workflow of this session recurs and is worth keeping, \`await skills.create("name", "what it
should do")\` packages it as a new skill.`;

/**
 * The system prompt's skill section: names and one-line descriptions only, sorted by name, at
 * most `SKILL_INDEX_LIMIT` entries and then "+N more". The same skills give byte-identical text.
 */
export function skillPromptSection(skills: readonly Skill[]): string {
	if (skills.length === 0) return `${HEADER}\n\nNo skills are installed yet.`;
	const listed = skills
		.slice(0, SKILL_INDEX_LIMIT)
		.map((skill) => `- ${skill.name}: ${cutText(skill.description, SKILL_DESCRIPTION_CHARS)}`);
	const more = skills.length - listed.length;
	if (more > 0) listed.push(`+${more} more (skills.list() lists them)`);
	return `${HEADER}\n\n${listed.join("\n")}`;
}
