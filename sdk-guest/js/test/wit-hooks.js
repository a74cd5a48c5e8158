// Module-resolution hooks: `agentenv:environment/upload@0.1.0` resolves to upload-mocks.js, any
// other `agentenv:environment/<interface>@0.1.0` to wit-mocks.js, and
// `agentenv:agent/<interface>@0.1.0` to agent-mocks.js.
const MOCKS = new URL("./wit-mocks.js", import.meta.url).href;
const AGENT_MOCKS = new URL("./agent-mocks.js", import.meta.url).href;
const UPLOAD_MOCKS = new URL("./upload-mocks.js", import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if (specifier.startsWith("agentenv:environment/upload@")) return { url: UPLOAD_MOCKS, shortCircuit: true };
  if (specifier.startsWith("agentenv:environment/")) return { url: MOCKS, shortCircuit: true };
  if (specifier.startsWith("agentenv:agent/")) return { url: AGENT_MOCKS, shortCircuit: true };
  return nextResolve(specifier, context);
}
