"""The instructor and class features: sign-in, the parameter file and its editor, worked answers,
the live class (student banner, teacher panel, console) and its shared store."""
