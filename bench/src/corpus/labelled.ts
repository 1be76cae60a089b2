/**
 * Reader for a labelled-output corpus: a folder of cases, each a folder holding `output.txt` (the
 * exact bytes a tool printed) and `meta.json` (labels derived from a machine-readable report).
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";

/** Run counts of a test run, as labelled. */
export interface LabelledCounts {
	passed: number;
	failed: number;
	skipped: number;
	errors: number;
	xfailed?: number;
}

/** The labels of one case (`meta.json`). */
export interface CaseMeta {
	tool: string;
	command: string;
	exit_code: number;
	failing_ids: string[];
	error_types: string[];
	locations: string[];
	counts: LabelledCounts | null;
	outcome: "pass" | "fail" | "error";
}

export interface LabelledCase {
	/** Folder name of the case. */
	name: string;
	/** `output.txt` decoded as UTF-8 (what a host would show a model). */
	text: string;
	/** Size of `output.txt` in bytes. */
	bytes: number;
	meta: CaseMeta;
}

/** Reads every case folder of `dir` (sorted by name). Folders without `output.txt` are skipped. */
export async function readLabelledCorpus(dir: string): Promise<LabelledCase[]> {
	let names: string[];
	try {
		names = (await readdir(dir)).sort();
	} catch (error) {
		throw new Error(`Cannot read the labelled-output folder ${dir}: ${(error as Error).message}. Pass --cases <dir>.`);
	}
	const cases: LabelledCase[] = [];
	for (const name of names) {
		const caseDir = join(dir, name);
		if (!(await stat(caseDir)).isDirectory()) continue;
		const outputPath = join(caseDir, "output.txt");
		let raw: Buffer;
		try {
			raw = await readFile(outputPath);
		} catch {
			continue;
		}
		cases.push({
			name,
			text: raw.toString("utf8"),
			bytes: raw.length,
			meta: await readMeta(join(caseDir, "meta.json")),
		});
	}
	if (cases.length === 0) {
		throw new Error(`No cases in ${dir}: expected folders holding output.txt and meta.json.`);
	}
	return cases;
}

async function readMeta(path: string): Promise<CaseMeta> {
	let parsed: Partial<CaseMeta>;
	try {
		parsed = JSON.parse(await readFile(path, "utf8"));
	} catch (error) {
		throw new Error(`Cannot read labels ${path}: ${(error as Error).message}. Each case needs a valid meta.json.`);
	}
	const list = (value: unknown) => (Array.isArray(value) ? value.map(String) : []);
	if (typeof parsed.exit_code !== "number" || !["pass", "fail", "error"].includes(String(parsed.outcome))) {
		throw new Error(`Labels ${path} lack a numeric exit_code or an outcome of pass, fail or error.`);
	}
	return {
		tool: String(parsed.tool ?? "other"),
		command: String(parsed.command ?? ""),
		exit_code: parsed.exit_code,
		failing_ids: list(parsed.failing_ids),
		error_types: list(parsed.error_types),
		locations: list(parsed.locations),
		counts: parsed.counts ?? null,
		outcome: parsed.outcome as CaseMeta["outcome"],
	};
}
