"""Scorekeeping (记账) for games played with real tiles: ``book`` (state and transfers),
``words`` (what the bot says), ``feature`` (the Telegram side: /keep and the session panel)."""
