/** What `attach` replays in the line chat: the entries written while no view was attached. */
import type { Session } from "../session/index.js";
import type { WorkerWelcome } from "./protocol.js";

/** The entries after the leaf at the last detach (all of them when unknown), one line each. */
export async function replayLines(welcome: WorkerWelcome): Promise<string[]> {
	// The session code loads here, for `attach`: a new session's view does without it.
	const { entryLabel, Session } = await import("../session/index.js");
	let session: Session;
	try {
		session = Session.open(welcome.session.path, { upToDamage: true });
	} catch {
		return [];
	}
	const branch = session.branch();
	const from = welcome.detachedAt ? branch.findIndex((entry) => entry.id === welcome.detachedAt) + 1 : 0;
	return branch.slice(from).map((entry) => `${entry.id}  ${entryLabel(entry)}`);
}
