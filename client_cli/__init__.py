"""Command line, terminal client, client library, bot SDK and bundled bots."""
