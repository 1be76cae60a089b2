import { createHash } from "node:crypto";
import type { Session } from "../session/index.js";

/**
 * The custom entry recorded where a run's system prompt differs from the previous run's (a skill
 * installed meanwhile, Prime Context turned off): the provider's cached prefix starts again there.
 * Data: `{sha256, chars}` of the run's system prompt (the sections extensions append per call, the
 * harness index, record their own boundary).
 */
export const SYSTEM_PROMPT_ENTRY = "system_prompt";

/** Remembers each run's system prompt and records the boundary where it changes. */
export class PromptBoundaries {
	private last: string | undefined;

	constructor(private readonly session: Session) {}

	/** A run starts with `systemPrompt`. */
	note(systemPrompt: string): void {
		if (this.last !== undefined && this.last !== systemPrompt)
			this.session.appendCustom(SYSTEM_PROMPT_ENTRY, {
				sha256: createHash("sha256").update(systemPrompt).digest("hex"),
				chars: systemPrompt.length,
			});
		this.last = systemPrompt;
	}
}
