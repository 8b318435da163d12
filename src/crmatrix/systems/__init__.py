"""Systems under test: the contract and registry (registry), the builtin engine, any CLI
(command), any MCP server (mcp), tools the workflow installs in environments of their own
(install, external), and the guard every call into a system goes through."""
