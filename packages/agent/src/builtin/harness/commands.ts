import {
	checkKind,
	cutText,
	describeRefinement,
	HARNESS_KINDS,
	HarnessError,
	type HarnessRuntime,
	type RefinementInput,
	type RefineOutcome,
	type ScopedEntry,
} from "../../harness/index.js";

/** `/harness [list [kind]] | show [kind] <name>`: browse the entries of both stores. */
export function harnessCommand(args: string, runtime: HarnessRuntime): string {
	const [sub = "list", ...rest] = args.split(/\s+/).filter(Boolean);
	const harness = runtime.harness;
	if (sub === "list" || (HARNESS_KINDS as readonly string[]).includes(sub)) {
		const kind = sub === "list" ? rest[0] : sub;
		const { entries, problems } = harness.readable(kind ? checkKind(kind) : undefined);
		if (entries.length === 0) {
			return [
				`No harness entries${kind ? ` of kind ${kind}` : ""} (local: ${harness.path("local")}, global: ${harness.path("global")}). The model adds them with rlm.harness.create_<kind>(...) or /refine.`,
				...problems,
			].join("\n");
		}
		return [
			`${entries.length} harness entr${entries.length === 1 ? "y" : "ies"} (kind, name, scope, uses, last used):`,
			...entries.map(listLine),
			...problems,
			"Show one in full: /harness show <kind> <name>.",
		].join("\n");
	}
	if (sub === "show") {
		const [first, second] = rest;
		if (!first) throw new HarnessError("say which entry: /harness show <kind> <name> (or just <name>).");
		const matches = second
			? harness.entries(checkKind(first)).filter((entry) => entry.name === second)
			: harness.entries().filter((entry) => entry.name === first);
		if (matches.length === 0) throw new HarnessError(`no entry named "${second ?? first}"; /harness lists them.`);
		return matches.map(showEntry).join("\n\n");
	}
	throw new HarnessError(
		`unknown /harness subcommand "${sub}"; use /harness, /harness list [kind], /harness show [kind] <name>.`,
	);
}

/** `/refine [instructions] | list | rollback <id>`. */
export async function refineCommand(
	args: string,
	runtime: HarnessRuntime,
	input: () => RefinementInput,
	noted: (outcome: RefineOutcome) => RefineOutcome,
): Promise<string> {
	const [sub, ...rest] = args.split(/\s+/).filter(Boolean);
	if (sub === "list" && rest.length === 0) {
		const refinements = runtime.harness.refinements();
		if (refinements.length === 0) return "No refinements in this session yet; /refine runs one.";
		return [`${refinements.length} refinement(s), oldest first:`, ...refinements.map(describeRefinement)].join("\n");
	}
	if (sub === "rollback") {
		if (rest.length !== 1)
			throw new HarnessError("say which refinement: /refine rollback <id> (/refine list shows the ids).");
		return noted(await runtime.rollback(rest[0] as string)).report;
	}
	return noted(await runtime.refine("command", input(), { instructions: args || undefined })).report;
}

function listLine(entry: ScopedEntry): string {
	return `${entry.kind}  ${entry.name}  ${entry.scope}  ${entry.uses}  ${entry.lastUsedAt ?? "never"}  ${cutText(entry.text, 80)}`;
}

function showEntry(entry: ScopedEntry): string {
	return [
		`${entry.kind} "${entry.name}" (${entry.scope}; ${entry.uses} uses, last used ${entry.lastUsedAt ?? "never"}; created ${entry.createdAt}, updated ${entry.updatedAt})`,
		entry.text,
	].join("\n");
}
