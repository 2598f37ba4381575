"""sot.tools: what the JIT did, for people and CI: recording, reports, the `sot` command."""
