import {
	type FauxModelDefinition,
	type FauxProviderRegistration,
	type Message,
	registerFauxProvider,
} from "@mariozechner/pi-ai";
import { ModelRegistry, type StartedSession, type StartOptions, startSession } from "prime-agent";
import { afterAll, afterEach, beforeAll } from "vitest";
import { kernelPythonForTests } from "./kernel-python.js";
import { makeTempWorld, type TempWorld } from "./temp-home.js";

/** Sessions of a test file: a scripted `faux` model, a temp agent home with its key, a real kernel. */
export interface FauxSessions {
	/** The registered faux provider (script it with `setResponses`). */
	readonly faux: FauxProviderRegistration;
	/** This test's home and project, made on first use (or by `newWorld`). */
	readonly world: TempWorld;
	/** A fresh home and project, with extra environment, replacing the current one. */
	newWorld(extraEnv?: Record<string, string>): TempWorld;
	/** A registry holding exactly the faux models. */
	registry(): ModelRegistry;
	/** `provider/id` of the first faux model (or of the one named). */
	modelRef(id?: string): string;
	/** Start a session in the world's project on the faux model; disposed after the test. */
	start(options?: Partial<StartOptions>): Promise<StartedSession>;
}

/**
 * Call once at the top of a test file: registers the provider for the file, and after each test
 * disposes every session started and removes the temp world.
 */
export function useFauxSessions(options: { provider?: string; models?: FauxModelDefinition[] } = {}): FauxSessions {
	const provider = options.provider ?? "faux";
	let faux: FauxProviderRegistration | undefined;
	let world: TempWorld | undefined;
	const open: StartedSession[] = [];
	beforeAll(() => {
		faux = registerFauxProvider({ provider, models: options.models });
	});
	afterAll(() => faux?.unregister());
	afterEach(async () => {
		for (const started of open.splice(0)) await started.dispose();
		world?.cleanup();
		world = undefined;
	});
	const registration = (): FauxProviderRegistration => {
		if (!faux) throw new Error("useFauxSessions() must be called at the top level of the test file");
		return faux;
	};
	const sessions: FauxSessions = {
		get faux() {
			return registration();
		},
		get world() {
			return world ?? sessions.newWorld();
		},
		newWorld(extraEnv = {}) {
			world?.cleanup();
			// Automatic harness refinement makes model calls of its own; only the harness tests turn it on.
			world = makeTempWorld({
				PRIME_AGENT_KERNEL_PYTHON: kernelPythonForTests(),
				PRIME_AGENT_AUTO_REFINE: "0",
				...extraEnv,
			});
			world.writeHome("auth.json", { [provider]: { type: "api_key", key: "test-key" } });
			return world;
		},
		registry() {
			const registry = new ModelRegistry();
			for (const model of registration().models) registry.add(model);
			return registry;
		},
		modelRef(id) {
			return `${provider}/${id ?? (registration().models[0]?.id as string)}`;
		},
		async start(startOptions = {}) {
			const current = sessions.world;
			const started = await startSession({
				cwd: current.project,
				env: current.env,
				model: sessions.modelRef(),
				registry: sessions.registry(),
				...startOptions,
			});
			open.push(started);
			return started;
		},
	};
	return sessions;
}

/** Plain text of a wire message (text parts joined). */
export function wireText(message: Message): string {
	if (typeof message.content === "string") return message.content;
	return message.content.map((part) => (part.type === "text" ? part.text : "")).join("");
}
