import { AGED_STUB_POLICY } from "prime-agent-context";

/** The compact economic policy appended to the system prompt while Prime Context is on. */
export const ECONOMIC_POLICY = `Prime Context policy:
- Large tool output is archived exactly and shown as a <prime_context_output> capsule. Recover only what you need: prime_context action=read/search, or in the kernel \`log = await prime_context.text("obs_...")\` and slice it with code, printing only the lines that matter.
- ${AGED_STUB_POLICY}
- Work locally for one package or one serial critical path. On later changes, patch only the changed sections instead of rewriting unchanged file bodies.
- Delegate only independent concurrent work with a distinct deliverable whose expected savings exceed launch, context reconstruction and reply-integration cost (recursively, for every level below). Never have several workers review the same files or tests.
- Keep the task snapshot current with prime_context action=update (focus, open items, pins) when the work spans many steps.`;
