"""The .perf language server: `check`'s diagnostics as you type, hover, completion, definitions."""
