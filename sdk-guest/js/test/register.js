// Registers wit-hooks.js, which answers the component's WIT imports with the mocks in wit-mocks.js
// (an environment's) and agent-mocks.js (an agent's) so that node can load the SDK outside a
// component.
import { register } from "node:module";

register("./wit-hooks.js", import.meta.url);
