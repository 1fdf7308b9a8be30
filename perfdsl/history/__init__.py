"""Runs of one study side by side: two compared (`perfdsl compare`), all over time (`perfdsl history`)."""
