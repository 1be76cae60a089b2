/** The prime-context arm bound to the package: its archive, its broker, and its `search` action. */
import {
	createBroker,
	DEFAULT_CONFIG,
	memoryTaskStore,
	openSessionArchive,
	runRecovery,
	type SessionArchive,
	selectionThreadJobs,
} from "prime-agent-context";
import type { PrimeContextDeps } from "./prime-context.js";

export const primeContextDeps: PrimeContextDeps = {
	openArchive: (root, sessionId) => openSessionArchive({ root, sessionId }),
	createBroker: (archive) => createBroker({ archive, config: DEFAULT_CONFIG }),
	/** The model-facing `search` action on one observation: true when it returns at least one match. */
	async search(archive: SessionArchive, id: string, query: string) {
		const response = await runRecovery(
			{ sessionId: archive.sessionId, archive, tasks: memoryTaskStore(), config: DEFAULT_CONFIG },
			{ action: "search", id, query },
		);
		return !response.isError && response.evidence;
	},
	selectedOnThread: () => selectionThreadJobs().selected,
};
