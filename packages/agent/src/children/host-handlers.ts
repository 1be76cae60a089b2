import type { HostRequestHandler } from "prime-agent-kernel";
import type { ModelRegistry } from "../providers/index.js";
import type { ChildManager } from "./manager.js";
import { SpawnRefused } from "./options.js";

/** Host request types of the kernel's `rlm` module. */
export const RLM_REQUESTS = {
	spawn: "rlm.spawn",
	list: "rlm.list",
	delete: "rlm.delete",
	findModels: "rlm.find_models",
} as const;

/** A request the host refuses: the kernel raises it as `RlmError` with this message. */
function refusal(error: unknown): never {
	if (error instanceof SpawnRefused) throw error;
	throw new SpawnRefused((error as Error).message);
}

/** The handlers answering `rlm(...)`, `rlm.list_subagents()`, `rlm.delete_subagent()`, `rlm.find_models()`. */
export function rlmHostHandlers(
	children: ChildManager,
	models: { registry: ModelRegistry; available(provider: string): boolean },
): Record<string, HostRequestHandler> {
	return {
		[RLM_REQUESTS.spawn]: (payload) => {
			try {
				return { handle: children.spawn(payload) };
			} catch (error) {
				refusal(error);
			}
		},
		[RLM_REQUESTS.list]: () => ({ subagents: children.list() }),
		[RLM_REQUESTS.delete]: async (payload) => {
			try {
				// `status` is the reply's own field: the status the child had goes back as `was`.
				const deleted = await children.delete(payload.name);
				return { name: deleted.name, was: deleted.status };
			} catch (error) {
				refusal(error);
			}
		},
		[RLM_REQUESTS.findModels]: (payload) => {
			const query = typeof payload.query === "string" ? payload.query.toLowerCase().trim() : "";
			const found = [];
			for (const provider of models.registry.providers()) {
				for (const model of models.registry.modelsOf(provider)) {
					const ref = `${provider}/${model.id}`;
					if (query && !`${ref} ${model.name ?? ""}`.toLowerCase().includes(query)) continue;
					found.push({
						model: ref,
						name: model.name ?? model.id,
						available: models.available(provider),
						contextWindow: model.contextWindow,
					});
				}
			}
			found.sort((a, b) => Number(b.available) - Number(a.available) || a.model.localeCompare(b.model));
			return { models: found.slice(0, 50), total: found.length };
		},
	};
}
