import { realpathSync } from "node:fs";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { readJsonFile, TRUST_FILE, writePrivateJson } from "../home/index.js";
import { findProjectCode, type ProjectCodeItem } from "./project-code.js";

/** The approvals file in the agent home (user-only, written whole with a rename). */
export { TRUST_FILE };

/** One approval: the content hash the person saw when they approved it. */
export interface Approval {
	sha256: string;
	/** ISO time of the approval. */
	approvedAt: string;
}

/** `trusted-projects.json`: approvals by project real path, then by item key (see `ProjectCodeItem.key`). */
interface TrustFile {
	version: 1;
	projects: Record<string, Record<string, Approval>>;
}

export function trustStorePath(agentHome: string): string {
	return join(agentHome, TRUST_FILE);
}

/**
 * The approvals of the project at `root` (its real path). A file that does not parse or has
 * another shape approves nothing (so nothing of the project runs) and `problem` says why.
 */
export function readApprovals(
	agentHome: string,
	root: string,
): { approvals: Record<string, Approval>; problem?: string } {
	let file: TrustFile;
	try {
		file = readTrustFile(agentHome);
	} catch (error) {
		return { approvals: {}, problem: (error as Error).message };
	}
	return { approvals: file.projects[root] ?? {} };
}

/**
 * Approve `items` of the project at `root` for their current hashes (the file is read again just
 * before it is written, so approvals of other projects made meanwhile are kept). A file that does
 * not parse is left untouched: a `UserError` says so.
 */
export function approveItems(agentHome: string, root: string, items: readonly ProjectCodeItem[]): void {
	let file: TrustFile;
	try {
		file = readTrustFile(agentHome);
	} catch (error) {
		throw new UserError(
			`The approvals were not saved: ${(error as Error).message}`,
			`Fix ${trustStorePath(agentHome)} or move it aside, then start again.`,
		);
	}
	const approvedAt = new Date().toISOString();
	const project = { ...file.projects[root] };
	for (const item of items) project[item.key] = { sha256: item.hash, approvedAt };
	file.projects[root] = project;
	writePrivateJson(trustStorePath(agentHome), file);
}

/**
 * Approve the project skills in `dirs` as they are now: skills the user put there through the
 * agent (`skill install --local`, the skill creator), which are the user's own, not the repository's.
 */
export function approveOwnSkills(agentHome: string, cwd: string, dirs: readonly string[]): void {
	const code = findProjectCode(cwd);
	const real = dirs.map((dir) => realPath(dir));
	const items = code.items.filter((item) => item.kind === "skill" && real.includes(item.path));
	if (items.length > 0) approveItems(agentHome, code.root, items);
}

function realPath(path: string): string {
	try {
		return realpathSync(path);
	} catch {
		return path;
	}
}

function readTrustFile(agentHome: string): TrustFile {
	const path = trustStorePath(agentHome);
	const raw = readJsonFile(path);
	if (raw === undefined) return { version: 1, projects: {} };
	const projects = (raw as { projects?: unknown }).projects;
	const valid =
		isObject(raw) &&
		isObject(projects) &&
		Object.values(projects).every(
			(project) =>
				isObject(project) &&
				Object.values(project).every((approval) => isObject(approval) && typeof approval.sha256 === "string"),
		);
	if (!valid) throw new Error(`${path} is not an approvals file ({"version": 1, "projects": {...}})`);
	return { version: 1, projects: projects as TrustFile["projects"] };
}

function isObject(value: unknown): value is Record<string, unknown> {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}
