"""The web table: the live game as a page (a Telegram Mini App, or ``xuezhan play`` on its own).

``web.hub`` is a view of ``TableRunner`` beside the group picture and the DM buttons: it turns
the runner's events into one stream of frames per seat. ``web.server`` serves the page (plain
ES modules and CSS from ``web/static``) and one WebSocket per seat; ``web.auth`` checks who is
on the other end (Telegram's ``initData``, or a signed seat link).
"""
