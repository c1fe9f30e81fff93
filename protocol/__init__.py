"""The sans-I/O wire protocol shared by server, client and bots."""
