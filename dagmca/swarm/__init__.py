"""The context-accumulation swarm: a stream of tasks checked objectively, agents that
learn from their own successes, and routers compared over time."""
