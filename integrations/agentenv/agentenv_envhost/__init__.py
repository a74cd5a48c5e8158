"""agent-env's envhost providers (docs/agent-env.md): the environment provider `envhost` makes
each deployed environment an episode of an envhost server, the sandbox provider `envhost` makes
each agent sandbox a deployment of an envhost agent (an agentenv A2A agent) and ends both, and
`agentenv_envhost.state` lets a verifier read an episode's state."""
