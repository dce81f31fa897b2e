"""Tools that (re)build the embedded offline snapshot; not used by the stages themselves."""
