import {
	buildStructuredCapsule,
	type CapsuleHeader,
	LineSelector,
	type StructuredCapsule,
} from "../src/capsule/index.js";
import { parseOutcome } from "../src/outcome/index.js";

export interface CapsuleForOptions {
	/** The failing ids to list (default: the ones parsed from the text). */
	failingIds?: string[];
	budget?: number;
	exitCode?: number;
	/** Default: this text's own size and line count. */
	header?: Partial<CapsuleHeader>;
}

/** A large structured capsule of `text`, built from a line selection and a parsed outcome, as the broker builds one. */
export function capsuleFor(text: string, options: CapsuleForOptions = {}): StructuredCapsule {
	const exitCode = options.exitCode ?? 1;
	const selector = new LineSelector();
	const rows = text.split("\n");
	for (const [i, line] of rows.entries()) selector.line(line, i + 1);
	const parsed = parseOutcome(text, { exitCode });
	return buildStructuredCapsule({
		header: {
			id: "obs_000001",
			tool: "bash",
			bytes: Buffer.byteLength(text),
			lines: rows.length,
			source: "visible-tool-result",
			...options.header,
		},
		kind: "large",
		budget: options.budget ?? 6144,
		outcome: options.failingIds ? { ...parsed, failingIds: options.failingIds } : parsed,
		selection: selector.finish(),
		facts: { isError: exitCode !== 0, exitCode },
	});
}
