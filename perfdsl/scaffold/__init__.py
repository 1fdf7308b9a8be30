"""Templates that `perfdsl new` fills in: a study and the kernel module it references."""
