"""How each tier file is laid out, read and written: hot, cold (and its shared store), wiki, the
transcript archive, the audit log, and the merge of tier files that git meets."""
