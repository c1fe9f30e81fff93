"""The asyncio WebSocket server: lobby, rooms, Redis persistence."""
