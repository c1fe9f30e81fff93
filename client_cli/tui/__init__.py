"""The terminal client: `PlaySession` (logic), `PlayApp` (Textual UI), script mode."""
