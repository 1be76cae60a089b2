/**
 * Skills: folders holding a SKILL.md (front matter `name` and `description`, then when and how to
 * use it) and a Python package. Found in the project, the agent home and installed packages;
 * indexed in the system prompt; loaded in the kernel with `skills.load(name)`; installed with
 * `prime-agent skill`; drafted from a session by the skill creator.
 */
export { askModel, type SessionModel } from "./ask-model.js";
export { runSkillCommand, SKILL_USAGE, type SkillCliIo } from "./cli.js";
export {
	CREATOR_SYSTEM_PROMPT,
	CREATOR_TRAJECTORY_CHARS,
	createSkill,
	MAX_SKILL_BYTES,
	MAX_SKILL_FILES,
	parseFileBlocks,
	type SkillCreateOptions,
	type SkillCreateResult,
} from "./creator.js";
export {
	discoverSkills,
	existingSkills,
	moduleCollision,
	packageSkillDirs,
	projectSkillsDir,
	readSkill,
	type Skill,
	type SkillDiscovery,
	type SkillRoot,
	skillProblemLine,
	skillRoots,
	userSkillsDir,
} from "./discover.js";
export { installSkills, removeSkill, type SkillScope, scopeDir } from "./install.js";
export { SKILL_DESCRIPTION_CHARS, SKILL_INDEX_LIMIT, skillPromptSection } from "./prompt-index.js";
export {
	checkSkillName,
	MAX_DESCRIPTION_CHARS,
	MAX_NAME_CHARS,
	parseSkillFile,
	SKILL_FILE,
	SKILL_PACKAGE_FILE,
	type SkillFile,
	SkillFileError,
	skillModule,
} from "./skill-file.js";
export { checkSkillImports, IMPORT_CHECK_TIMEOUT_MS, placeSkillFolder } from "./skill-folder.js";
