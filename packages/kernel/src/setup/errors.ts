/** How to create the kernel environment, as said in every setup error. */
export const SETUP_HINT =
	"Create it with `npm run setup` in a checkout of the repository, or `prime-agent setup` for an installed agent " +
	"(or point PRIME_AGENT_KERNEL_PYTHON at a Python that has ipykernel).";

/** The kernel's Python environment is missing or broken; the message says how to set it up. */
export class KernelSetupError extends Error {
	override name = "KernelSetupError";
}
