"""The layers stacked around an LLM client, one job each: the concurrency gate, the
response cache, budgets, accounting, the breaker that says the endpoint is down, the
continuation of cut replies, and the charging of earlier runs' spend. What they keep
(the gate, the meter, the spend, the breaker's count, the cache) are objects handed in,
so the stacks of several roles, or of a build's sessions, share them."""
