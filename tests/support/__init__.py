"""What the tests share that is not a test: servers (Bolt, a faulty OpenAI-compatible
endpoint), a browser driver, scripted judges and a strong-model fake, synthetic graphs,
the sandbox every started process runs in, and each test's lane; and the helpers more
than one test file uses (the CLI as a process, scripted sessions, evaluations, an MCP
client, killed runs, ...), here so that no test file imports another."""
