"""One module per `giants` subcommand."""
