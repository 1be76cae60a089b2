import { mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { planStateRestore, type RestoreSource } from "./resume.js";
import { StateSeal, stateKeyPath } from "./seal.js";

let root: string;
let home: string;
let sessions: string;
beforeEach(() => {
	root = realpathSync(mkdtempSync(join(tmpdir(), "prime-state-trust-")));
	home = join(root, "home");
	sessions = join(home, "sessions");
	mkdirSync(sessions, { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const ID = "5ea1ed00-0000-4000-8000-000000000001";
const MANIFEST = { format: 1, saved_at: "", total_bytes: 0, variables: [], imports: { json: "json" }, unsaveable: [] };

/** A session file and a snapshot for it in `dir`/<ID>/kernel-state; the snapshot's folder. */
function snapshotIn(dir: string, manifest: object = MANIFEST): string {
	const state = join(dir, ID, "kernel-state");
	mkdirSync(state, { recursive: true });
	writeFileSync(join(dir, `${ID}.jsonl`), "");
	writeFileSync(join(state, "manifest.json"), JSON.stringify(manifest));
	return state;
}

const source = (dir: string, seal = new StateSeal(stateKeyPath(home))): RestoreSource => ({
	sessionFile: join(dir, `${ID}.jsonl`),
	sessionId: ID,
	sessionsDir: sessions,
	seal,
	branch: [],
	branched: false,
});

it("the home's own sealed snapshot is restored; the key is made once, private", () => {
	const seal = new StateSeal(stateKeyPath(home));
	const state = snapshotIn(sessions);
	seal.sign(state);
	expect(statSync(stateKeyPath(home)).mode & 0o777).toBe(0o600);
	expect(planStateRestore(source(sessions, seal))).toMatchObject({ restoreFrom: { dir: state } });
	// A second process of the same home uses the same key.
	expect(planStateRestore(source(sessions, new StateSeal(stateKeyPath(home))))).toMatchObject({
		restoreFrom: { dir: state },
	});
});

it("a manifest changed after its seal, sealed by another home, or never sealed is not restored", () => {
	const state = snapshotIn(sessions);
	const unsealed = planStateRestore(source(sessions));
	expect(unsealed.restoreFrom).toBeUndefined();
	expect(unsealed.refused).toBe(
		`The kernel state in ${state} was not loaded: it carries no seal of this agent home (it was saved elsewhere or by an older prime-agent, or changed since), and loading saved state runs the code it holds. The conversation continues in an empty kernel.`,
	);

	new StateSeal(join(root, "other-home.key")).sign(state);
	expect(planStateRestore(source(sessions)).restoreFrom).toBeUndefined();

	const seal = new StateSeal(stateKeyPath(home));
	seal.sign(state);
	expect(planStateRestore(source(sessions, seal)).restoreFrom).toEqual({ dir: state });
	writeFileSync(join(state, "manifest.json"), JSON.stringify({ ...MANIFEST, imports: { os: "os" } }));
	expect(planStateRestore(source(sessions, seal)).restoreFrom).toBeUndefined();
});

it("a sealed snapshot is not restored through a symbolic link out of the session's folder, nor for a file outside the home", () => {
	const seal = new StateSeal(stateKeyPath(home));
	const elsewhere = join(root, "elsewhere");
	seal.sign(snapshotIn(elsewhere));
	// The session's artifact folder in the home is a link to the other folder.
	writeFileSync(join(sessions, `${ID}.jsonl`), "");
	symlinkSync(join(elsewhere, ID), join(sessions, ID));
	expect(planStateRestore(source(sessions, seal))).toEqual({
		refused: `The kernel state saved for ${join(sessions, `${ID}.jsonl`)} was not loaded: its folder is a symbolic link to ${join(elsewhere, ID, "kernel-state")}, not the session's own folder, and loading saved state runs the code it holds. The conversation continues in an empty kernel.`,
	});
	expect(planStateRestore(source(elsewhere, seal)).refused).toContain(
		`was not loaded: that session file is not in this agent home's sessions folder (${sessions})`,
	);
	// Nor for a link in the sessions folder to a session file elsewhere, even with a sealed snapshot beside it.
	rmSync(join(sessions, ID));
	seal.sign(snapshotIn(sessions));
	rmSync(join(sessions, `${ID}.jsonl`));
	symlinkSync(join(elsewhere, `${ID}.jsonl`), join(sessions, `${ID}.jsonl`));
	expect(planStateRestore(source(sessions, seal)).refused).toContain("not in this agent home's sessions folder");
});

const cellResult = (id: string) => ({ id, type: "message", message: { role: "toolResult", toolName: "ipython" } });

it("a branch gets the state kept for its own last cell; a point none was kept for gets an empty kernel, said so", () => {
	const seal = new StateSeal(stateKeyPath(home));
	const state = snapshotIn(sessions, { ...MANIFEST, entry: "b9" });
	mkdirSync(join(state, "entries"));
	for (const entry of ["a1", "b9"]) {
		writeFileSync(join(state, "entries", `${entry}.json`), JSON.stringify({ ...MANIFEST, entry }));
		seal.sign(state, entry);
	}
	seal.sign(state);
	const plan = (branch: object[], branched = true) =>
		planStateRestore({ ...source(sessions, seal), branch: branch as never, branched });
	const user = { id: "u0", type: "message", message: { role: "user" } };

	// Cell a1, then a failed cell a2 (nothing kept), then a hand-made id that names no file.
	const atA = plan([user, cellResult("a1"), cellResult("a2"), cellResult("../b9")]);
	expect(atA.restoreFrom).toEqual({ dir: state, entry: "a1" });
	expect(atA.note).toContain(
		"The state saved after cell 1 of this conversation (entry a1), not after the 2 later cells (they failed or their state was not kept, so what they changed is missing), is restored",
	);
	// Before any kept cell: not the latest save (b9, another branch), but nothing.
	expect(plan([user, cellResult("a0")], false)).toEqual({
		note: "[This session continues in a new, empty IPython kernel: the kernel state saved for this session belongs to a later point or another branch, and none was kept for this point, so variables, imports and functions from earlier cells are not defined. Define again what you need.]",
	});
	// A kept manifest changed after its seal is refused like the latest one.
	writeFileSync(join(state, "entries", "a1.json"), JSON.stringify({ ...MANIFEST, imports: { os: "os" } }));
	expect(plan([user, cellResult("a1")]).refused).toContain("carries no seal of this agent home");
});

it("an older snapshot without kept entries is restored only for a resume of the session's end", () => {
	const seal = new StateSeal(stateKeyPath(home));
	seal.sign(snapshotIn(sessions));
	const plan = (branched: boolean) =>
		planStateRestore({ ...source(sessions, seal), branch: [cellResult("a1")] as never, branched });
	expect(plan(false).note).toContain("The state saved at the end of its last run is restored");
	expect(plan(true).restoreFrom).toBeUndefined();
	expect(plan(true).note).toContain("a new, empty IPython kernel");
});
