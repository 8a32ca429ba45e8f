"""The agent: HTTP client to the server, durable outbox, daemon loop. Never imports server or db code."""
