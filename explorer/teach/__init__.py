"""Teaching material: the guided lesson and its handout."""
