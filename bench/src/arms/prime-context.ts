/**
 * `prime-context`: our broker with its default config. One archive root per corpus (a fresh temp
 * dir), one session per run (a labelled case, or a trajectory), observations fed in recorded order
 * with tool, command, exit status and error flag. Every archived observation is read back and
 * compared byte for byte; on labelled cases every labelled fact is looked up with `search`.
 */
import {
	type Decision,
	type ObservationBroker,
	type ObservationResult,
	renderAgedStub,
	type SessionArchive,
} from "prime-agent-context";
import type { CaseMeta } from "../corpus/index.js";
import type { ArchivedView, Arm, ArmRun, Observation } from "./types.js";

/** How the arm reaches the package (kept apart so the arm reads as the procedure it is). */
export interface PrimeContextDeps {
	openArchive(root: string, sessionId: string): Promise<SessionArchive>;
	createBroker(archive: SessionArchive): Promise<ObservationBroker>;
	/** True when the package's `search` action finds `query` in observation `id`. */
	search(archive: SessionArchive, id: string, query: string): Promise<boolean>;
	/** Observations whose lines the package selected on its selection thread so far in this process. */
	selectedOnThread(): number;
}

export interface FactSearch {
	found: number;
	total: number;
	missing: string[];
}

/** Recovery figures of one corpus. */
export interface RecoveryCheck {
	observations: number;
	byteExact: number;
	/** Observations whose read-back differed or failed, and those the broker could not archive. */
	mismatches: string[];
	notArchived: string[];
	search: { failingIds: FactSearch; errorTypes: FactSearch; locations: FactSearch };
	decisions: Record<Decision, number>;
	archiveDiskBytes: number;
	inputBytes: number;
}

const emptySearch = (): FactSearch => ({ found: 0, total: 0, missing: [] });

export class PrimeContextArm implements Arm {
	readonly name = "prime-context";
	readonly rule = "Prime Context broker, default config, fresh archive per corpus, one session per run";
	readonly recovery: RecoveryCheck = {
		observations: 0,
		byteExact: 0,
		mismatches: [],
		notArchived: [],
		search: { failingIds: emptySearch(), errorTypes: emptySearch(), locations: emptySearch() },
		decisions: { "pass-through": 0, "structured-capsule": 0, "delta-capsule": 0 },
		archiveDiskBytes: 0,
		inputBytes: 0,
	};
	private readonly archives: SessionArchive[] = [];

	/** `root` must be a fresh directory for this corpus. */
	constructor(
		private readonly deps: PrimeContextDeps,
		private readonly root: string,
	) {}

	async open(runId: string): Promise<ArmRun> {
		const { archive, broker } = await this.session(runId);
		const observe = async (observation: Observation): Promise<ArchivedView> => {
			const result = await this.observe(archive, broker, observation);
			const stub = result.archived
				? renderAgedStub({
						id: result.id,
						tool: observation.tool,
						command: observation.command,
						bytes: result.bytes,
						lines: result.lines,
						headline: result.headline,
					})
				: null;
			return { text: result.text, stub, headline: result.headline };
		};
		return {
			view: async (observation) => (await observe(observation)).text,
			ageing: { observe, readBytes: (id) => archive.readBytes(id) },
		};
	}

	/**
	 * Feeds one labelled case and checks that `search` recovers every labelled fact from the archive.
	 * Labels absent from the output itself (`notInOutput`) cannot be searched for and are skipped.
	 */
	async observeCase(
		runId: string,
		observation: Observation,
		meta: CaseMeta,
		notInOutput: { failingIds: string[]; errorTypes: string[]; locations: string[] },
	): Promise<string> {
		const { archive, broker } = await this.session(runId);
		const result = await this.observe(archive, broker, observation);
		if (!result.archived) return result.text;
		const search = this.recovery.search;
		const look = async (into: FactSearch, label: string, query: string) => {
			into.total++;
			if (await this.deps.search(archive, result.id, query)) into.found++;
			else into.missing.push(`${runId}: ${label}`);
		};
		const present = (labels: string[], absent: string[]) => labels.filter((label) => !absent.includes(label));
		for (const id of present(meta.failing_ids, notInOutput.failingIds)) await look(search.failingIds, id, id);
		for (const type of present(meta.error_types, notInOutput.errorTypes)) await look(search.errorTypes, type, type);
		for (const location of present(meta.locations, notInOutput.locations)) {
			await look(search.locations, location, locationQuery(observation.text, location));
		}
		return result.text;
	}

	/** Adds up the archives' bytes on disk; call once after the corpus. */
	async finish(): Promise<RecoveryCheck> {
		let disk = 0;
		for (const archive of this.archives) disk += await archive.diskBytes();
		this.recovery.archiveDiskBytes = disk;
		return this.recovery;
	}

	/** A new session of this corpus's archive, with its own broker. */
	private async session(runId: string): Promise<{ archive: SessionArchive; broker: ObservationBroker }> {
		const archive = await this.deps.openArchive(this.root, runId);
		this.archives.push(archive);
		return { archive, broker: await this.deps.createBroker(archive) };
	}

	private async observe(
		archive: SessionArchive,
		broker: ObservationBroker,
		observation: Observation,
	): Promise<ObservationResult> {
		const result = await broker.observe({
			tool: observation.tool,
			text: observation.text,
			command: observation.command ?? undefined,
			exitCode: observation.exitCode,
			isError: observation.isError ?? (observation.exitCode !== null && observation.exitCode !== 0),
		});
		const recovery = this.recovery;
		const label = `${archive.sessionId}/${result.id}`;
		const original = Buffer.from(observation.text, "utf8");
		recovery.observations++;
		recovery.inputBytes += original.length;
		recovery.decisions[result.decision]++;
		if (!result.archived) {
			recovery.notArchived.push(`${label}: ${result.archiveError ?? "not archived"}`);
			return result;
		}
		try {
			const back = await archive.readBytes(result.id);
			if (back.equals(original)) recovery.byteExact++;
			else recovery.mismatches.push(`${label}: read back ${back.length} bytes, archived ${original.length}`);
		} catch (error) {
			recovery.mismatches.push(`${label}: ${(error as Error).message}`);
		}
		return result;
	}
}

/**
 * The fixed string a reader would search for to find a `path:line` location: the shape the tool
 * printed it in (`path:line`, a traceback's `path", line N`, tsc's `path(line,`), else the path
 * itself (ESLint file headers and git diff headers carry the line elsewhere).
 */
export function locationQuery(text: string, location: string): string {
	const match = /^(.*):(\d+)$/.exec(location);
	if (!match) return location;
	const [, path, line] = match;
	for (const shape of [location, `${path}", line ${line}`, `${path}(${line},`]) if (text.includes(shape)) return shape;
	return path;
}
