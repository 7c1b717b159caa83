"""Crowd providers: the interface (base), one module per platform (internal, link, mturk*,
prolific), what two of them share (entry: a worker arriving at a task), and the registry that
picks a batch's provider. Everything in which the platforms differ lives here."""
