"""x/sprint's client library: what a host's program sends and reads to take part in the race."""
