"""Pure statistics over numbers and records, with no knowledge of the study or the bundle."""
