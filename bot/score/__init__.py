"""/score in chat: a typed or photographed hand valued under the chat's own rules.

``chat`` answers typed hands (and prompts for them), ``photo`` turns a photo into a hand the
player can correct with buttons; both end in the same answer built by ``answer``.
"""
