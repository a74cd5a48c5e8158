// Module-resolution hooks: `agentenv:environment/<interface>@0.1.0` resolves to wit-mocks.js.
const MOCKS = new URL("./wit-mocks.js", import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if (specifier.startsWith("agentenv:environment/")) return { url: MOCKS, shortCircuit: true };
  return nextResolve(specifier, context);
}
