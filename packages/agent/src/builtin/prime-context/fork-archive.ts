import { ArchiveError, type SessionArchive } from "prime-agent-context";

/**
 * A forked session's archive: its own observations first, then its parent's, so every id the
 * parent showed stays readable in the fork. Writing, listing, size and cleanup are the fork's own.
 */
export function archiveWithParent(own: SessionArchive, parent: SessionArchive): SessionArchive {
	const holder = async (id: string): Promise<SessionArchive> => {
		try {
			await own.get(id);
			return own;
		} catch (error) {
			if (!(error instanceof ArchiveError)) throw error;
			try {
				await parent.get(id);
				return parent;
			} catch {
				throw error;
			}
		}
	};
	return {
		sessionId: own.sessionId,
		dir: own.dir,
		create: () => own.create(),
		list: (limit) => own.list(limit),
		diskBytes: () => own.diskBytes(),
		cleanup: () => own.cleanup(),
		get: async (id) => (await holder(id)).get(id),
		readLines: async (id, startLine, endLine, options) => (await holder(id)).readLines(id, startLine, endLine, options),
		readBytes: async (id) => (await holder(id)).readBytes(id),
		async *lines(id) {
			yield* (await holder(id)).lines(id);
		},
	};
}
